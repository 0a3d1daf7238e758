"""Active and standby: the bot's use of :mod:`durak.store.lease` (PostgreSQL only).

``post_init`` waits here, before anything polls, serves the webhook, runs a timer
or sends: a standby process says so in one INFO line and waits; once it holds the
lease it starts like a lone bot. A holder that loses the lease exits at once with
:data:`LOST_EXIT_CODE`, without another send, so that its supervisor restarts it,
as a standby; every Bot API request is fenced on the lease (:meth:`Lease.fence`,
awaited by the HTTP client before it sends), so a holder whose lease connection
ended while it was frozen, or whose heartbeat is older than ``DURAK_LEASE_TIMEOUT``
less a second, exits the same way on its first attempt to send, and after any pause
sends only once a heartbeat sent after it is answered. A stop signal ends a standby's
wait at once (exit code 0): it has started nothing. On SQLite there is no lease: one
file, one process.
"""

from __future__ import annotations

import asyncio
import contextlib
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


async def hold_lease(
    db: str, timeout: float = 5.0, stop: asyncio.Event | None = None
) -> Lease | None:
    """Wait until this process may be the active bot on ``db``; the lease to release at
    shutdown (``None`` for SQLite, or when ``stop`` was set first: a standby asked to
    stop goes at once, having started nothing). ``timeout`` is ``DURAK_LEASE_TIMEOUT``:
    how late the holder's heartbeat may be before a standby ends its session."""
    if not is_postgres(db):
        return None
    from durak.store.lease import Lease
    from durak.store.postgres import redact

    where = redact(db)
    lease = Lease(db, stale=timeout)
    acquiring = asyncio.ensure_future(
        lease.acquire(
            on_lost=_exit_at_once,
            on_wait=lambda: log.info(
                "standby: another bot process is active on %s; waiting to take over", where
            ),
        )
    )
    if stop is not None:
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait((acquiring, stopping), return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if not acquiring.done():
            acquiring.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await acquiring
            log.info("standby: stopped before taking over")
            return None
    await acquiring
    log.info("active: this process holds the lease on %s", where)
    return lease


async def release_lease(lease: Lease | None) -> None:
    """At a clean shutdown, after the last send: a standby takes over at once."""
    if lease is not None:
        await lease.release()
