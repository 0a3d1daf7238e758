"""Telegram-like flood limits for message sends and edits.

Three limits apply to every send/edit (each request is checked against all of them and
only counted when accepted by all):

* group and supergroup chats: at most ``group_max`` per ``group_window`` seconds
  (sliding window; Telegram: 20 per minute);
* private chats: a token bucket holding ``private_burst`` tokens refilled at
  ``private_per_second`` (Telegram: about one message per second);
* the whole bot: at most ``global_max`` per ``global_window`` seconds (Telegram: 30/s).

With ``enforce=True`` (default) a request over a limit is refused (HTTP 429) and counted in
``rate_limited``; nothing over the limit is ever accepted, so ``violations`` stays 0 by
construction. With ``enforce=False`` everything is accepted and each request that would have
been refused is counted in ``violations`` — use that to check a bot paces itself.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class RateLimits:
    enforce: bool = True
    group_max: int = 20
    group_window: float = 60.0
    private_burst: int = 3
    private_per_second: float = 1.0
    global_max: int = 30
    global_window: float = 1.0

    def scaled(self, time_scale: float) -> RateLimits:
        """The same limits with time compressed: ``scaled(0.01)`` makes a minute last 0.6 s."""
        if time_scale <= 0:
            raise ValueError("time_scale must be positive")
        return replace(
            self,
            group_window=self.group_window * time_scale,
            private_per_second=self.private_per_second / time_scale,
            global_window=self.global_window * time_scale,
        )

    @classmethod
    def observe_only(cls) -> RateLimits:
        """Never answer 429, only count violations."""
        return cls(enforce=False)


@dataclass
class RateStats:
    """Counters for one chat (or the whole bot)."""

    accepted: int = 0  # sends/edits that passed the limiter
    rate_limited: int = 0  # 429 answers
    violations: int = 0  # accepted although over a limit (only possible with enforce=False)
    peak_in_window: int = 0  # most accepted sends seen inside one sliding window


class SlidingWindow:
    """At most ``max_events`` accepted events in any ``window`` seconds."""

    def __init__(self, max_events: int, window: float) -> None:
        self.max_events = max_events
        self.window = window
        self._events: deque[float] = deque()

    def _prune(self, now: float) -> None:
        events = self._events
        while events and events[0] <= now - self.window:
            events.popleft()

    def wait_time(self, now: float) -> float:
        self._prune(now)
        if len(self._events) < self.max_events:
            return 0.0
        return max(self._events[-self.max_events] + self.window - now, 1e-9)

    def record(self, now: float) -> int:
        """Count one event; returns the number of events in the window including it."""
        self._prune(now)
        self._events.append(now)
        return len(self._events)


class TokenBucket:
    """``capacity`` tokens, refilled continuously at ``rate`` tokens per second."""

    def __init__(self, capacity: int, rate: float, now: float) -> None:
        self.capacity = capacity
        self.rate = rate
        self._tokens = float(capacity)
        self._updated = now

    def _refill(self, now: float) -> None:
        elapsed = max(now - self._updated, 0.0)
        self._tokens = min(self.capacity, self._tokens + elapsed * self.rate)
        self._updated = now

    def wait_time(self, now: float) -> float:
        self._refill(now)
        if self._tokens >= 1.0:
            return 0.0
        return (1.0 - self._tokens) / self.rate

    def record(self, now: float) -> int:
        self._refill(now)
        self._tokens = max(self._tokens - 1.0, 0.0)
        return 0


Limiter = SlidingWindow | TokenBucket


class RateLimiter:
    """Per-chat and global limiters, created lazily; O(1) amortised per request."""

    def __init__(self, limits: RateLimits, clock: Callable[[], float]) -> None:
        self.limits = limits
        self._clock = clock
        self._chats: dict[int, Limiter] = {}
        self._global = SlidingWindow(limits.global_max, limits.global_window)
        self.total = RateStats()
        self.global_violations = 0

    def _chat_limiter(self, chat_id: int, private: bool, now: float) -> Limiter:
        limiter = self._chats.get(chat_id)
        if limiter is None:
            if private:
                limiter = TokenBucket(
                    self.limits.private_burst, self.limits.private_per_second, now
                )
            else:
                limiter = SlidingWindow(self.limits.group_max, self.limits.group_window)
            self._chats[chat_id] = limiter
        return limiter

    def acquire(self, chat_id: int, private: bool, stats: RateStats) -> float | None:
        """Account one send/edit in ``chat_id``.

        Returns ``None`` when accepted, or the number of seconds to wait when refused.
        """
        now = self._clock()
        chat_limiter = self._chat_limiter(chat_id, private, now)
        chat_wait = chat_limiter.wait_time(now)
        global_wait = self._global.wait_time(now)
        wait = max(chat_wait, global_wait)
        if wait > 0 and self.limits.enforce:
            stats.rate_limited += 1
            self.total.rate_limited += 1
            return wait
        if chat_wait > 0:
            stats.violations += 1
            self.total.violations += 1
        if global_wait > 0:
            self.global_violations += 1
        in_window = chat_limiter.record(now)
        self._global.record(now)
        stats.accepted += 1
        stats.peak_in_window = max(stats.peak_in_window, in_window)
        self.total.accepted += 1
        return None


def retry_after_seconds(wait: float) -> int:
    """Telegram's ``retry_after``: whole seconds, at least 1."""
    return max(1, math.ceil(wait))
