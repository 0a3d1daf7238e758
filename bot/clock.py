"""Time for the bot's timed parts: what time it is, and waiting until a time.

The outbox's pacing and the turn clock read and wait for time only through a
:class:`Clock`. Running, the bot uses the system's (:class:`SystemClock`); a test gives
them a clock it moves itself (``tests/clock.py``), so that what they do at each moment,
and with it the test's verdict, does not depend on how busy the machine is.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["MONOTONIC", "WALL", "Clock", "SystemClock"]


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on this clock."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Until ``seconds`` from now have passed on this clock."""
        ...

    async def wait(self, event: asyncio.Event, seconds: float | None) -> None:
        """Until ``event`` is set, or ``seconds`` from now have passed (``None``: no limit)."""
        ...


class SystemClock:
    """The system's time: ``time.monotonic`` (pacing) or ``time.time`` (deadlines that
    are stored and outlive the process)."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now

    def now(self) -> float:
        return self._now()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    async def wait(self, event: asyncio.Event, seconds: float | None) -> None:
        if seconds is None:
            await event.wait()
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(0.0, seconds)):
                await event.wait()


MONOTONIC = SystemClock()
WALL = SystemClock(time.time)
