"""Before the first network call: the SQLite database can be written, and no other
running bot uses it.

Two bots on one database both play the same games (each answers every press, both
clocks act); a database that cannot be written starts a bot whose every move then fails.
Both are refused at start with one line (exit code 2). The bot holds an exclusive
``flock`` on ``<database>.lock`` and on the database file itself for as long as it runs:
the kernel drops them when the process ends, however it ends, so a crashed bot never
leaves a stale lock behind, and a lock file deleted or replaced under a running bot
still lets no second bot in (the database file's lock keeps it out; ``flock`` and
SQLite's own ``fcntl`` locks do not meet).

A file deleted or replaced under the running bot is noticed (:func:`trouble`, at start
and every few seconds: the file at each path must still be the one held, by device and
inode): else the bot would play on into a file nobody will find again, and a restart
would make a new, empty database. PostgreSQL URLs are not checked here (the server
decides; its own lease is elsewhere).
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import sqlite3
import time
from collections.abc import Awaitable, Callable
from typing import IO, NamedTuple

from durak.service import DatabaseError
from durak.store.health import cause_of

from .config import Config, ConfigError

log = logging.getLogger(__name__)

#: The exit code of a bot whose database file (or its lock) vanished under it.
TROUBLE_EXIT_CODE = 2
#: How often a running bot checks that its files are still at their paths (seconds).
CHECK_EVERY = 2.0
#: How long the write probe waits for another program's write lock (seconds).
PROBE_WAIT = 5.0

_held: list[tuple[IO[bytes], str]] = []  # the files this process locks, and their paths


#: SQLite's WAL and shared-memory files of the database held, as last seen at its path.
_sides: dict[str, tuple[int, int]] = {}


class Trouble(NamedTuple):
    """A locked file gone from its path: what happened, and whether to the database."""

    reason: str
    database: bool


def is_file(db_path: str) -> bool:
    """A SQLite database in a file of its own (not ``:memory:`` nor a ``file:`` URI)."""
    return (
        "://" not in db_path and db_path not in ("", ":memory:") and not db_path.startswith("file:")
    )


def is_sqlite(config: Config) -> bool:
    return "://" not in config.db_path


def lock_path(db_path: str) -> str:
    return os.path.abspath(db_path) + ".lock"


def hold(config: Config) -> None:
    """Take the database's lock file for this process's life, or refuse the start."""
    if not is_sqlite(config):
        return
    path = lock_path(config.db_path)
    try:
        handle = open(path, "ab")  # noqa: SIM115 - held open until the process ends
    except OSError as e:
        raise ConfigError(f"DURAK_DB: cannot create the lock file {path}: {e.strerror}") from e
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        handle.close()
        raise ConfigError(
            f"DURAK_DB: another running bot uses {os.path.abspath(config.db_path)}"
            f" (it holds {path}); stop it first"
        ) from e
    _held.append((handle, path))
    if not is_file(config.db_path):
        return
    db = os.path.abspath(config.db_path)
    try:  # read-only is enough for a lock; check_writable judges the writing
        data = os.fdopen(os.open(db, os.O_RDONLY | os.O_CREAT, 0o644), "rb")
    except OSError as e:
        _held.pop()[0].close()
        raise ConfigError(f"DURAK_DB: cannot open {db}: {e.strerror}") from e
    try:
        fcntl.flock(data.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        data.close()
        _held.pop()[0].close()
        raise ConfigError(f"DURAK_DB: another running bot uses {db}; stop it first") from e
    _held.append((data, db))


def release_all() -> None:
    """Drop the locks this process holds (tests; a process's end does it anyway). Never
    while the database is open: closing any descriptor of a file drops the process's
    POSIX locks on it, SQLite's included."""
    while _held:
        _held.pop()[0].close()


def trouble() -> Trouble | None:
    """What became of a file this process locks (deleted, or another file now at its
    path); ``None`` while each path still leads to the file held."""
    for k, (handle, path) in enumerate(_held):
        held = os.fstat(handle.fileno())
        try:
            now = os.stat(path)
        except FileNotFoundError:
            return Trouble(f"{path} was deleted", k > 0)
        except OSError as e:
            return Trouble(f"{path} cannot be checked ({e.strerror})", k > 0)
        if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
            return Trouble(f"{path} was replaced by another file", k > 0)
    if len(_held) > 1:
        for end in ("-wal", "-shm"):
            seen = _identity(_held[1][1] + end)
            if seen is not None:
                _sides[end] = seen
    return None


def _identity(path: str) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def watching() -> bool:
    """Whether this process holds files to watch (a SQLite bot started by ``python -m bot``)."""
    return bool(_held)


def check_writable(config: Config) -> None:
    """Write to the database inside a transaction that is rolled back: a read-only file
    or mount, a full disk or another program's write lock refuses the start."""
    if not is_sqlite(config):
        return
    path = os.path.abspath(config.db_path)
    try:
        conn = sqlite3.connect(path, timeout=PROBE_WAIT, isolation_level=None)
    except sqlite3.Error as e:
        raise ConfigError(f"DURAK_DB: cannot open {path}: {e}") from e
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("CREATE TABLE durak_write_probe (x INTEGER)")
        conn.execute("ROLLBACK")
    except sqlite3.Error as e:
        cause = cause_of(e)
        if cause is None:
            raise ConfigError(f"DURAK_DB: {path} cannot be used: {e}") from e
        raise ConfigError(f"DURAK_DB: cannot write {path} ({cause}): {e}") from e
    finally:
        conn.close()


async def watch(every: float, on_trouble: Callable[[Trouble], None]) -> None:
    """Check the held files now and every ``every`` seconds; on the first trouble call
    ``on_trouble`` (which stops the bot) and return."""
    while (found := trouble()) is None:
        await asyncio.sleep(every)
    on_trouble(found)


async def rescue(
    found: Trouble, copy: Callable[[str], Awaitable[None]], close: Callable[[], Awaitable[None]]
) -> None:
    """At the stop after ``found``: save the database from the open connection (``copy``,
    the service's) when its file was deleted or replaced, ``close`` it, put the copy
    back at the database's path if that is still free (a restart then resumes every
    game), and say it all in one ERROR line."""
    if not found.database:
        await close()
        saved = "the database is untouched; start the bot again"
    else:
        db = _held[1][1]
        target = f"{db}.rescued-{time.strftime('%Y%m%d-%H%M%S')}"
        try:
            await copy(target)
        except DatabaseError as e:
            await close()
            saved = f"no copy could be saved ({e}): the games since the last backup are lost"
        else:
            await close()
            _drop_sides(db)
            saved = _put_back(target, db)
    log.error(
        "DURAK_DB: %s under the running bot: it took no more presses; %s (exit code %d)",
        found.reason,
        saved,
        TROUBLE_EXIT_CODE,
    )


def _drop_sides(db: str) -> None:
    """Delete the WAL and shared-memory files the lost database left at its path (SQLite
    keeps them when its file has moved; their writes are in the copy): whatever file is
    at the path next would replay that WAL into itself, and be damaged."""
    for end in ("-wal", "-shm"):
        if end in _sides and _identity(db + end) == _sides[end]:
            try:
                os.unlink(db + end)
            except OSError as e:
                log.warning("could not delete %s%s: %s", db, end, e.strerror)


def _put_back(copy: str, db: str) -> str:
    """The copy at the database's path if nothing is there (nor a WAL file left, which
    would be replayed into it); else where it is and what to do."""
    if not any(os.path.lexists(db + end) for end in ("", "-wal", "-journal")):
        try:
            os.link(copy, db)  # never over a file that appeared in between
        except OSError:
            pass
        else:
            os.unlink(copy)
            return f"every game is saved, back in {db}; start the bot again"
    return (
        f"every game is saved in {copy}: with no bot running on it, put that file at {db}"
        " (README: a database that vanished) and start the bot again"
    )
