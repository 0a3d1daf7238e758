"""The PostgreSQL store (asyncpg): its pool, transactions and hot writes.

The statements and the schema are both stores' (:mod:`.sql`, :mod:`.migrations`);
what is PostgreSQL's own here is the hot writes' one statement each.

``DURAK_DB=postgresql://user:password@host:port/database`` selects it. The games
then live on a database server that outlives any machine of the bot, and
several bot processes may share it, one active at a time (:mod:`durak.store.lease`).

The same schema and guarantees as the SQLite store (:mod:`durak.store.base`):
an append-only action log (triggers refuse UPDATE, DELETE and TRUNCATE, and an
entry that does not carry its game's new version), one open game per chat (a
partial unique index), tallies, settings, timers and messages. The fence is the
version check: an action's ``UPDATE games ... WHERE version = N - 1`` takes the
row's lock, and a second writer of version N re-checks the row after the first
one commits and finds nothing to update, whichever process it runs in.

A pool of 2-8 connections. The hot writes (an action, a deadline, a message id)
are one statement each, so one round trip and one commit. Other writes run in
a transaction each, one at a time per process (as on SQLite: the service's
read-then-write transactions never interleave), while reads and hot writes use
the pool concurrently. ``synchronous_commit`` stays the server's (``on`` by
default): a committed action survives the server's crash too.

Schema versions are counted in the table ``durak_schema``, independently of the
SQLite store's ``user_version``; a database newer than this code is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from ..service.errors import DatabaseError
from .base import ActionWrite
from .migrations import Migration, versions
from .sql import APPLICATION_ID, DROP_TIMER, POSTGRES, SqlTx

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Advisory lock keys are (APPLICATION_ID, purpose): "DRK1", as the SQLite store's
#: ``application_id``, so they do not collide with another program's locks.
MIGRATION_LOCK = 0  # held while migrating (two bots starting at once on a new database)
BOT_LEASE = 1  # held by the active bot (see durak.store.lease)
POOL_MIN, POOL_MAX = 2, 8
CONNECT_TIMEOUT_S = 10.0
#: The errors of the database or of the way to it; all come out as DatabaseError.
_FAILURES = (
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,  # e.g. a connection the server dropped mid-use
    OSError,
    asyncio.TimeoutError,
)


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


#: The tables of schema 1: a database holding one of them without ``durak_schema``
#: belongs to another program.
_TABLES = ("chats", "users", "games", "seats", "actions", "tallies", "messages", "timers")
#: Ordered: ``MIGRATIONS[k]`` takes a database from version k to k + 1 (the steps of
#: :mod:`durak.store.migrations`; version 1 holds the first two).
MIGRATIONS: tuple[Migration, ...] = versions(POSTGRES)
SCHEMA_VERSION = len(MIGRATIONS)


# ---- the store ----------------------------------------------------------------------


async def _keep_session(conn: asyncpg.Connection) -> None:
    """The pool's reset: nothing. asyncpg's default runs ``RESET ALL``, ``UNLISTEN`` and
    ``pg_advisory_unlock_all()``, a round trip per release; our statements leave no
    session state (the lease has its own connection), and asyncpg still rolls back
    an open transaction."""


class Store:
    """The database. Open with ``await Store.open(url)``; close with ``close()``."""

    def __init__(self, pool: asyncpg.Pool, url: str) -> None:
        self._pool = pool
        self._writer = asyncio.Lock()  # write transactions, one at a time
        self._closed = False
        self.path = redact(url)
        #: The bot's lease (durak/store/lease.py): asked before every write; it raises
        #: (and ends the process) when another process may be the active one by now.
        self.fence: Callable[[], Awaitable[None]] | None = None
        self.checkpointed: Callable[[], None] | None = None  # the server checkpoints its own

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        check: str = "quick",
        min_size: int = POOL_MIN,
        max_size: int = POOL_MAX,
        timeout: float = CONNECT_TIMEOUT_S,
    ) -> Store:
        """Connect, check the database is ours and not newer than us, migrate it.

        ``check`` is accepted for the SQLite store's sake: the server checks its own
        pages. Raises :class:`DatabaseError` for a server that cannot be reached or
        refuses us, another program's tables, or a newer schema."""
        del check
        where = redact(url)
        try:
            pool = await asyncpg.create_pool(
                url,
                min_size=min_size,
                max_size=max_size,
                timeout=timeout,
                command_timeout=60,
                reset=_keep_session,
                server_settings={"application_name": "durak"},
            )
        except _FAILURES as e:
            raise DatabaseError(f"cannot open the database {where}: {_reason(e)}") from e
        except ValueError as e:  # a malformed URL
            raise DatabaseError(f"cannot open the database {where}: {e}") from e
        store = cls(pool, url)
        try:
            await store._setup()
        except BaseException:
            await store._close_quietly()
            raise
        return store

    async def _setup(self) -> None:
        async with self.transaction() as tx:
            # Two bots starting on a new database at once: one migrates, the other waits.
            await tx.execute(
                "SELECT pg_advisory_xact_lock($1, $2)", (APPLICATION_ID, MIGRATION_LOCK)
            )
            if await tx.scalar("SELECT to_regclass('durak_schema') IS NULL"):
                foreign = await tx.rows(
                    "SELECT tablename FROM pg_tables"
                    " WHERE schemaname = current_schema() AND tablename = ANY($1::text[])",
                    (list(_TABLES),),
                )
                if foreign:
                    names = ", ".join(sorted(r[0] for r in foreign))
                    raise DatabaseError(
                        f"{self.path} holds another program's tables ({names}), not a durak store"
                    )
                await tx.execute("CREATE TABLE durak_schema (version integer NOT NULL)")
                await tx.execute("INSERT INTO durak_schema VALUES (0)")
            version = await tx.scalar("SELECT version FROM durak_schema")
            if not isinstance(version, int) or version > SCHEMA_VERSION:
                raise DatabaseError(
                    f"{self.path} has schema version {version}, newer than this program"
                    f" knows ({SCHEMA_VERSION}); upgrade the program"
                )
            for k in range(version, SCHEMA_VERSION):
                await MIGRATIONS[k](tx)
                await tx.execute("UPDATE durak_schema SET version = $1", (k + 1,))

    async def check(self, full: bool = False) -> list[str]:
        """Problems with the schema; the server guards its own pages (and checksums)."""
        async with self.reading() as tx:
            found = await tx.scalar("SELECT version FROM durak_schema")
        return [] if found == SCHEMA_VERSION else [f"schema version {found}"]

    async def copy_to(self, target: str) -> None:
        """The server keeps the data (pg_dump copies it): nothing to save from here."""
        raise DatabaseError(f"a PostgreSQL database is not copied to a file ({target})")

    async def hold_checkpoints(self) -> None:
        """The server writes its own files: nothing to hold."""

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        """A write transaction, committed at the end of the block or rolled back on
        any exception; one at a time in this process."""
        async with self._writer, self._connection("read_committed", False) as tx:
            yield tx

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[Tx]:
        """A read-only transaction: one consistent snapshot of the database."""
        async with self._connection("repeatable_read", True) as tx:
            yield tx

    @asynccontextmanager
    async def _connection(self, isolation: str, readonly: bool) -> AsyncIterator[Tx]:
        if self._closed:
            raise DatabaseError("the store is closed")
        try:
            async with self._pool.acquire() as conn:
                if not readonly and self.fence is not None:
                    await self.fence()
                try:
                    await _whole(conn.execute(_BEGIN[isolation, readonly]))
                    yield Tx(conn)
                except BaseException:
                    # Also when cancelled right after BEGIN: never hand the pool an open
                    # transaction. A failed ROLLBACK (the connection is gone) changes
                    # nothing the server keeps; the first error is the one to tell.
                    if conn.is_in_transaction():
                        with contextlib.suppress(*_FAILURES):
                            await _whole(conn.execute("ROLLBACK"))
                    raise
                await _whole(conn.execute("COMMIT"))
        except _FAILURES as e:
            raise DatabaseError(f"database failure: {_reason(e)}") from e

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                await asyncio.wait_for(self._pool.close(), 10)
            except (*_FAILURES, TimeoutError):
                self._pool.terminate()

    async def _close_quietly(self) -> None:
        self._closed = True
        self._pool.terminate()

    # ---- hot writes: one statement each -------------------------------------------

    async def _hot(self, sql: str, *args: Any) -> asyncpg.Record | None:
        if self._closed:
            raise DatabaseError("the store is closed")
        try:
            async with self._pool.acquire() as conn:
                if self.fence is not None:
                    await self.fence()
                found: asyncpg.Record | None = await _whole(conn.fetchrow(sql, *args))
                return found
        except _FAILURES as e:
            raise DatabaseError(f"database failure: {_reason(e)}") from e

    async def record_action(self, write: ActionWrite) -> bool:
        """One action in one statement. ``False`` if the game is no longer running at
        ``write.version - 1`` (someone acted first); nothing is written then."""
        if write.rated is not None:
            return await self._record_rated(write)
        found = await self._hot(_RECORD_ACTION, *_action_params(write))
        return found is not None and found[0] == 1

    async def _record_rated(self, w: ActionWrite) -> bool:
        """The action that ends a rated game: its statement and the ratings in one
        transaction (once a game, so not the one-statement hot path)."""
        assert w.ending is not None and w.rated is not None
        async with self.transaction() as tx:
            moved = await tx.scalar(_RECORD_ACTION, _action_params(w))
            if moved != 1:
                return False
            await tx.rate_game(w.rated)
        return True

    async def put_deadline(self, game_id: int, version: int, deadline: float | None) -> bool | None:
        """Store (or with ``None`` drop) the game's turn deadline, kept only while the game
        is running at ``version``. ``True`` if stored or dropped, ``False`` if not,
        ``None`` if there is no such game."""
        if deadline is None:
            await self._hot(_DROP_TIMER, game_id)
            return True
        found = await self._hot(_PUT_TIMER, game_id, version, deadline)
        assert found is not None
        stored, exists = found
        return True if stored else (False if exists else None)

    async def put_message(
        self, game_id: int, kind: str, chat_id: int, message_id: int | None
    ) -> bool:
        """Remember (or with ``None`` forget) a message posted for a game. ``False``, with
        nothing written, if there is no such game."""
        if message_id is None:
            found = await self._hot(_FORGET_MESSAGE, game_id, kind, chat_id)
            return found is not None and bool(found[0])
        return await self._hot(_PUT_MESSAGE, game_id, kind, chat_id, message_id) is not None


