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
would make a new, empty database. So is one overwritten in place (``cp backup.sqlite3
durak.sqlite3``, a truncation: the same inode, other bytes), by its SQLite header read
through the descriptor held: the file change counter never goes back (in WAL mode the
main file changes only at checkpoints, which copy newer pages in) and the file never
shrinks below the size it had, nor below the page count its last header gave (the
store never vacuums in place). A database that is damaged at start (not SQLite, its
pages broken, cut short) is refused before any network call. PostgreSQL URLs are not
checked here (the server decides; its own lease is elsewhere).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import sqlite3
import sys
import time
from collections.abc import Awaitable, Callable
from typing import IO, NamedTuple, NoReturn

from durak.service import DatabaseError, GameService
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

#: SQLite's "SQLITE_CORRUPT" and "SQLITE_NOTADB": the file is damaged, or no database.
_DAMAGED = (11, 26)
_MAGIC = b"SQLite format 3\0"


class Trouble(NamedTuple):
    """A locked file gone from its path (or the database overwritten where it is): what
    happened, whether to the database, and whether in place (the file at the path is
    the one held, its bytes are not the bot's any more)."""

    reason: str
    database: bool
    in_place: bool = False


class Header(NamedTuple):
    """What the database file's SQLite header says, and how big the file is."""

    sqlite: bool  # it starts as SQLite's files do
    counter: int  # the file change counter (offset 24)
    pages: int  # the database's size in pages (offset 28), 0 unless valid
    page_size: int
    size: int  # the file's size in bytes

    @property
    def promised(self) -> int:
        """The size the header says the file has (bytes)."""
        return self.pages * self.page_size


#: The database held, as its last check found it (its header, the most it has had).
_seen: dict[str, tuple[Header, int]] = {}
#: An overwrite seen after a checkpoint (:func:`note`), for the next check to report.
_noticed: list[Trouble] = []


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
    try:  # read-only is enough for a lock; check_usable judges the writing
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
    _seen.clear()
    _noticed.clear()


def trouble() -> Trouble | None:
    """What became of a file this process locks (deleted, another file now at its path,
    the database overwritten in place); ``None`` while each path leads to the file held,
    as the bot left it."""
    if _noticed:
        return _noticed[0]
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
        if k > 0:
            changed = _overwritten(handle.fileno(), path)
            if changed is not None:
                return Trouble(f"{path} {changed}", True, in_place=True)
    if len(_held) > 1:
        for end in ("-wal", "-shm"):
            seen = _identity(_held[1][1] + end)
            if seen is not None:
                _sides[end] = seen
    return None


