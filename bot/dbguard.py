"""Before the first network call: the SQLite database can be written, and no other
running bot uses it.

Two bots on one database both play the same games (each answers every press, both
clocks act); a database that cannot be written starts a bot whose every move then fails.
Both are refused at start with one line (exit code 2). The bot holds an exclusive
``flock`` on ``<database>.lock`` for as long as it runs: the kernel drops it when the
process ends, however it ends, so a crashed bot never leaves a stale lock behind.
PostgreSQL URLs are not checked here (the server decides; its own lease is elsewhere).
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from typing import IO

from durak.store.health import cause_of

from .config import Config, ConfigError

#: How long the write probe waits for another program's write lock (seconds).
PROBE_WAIT = 5.0

_held: list[IO[bytes]] = []  # the lock files this process holds (kept open on purpose)


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
    _held.append(handle)


def release_all() -> None:
    """Drop the locks this process holds (tests; a process's end does it anyway)."""
    while _held:
        _held.pop().close()


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
