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


class _Connections:
    """One event loop on a thread of its own, with a connection per database kept open:
    a test that checks the database after each of hundreds of steps should not pay a
    connection (a new backend process on the server) for every check."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._open: dict[str, Any] = {}
        self._guard = threading.Lock()

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, daemon=True).start()
            return self._loop

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop()).result()

    async def get(self, url: str) -> Any:
        import asyncpg

        conn = self._open.get(url)
        if conn is None or conn.is_closed():
            conn = self._open[url] = await asyncpg.connect(url)
        return conn

    async def forget(self, url: str) -> None:
        conn = self._open.pop(url, None)
        if conn is not None and not conn.is_closed():
            await conn.close()


_connections = _Connections()


def pg_run(
    url: str, statements: Sequence[tuple[str, Sequence[Any]]], *, snapshot: bool = False
) -> list[list[tuple[Any, ...]]]:
    """Run statements (``?`` placeholders), several in one transaction; each one's rows.

    ``snapshot``: the transaction reads one snapshot (REPEATABLE READ); PostgreSQL's
    default, READ COMMITTED, lets each statement see commits that landed meanwhile."""

    async def main() -> list[list[tuple[Any, ...]]]:
        conn = await _connections.get(url)
        try:
            if len(statements) == 1:  # CREATE DATABASE may not run in a transaction
                sql, params = statements[0]
                return [[tuple(r) for r in await conn.fetch(pg_sql(sql), *params)]]
            isolation = "repeatable_read" if snapshot else None
            async with conn.transaction(isolation=isolation):
                return [
                    [tuple(r) for r in await conn.fetch(pg_sql(sql), *params)]
                    for sql, params in statements
                ]
        except BaseException:
            await _connections.forget(url)
            raise

    result: list[list[tuple[Any, ...]]] = _connections.run(main())
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
    _connections.run(_connections.forget(url))
    pg_run(f"{server}/postgres", [(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)", ())])
