"""Clocks for tests (``bot.clock.Clock``), so that the outbox's pacing, the fake Bot
API's flood limits and the turn clock see the same moments however busy the machine is.

:class:`ManualClock`: time stands still until the test says.

Every wait on it ends at a time on it; :meth:`ManualClock.advance_to` moves the time and
ends the waits it reaches. :func:`run_outbox` moves it the way time would pass for an
outbox, one moment the outbox waits for after another, each time once every request the
outbox started has been answered (on loopback: a request and its answer take no time on
this clock)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from dataclasses import dataclass, field

from bot.clock import SystemClock
from bot.transport.outbox import Outbox

#: How often (real seconds) a settling loop looks again; it only waits for answers.
POLL = 0.001


@dataclass(eq=False)
class _Waiter:
    deadline: float
    done: asyncio.Future[None]
    event: asyncio.Event | None

    @property
    def blocked(self) -> bool:
        """Waiting, and nothing lets it go on before its deadline."""
        return not self.done.done() and not (self.event is not None and self.event.is_set())


@dataclass(eq=False)
class ManualClock:
    """Time that moves only when the test moves it."""

    time: float = 1_000.0
    _waiters: set[_Waiter] = field(default_factory=set)
    _order: itertools.count[int] = field(default_factory=itertools.count)

    def now(self) -> float:
        return self.time

    async def sleep(self, seconds: float) -> None:
        await self._until(None, seconds)

    async def wait(self, event: asyncio.Event, seconds: float | None) -> None:
        await self._until(event, seconds)

    async def _until(self, event: asyncio.Event | None, seconds: float | None) -> None:
        if event is not None and event.is_set():
            return
        if seconds is not None and seconds <= 0:
            await asyncio.sleep(0)
            return
        deadline = float("inf") if seconds is None else self.time + seconds
        waiter = _Waiter(deadline, asyncio.get_running_loop().create_future(), event)
        self._waiters.add(waiter)
        try:
            if event is None:
                await waiter.done
                return
            woken = asyncio.ensure_future(event.wait())
            try:
                await asyncio.wait([waiter.done, woken], return_when=asyncio.FIRST_COMPLETED)
            finally:
                woken.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await woken
        finally:
            self._waiters.discard(waiter)

    @property
    def settled(self) -> bool:
        """Every waiter waits for a time still to come (none has been let go and not yet
        run)."""
        return all(w.blocked for w in self._waiters)

    def next_deadline(self) -> float | None:
        """The earliest time a waiter waits for (``None``: nobody waits for a time)."""
        deadlines = [w.deadline for w in self._waiters if w.blocked and w.deadline < float("inf")]
        return min(deadlines, default=None)

    def advance_to(self, moment: float) -> None:
        """Move the time to ``moment`` (never back) and let go every wait it reaches."""
        self.time = max(self.time, moment)
        for waiter in list(self._waiters):
            if waiter.deadline <= self.time and not waiter.done.done():
                waiter.done.set_result(None)

    def advance(self, seconds: float) -> None:
        self.advance_to(self.time + seconds)

    async def forward(self, seconds: float) -> None:
        """:meth:`advance`, then a few turns of the loop: the waits it ended run their next
        steps (a paced table's edit, a phrase's end) before the test looks."""
        self.advance(seconds)
        for _ in range(10):
            await asyncio.sleep(0)


async def settle(clock: ManualClock, *outboxes: Outbox) -> None:
    """Until nothing happens without the time moving: every request the outboxes started
    answered, every waiter of the clock waiting for a time to come."""
    while True:
        for _ in range(3):  # let what was just let go run
            await asyncio.sleep(0)
        if clock.settled and all(o.requests_in_flight == 0 for o in outboxes):
            return
        await asyncio.sleep(POLL)  # real time: an answer on its way over loopback


async def run_outbox(clock: ManualClock, outbox: Outbox, until: float) -> None:
    """Let the outbox run until ``until`` on the clock: time moves to each moment the
    outbox (or anything else on the clock) waits for, once all is settled."""
    while True:
        await settle(clock, outbox)
        due = clock.next_deadline()
        if due is None or due > until:
            clock.advance_to(until)
            await settle(clock, outbox)
            return
        clock.advance_to(due)


async def idle(clock: ManualClock, outbox: Outbox, limit: float = 600.0) -> None:
    """Let the outbox run until nothing is queued or in flight (at most ``limit`` seconds
    on the clock: more is a test's failure)."""
    end = clock.now() + limit
    while True:
        await settle(clock, outbox)
        if outbox.is_idle:
            return
        due = clock.next_deadline()
        if due is None or due > end:
            raise TimeoutError(f"the outbox still had work after {limit} s on the clock")
        clock.advance_to(due)


class LoopbackClock(SystemClock):
    """Real time, standing still while a request of the outbox is on its way to the fake
    Bot API and back: the server (given ``clock=clock.now``) sees each request at the
    moment the outbox sent it. On loopback that way takes no time worth counting; on a
    busy machine a request may wait tens of milliseconds for the CPU between the two
    halves of one process, which compressed time (``SCALE``) makes a good part of a
    group's slot, and which is no part of the outbox's pace. Elsewhere it runs as the
    monotonic clock does, for a whole game of the real bot.

    Time counts between two reads of it only if no request was in flight at either:
    every request starts after a read (the outbox's) and ends before one."""

    def __init__(self) -> None:
        super().__init__(self._read)
        self._outbox: Outbox | None = None
        self._real = time.monotonic()
        self._time = self._real
        self._busy = False

    def follow(self, outbox: Outbox) -> None:
        self._outbox = outbox

    def _read(self) -> float:
        real = time.monotonic()
        busy = self._outbox is not None and self._outbox.requests_in_flight > 0
        if not busy and not self._busy:
            self._time += real - self._real
        self._real, self._busy = real, busy
        return self._time
