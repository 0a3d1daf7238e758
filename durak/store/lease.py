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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
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
    ) -> None:
        self.url = url
        self.key = key
        self.retry = retry  # how often a standby tries to take the lease
        self.heartbeat = heartbeat  # how often the holder checks its connection
        self.timeout = timeout  # how long a heartbeat may take before the lease is lost
        self.heartbeat_sql = "SELECT 1"  # tests make it hang
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
                    await asyncio.sleep(self.retry)
            except _FAILURES as e:
                log.warning("the lease's connection to %s failed (%s); retrying", where, e)
                conn.terminate()
                await asyncio.sleep(self.retry)
                continue
            break
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

    async def _heartbeats(self) -> None:
        conn = self._conn
        assert conn is not None
        while not self._closing:
            await asyncio.sleep(self.heartbeat)
            try:
                await asyncio.wait_for(conn.fetchval(self.heartbeat_sql), self.timeout)
            except (*_FAILURES, asyncpg.InternalClientError) as e:
                self._lost(f"a heartbeat failed: {type(e).__name__} {e}".rstrip())
                return

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
