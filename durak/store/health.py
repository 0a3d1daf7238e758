"""Whether the database's writes work, told to the operator once per change.

A full disk or a read-only file fails every write after the first; a line per failure
would bury the log, none would leave the operator blind (the players only see "Something
went wrong"). So the first failure of each cause logs one ERROR line naming the cause,
and the first write that works again after failures logs one more, with the count.
"""

from __future__ import annotations

import logging
import sqlite3

log = logging.getLogger("durak.store")

#: The causes an operator can act on, by SQLite's primary result code.
CAUSES = {
    13: "disk full",  # SQLITE_FULL
    8: "read-only",  # SQLITE_READONLY
    5: "locked",  # SQLITE_BUSY: another process holds the write lock
    6: "locked",  # SQLITE_LOCKED
    10: "I/O error",  # SQLITE_IOERR
    14: "cannot open",  # SQLITE_CANTOPEN
}


def cause_of(error: sqlite3.Error) -> str | None:
    """The operator's name for why a write failed, or ``None`` when the database is fine
    and the statement was refused (a constraint, a bug): that is not database trouble."""
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int):
        return CAUSES.get(code & 0xFF)
    text = str(error).lower()
    for words, cause in (
        ("disk is full", "disk full"),
        ("readonly", "read-only"),
        ("read-only", "read-only"),
        ("locked", "locked"),
        ("disk i/o", "I/O error"),
    ):
        if words in text:
            return cause
    return None


class WriteHealth:
    """Counts failed writes by cause; logs a cause's first failure and the recovery."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._told: set[str] = set()  # causes logged since writes last worked
        self._failures = 0

    @property
    def failing(self) -> bool:
        return self._failures > 0

    def failed(self, error: sqlite3.Error) -> None:
        cause = cause_of(error)
        if cause is None:
            return
        self._failures += 1
        if cause not in self._told:
            self._told.add(cause)
            log.error("database %s: writes fail (%s): %s", self._name, cause, error)

    def worked(self) -> None:
        if self._failures:
            log.error(
                "database %s: writes work again after %d failed (%s)",
                self._name,
                self._failures,
                ", ".join(sorted(self._told)),
            )
            self._failures = 0
            self._told.clear()