def header(fd: int) -> Header:
    """The SQLite header of the file open at ``fd``, read where the file is now."""
    size = os.fstat(fd).st_size
    raw = os.pread(fd, 100, 0)
    if len(raw) < 100 or not raw.startswith(_MAGIC):
        return Header(False, 0, 0, 0, size)
    page_size = int.from_bytes(raw[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    counter = int.from_bytes(raw[24:28], "big")
    pages = int.from_bytes(raw[28:32], "big")
    valid = int.from_bytes(raw[92:96], "big") == counter  # SQLite's own rule
    return Header(True, counter, pages if valid else 0, page_size, size)


def _overwritten(fd: int, path: str) -> str | None:
    """How the database file held at ``fd`` was written over since its last check
    (never by the bot: see the module), or ``None``; notes what it is now."""
    now = header(fd)
    last = _seen.get(path)
    most = 0  # the least size the file may have: what it had, what its header said
    if last is not None:
        before, had = last
        most = max(had, before.promised)  # a checkpoint under way then is over now
        if now.size < most:
            return f"was overwritten in place: it shrank from {most:,} to {now.size:,} bytes"
        if before.sqlite and not now.sqlite:
            return "was overwritten in place: it is no SQLite database any more"
        if before.sqlite and now.page_size != before.page_size:
            return "was overwritten in place: its page size changed"
        if now.counter < before.counter:
            return (
                "was overwritten in place: its change counter went back from"
                f" {before.counter:,} to {now.counter:,} (an older copy)"
            )
    _seen[path] = (now, max(most, now.size))
    return None


def note() -> None:
    """After each of the bot's own checkpoints: look at the database file now, so that a
    copy as it was at the check before cannot pass for it (the next check tells)."""
    if len(_held) > 1 and not _noticed:
        handle, path = _held[1]
        changed = _overwritten(handle.fileno(), path)
        if changed is not None:
            _noticed.append(Trouble(f"{path} {changed}", True, in_place=True))


def _identity(path: str) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def watching() -> bool:
    """Whether this process holds files to watch (a SQLite bot started by ``python -m bot``)."""
    return bool(_held)


def check_usable(config: Config) -> None:
    """Write to the database inside a transaction that is rolled back, then check it
    (``PRAGMA quick_check``): a read-only file or mount, a full disk, another program's
    write lock or a damaged file refuses the start, in one line."""
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
        problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check")]
    except sqlite3.Error as e:
        if e.sqlite_errorcode & 0xFF in _DAMAGED:
            raise ConfigError(f"DURAK_DB: {path} is damaged ({e}); {_RESTORE}") from e
        cause = cause_of(e)
        if cause is None:
            raise ConfigError(f"DURAK_DB: {path} cannot be used: {e}") from e
        raise ConfigError(f"DURAK_DB: cannot write {path} ({cause}): {e}") from e
    finally:
        conn.close()
    if problems != ["ok"]:
        raise ConfigError(f"DURAK_DB: {path} is damaged ({problems[0][:200]}); {_RESTORE}")


_RESTORE = "put a sound copy at its path (README: backups)"


async def watch(every: float, on_trouble: Callable[[Trouble], Awaitable[None]]) -> None:
    """Check the held files now and every ``every`` seconds; on the first trouble await
    ``on_trouble`` (which stops the bot) and return."""
    while (found := trouble()) is None:
        await asyncio.sleep(every)
    await on_trouble(found)


async def rescue(
    found: Trouble, copy: Callable[[str], Awaitable[None]], close: Callable[[], Awaitable[None]]
) -> None:
    """At the stop after ``found``: save the database from the open connection (``copy``,
    the service's) when its file was deleted or replaced, ``close`` it, put the copy
    back at the database's path if that is still free (a restart then resumes every
    game), and say it all in one ERROR line. A database overwritten in place: see
    :func:`_save_in_place` (the process ends there, the database not closed)."""
    if not found.database:
        await close()
        saved = "the database is untouched; start the bot again"
    elif found.in_place:
        await _save_in_place(found, copy)
    else:
        db = _held[1][1]
        target = _rescued(db)
        try:
            await copy(target)
        except DatabaseError as e:
            await close()
            saved = f"no copy could be saved ({e}): the games since the last backup are lost"
        else:
            await close()
            _drop_sides(db)
            saved = _put_back(target, db)
    _say(found, saved)


def _say(found: Trouble, saved: str) -> None:
    log.error(
        "DURAK_DB: %s under the running bot: it took no more presses; %s (exit code %d)",
        found.reason,
        saved,
        TROUBLE_EXIT_CODE,
    )


def _rescued(db: str) -> str:
    return f"{db}.rescued-{time.strftime('%Y%m%d-%H%M%S')}"


async def _save_in_place(found: Trouble, copy: Callable[[str], Awaitable[None]]) -> NoReturn:
    """The database's bytes were written over at its path. Unlike a deleted file, its
    old pages are gone: SQLite reads every page it has checkpointed from the file, and
    only the pages written since the last checkpoint from the WAL. So a copy from the
    open connection is tried, but kept only if it opens as a start would (an integrity
    check, every running game's log replayed to its state); mostly it does not. The
    connections are never closed: the last one's close would write the bot's WAL into
    the file now at the path, and that WAL (with its shared-memory file) is deleted, or
    a restart would replay it there. Then the process ends at once, saying so in one
    line."""
    db = _held[1][1]
    target = _rescued(db)
    try:
        await copy(target)
        await _sound(target)
    except Exception as e:  # whatever a half-read file makes the store raise: not sound
        with contextlib.suppress(OSError):
            os.unlink(target)
        saved = (
            f"no sound copy could be saved ({_why(e)}): its games since your last backup"
            f" are lost; with no bot running, put that backup at {db} again (README:"
            " backups) and start the bot again"
        )
    else:
        saved = (
            f"what it could still read is saved in {target} and checked sound (the"
            " integrity check, every running game replayed), though pages it could read"
            f" only from the file now at {db} are that file's; with no bot running, put"
            " that copy or your backup there (README: backups) and start the bot again"
        )
    _drop_sides(db)
    _say(found, saved)
    for handler in logging.getLogger().handlers:
        handler.flush()
    sys.stderr.flush()
    os._exit(TROUBLE_EXIT_CODE)


async def _sound(path: str) -> None:
    """:class:`DatabaseError` unless the file at ``path`` opens as the bot would open it:
    an integrity check, its schema ours, every running game's log replayed to its state."""
    problems = await asyncio.to_thread(_integrity, path)
    if problems:
        raise DatabaseError(f"the copy is damaged too: {problems[0][:200]}")
    service = await GameService.open(path, check="none")
    await service.close()


def _why(error: Exception) -> str:
    if isinstance(error, DatabaseError):
        return str(error)
    return f"the copy does not open: {type(error).__name__}"


def _integrity(path: str) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        lines = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
    except sqlite3.Error as e:
        return [str(e)]
    finally:
        conn.close()
    return [] if lines == ["ok"] else lines


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
