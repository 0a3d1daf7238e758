"""The store: one interface (:mod:`.base`), a backend per database.

``open_store(name)`` picks the backend from the database's name. SQLite is the
default and needs nothing installed; ``Store``, ``Tx`` and the constants below
are its names, as they were when the store was one module.
"""

from __future__ import annotations

import os

from . import base
from .base import ActionWrite, GameRow, LoggedAction
from .sql import APPLICATION_ID
from .sqlite import (
    BUSY_TIMEOUT_MS,
    MIGRATIONS,
    SCHEMA_VERSION,
    Store,
    Tx,
)

__all__ = [
    "APPLICATION_ID",
    "BUSY_TIMEOUT_MS",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "ActionWrite",
    "GameRow",
    "LoggedAction",
    "Store",
    "Tx",
    "base",
    "is_postgres",
    "open_store",
]


def is_postgres(name: str | os.PathLike[str]) -> bool:
    """Whether ``name`` (``DURAK_DB``) is a PostgreSQL URL rather than a SQLite file."""
    return isinstance(name, str) and name.startswith(("postgresql://", "postgres://"))


async def open_store(name: str | os.PathLike[str], *, check: str = "quick") -> base.Store:
    """Open the database ``name`` names: a ``postgresql://`` (or ``postgres://``) URL
    opens the PostgreSQL store, anything else is a SQLite file (see
    :meth:`durak.store.sqlite.Store.open` for ``check``)."""
    if is_postgres(name):
        from . import postgres  # asyncpg is imported only by those who use it

        return await postgres.Store.open(str(name), check=check)
    return await Store.open(name, check=check)