_BEGIN = {
    ("read_committed", False): "BEGIN ISOLATION LEVEL READ COMMITTED",
    ("repeatable_read", True): "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
}


async def _whole(statement: Awaitable[T]) -> T:
    """Await a statement to its answer even if the caller is cancelled meanwhile, then
    pass the cancellation on.

    asyncpg meets a cancelled statement with a cancel request to the server, and a
    ``BEGIN`` or ``COMMIT`` cut short that way can leave the server in a transaction the
    client no longer knows of: the pool then hands out a connection whose next ``BEGIN``
    fails. A statement takes a millisecond, so a shutdown can wait for it; and because
    the caller hears of its cancellation only once the statement has committed or not,
    whatever it reads next already sees the outcome (as on SQLite, whose batch runs to
    its COMMIT)."""
    task = asyncio.ensure_future(statement)
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait((task,))
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        if not task.cancelled():
            task.exception()  # retrieved: the cancellation is what the caller hears
        raise asyncio.CancelledError
    return task.result()


def _reason(e: BaseException) -> str:
    return str(e) or type(e).__name__


# The action: move the game on (only from version - 1, only while running), log the
# step, and when it ends the game also drop its timer and add the tallies. The log's
# INSERT reads from "moved", so it runs after the UPDATE and sees the new version.
_RECORD_ACTION = """
WITH moved AS (
    UPDATE games SET version = $3, snapshot = $4, updated_at = $5,
        status = CASE WHEN $6::text IS NULL THEN status ELSE 'finished' END,
        end_reason = $6, losers = $7, draw = $8, ended_by = $9,
        finished_at = CASE WHEN $6::text IS NULL THEN finished_at ELSE $5 END
    WHERE game_id = $1 AND version = $3 - 1 AND status = 'running'
    RETURNING game_id, status
), logged AS (
    INSERT INTO actions (game_id, version, seat, user_id, step, created_at)
    SELECT game_id, $3, $10, $11, $12, $5 FROM moved
), unset AS (
    DELETE FROM timers WHERE game_id IN (SELECT game_id FROM moved WHERE status = 'finished')
), tallied AS (
    INSERT INTO tallies AS t (chat_id, user_id, played, losses, draws)
    SELECT $2, u.user_id, 1, u.losses, u.draws
    FROM unnest($13::bigint[], $14::integer[], $15::integer[]) AS u (user_id, losses, draws)
    WHERE EXISTS (SELECT 1 FROM moved)
    ON CONFLICT (chat_id, user_id) DO UPDATE SET played = t.played + 1,
        losses = t.losses + excluded.losses, draws = t.draws + excluded.draws
)
SELECT count(*) FROM moved
"""
_DROP_TIMER = DROP_TIMER
_PUT_TIMER = """
WITH put AS (
    INSERT INTO timers (game_id, version, deadline)
    SELECT game_id, version, $3 FROM games
    WHERE game_id = $1 AND status = 'running' AND version = $2
    ON CONFLICT (game_id) DO UPDATE SET version = excluded.version, deadline = excluded.deadline
    RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM put), EXISTS (SELECT 1 FROM games WHERE game_id = $1)
"""
_PUT_MESSAGE = """
INSERT INTO messages (game_id, kind, chat_id, message_id)
SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM games WHERE game_id = $1)
ON CONFLICT (game_id, kind, chat_id) DO UPDATE SET message_id = excluded.message_id
RETURNING 1
"""
_FORGET_MESSAGE = """
WITH gone AS (DELETE FROM messages WHERE game_id = $1 AND kind = $2 AND chat_id = $3)
SELECT EXISTS (SELECT 1 FROM games WHERE game_id = $1)
"""


