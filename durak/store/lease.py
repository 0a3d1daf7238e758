"""The bot's lease on a PostgreSQL database: which of several processes is active.

Any number of bot processes may run on one database; only the one holding the
lease polls Telegram, runs the turn timers and sends. The lease is a session
advisory lock, ``pg_try_advisory_lock(APPLICATION_ID, BOT_LEASE)``, on a
connection of its own (never the store's pool, whose connections come and go).
PostgreSQL releases the lock when that session ends, so a holder killed with
``kill -9`` frees it the moment its socket closes and a waiting process takes
over within its retry interval.

Two processes must never both believe they hold it. A holder that loses its
connection (the server restarted, the network broke) cannot know whether the
server still sees its session, so it must stop at once: :meth:`Lease.acquire`'s
``on_lost`` is called on the first sign (the connection closed, or a heartbeat
unanswered within ``timeout``). The server, for its part, ends a session whose
client went silent only after TCP keepalives fail (``idle`` + ``interval`` x
``count`` = 9 s, set on this connection), which is later than the holder's own
heartbeat deadline (``heartbeat`` + ``timeout`` = 4 s): the old holder has
stopped before a new one can start. And should both ever act, the version
check of every action still lets only one of them write version N+1.

A holder that is alive but stuck (its event loop blocked, its process frozen as a
paused VM) keeps its socket and so its lock: the kernel answers the keepalives. Its
heartbeat, sent from the event loop every ``heartbeat`` seconds, is what shows it is
working: the server notes when each began (``pg_stat_activity.query_start``, on the
server's clock), and a standby that finds the holder's last heartbeat older than
``stale`` seconds ends the holder's session (``pg_terminate_backend``) and takes the
lease. The holder, for its part, must not act once its lease may be gone:
:meth:`Lease.fence` is called before every Bot API request and every write to the
database, and refuses (``on_lost``) when the last answered heartbeat was sent more
than ``stale - heartbeat`` seconds ago on the monotonic clock, which counts a freeze
too. A standby ends a session only when
its heartbeat is older than ``stale``, by which time the holder refuses; a thawed
process therefore sends nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

import asyncpg

from .postgres import BOT_LEASE, redact
from .sql import APPLICATION_ID

log = logging.getLogger(__name__)

_FAILURES = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, asyncio.TimeoutError)
#: The server gives up on a silent client after idle + interval x count seconds.
KEEPALIVE = {
    "tcp_keepalives_idle": "5",
    "tcp_keepalives_interval": "2",
    "tcp_keepalives_count": "2",
}


#: The session holding the lease, and how long ago (server time) its last query began.
_HOLDER_SQL = """
SELECT a.pid, EXTRACT(EPOCH FROM clock_timestamp() - a.query_start)::float8 AS age
FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid = ($1::int8 & 4294967295)::oid AND l.objid = ($2::int8 & 4294967295)::oid
"""
#: End that session, unless a heartbeat came in between (one statement: no race).
_TERMINATE_SQL = """
SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE pid = $1 AND clock_timestamp() - query_start > make_interval(secs => $2)
"""


class LeaseLost(Exception):
    """A send refused: this process may no longer hold the lease."""


class Lease:
    """One process's claim to be the active bot on the database ``url``."""

    def __init__(
        self,
        url: str,
        *,
        key: tuple[int, int] = (APPLICATION_ID, BOT_LEASE),
        retry: float = 0.5,
        heartbeat: float = 1.0,
        timeout: float = 3.0,
        stale: float = 5.0,
    ) -> None:
        if not 0 < heartbeat < stale:
            raise ValueError("a heartbeat must come more often than it goes stale")
        self.url = url
        self.key = key
        self.retry = retry  # how often a standby tries to take the lease
        self.heartbeat = heartbeat  # how often the holder checks its connection
        self.timeout = timeout  # how long a heartbeat may take before the lease is lost
        self.stale = stale  # a holder's heartbeat this old (s): a standby ends its session
        self.heartbeat_sql = "SELECT 1"  # tests make it hang
        self._beat = 0.0  # monotonic: when the last answered heartbeat was sent
        self._unseen = False  # a standby could not judge the holder's heartbeat (logged once)
        self._conn: asyncpg.Connection | None = None
        self._watch: asyncio.Task[None] | None = None
        self._on_lost: Callable[[str], None] | None = None
        self._closing = False
        self.held = False

    async def acquire(
        self, on_lost: Callable[[str], None], on_wait: Callable[[], None] | None = None
    ) -> None:
        """Wait until this process holds the lease. ``on_wait`` is called once, when
        another process turns out to hold it; ``on_lost(reason)`` once, if the lease is
        lost later (it must stop everything the lease guards, at once)."""
        where = redact(self.url)
        waited = unreachable = False
        while True:
            conn = await self._connect(where, warned=unreachable)
            if conn is None:
                unreachable = True
                await asyncio.sleep(self.retry)
                continue
            unreachable = False
            try:
                while not await conn.fetchval("SELECT pg_try_advisory_lock($1, $2)", *self.key):
                    if not waited:
                        waited = True
                        if on_wait is not None:
                            on_wait()
                    await self._end_stale_holder(conn)
                    await asyncio.sleep(self.retry)
            except _FAILURES as e:
                log.warning("the lease's connection to %s failed (%s); retrying", where, e)
                conn.terminate()
                await asyncio.sleep(self.retry)
                continue
            break
        self._beat = time.monotonic()  # the lock was just granted: as good as a heartbeat
        self._conn, self._on_lost, self.held = conn, on_lost, True
        conn.add_termination_listener(lambda _: self._lost("its connection closed"))
        self._watch = asyncio.create_task(self._heartbeats(), name="lease heartbeat")

    async def _connect(self, where: str, *, warned: bool) -> asyncpg.Connection | None:
        try:
            conn: asyncpg.Connection = await asyncpg.connect(
                self.url,
                timeout=self.timeout,
                server_settings={"application_name": "durak lease", **KEEPALIVE},
            )
        except (*_FAILURES, ValueError) as e:
            if not warned:
                log.warning("cannot reach %s for the lease (%s); retrying", where, e)
            return None
        return conn

    async def _end_stale_holder(self, conn: asyncpg.Connection) -> None:
        """End the holder's session if its last heartbeat began over ``stale`` seconds ago
        (a holder stuck or frozen keeps its socket, and so the lock, for ever)."""
        row = await conn.fetchrow(_HOLDER_SQL, *self.key)
        if row is None:  # released in between: the next try takes it
            return
        pid, age = row["pid"], row["age"]
        if age is None:  # another role's session, or track_activities off
            if not self._unseen:
                self._unseen = True
                log.warning(
                    "cannot see the active bot's heartbeat (pid %d); a stuck holder will"
                    " not be replaced (run every bot as the same database user)",
                    pid,
                )
            return
        if age <= self.stale:
            return
        log.warning(
            "the active bot's last heartbeat began %.1f s ago (over %g s): ending its"
            " session (pid %d) to take over",
            age,
            self.stale,
            pid,
        )
        try:
            await conn.fetchval(_TERMINATE_SQL, pid, self.stale)
        except asyncpg.InsufficientPrivilegeError as e:
            if not self._unseen:
                self._unseen = True
                log.warning("cannot end the active bot's session (pid %d): %s", pid, e)

    def fence(self) -> None:
        """Before anything the lease guards is sent: unless the last answered heartbeat is
        recent enough that no standby can have taken over (see the module's docstring),
        call ``on_lost`` (which must stop the process) and raise :class:`LeaseLost`."""
        if self._closing:  # a clean shutdown's last sends, before the release
            return
        if self.held:
            age = time.monotonic() - self._beat
            if age <= self.stale - self.heartbeat:
                return
            self._lost(f"no heartbeat answered for {age:.1f} s")
        raise LeaseLost("the lease may be gone: nothing more is sent")

    async def _heartbeats(self) -> None:
        conn = self._conn
        assert conn is not None
        while not self._closing:
            await asyncio.sleep(self.heartbeat)
            try:
                self.fence()  # a freeze: the lease may be gone already
            except LeaseLost:
                return
            sent = time.monotonic()
            try:
                await asyncio.wait_for(conn.fetchval(self.heartbeat_sql), self.timeout)
            except (*_FAILURES, asyncpg.InternalClientError) as e:
                self._lost(f"a heartbeat failed: {type(e).__name__} {e}".rstrip())
                return
            self._beat = sent

    def _lost(self, reason: str) -> None:
        if self._closing or not self.held:
            return
        self.held = False
        on_lost, self._on_lost = self._on_lost, None
        if on_lost is not None:
            on_lost(reason)

    async def release(self) -> None:
        """Give the lease up (a clean shutdown): a standby takes over at once."""
        self._closing = True
        self.held = False
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        if self._conn is not None:
            try:
                await asyncio.wait_for(self._conn.close(), self.timeout)
            except (*_FAILURES, asyncpg.InternalClientError):
                self._conn.terminate()
            self._conn = None
