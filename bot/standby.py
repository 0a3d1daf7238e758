"""Active and standby: the bot's use of :mod:`durak.store.lease` (PostgreSQL only).

``post_init`` waits here, before anything polls, serves the webhook, runs a timer
or sends: a standby process says so in one INFO line and waits; once it holds the
lease it starts like a lone bot. A holder that loses the lease exits at once with
:data:`LOST_EXIT_CODE`, without another send, so that its supervisor restarts it,
as a standby; every Bot API request is fenced on the lease (:meth:`Lease.fence`,
called by the HTTP client before it sends), so a holder that was frozen or stuck
past ``DURAK_LEASE_TIMEOUT`` exits the same way on its first attempt to send. On
SQLite there is no lease: one file, one process.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

from durak.store import is_postgres

if TYPE_CHECKING:  # asyncpg is imported only by those who use PostgreSQL
    from durak.store.lease import Lease

log = logging.getLogger(__name__)

#: The exit code of a process that lost the lease (not 0: a supervisor restarts it).
LOST_EXIT_CODE = 3


def _exit_at_once(reason: str) -> None:
    """Stop sending now: no clean shutdown, whose drain would still send. Every
    committed action is in the database; the new holder resumes from there."""
    log.error("lost the lease (%s): stopping at once, exit code %d", reason, LOST_EXIT_CODE)
    for handler in logging.getLogger().handlers:
        handler.flush()
    sys.stderr.flush()
    os._exit(LOST_EXIT_CODE)


async def hold_lease(db: str, timeout: float = 5.0) -> Lease | None:
    """Wait until this process may be the active bot on ``db``; the lease to release at
    shutdown (``None`` for SQLite). ``timeout`` is ``DURAK_LEASE_TIMEOUT``: how late
    the holder's heartbeat may be before a standby ends its session."""
    if not is_postgres(db):
        return None
    from durak.store.lease import Lease
    from durak.store.postgres import redact

    where = redact(db)
    lease = Lease(db, stale=timeout)
    await lease.acquire(
        on_lost=_exit_at_once,
        on_wait=lambda: log.info(
            "standby: another bot process is active on %s; waiting to take over", where
        ),
    )
    log.info("active: this process holds the lease on %s", where)
    return lease


async def release_lease(lease: Lease | None) -> None:
    """At a clean shutdown, after the last send: a standby takes over at once."""
    if lease is not None:
        await lease.release()