def _action_params(w: ActionWrite) -> tuple[Any, ...]:
    """``_RECORD_ACTION``'s parameters for one action (and the game's end, if it ends)."""
    e = w.ending
    return (
        w.game_id,
        w.chat_id,
        w.version,
        w.snapshot,
        w.now,
        None if e is None else e.reason,
        None if e is None else json.dumps(list(e.losers)),
        None if e is None else e.draw,
        None if e is None else e.by_user,
        w.seat,
        w.user_id,
        w.step,
        *_tally_arrays(w.tallies),
    )


def _tally_arrays(rows: Sequence[tuple[int, int, int]]) -> tuple[list[int], ...]:
    return tuple(list(c) for c in zip(*rows, strict=True)) if rows else ([], [], [])


class Tx(SqlTx):
    """The statements (:class:`~durak.store.sql.SqlTx`), used inside
    :meth:`Store.transaction` or :meth:`Store.reading`, on one of the pool's connections."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; the number of rows it changed (from its status tag)."""
        status: str = await _whole(self._conn.execute(sql, *params))
        last = status.rpartition(" ")[2]
        return int(last) if last.isdigit() else 0

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            await _whole(self._conn.executemany(sql, rows))

    async def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in await _whole(self._conn.fetch(sql, *params))]

    async def row(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        found = await _whole(self._conn.fetchrow(sql, *params))
        return None if found is None else tuple(found)

    async def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return await _whole(self._conn.fetchval(sql, *params))

    async def lock_chat(self, chat_id: int) -> None:
        await self.execute("SELECT 1 FROM chats WHERE chat_id = $1 FOR UPDATE", (chat_id,))

    # PostgreSQL compares text by the database's locale; the order is SQLite's, bytewise.
    _MESSAGES_ORDER = 'kind COLLATE "C", chat_id'
