"""The store: one interface (:mod:`.base`), a backend per database.

``open_store(name)`` picks the backend from the database's name. SQLite is the
default and needs nothing installed; ``Store``, ``Tx`` and the constants below
are its names, as they were when the store was one module.
"""

from __future__ import annotations

import os

from . import base
from .base import ActionWrite, GameRow, LoggedAction
from .sqlite import (
    APPLICATION_ID,
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
    "open_store",
]


async def open_store(name: str | os.PathLike[str], *, check: str = "quick") -> base.Store:
    """Open the database ``name`` names: today always a SQLite file (see
    :meth:`durak.store.sqlite.Store.open` for ``check``)."""
    return await Store.open(name, check=check)
