"""Reading (and, to damage it, writing) a test database directly, whichever it is.

A test database is a ``Path`` (a SQLite file) or a ``postgresql://`` URL. Tests
check the store with their own SQL through these helpers, never through the
store's code. SQL is written once with ``?`` placeholders; for PostgreSQL they
become ``$1, $2, ...``. Synchronous, usable inside a running event loop (the
PostgreSQL calls run on a thread of their own).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Db = Path | str

_PLACEHOLDER = re.compile(r"\?")
_names = itertools.count()


def is_pg(db: Db) -> bool:
    return isinstance(db, str) and db.startswith("postgresql://")


def pg_sql(sql: str) -> str:
    counter = itertools.count(1)
    return _PLACEHOLDER.sub(lambda _: f"${next(counter)}", sql)


def _in_thread(coro_fn: Any) -> Any:
    """Run ``coro_fn()`` to completion on a new event loop in another thread."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro_fn())
        except BaseException as e:
            box["error"] = e

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def pg_run(
    url: str, statements: Sequence[tuple[str, Sequence[Any]]]
) -> list[list[tuple[Any, ...]]]:
    """Run statements (``?`` placeholders) in one connection; each one's rows."""
    import asyncpg

    async def main() -> list[list[tuple[Any, ...]]]:
        conn = await asyncpg.connect(url)
        try:
            return [
                [tuple(r) for r in await conn.fetch(pg_sql(sql), *params)]
                for sql, params in statements
            ]
        finally:
            await conn.close()

    result: list[list[tuple[Any, ...]]] = _in_thread(main)
    return result


def db_rows(db: Db, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Read the database directly (independent of the store's code)."""
    if is_pg(db):
        return pg_run(str(db), [(sql, params)])[0]
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def db_execute(db: Db, sql: str, params: Sequence[Any] = ()) -> None:
    """Change the database directly, as a damaged disk or another program would."""
    if is_pg(db):
        pg_run(str(db), [(sql, params)])
        return
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute(sql, params)
    finally:
        conn.close()


def db_exists(db: Db) -> bool:
    return True if is_pg(db) else Path(db).exists()


def create_database(server_url: str) -> str:
    """A new, empty database on the server; its URL."""
    name = f"t{os.getpid()}_{next(_names)}"
    pg_run(server_url, [(f"CREATE DATABASE {name}", ())])
    return server_url.rsplit("/", 1)[0] + "/" + name


def drop_database(url: str) -> None:
    server, name = url.rsplit("/", 1)
    pg_run(f"{server}/postgres", [(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", ())])
