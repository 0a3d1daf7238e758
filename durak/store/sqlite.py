"""The SQLite store (the default): the schema, its migrations and every SQL statement.

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
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite

from ..service.errors import DatabaseError
from ..service.types import Deadline, Ending, MessageRef, Seat, Tally
from .base import ActionWrite, GameRow, LoggedAction
from .health import WriteHealth

log = logging.getLogger(__name__)

#: ``PRAGMA application_id`` of our databases: "DRK1". Set by the first migration,
#: it tells our file from any other SQLite database.
APPLICATION_ID = 0x44524B31
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

_GAME_COLUMNS = (
    "game_id, chat_id, status, creator_id, rules, previous_game_id, seed, start, version,"
    " snapshot, end_reason, losers, draw, ended_by, created_at, updated_at, thread_id, cap"
)


# ---- migrations ---------------------------------------------------------------------

_SCHEMA_1 = (
    f"PRAGMA application_id = {APPLICATION_ID}",
    """CREATE TABLE chats (
        chat_id     INTEGER PRIMARY KEY,
        title       TEXT,
        settings    TEXT NOT NULL DEFAULT '{}',  -- JSON: changed rules, turn_timeout, language
        updated_at  REAL NOT NULL
    )""",
    """CREATE TABLE users (
        user_id     INTEGER PRIMARY KEY,
        name        TEXT NOT NULL DEFAULT '',
        language    TEXT,
        updated_at  REAL NOT NULL
    )""",
    """CREATE TABLE games (
        game_id          INTEGER PRIMARY KEY AUTOINCREMENT,
        chat_id          INTEGER NOT NULL REFERENCES chats (chat_id),
        status           TEXT NOT NULL
                         CHECK (status IN ('lobby', 'running', 'finished', 'cancelled')),
        creator_id       INTEGER NOT NULL,
        rules            TEXT NOT NULL,          -- JSON: every option of RULES.md
        previous_game_id INTEGER REFERENCES games (game_id),  -- the series continues
        seed             TEXT,                   -- the deal is reproducible from it
        start            TEXT,                   -- JSON: the record's start (deck order)
        version          INTEGER NOT NULL DEFAULT 0,  -- = number of logged actions
        snapshot         TEXT,                   -- JSON: to_snapshot() minus start, history
        end_reason       TEXT CHECK (end_reason IN ('played', 'surrender', 'cancelled')),
        losers           TEXT,                   -- JSON list of seats
        draw             INTEGER,
        ended_by         INTEGER,                -- who surrendered or cancelled
        created_at       REAL NOT NULL,
        updated_at       REAL NOT NULL,
        started_at       REAL,
        finished_at      REAL
    )""",
    # One open lobby or running game per chat, enforced by the database itself.
    """CREATE UNIQUE INDEX games_one_open_per_chat ON games (chat_id)
        WHERE status IN ('lobby', 'running')""",
    "CREATE INDEX games_by_status ON games (status)",
    "CREATE INDEX games_by_previous ON games (previous_game_id)",
    """CREATE TABLE seats (
        game_id  INTEGER NOT NULL REFERENCES games (game_id),
        seat     INTEGER NOT NULL CHECK (seat >= 0),
        user_id  INTEGER NOT NULL,
        name     TEXT NOT NULL,
        kind     TEXT NOT NULL DEFAULT 'human' CHECK (kind IN ('human', 'ai')),
        level    TEXT,
        PRIMARY KEY (game_id, seat),
        UNIQUE (game_id, user_id)
    ) WITHOUT ROWID""",
    "CREATE INDEX seats_by_user ON seats (user_id)",
    """CREATE TABLE actions (
        game_id     INTEGER NOT NULL REFERENCES games (game_id),
        version     INTEGER NOT NULL CHECK (version >= 1),
        seat        INTEGER NOT NULL,
        user_id     INTEGER NOT NULL,
        step        TEXT NOT NULL,
        created_at  REAL NOT NULL,
        PRIMARY KEY (game_id, version)
    ) WITHOUT ROWID""",
    # The log is append-only, and each entry carries the version its game moved to.
    """CREATE TRIGGER actions_no_update BEFORE UPDATE ON actions
        BEGIN SELECT RAISE(ABORT, 'the action log is append-only'); END""",
    """CREATE TRIGGER actions_no_delete BEFORE DELETE ON actions
        BEGIN SELECT RAISE(ABORT, 'the action log is append-only'); END""",
    """CREATE TRIGGER actions_follow_version BEFORE INSERT ON actions
        WHEN NEW.version IS NOT (SELECT version FROM games WHERE game_id = NEW.game_id)
        BEGIN SELECT RAISE(ABORT, 'an action must carry its game''s new version'); END""",
    """CREATE TABLE tallies (
        chat_id  INTEGER NOT NULL,
        user_id  INTEGER NOT NULL,
        played   INTEGER NOT NULL DEFAULT 0,
        losses   INTEGER NOT NULL DEFAULT 0,
        draws    INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (chat_id, user_id)
    ) WITHOUT ROWID""",
    """CREATE TABLE messages (
        game_id     INTEGER NOT NULL REFERENCES games (game_id),
        kind        TEXT NOT NULL,
        chat_id     INTEGER NOT NULL,
        message_id  INTEGER NOT NULL,
        PRIMARY KEY (game_id, kind, chat_id)
    ) WITHOUT ROWID""",
)


async def _migrate_1(tx: Tx) -> None:
    """The first schema: chats, users, games, seats, the action log, tallies, messages."""
    for statement in _SCHEMA_1:
        await tx.execute(statement)


_SCHEMA_2 = (
    # Consecutive timed-out decisions of the seat's player, and whether that made him away.
    "ALTER TABLE seats ADD COLUMN timeouts INTEGER NOT NULL DEFAULT 0 CHECK (timeouts >= 0)",
    "ALTER TABLE seats ADD COLUMN away INTEGER NOT NULL DEFAULT 0 CHECK (away IN (0, 1))",
    # A running game's turn deadline for one version; deleted when the game ends.
    """CREATE TABLE timers (
        game_id   INTEGER PRIMARY KEY REFERENCES games (game_id),
        version   INTEGER NOT NULL,
        deadline  REAL NOT NULL       -- Unix time
    )""",
    # A chat's history (newest first) and moving a chat's games to its new id.
    "CREATE INDEX games_by_chat ON games (chat_id, finished_at)",
)


async def _migrate_2(tx: Tx) -> None:
    """Turn timers and absent players: ``seats.timeouts``/``away``, ``timers``.

    Stored chat settings are left as they are: version 1 wrote every key on each
    change, so a stored ``"turn_timeout": null`` stays "no limit" (what the chat
    saw in its menu), and only chats that never saved settings get the default.
    """
    for statement in _SCHEMA_2:
        await tx.execute(statement)


_SCHEMA_3 = (
    # The forum topic (message_thread_id) a game was opened in; 0 for a chat without
    # topics or its General topic. Existing games keep 0: they were all opened there.
    "ALTER TABLE games ADD COLUMN thread_id INTEGER NOT NULL DEFAULT 0",
    # One open lobby or running game per topic, instead of per chat.
    "DROP INDEX games_one_open_per_chat",
    """CREATE UNIQUE INDEX games_one_open_per_topic ON games (chat_id, thread_id)
        WHERE status IN ('lobby', 'running')""",
)


async def _migrate_3(tx: Tx) -> None:
    """Forum topics: ``games.thread_id``, and the open-game rule per (chat, topic)."""
    for statement in _SCHEMA_3:
        await tx.execute(statement)


_SCHEMA_4 = (
    # Play again is a lobby: who confirmed the next game; /leave hands a seat to the AI.
    "ALTER TABLE seats ADD COLUMN ready INTEGER NOT NULL DEFAULT 0 CHECK (ready IN (0, 1))",
    "ALTER TABLE seats ADD COLUMN has_left INTEGER NOT NULL DEFAULT 0 CHECK (has_left IN (0, 1))",
    # The lobby's cap of players chosen by its creator; NULL: the deck's maximum.
    "ALTER TABLE games ADD COLUMN cap INTEGER CHECK (cap >= 2)",
    # /notify_me: who wants a private message when a lobby opens in the chat.
    """CREATE TABLE notify (
        chat_id  INTEGER NOT NULL,
        user_id  INTEGER NOT NULL,
        since    REAL NOT NULL,
        PRIMARY KEY (chat_id, user_id)
    ) WITHOUT ROWID""",
    "CREATE INDEX notify_by_user ON notify (user_id)",
)


async def _migrate_4(tx: Tx) -> None:
    """Lobbies: ``seats.ready``/``has_left``, ``games.cap``, the ``notify`` table."""
    for statement in _SCHEMA_4:
        await tx.execute(statement)


#: Ordered: ``MIGRATIONS[k]`` takes a database from ``user_version`` k to k + 1.
MIGRATIONS: tuple[Callable[[Tx], Awaitable[None]], ...] = (
    _migrate_1,
    _migrate_2,
    _migrate_3,
    _migrate_4,
)
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
        self.path = path
        self.health = WriteHealth(path)

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

    async def _close_quietly(self) -> None:
        self._closed = True
        with contextlib.suppress(Exception):  # a connection that failed to set up
            await self._close_side_connections()
        with contextlib.suppress(Exception):
            await self._conn.close()


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
_DROP_TIMER = "DELETE FROM timers WHERE game_id = ?"
_ADD_TALLY = (
    "INSERT INTO tallies (chat_id, user_id, played, losses, draws) VALUES (?, ?, 1, ?, ?)"
    " ON CONFLICT (chat_id, user_id) DO UPDATE SET played = played + 1,"
    " losses = losses + excluded.losses, draws = draws + excluded.draws"
)


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
    return True


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
_SEAT_COLUMNS = "seat, user_id, name, kind, level, timeouts, away, ready, has_left"
_INSERT_SEAT = (
    "INSERT INTO seats (game_id, seat, user_id, name, kind, level, timeouts, away, ready,"
    " has_left) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _seat(r: Sequence[Any]) -> Seat:
    return Seat(r[0], r[1], r[2], r[3], r[4], int(r[5]), bool(r[6]), bool(r[7]), bool(r[8]))


def _seat_params(game_id: int, s: Seat) -> tuple[Any, ...]:
    return (
        game_id,
        s.seat,
        s.user_id,
        s.name,
        s.kind,
        s.level,
        s.timeouts,
        int(s.away),
        int(s.ready),
        int(s.left),
    )


class Tx:
    """The statements, used inside :meth:`Store.transaction` or :meth:`Store.reading`."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    # ---- plumbing ---------------------------------------------------------------

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; the number of rows it changed."""
        cursor = await self._conn.execute(sql, params)
        return cursor.rowcount

    async def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in await self._conn.execute_fetchall(sql, params)]

    async def row(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        found = await self.rows(sql, params)
        return found[0] if found else None

    async def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        found = await self.row(sql, params)
        return found[0] if found else None

    async def _insert(self, sql: str, params: Sequence[Any]) -> int:
        found = await self._conn.execute_insert(sql, params)
        assert found is not None
        return int(found[0])

    # ---- chats and users --------------------------------------------------------

    async def upsert_chat(self, chat_id: int, title: str | None, now: float) -> None:
        await self.execute(
            "INSERT INTO chats (chat_id, title, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT (chat_id) DO UPDATE"
            " SET title = coalesce(excluded.title, title), updated_at = excluded.updated_at",
            (chat_id, title, now),
        )

    async def chat_settings(self, chat_id: int) -> str | None:
        value = await self.scalar("SELECT settings FROM chats WHERE chat_id = ?", (chat_id,))
        return None if value is None else str(value)

    async def set_chat_settings(self, chat_id: int, settings: str, now: float) -> None:
        await self.execute(
            "INSERT INTO chats (chat_id, settings, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT (chat_id) DO UPDATE"
            " SET settings = excluded.settings, updated_at = excluded.updated_at",
            (chat_id, settings, now),
        )

    async def upsert_user(self, user_id: int, name: str, now: float) -> None:
        await self.execute(
            "INSERT INTO users (user_id, name, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT (user_id) DO UPDATE"
            " SET name = excluded.name, updated_at = excluded.updated_at",
            (user_id, name, now),
        )

    async def user_language(self, user_id: int) -> str | None:
        value = await self.scalar("SELECT language FROM users WHERE user_id = ?", (user_id,))
        return None if value is None else str(value)

    async def set_user_language(self, user_id: int, language: str | None, now: float) -> None:
        await self.execute(
            "INSERT INTO users (user_id, language, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT (user_id) DO UPDATE"
            " SET language = excluded.language, updated_at = excluded.updated_at",
            (user_id, language, now),
        )

    # ---- games --------------------------------------------------------------------

    async def game_row(self, game_id: int) -> GameRow | None:
        found = await self.row(f"SELECT {_GAME_COLUMNS} FROM games WHERE game_id = ?", (game_id,))
        return None if found is None else GameRow(*found)

    async def open_game_in_chat(self, chat_id: int, thread_id: int = 0) -> GameRow | None:
        """The open lobby or running game of the chat's topic (0: no topic), if any
        (at most one exists per topic)."""
        found = await self.row(
            f"SELECT {_GAME_COLUMNS} FROM games"
            " WHERE chat_id = ? AND thread_id = ? AND status IN ('lobby', 'running')",
            (chat_id, thread_id),
        )
        return None if found is None else GameRow(*found)

    async def open_threads(self, chat_id: int) -> list[int]:
        """The topics of the chat that have an open lobby or running game."""
        rows = await self.rows(
            "SELECT thread_id FROM games WHERE chat_id = ? AND status IN ('lobby', 'running')"
            " ORDER BY thread_id",
            (chat_id,),
        )
        return [int(r[0]) for r in rows]

    async def game_ids(self, status: str) -> list[int]:
        rows = await self.rows(
            "SELECT game_id FROM games WHERE status = ? ORDER BY game_id", (status,)
        )
        return [int(r[0]) for r in rows]

    async def game_ids_of_user(self, user_id: int, statuses: Iterable[str]) -> list[int]:
        wanted = list(statuses)
        marks = ", ".join("?" * len(wanted))
        rows = await self.rows(
            "SELECT g.game_id FROM seats s JOIN games g ON g.game_id = s.game_id"
            f" WHERE s.user_id = ? AND g.status IN ({marks}) ORDER BY g.game_id",
            (user_id, *wanted),
        )
        return [int(r[0]) for r in rows]

    async def idle_lobbies(self, before: float) -> list[GameRow]:
        """Lobbies last changed before ``before`` (a Unix time)."""
        rows = await self.rows(
            f"SELECT {_GAME_COLUMNS} FROM games WHERE status = 'lobby' AND updated_at < ?"
            " ORDER BY game_id",
            (before,),
        )
        return [GameRow(*r) for r in rows]

    async def ended_game_ids(self, chat_id: int, limit: int) -> list[int]:
        """The chat's finished and cancelled games, the last to end first."""
        rows = await self.rows(
            "SELECT game_id FROM games WHERE chat_id = ? AND status IN ('finished', 'cancelled')"
            " ORDER BY finished_at DESC, game_id DESC LIMIT ?",
            (chat_id, limit),
        )
        return [int(r[0]) for r in rows]

    async def next_game_of(self, game_id: int) -> int | None:
        value = await self.scalar(
            "SELECT game_id FROM games WHERE previous_game_id = ? ORDER BY game_id LIMIT 1",
            (game_id,),
        )
        return None if value is None else int(value)

    async def insert_game(
        self,
        chat_id: int,
        creator_id: int,
        rules: str,
        now: float,
        *,
        previous_game_id: int | None = None,
        seed: str | None = None,
        start: str | None = None,
        snapshot: str | None = None,
        thread_id: int = 0,
    ) -> int | None:
        """A new lobby (no ``start``) or running game; ``None`` if the chat's
        topic already has an open one (the unique index refuses it)."""
        status = "lobby" if start is None else "running"
        try:
            return await self._insert(
                "INSERT INTO games (chat_id, status, creator_id, rules, previous_game_id, seed,"
                " start, snapshot, version, created_at, updated_at, started_at, thread_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)",
                (
                    chat_id,
                    status,
                    creator_id,
                    rules,
                    previous_game_id,
                    seed,
                    start,
                    snapshot,
                    now,
                    now,
                    None if start is None else now,
                    thread_id,
                ),
            )
        except sqlite3.IntegrityError as e:
            if "games.chat_id" in str(e):
                return None
            raise

    async def update_lobby(
        self, game_id: int, now: float, *, creator_id: int | None = None, rules: str | None = None
    ) -> bool:
        changed = await self.execute(
            "UPDATE games SET creator_id = coalesce(?, creator_id), rules = coalesce(?, rules),"
            " updated_at = ? WHERE game_id = ? AND status = 'lobby'",
            (creator_id, rules, now, game_id),
        )
        return changed == 1

    async def set_lobby_state(
        self, game_id: int, seed: str | None, state: str | None, now: float
    ) -> bool:
        changed = await self.execute(
            "UPDATE games SET seed = ?, snapshot = ?, updated_at = ?"
            " WHERE game_id = ? AND status = 'lobby'",
            (seed, state, now, game_id),
        )
        return changed == 1

    async def start_game(
        self, game_id: int, seed: str, start: str, snapshot: str, now: float
    ) -> bool:
        changed = await self.execute(
            "UPDATE games SET status = 'running', seed = ?, start = ?, snapshot = ?,"
            " version = 0, updated_at = ?, started_at = ?"
            " WHERE game_id = ? AND status = 'lobby'",
            (seed, start, snapshot, now, now, game_id),
        )
        return changed == 1

    async def end_game(
        self, game_id: int, from_status: str, to_status: str, ending: Ending, now: float
    ) -> bool:
        """End a lobby or running game without an action (surrender, cancel); its
        timer goes with it."""
        changed = await self.execute(
            "UPDATE games SET status = ?, end_reason = ?, losers = ?, draw = ?, ended_by = ?,"
            " updated_at = ?, finished_at = ? WHERE game_id = ? AND status = ?",
            (
                to_status,
                ending.reason,
                json.dumps(list(ending.losers)),
                int(ending.draw),
                ending.by_user,
                now,
                now,
                game_id,
                from_status,
            ),
        )
        if changed != 1:
            return False
        await self.execute(_DROP_TIMER, (game_id,))
        return True

    async def repair_snapshot(self, game_id: int, version: int, snapshot: str, now: float) -> None:
        """Make a game's version and snapshot agree with its log again."""
        await self.execute(
            "UPDATE games SET version = ?, snapshot = ?, updated_at = ? WHERE game_id = ?",
            (version, snapshot, now, game_id),
        )

    async def log(self, game_id: int) -> list[LoggedAction]:
        rows = await self.rows(
            "SELECT version, seat, user_id, step, created_at FROM actions"
            " WHERE game_id = ? ORDER BY version",
            (game_id,),
        )
        return [LoggedAction(*r) for r in rows]

    # ---- seats --------------------------------------------------------------------

    async def seats(self, game_id: int) -> list[Seat]:
        rows = await self.rows(
            f"SELECT {_SEAT_COLUMNS} FROM seats WHERE game_id = ? ORDER BY seat", (game_id,)
        )
        return [_seat(r) for r in rows]

    async def replace_seats(self, game_id: int, seats: Sequence[Seat]) -> None:
        await self.execute("DELETE FROM seats WHERE game_id = ?", (game_id,))
        await self._conn.executemany(_INSERT_SEAT, [_seat_params(game_id, s) for s in seats])

    async def add_seat(self, game_id: int, seat: Seat) -> None:
        await self.execute(_INSERT_SEAT, _seat_params(game_id, seat))

    async def record_timeout(self, game_id: int, seat: int, away_after: int) -> Seat | None:
        """One more timed-out decision for the seat (away from ``away_after`` on);
        the updated seat, or ``None`` if the game has no such seat."""
        found = await self.row(
            "UPDATE seats SET timeouts = timeouts + 1,"
            " away = CASE WHEN timeouts + 1 >= ? THEN 1 ELSE away END"
            f" WHERE game_id = ? AND seat = ? RETURNING {_SEAT_COLUMNS}",
            (away_after, game_id, seat),
        )
        return None if found is None else _seat(found)

    async def mark_present(self, game_id: int, user_id: int) -> bool:
        """Clear the player's timeouts and away flag; ``False`` if nothing changed."""
        changed = await self.execute(
            "UPDATE seats SET timeouts = 0, away = 0"
            " WHERE game_id = ? AND user_id = ? AND (timeouts != 0 OR away != 0) AND has_left = 0",
            (game_id, user_id),
        )
        return changed == 1

    async def set_ready(self, game_id: int, user_id: int) -> bool:
        """The player confirmed the Play-again lobby; ``False`` if he had already."""
        changed = await self.execute(
            "UPDATE seats SET ready = 1 WHERE game_id = ? AND user_id = ? AND ready = 0",
            (game_id, user_id),
        )
        return changed == 1

    async def hand_to_ai(self, game_id: int, user_id: int) -> Seat | None:
        """The player left: the AI plays his seat for good. The seat, or ``None``."""
        found = await self.row(
            "UPDATE seats SET has_left = 1, away = 1"
            f" WHERE game_id = ? AND user_id = ? AND has_left = 0 RETURNING {_SEAT_COLUMNS}",
            (game_id, user_id),
        )
        return None if found is None else _seat(found)

    async def set_cap(self, game_id: int, cap: int | None, now: float) -> bool:
        changed = await self.execute(
            "UPDATE games SET cap = ?, updated_at = ? WHERE game_id = ? AND status = 'lobby'",
            (cap, now, game_id),
        )
        return changed == 1

    # ---- /notify_me ---------------------------------------------------------------

    async def toggle_notify(self, chat_id: int, user_id: int, now: float) -> bool:
        """Subscribe, or unsubscribe if subscribed; ``True`` if now subscribed."""
        gone = await self.execute(
            "DELETE FROM notify WHERE chat_id = ? AND user_id = ?", (chat_id, user_id)
        )
        if gone:
            return False
        await self.execute(
            "INSERT INTO notify (chat_id, user_id, since) VALUES (?, ?, ?)",
            (chat_id, user_id, now),
        )
        return True

    async def subscribers(self, chat_id: int) -> list[int]:
        rows = await self.rows(
            "SELECT user_id FROM notify WHERE chat_id = ? ORDER BY since, user_id", (chat_id,)
        )
        return [int(r[0]) for r in rows]

    async def drop_subscriber(self, user_id: int) -> int:
        return await self.execute("DELETE FROM notify WHERE user_id = ?", (user_id,))

    # ---- timers -------------------------------------------------------------------

    async def deadlines(self) -> list[Deadline]:
        """The deadlines of running games, the soonest first."""
        rows = await self.rows(
            "SELECT t.game_id, g.chat_id, t.version, t.deadline"
            " FROM timers t JOIN games g ON g.game_id = t.game_id"
            " WHERE g.status = 'running' ORDER BY t.deadline, t.game_id"
        )
        return [Deadline(*r) for r in rows]

    # ---- chats that move ----------------------------------------------------------

    async def migrate_chat(self, old_chat_id: int, new_chat_id: int, now: float) -> None:
        """Move a chat's row, games, tallies and group messages to its new id.

        The chats row: the new one's title if it has one, and its settings if it
        has its own (not ``{}``), else the old ones. Tallies of a player in both
        are added up; a message the new chat already holds for the same game and
        kind is kept. The caller must first end one of two open games (the
        one-open-game-per-chat index would refuse the move)."""
        await self.execute(
            "INSERT INTO chats (chat_id, title, settings, updated_at)"
            " SELECT ?, title, settings, ? FROM chats WHERE chat_id = ?"
            " ON CONFLICT (chat_id) DO UPDATE SET title = coalesce(chats.title, excluded.title),"
            " settings = CASE WHEN chats.settings = '{}' THEN excluded.settings"
            " ELSE chats.settings END, updated_at = excluded.updated_at",
            (new_chat_id, now, old_chat_id),
        )
        await self.execute(
            "UPDATE games SET chat_id = ? WHERE chat_id = ?", (new_chat_id, old_chat_id)
        )
        await self.execute(
            "INSERT INTO tallies (chat_id, user_id, played, losses, draws)"
            " SELECT ?, user_id, played, losses, draws FROM tallies WHERE chat_id = ?"
            " ON CONFLICT (chat_id, user_id) DO UPDATE SET played = played + excluded.played,"
            " losses = losses + excluded.losses, draws = draws + excluded.draws",
            (new_chat_id, old_chat_id),
        )
        await self.execute("DELETE FROM tallies WHERE chat_id = ?", (old_chat_id,))
        await self.execute(
            "UPDATE OR IGNORE messages SET chat_id = ? WHERE chat_id = ?",
            (new_chat_id, old_chat_id),
        )
        await self.execute("DELETE FROM messages WHERE chat_id = ?", (old_chat_id,))
        await self.execute("DELETE FROM chats WHERE chat_id = ?", (old_chat_id,))

    # ---- tallies ------------------------------------------------------------------

    async def add_tallies(self, chat_id: int, rows: Sequence[tuple[int, int, int]]) -> None:
        """One more game played for each ``(user_id, losses, draws)``."""
        await self._conn.executemany(_ADD_TALLY, [(chat_id, *r) for r in rows])

    _TALLY_SELECT = (
        "SELECT t.chat_id, t.user_id, coalesce(u.name, ''), t.played, t.losses, t.draws"
        " FROM tallies t LEFT JOIN users u ON u.user_id = t.user_id"
    )

    async def tally(self, chat_id: int, user_id: int) -> Tally | None:
        found = await self.row(
            f"{self._TALLY_SELECT} WHERE t.chat_id = ? AND t.user_id = ?", (chat_id, user_id)
        )
        return None if found is None else Tally(*found)

    async def leaderboard(self, chat_id: int, limit: int) -> list[Tally]:
        """Best first: the lowest share of losses, then the most games played."""
        rows = await self.rows(
            f"{self._TALLY_SELECT} WHERE t.chat_id = ? AND t.played > 0"
            " ORDER BY CAST(t.losses AS REAL) / t.played, t.played DESC, t.user_id LIMIT ?",
            (chat_id, limit),
        )
        return [Tally(*r) for r in rows]

    async def all_tallies(self) -> list[Tally]:
        return [Tally(*r) for r in await self.rows(f"{self._TALLY_SELECT} ORDER BY 1, 2")]

    # ---- messages -----------------------------------------------------------------

    async def messages(self, game_id: int) -> list[MessageRef]:
        rows = await self.rows(
            "SELECT kind, chat_id, message_id FROM messages WHERE game_id = ?"
            " ORDER BY kind, chat_id",
            (game_id,),
        )
        return [MessageRef(*r) for r in rows]
