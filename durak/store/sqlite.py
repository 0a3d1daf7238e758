"""The SQLite store (the default): its connections, transactions and hot writes.

The statements and the schema are both stores' (:mod:`.sql`, :mod:`.migrations`),
written with PostgreSQL's ``$n``: :class:`Tx` rewrites them to ``?n``.

One aiosqlite connection does the reads and the transactions. It runs in
autocommit mode; :meth:`Store.transaction` opens ``BEGIN IMMEDIATE`` so a
transaction takes the write lock up front and never fails half-way with
``SQLITE_BUSY`` on its first write. An asyncio lock serialises transactions on
the shared connection, because two coroutines interleaving statements on one
connection would share one transaction.

The hot writes (an action, a deadline, a message id: what every press writes) go
through a second connection used on the event loop's own thread, under the same
asyncio lock (so no other transaction of ours is open meanwhile: it never waits for
SQLite's write lock). A commit in WAL mode with ``synchronous=NORMAL`` is a write to
the WAL file, no fsync: some 0.1 ms, less than handing the batch to aiosqlite's
thread, which must win the GIL back from a busy loop for every statement (about 2 ms
a write under load, BENCHMARKS.md). What could block the loop is kept off it: that
connection never checkpoints (a third one, on a thread of its own, does it, with
its fsync), and it does not wait for a lock (``busy_timeout`` 0): a batch that finds
the database locked by another program goes the old way, on aiosqlite's thread,
which waits up to ``busy_timeout``. An in-memory database has no second connection
to it: there every write goes the old way.

Durability: WAL with ``synchronous=NORMAL`` loses nothing committed when the
process dies (the commit is in the WAL file); a power cut may lose the last
transactions, never corrupt the file. That is SQLite's documented trade-off.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite

from ..service.errors import DatabaseError
from ..service.ratings import RatedGame
from . import sql
from .base import ActionWrite
from .health import WriteHealth
from .migrations import Migration, versions
from .sql import APPLICATION_ID, SQLITE, SqlTx, to_sqlite

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 5000
#: How often the WAL is checkpointed while hot writes go on (seconds; each checkpoint
#: copies what the WAL holds into the database file, off the event loop).
CHECKPOINT_EVERY = 1.0
#: The WAL's size (in pages) at which a checkpoint also starts the WAL file over: hot
#: writes wait for it (on aiosqlite's thread, see the module), so it is not every time.
WAL_RESTART_FRAMES = 1000
#: Seconds without a WAL restart after one found a reader in its way (a long read by
#: another program, a backup): while a restart waits, the hot writes wait too.
RESTART_BACKOFF = 60.0
#: SQLite's result codes for "another connection holds the lock".
_LOCKED_CODES = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


#: Ordered: ``MIGRATIONS[k]`` takes a database from ``user_version`` k to k + 1 (the
#: steps of :mod:`durak.store.migrations`, one version each).
MIGRATIONS: tuple[Migration, ...] = versions(SQLITE)
SCHEMA_VERSION = len(MIGRATIONS)


# ---- the store ----------------------------------------------------------------------


class Store:
    """The database. Open with ``await Store.open(path)``; close with ``close()``."""

    def __init__(self, conn: aiosqlite.Connection, path: str) -> None:
        self._conn = conn
        self._lock = asyncio.Lock()
        self._tx = Tx(conn)
        self._closed = False
        self._queued: list[_Job] = []  # hot writes waiting for the next group commit
        self._flusher: asyncio.Task[None] | None = None
        self._hot: sqlite3.Connection | None = None  # the hot writes', on the loop's thread
        self._checkpointer: aiosqlite.Connection | None = None
        self._checkpointing: asyncio.Task[None] | None = None
        self._checkpointed = 0.0  # the loop's time of the last checkpoint started
        self._restart_after = 0.0  # the loop's time before which no WAL restart is tried
        self._checkpoints_held = False  # the file is not ours any more: see hold_checkpoints
        self.path = path
        self.health = WriteHealth(path)
        #: one file, one process: no lease (see base.Store.fence)
        self.fence: Callable[[], Awaitable[None]] | None = None
        #: called after each checkpoint this store ran (see base.Store.checkpointed)
        self.checkpointed: Callable[[], None] | None = None

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        check: str = "quick",
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> Store:
        """Open (or create) the database, check it is ours and sound, migrate it.

        ``check`` is ``"quick"`` (``PRAGMA quick_check``), ``"full"``
        (``integrity_check``) or ``"none"``. Raises :class:`DatabaseError` for a
        file that is not SQLite, damaged, another program's, or newer than us.
        """
        name = os.fspath(path)
        # Checked up front: a failed aiosqlite.connect leaves its worker thread behind.
        if name not in (":memory:", "") and not name.startswith("file:"):
            folder = os.path.dirname(os.path.abspath(name))
            if os.path.isdir(name):
                raise DatabaseError(f"the database path {name!r} is a folder, not a file")
            if not os.path.isdir(folder):
                raise DatabaseError(f"the folder of the database {name!r} does not exist")
        try:
            conn = await aiosqlite.connect(name, isolation_level=None)
        except sqlite3.Error as e:
            raise DatabaseError(f"cannot open the database {name!r}: {e}") from e
        store = cls(conn, name)
        try:
            await store._setup(check, busy_timeout_ms)
            if name not in (":memory:", "") and not name.startswith("file:"):
                await store._open_hot(name)
        except sqlite3.Error as e:
            await store._close_quietly()
            raise DatabaseError(f"the database {name!r} cannot be used: {e}") from e
        except BaseException:
            await store._close_quietly()
            raise
        return store

    async def _setup(self, check: str, busy_timeout_ms: int) -> None:
        tx = self._tx
        await tx.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        mode = await tx.scalar("PRAGMA journal_mode = WAL")
        if mode != "wal" and self.path not in (":memory:", ""):
            raise DatabaseError(f"{self.path!r}: cannot use WAL journaling (got {mode!r})")
        await tx.execute("PRAGMA synchronous = NORMAL")
        await tx.execute("PRAGMA foreign_keys = ON")
        if check != "none":
            problems = await self.check(full=check == "full")
            if problems:
                raise DatabaseError(f"{self.path!r} is damaged: {'; '.join(problems[:3])}")
        async with self.transaction() as tx:
            app = await tx.scalar("PRAGMA application_id")
            version = await tx.scalar("PRAGMA user_version")
            if app == 0 and version == 0:
                if await tx.scalar("SELECT count(*) FROM sqlite_master"):
                    raise DatabaseError(
                        f"{self.path!r} is another program's SQLite database, not a durak store"
                    )
            elif app != APPLICATION_ID:
                raise DatabaseError(
                    f"{self.path!r} is another program's SQLite database"
                    f" (application_id {app:#x}), not a durak store"
                )
            if not isinstance(version, int) or version > SCHEMA_VERSION:
                raise DatabaseError(
                    f"{self.path!r} has schema version {version}, newer than this program"
                    f" knows ({SCHEMA_VERSION}); upgrade the program"
                )
            for k in range(version, SCHEMA_VERSION):
                await MIGRATIONS[k](tx)
                await tx.execute(f"PRAGMA user_version = {k + 1}")

    async def _open_hot(self, name: str) -> None:
        """The hot writes' connection (the event loop's thread) and the checkpointer's."""
        hot = sqlite3.connect(name, isolation_level=None, check_same_thread=False)
        try:
            hot.execute("PRAGMA busy_timeout = 0")  # never wait on the loop: go the old way
            hot.execute("PRAGMA synchronous = NORMAL")
            hot.execute("PRAGMA foreign_keys = ON")
            hot.execute("PRAGMA wal_autocheckpoint = 0")  # the checkpointer's job, off the loop
        except BaseException:
            hot.close()
            raise
        self._hot = hot
        # a checkpoint that must wait (a RESTART waits for the writer and the readers) gives
        # up after a second and is tried again later: closing the store waits for it
        self._checkpointer = await aiosqlite.connect(name, isolation_level=None, timeout=1.0)

    async def check(self, full: bool = False) -> list[str]:
        """The problems ``quick_check`` (or ``integrity_check``) finds; empty if sound."""
        async with self._lock:
            rows = await self._tx.rows(f"PRAGMA {'integrity_check' if full else 'quick_check'}")
        lines = [str(r[0]) for r in rows]
        return [] if lines == ["ok"] else lines

    async def copy_to(self, target: str) -> None:
        """``VACUUM INTO`` through the open connection: every committed write, the WAL's
        too, even when the file at ``self.path`` is gone or another (see bot/dbguard.py)."""
        async with self._lock:
            if self._closed:
                raise DatabaseError("the store is closed")
            try:
                await self._conn.execute("VACUUM INTO ?", (target,))
            except sqlite3.Error as e:
                raise DatabaseError(f"cannot copy the database to {target}: {e}") from e

    async def hold_checkpoints(self) -> None:
        """No more checkpoints, ours or SQLite's automatic ones: the file at the path was
        overwritten in place (bot/dbguard.py), and copying the WAL's pages into it would
        only mix the two. Writes go on into the WAL, where :meth:`copy_to` reads them."""
        self._checkpoints_held = True
        if self._checkpointing is not None:
            with contextlib.suppress(Exception):
                await self._checkpointing
        async with self._lock:
            if not self._closed:  # (fetched: an open cursor would keep a statement going)
                await self._conn.execute_fetchall("PRAGMA wal_autocheckpoint = 0")

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        """A write transaction: ``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` on
        any exception. SQLite errors come out as :class:`DatabaseError`."""
        async with self._locked("BEGIN IMMEDIATE") as tx:
            yield tx

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[Tx]:
        """A read transaction: one consistent view of the database."""
        async with self._locked("BEGIN") as tx:
            yield tx

    @asynccontextmanager
    async def _locked(self, begin: str) -> AsyncIterator[Tx]:
        async with self._lock:
            if self._closed:
                raise DatabaseError("the store is closed")
            writing = begin != "BEGIN"
            try:
                await self._conn.execute(begin)
                yield self._tx
                await self._conn.execute("COMMIT")
            except BaseException as e:
                await self._rollback()
                if isinstance(e, sqlite3.Error):
                    if writing:
                        self.health.failed(e)
                    raise DatabaseError(f"database failure: {e}") from e
                raise
            if writing:
                self.health.worked()

    async def _rollback(self) -> None:
        # Always through the connection's queue: a statement whose caller was
        # cancelled may still be running there, and the rollback must follow it.
        # An error means no transaction was open (BEGIN or COMMIT failed): nothing to undo.
        with contextlib.suppress(sqlite3.Error):
            await self._conn.execute("ROLLBACK")

    async def close(self) -> None:
        async with self._lock:
            if not self._closed:
                self._closed = True
                await self._close_side_connections()
                await self._conn.close()  # the last one: it checkpoints the WAL away

    async def _close_side_connections(self) -> None:
        if self._checkpointing is not None:
            with contextlib.suppress(Exception):
                await self._checkpointing
        if self._hot is not None:
            self._hot.close()
            self._hot = None
        if self._checkpointer is not None:
            with contextlib.suppress(Exception):
                await self._checkpointer.close()
            self._checkpointer = None

    async def record_action(self, write: ActionWrite) -> bool:
        """One action, committed with whatever other hot writes are waiting (see
        :meth:`_write`). ``False`` if the game is no longer at ``write.version - 1``
        (someone acted first); nothing is written then."""
        return bool(await self._write(_action_statements, write))

    async def put_deadline(self, game_id: int, version: int, deadline: float | None) -> bool | None:
        """Store (or with ``None`` drop) the game's turn deadline, kept only while the game
        is running at ``version``; a hot write (the bot stores one after every action).
        ``True`` if stored or dropped, ``False`` if not, ``None`` if there is no such game."""
        result: bool | None = await self._write(_deadline_statements, game_id, version, deadline)
        return result

    async def put_message(
        self, game_id: int, kind: str, chat_id: int, message_id: int | None
    ) -> bool:
        """Remember (or with ``None`` forget) a message posted for a game; a hot write (the
        bot posts a new panel whenever a player must act). ``False``, with nothing written,
        if there is no such game."""
        return bool(await self._write(_message_statements, game_id, kind, chat_id, message_id))

    async def _write(self, statements: Callable[..., Any], *args: Any) -> Any:
        """Run ``statements(conn, *args)`` in a write transaction shared with the other hot
        writes waiting at that moment (group commit).

        The hot path. Awaiting BEGIN, UPDATE, INSERT and COMMIT one by one costs a thread
        round trip each, and each trip waits for a busy event loop to come round, all while
        the store's lock is held. So the whole ``BEGIN IMMEDIATE`` ... ``COMMIT`` runs as
        one function (:meth:`_run_batch`): on the loop's thread through the hot writes'
        connection, or, when that cannot have the lock at once, on aiosqlite's worker thread
        via ``Connection._execute`` (the primitive every aiosqlite call is built on); for
        every write queued meanwhile, each inside its own SAVEPOINT: an SQLite error undoes
        that write alone and fails its caller alone.
        A caller cancelled before its batch starts is left out; once it started, the batch
        runs to its COMMIT or ROLLBACK: a transaction is never left half-done."""
        if self._closed:
            raise DatabaseError("the store is closed")
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queued.append((statements, args, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name="store writes")
        return await done

    async def _flush(self) -> None:
        """Commit queued hot writes, a batch at a time, until none is left."""
        batch: list[_Job] = []
        try:
            while self._queued:
                async with self._lock:
                    batch = [job for job in self._queued if not job[2].cancelled()]
                    self._queued = []
                    if not batch:
                        continue
                    if self._closed:
                        _fail(batch, DatabaseError("the store is closed"))
                        continue
                    try:
                        results = await self._run_batch([job[:2] for job in batch])
                    except sqlite3.Error as e:
                        self.health.failed(e)
                        _fail(batch, DatabaseError(f"database failure: {e}"))
                        continue
                    except Exception as e:  # a bug in the statements: every caller hears of it
                        _fail(batch, e)
                        continue
                    errors = [r for r in results if isinstance(r, sqlite3.Error)]
                    for error in errors:
                        self.health.failed(error)
                    if not errors:
                        self.health.worked()
                    for (_, _, done), result in zip(batch, results, strict=True):
                        if done.done():
                            continue
                        if isinstance(result, sqlite3.Error):
                            done.set_exception(DatabaseError(f"database failure: {result}"))
                        else:
                            done.set_result(result)
                    batch = []
        except BaseException:  # cancelled (the loop is closing): nobody may wait forever
            _fail(batch + self._queued, DatabaseError("the store's writer was stopped"))
            self._queued = []
            raise

    async def _run_batch(self, jobs: list[tuple[Callable[..., Any], tuple[Any, ...]]]) -> list[Any]:
        """One group commit (the store's lock held): on the loop's thread if it can be
        had at once, else on aiosqlite's, which may wait for the lock (see the module)."""
        hot = self._hot
        if hot is not None:
            try:
                hot.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as e:
                if e.sqlite_errorcode & 0xFF not in _LOCKED_CODES:
                    raise
            else:
                done = _batch_body(hot, jobs)
                self._checkpoint_soon()
                return done
        results: list[Any] = await self._conn._execute(  # type: ignore[no-untyped-call]
            _batch_transaction, self._conn._conn, jobs
        )
        return results

    def _checkpoint_soon(self) -> None:
        """Start a checkpoint on its own connection if none ran for a while."""
        loop = asyncio.get_running_loop()
        if self._checkpointer is None or loop.time() - self._checkpointed < CHECKPOINT_EVERY:
            return
        if self._checkpoints_held:
            return
        if self._checkpointing is not None and not self._checkpointing.done():
            return
        self._checkpointed = loop.time()
        self._checkpointing = loop.create_task(self._checkpoint(), name="store checkpoint")

    async def _checkpoint(self) -> None:
        checkpointer = self._checkpointer
        if checkpointer is None:
            return
        loop = asyncio.get_running_loop()
        try:
            rows = list(await checkpointer.execute_fetchall("PRAGMA wal_checkpoint(PASSIVE)"))
            if rows and rows[0][1] >= WAL_RESTART_FRAMES and loop.time() >= self._restart_after:
                # A writer starts the WAL file over only if it began with the WAL wholly
                # copied, which a steady stream of writes never does: this waits for the
                # writer, copies the rest and makes the next writer start over.
                done = list(await checkpointer.execute_fetchall("PRAGMA wal_checkpoint(RESTART)"))
                if not done or done[0][0]:  # a reader in the way: leave it be for a while
                    self._restart_after = loop.time() + RESTART_BACKOFF
        except sqlite3.Error as e:  # the next one tries again; writes tell of real trouble
            self._restart_after = loop.time() + RESTART_BACKOFF
            log.debug("a WAL checkpoint failed: %s", e)
            return
        if self.checkpointed is not None:
            self.checkpointed()

    async def _close_quietly(self) -> None:
        self._closed = True
        with contextlib.suppress(Exception):  # a connection that failed to set up
            await self._close_side_connections()
        with contextlib.suppress(Exception):
            await self._conn.close()


# The hot writes' statements, SQLite's own: PostgreSQL writes an action in one
# statement (its store's _RECORD_ACTION), SQLite in a few on the hot connection.
_MOVE_ON = (
    "UPDATE games SET version = ?, snapshot = ?, updated_at = ?"
    " WHERE game_id = ? AND version = ? AND status = 'running'"
)
_MOVE_ON_AND_FINISH = (
    "UPDATE games SET version = ?, snapshot = ?, updated_at = ?, status = 'finished',"
    " end_reason = ?, losers = ?, draw = ?, ended_by = ?, finished_at = ?"
    " WHERE game_id = ? AND version = ? AND status = 'running'"
)
_LOG_ACTION = (
    "INSERT INTO actions (game_id, version, seat, user_id, step, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)
_DROP_TIMER = to_sqlite(sql.DROP_TIMER)
_ADD_TALLY = to_sqlite(sql.ADD_TALLY)
_STANDINGS, _EARNED = to_sqlite(sql.STANDINGS), to_sqlite(sql.EARNED)
_PUT_STANDING, _PUT_CHANGE = to_sqlite(sql.PUT_STANDING), to_sqlite(sql.PUT_CHANGE)
_PUT_FEAT = to_sqlite(sql.PUT_FEAT)


def _action_statements(conn: sqlite3.Connection, w: ActionWrite) -> bool:
    """The statements of one action, inside the caller's transaction."""
    if w.ending is None:
        cursor = conn.execute(_MOVE_ON, (w.version, w.snapshot, w.now, w.game_id, w.version - 1))
    else:
        e = w.ending
        cursor = conn.execute(
            _MOVE_ON_AND_FINISH,
            (
                w.version,
                w.snapshot,
                w.now,
                e.reason,
                json.dumps(list(e.losers)),
                int(e.draw),
                e.by_user,
                w.now,
                w.game_id,
                w.version - 1,
            ),
        )
    if cursor.rowcount != 1:
        return False
    conn.execute(_LOG_ACTION, (w.game_id, w.version, w.seat, w.user_id, w.step, w.now))
    if w.ending is not None:
        conn.execute(_DROP_TIMER, (w.game_id,))
    if w.tallies:
        _tally_statements(conn, w.chat_id, w.tallies)
    if w.rated is not None:
        _rating_statements(conn, w.rated)
    return True


def _rating_statements(conn: sqlite3.Connection, game: RatedGame) -> None:
    """:meth:`SqlTx.rate_game` on the hot connection, inside the action's transaction."""
    standings = conn.execute(_STANDINGS, (game.chat_id,)).fetchall()
    earned = conn.execute(_EARNED, (game.chat_id,)).fetchall()
    puts, changes, feats = sql.settled(game, standings, earned)
    conn.executemany(_PUT_STANDING, puts)
    conn.executemany(_PUT_CHANGE, changes)
    conn.executemany(_PUT_FEAT, feats)


def _tally_statements(
    conn: sqlite3.Connection, chat_id: int, rows: Sequence[tuple[int, int, int]]
) -> None:
    conn.executemany(_ADD_TALLY, [(chat_id, *r) for r in rows])


#: A hot write waiting for a group commit: its statements, their arguments, its result.
_Job = tuple[Callable[..., Any], tuple[Any, ...], "asyncio.Future[Any]"]


def _fail(jobs: list[_Job], error: BaseException) -> None:
    for _, _, done in jobs:
        if not done.done():
            done.set_exception(error)


def _batch_transaction(
    conn: sqlite3.Connection, jobs: list[tuple[Callable[..., Any], tuple[Any, ...]]]
) -> list[Any]:
    """Runs on the connection's thread: BEGIN IMMEDIATE, then :func:`_batch_body`."""
    conn.execute("BEGIN IMMEDIATE")
    return _batch_body(conn, jobs)


def _batch_body(
    conn: sqlite3.Connection, jobs: list[tuple[Callable[..., Any], tuple[Any, ...]]]
) -> list[Any]:
    """In a transaction just begun: each job in a SAVEPOINT of its own (an SQLite error
    undoes that job and becomes its result), then COMMIT; ROLLBACK if anything else fails."""
    results: list[Any] = []
    try:
        for statements, args in jobs:
            conn.execute("SAVEPOINT job")
            try:
                results.append(statements(conn, *args))
            except sqlite3.Error as e:
                conn.execute("ROLLBACK TO job")
                results.append(e)
            conn.execute("RELEASE job")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return results


def _deadline_statements(
    conn: sqlite3.Connection, game_id: int, version: int, deadline: float | None
) -> bool | None:
    """Store or drop a deadline; ``None`` if there is no such game."""
    if deadline is None:
        conn.execute(_DROP_TIMER, (game_id,))
        return True
    if conn.execute(_PUT_TIMER, (deadline, game_id, version)).rowcount == 1:
        return True
    return None if conn.execute(_GAME_EXISTS, (game_id,)).fetchone() is None else False


def _message_statements(
    conn: sqlite3.Connection, game_id: int, kind: str, chat_id: int, message_id: int | None
) -> bool:
    """Remember or forget a message; ``False`` (nothing written) if there is no such game."""
    if conn.execute(_GAME_EXISTS, (game_id,)).fetchone() is None:
        return False
    if message_id is None:
        conn.execute(_DROP_MESSAGE, (game_id, kind, chat_id))
    else:
        conn.execute(_PUT_MESSAGE, (game_id, kind, chat_id, message_id))
    return True


_DROP_MESSAGE = "DELETE FROM messages WHERE game_id = ? AND kind = ? AND chat_id = ?"
_PUT_MESSAGE = (
    "INSERT INTO messages (game_id, kind, chat_id, message_id) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (game_id, kind, chat_id) DO UPDATE SET message_id = excluded.message_id"
)
_PUT_TIMER = (
    "INSERT INTO timers (game_id, version, deadline)"
    " SELECT game_id, version, ? FROM games"
    " WHERE game_id = ? AND status = 'running' AND version = ?"
    " ON CONFLICT (game_id) DO UPDATE"
    " SET version = excluded.version, deadline = excluded.deadline"
)
_GAME_EXISTS = "SELECT 1 FROM games WHERE game_id = ?"


class Tx(SqlTx):
    """The statements (:class:`~durak.store.sql.SqlTx`), used inside
    :meth:`Store.transaction` or :meth:`Store.reading`, on the shared connection;
    each statement's ``$n`` become ``?n`` here."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; the number of rows it changed."""
        cursor = await self._conn.execute(to_sqlite(sql), params)
        return cursor.rowcount

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        await self._conn.executemany(to_sqlite(sql), rows)

    async def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in await self._conn.execute_fetchall(to_sqlite(sql), params)]
