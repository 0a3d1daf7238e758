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
:meth:`Lease.fence` is awaited before every Bot API request and every write to the
database. It refuses (``on_lost``, then :class:`LeaseLost`):

- when the lease connection has ended or the server sent anything unasked on it (it
  looks at the socket itself, with a non-blocking peek: a thawed process runs its
  first sends before its event loop reads the server's goodbye);
- when the last answered heartbeat was sent more than ``stale - heartbeat`` seconds
  ago on the monotonic or the boot clock.

And it holds every send back after a gap in the event loop's progress: a watcher
notes the monotonic, boot and wall clocks every ``tick`` seconds, and the fence
compares them too; should any have moved more than ``gap`` seconds since (a freeze, a
blocked loop, a paused VM whose monotonic clock did not count the pause but whose
wall clock was set right), nothing is sent until a heartbeat sent after the gap is
answered: proof that the session, and so the lock, outlived it. A standby ends a
session only when its heartbeat is older than ``stale``; a thawed process therefore
sends nothing unless its own session is still there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
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


#: The monotonic, boot and wall clocks at one instant (:func:`clocks`).
Clocks = tuple[float, float, float]
_BOOT = getattr(time, "CLOCK_BOOTTIME", time.CLOCK_MONOTONIC)


def clocks() -> Clocks:
    """Now on the three clocks a pause may show on: the monotonic clock (not counting
    a suspend, nor on some hypervisors a paused VM), the boot clock (counting a
    suspend) and the wall clock (set right after a pause, by the host or NTP)."""
    return time.monotonic(), time.clock_gettime(_BOOT), time.time()


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
        tick: float = 0.1,
        gap: float = 0.3,
    ) -> None:
        if not 0 < heartbeat < stale:
            raise ValueError("a heartbeat must come more often than it goes stale")
        if not 0 < tick < gap:
            raise ValueError("the loop's watcher must look more often than a gap lasts")
        self.url = url
        self.key = key
        self.retry = retry  # how often a standby tries to take the lease
        self.heartbeat = heartbeat  # how often the holder checks its connection
        self.timeout = timeout  # how long a heartbeat may take before the lease is lost
        self.stale = stale  # a holder's heartbeat this old (s): a standby ends its session
        self.tick = tick  # how often the watcher notes the clocks
        self.gap = gap  # a clock moved more than this since: the loop stood still
        self.heartbeat_sql = "SELECT 1"  # tests make it hang
        self.clocks: Callable[[], Clocks] = clocks  # tests pause a VM
        self._beat: Clocks = (0.0, 0.0, 0.0)  # when the last answered heartbeat was sent
        self._seen: Clocks = (0.0, 0.0, 0.0)  # when the loop was last seen going round
        self._gaps = 0  # gaps in the loop's progress noticed so far
        self._cleared = 0  # ... of which a heartbeat sent after them was answered
        self._asking = False  # a heartbeat is on the wire: the server's bytes are asked for
        self._due = asyncio.Event()  # set: send a heartbeat now
        self._news = asyncio.Event()  # set (and replaced) when a heartbeat is answered
        self._unseen = False  # a standby could not judge the holder's heartbeat (logged once)
        self._conn: asyncpg.Connection | None = None
        self._sock: socket.socket | None = None  # the lease connection's, to peek at
        self._tasks: list[asyncio.Task[None]] = []
        self._on_lost: Callable[[str], None] | None = None
        self._closing = False
        self.held = False

    async def acquire(
        self, on_lost: Callable[[str], None], on_wait: Callable[[], None] | None = None
    ) -> None:
        """Wait until this process holds the lease. ``on_wait`` is called once, when
        another process turns out to hold it; ``on_lost(reason)`` once, if the lease is
        lost later (it must stop everything the lease guards, at once). Cancelled (a
        standby asked to stop), it leaves no connection behind."""
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
            except BaseException:
                conn.terminate()
                raise
            break
        self._beat = self._seen = self.clocks()  # the lock was just granted: a heartbeat
        self._conn, self._on_lost, self.held = conn, on_lost, True
        self._sock = _peeker(conn)
        conn.add_termination_listener(lambda _: self._lost("its connection closed"))
        conn.add_log_listener(lambda _, said: self._unasked(f"{said.severity}: {said.message}"))
        self._tasks = [
            asyncio.create_task(self._heartbeats(), name="lease heartbeat"),
            asyncio.create_task(self._watch_loop(), name="lease loop watcher"),
        ]

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

    async def fence(self) -> None:
        """Before anything the lease guards is sent: return once it is sure that no
        standby can have taken over; else call ``on_lost`` (which must stop the process)
        and raise :class:`LeaseLost` (see the module's docstring). Waits only after a gap
        in the loop's progress, for the heartbeat that follows it."""
        if self._closing:  # a clean shutdown's last sends, before the release
            return
        while self.held:
            reason = self._refusal()
            if reason is not None:
                self._lost(reason)
                break
            self._look()
            if self._cleared == self._gaps:
                return
            news = self._news
            self._due.set()
            await news.wait()
        raise LeaseLost("the lease may be gone: nothing more is sent")

    def _refusal(self) -> str | None:
        """Why the lease may be gone already: its connection, or an old heartbeat."""
        line = self._line()
        if line is not None:
            return line
        now = self.clocks()
        age = max(now[0] - self._beat[0], now[1] - self._beat[1])
        if age > self.stale - self.heartbeat:
            return f"no heartbeat answered for {age:.1f} s"
        return None

    def _line(self) -> str | None:
        """What the lease connection shows without a read by the event loop: closed,
        or bytes the server sent unasked (its goodbye when it ends the session)."""
        conn = self._conn
        if conn is None or conn.is_closed():
            return "its connection closed"
        if self._sock is None or self._asking:
            return None
        try:
            peeked = self._sock.recv(512, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError as e:
            return f"its connection failed ({e.strerror or type(e).__name__})"
        if not peeked:
            return "its connection closed"
        said = _server_said(peeked)
        if said is not None:
            return f'its connection closed, the server saying "{said}"'
        return f"the server sent {len(peeked)} bytes unasked on its connection"

    def _unasked(self, what: str) -> None:
        """A notice from the server between heartbeats: whatever it says, the session is
        not as it was (a backend crash is announced this way) and the lease is lost."""
        if not self._asking:
            self._lost(f"the server sent unasked on its connection: {what}")

    def _look(self) -> None:
        """Note the clocks; a clock moved more than ``gap`` since they were last noted
        (or went back): a gap in the loop's progress, to be cleared by a heartbeat."""
        now = self.clocks()
        if any(abs(n - s) > self.gap for n, s in zip(now, self._seen, strict=True)):
            self._gaps += 1
            self._due.set()
        self._seen = now

    async def _watch_loop(self) -> None:
        while not self._closing and self.held:
            await asyncio.sleep(self.tick)
            self._look()

    async def _heartbeats(self) -> None:
        conn = self._conn
        assert conn is not None
        while not self._closing and self.held:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.heartbeat):
                    await self._due.wait()
            self._due.clear()
            reason = self._refusal()  # a freeze: the lease may be gone already
            if reason is not None:
                self._lost(reason)
                return
            self._look()  # late itself: this heartbeat is sent after the gap
            self._due.clear()
            gaps, sent = self._gaps, self.clocks()
            self._asking = True
            try:
                await asyncio.wait_for(conn.fetchval(self.heartbeat_sql), self.timeout)
            except (*_FAILURES, asyncpg.InternalClientError) as e:
                self._lost(self._failed(conn, e))
                return
            finally:
                self._asking = False
            self._beat, self._cleared = sent, gaps
            self._answered()

    def _failed(self, conn: asyncpg.Connection, e: BaseException) -> str:
        """A failed heartbeat's cause, as the operator should read it."""
        if isinstance(e, asyncio.TimeoutError):
            return f"a heartbeat was not answered within {self.timeout:g} s"
        if conn.is_closed() or isinstance(e, asyncpg.ConnectionDoesNotExistError | OSError):
            if isinstance(e, asyncpg.PostgresError):  # the server's goodbye, e.g. 57P01
                return f'its connection closed, the server saying "{e}"'
            return "its connection closed"
        return f"a heartbeat failed: {type(e).__name__} {e}".rstrip()

    def _answered(self) -> None:
        news, self._news = self._news, asyncio.Event()
        news.set()

    def _lost(self, reason: str) -> None:
        if self._closing or not self.held:
            return
        self.held = False
        self._answered()  # the fences waiting for a heartbeat refuse now
        on_lost, self._on_lost = self._on_lost, None
        if on_lost is not None:
            on_lost(reason)

    async def release(self) -> None:
        """Give the lease up (a clean shutdown): a standby takes over at once."""
        self._closing = True
        self.held = False
        self._answered()
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._conn is not None:
            try:
                await asyncio.wait_for(self._conn.close(), self.timeout)
            except (*_FAILURES, asyncpg.InternalClientError):
                self._conn.terminate()
            self._conn = None


def _peeker(conn: asyncpg.Connection) -> socket.socket | None:
    """A second descriptor of the connection's socket, for :meth:`Lease._line` to peek
    at (asyncpg keeps its transport private; without it the fence relies on the loop)."""
    transport = getattr(conn, "_transport", None)
    raw = transport.get_extra_info("socket") if transport is not None else None
    if raw is None:
        return None
    try:
        return socket.socket(fileno=os.dup(raw.fileno()))
    except OSError:
        return None


def _server_said(data: bytes) -> str | None:
    """The message of a PostgreSQL ErrorResponse or NoticeResponse at the start of
    ``data`` (its ``M`` field), e.g. "terminating connection due to administrator
    command"; ``None`` for anything else (a TLS connection's bytes included)."""
    if len(data) < 5 or data[:1] not in (b"E", b"N"):
        return None
    for field in data[5:].split(b"\0"):
        if field[:1] == b"M":
            return field[1:].decode(errors="replace")
    return None
