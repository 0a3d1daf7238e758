"""The bot-wide send budget and what the outbox measures of it.

Telegram documents about 30 messages a second for a whole bot, but not whether edits made
in reply to players count, so the real budget may be larger. ``GlobalCap`` learns it: in
``adaptive`` mode the cap rises while a minute passes without a bot-wide 429 and halves on
one (additive increase, multiplicative decrease, as TCP finds a link's capacity). A 429 in
one chat is that chat's own limit; 429s in several chats at once are the bot-wide one.

``Metrics`` counts requests, 429s and queue waits for a line at INFO every minute, so an
operator sees the budget the bot uses and what it costs the players. No message text and no
chat id goes into those lines.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter, deque
from dataclasses import dataclass, field

__all__ = ["MODES", "GlobalCap", "Histogram", "Metrics", "chat_type"]

MODES = ("fixed", "adaptive")


class GlobalCap:
    """Sends+edits a second for the whole bot: fixed, or learnt from Telegram's answers.

    ``adaptive``: each quiet period (a minute) in which the cap held sends back raises it by
    one a second (``step``), up to ``ceiling``; until the first bot-wide 429 event it doubles
    instead (TCP's slow start), so a fresh bot finds a budget of 60/s in two minutes, not
    half an hour. A bot-wide event, 429s in ``event_chats`` or more chats within
    ``event_window`` seconds, halves it, never below ``floor`` (the configured start: the
    documented budget), and at most once per window (one overload, one halving). A period
    in which the cap held nothing back says nothing about a higher one, so it stays.
    """

    def __init__(
        self,
        per_second: float,
        mode: str = "fixed",
        *,
        ceiling: float | None = None,
        step: float = 1.0,
        event_chats: int = 3,
        event_window: float = 10.0,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        if per_second <= 0 or step < 0 or event_chats < 1 or event_window <= 0:
            raise ValueError("the cap and its step must be positive")
        self.mode = mode
        self.floor = per_second
        self.ceiling = max(per_second, ceiling if ceiling is not None else per_second)
        self.per_second = per_second
        self.step = step
        self.event_chats = event_chats
        self.event_window = event_window
        self.slow_start = mode == "adaptive"
        self.events = 0  # bot-wide 429 events so far
        self._refusals: deque[tuple[float, int]] = deque()  # (when, chat id) of recent 429s
        self._last_event = -math.inf
        self._event_this_period = False

    @property
    def interval(self) -> float:
        """Seconds between two sends at the current cap."""
        return 1.0 / self.per_second

    def refused(self, chat_id: int, now: float) -> bool:
        """Note a 429 in ``chat_id``; True if it makes a bot-wide event (the cap halves)."""
        refusals = self._refusals
        refusals.append((now, chat_id))
        while refusals and refusals[0][0] < now - self.event_window:
            refusals.popleft()
        if len({chat for _at, chat in refusals}) < self.event_chats:
            return False
        refusals.clear()
        if now - self._last_event < self.event_window:
            return False  # the same overload: halved once already
        self._last_event = now
        self._event_this_period = True
        self.events += 1
        if self.mode == "adaptive":
            self.slow_start = False
            self.per_second = max(self.floor, self.per_second / 2)
        return True

    def period_over(self, held_back: bool) -> None:
        """A period (a minute) ended; ``held_back``: the cap made sends wait in it."""
        quiet = not self._event_this_period
        self._event_this_period = False
        if self.mode != "adaptive" or not quiet or not held_back:
            return
        raised = self.per_second * 2 if self.slow_start else self.per_second + self.step
        self.per_second = min(self.ceiling, raised)

    def describe(self) -> str:
        if self.mode == "fixed":
            return f"{self.per_second:g}/s (fixed)"
        phase = ", probing" if self.slow_start else ""
        return (
            f"{self.per_second:g}/s (adaptive {self.floor:g}-{self.ceiling:g}{phase};"
            f" {self.events} bot-wide 429 event(s) so far)"
        )


# Bucket bounds for waits: 1 ms to about 10 minutes, each 5 % above the last (25 % buckets
# read a p95 of 2.0 s as 2.47 s, and issue 12 sizes a token's capacity by "p95 under 2 s").
_BOUNDS = tuple(0.001 * 1.05**k for k in range(275))


@dataclass(slots=True)
class Histogram:
    """Counts of durations in logarithmic buckets: percentiles within 5 %, in fixed memory
    however many requests a busy minute holds."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(_BOUNDS) + 1))
    total: int = 0
    largest: float = 0.0

    def add(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(_BOUNDS, seconds)] += 1
        self.total += 1
        self.largest = max(self.largest, seconds)

    def merge(self, other: Histogram) -> None:
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]
        self.total += other.total
        self.largest = max(self.largest, other.largest)

    def minus(self, earlier: Histogram) -> Histogram:
        """What was added since ``earlier`` (a copy of this histogram taken then)."""
        counts = [a - b for a, b in zip(self.counts, earlier.counts, strict=True)]
        return Histogram(counts, self.total - earlier.total, self.largest)

    def copy(self) -> Histogram:
        return Histogram(list(self.counts), self.total, self.largest)

    def percentile(self, q: float) -> float:
        """The upper bound of the bucket holding the ``q`` quantile (0 when empty)."""
        if self.total == 0:
            return 0.0
        rank = max(1, math.ceil(q * self.total))
        seen = 0
        for k, count in enumerate(self.counts):
            seen += count
            if seen >= rank:
                return min(_BOUNDS[k], self.largest) if k < len(_BOUNDS) else self.largest
        return self.largest


def chat_type(chat_id: int) -> str:
    """Groups (and channels) have negative ids, private chats are users' positive ids."""
    return "group" if chat_id < 0 else "private"


@dataclass
class Metrics:
    """What the outbox did in the current period (for the log) and since it started."""

    calls: Counter[tuple[str, str]] = field(default_factory=Counter)  # (method, chat type)
    refused: Counter[tuple[str, str]] = field(default_factory=Counter)
    retry_after: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    waits: dict[int, Histogram] = field(default_factory=dict)  # priority -> queue wait
    # priority -> from the first show of the content to Telegram's answer (since start)
    shown: dict[int, Histogram] = field(default_factory=dict)
    #: chat type -> edits not made: the message already showed that content
    unchanged: Counter[str] = field(default_factory=Counter)
    total_calls: int = 0
    total_refused: int = 0
    total_unchanged: int = 0

    def call(self, method: str, chat_id: int) -> None:
        self.calls[(method, chat_type(chat_id))] += 1
        self.total_calls += 1

    def refusal(self, method: str, chat_id: int, retry_after: float) -> None:
        key = (method, chat_type(chat_id))
        self.refused[key] += 1
        self.retry_after.setdefault(key, []).append(retry_after)
        self.total_refused += 1

    def skipped(self, chat_id: int) -> None:
        self.unchanged[chat_type(chat_id)] += 1
        self.total_unchanged += 1

    def waited(self, priority: int, seconds: float) -> None:
        self.waits.setdefault(priority, Histogram()).add(seconds)

    def delivered(self, priority: int, seconds: float) -> None:
        self.shown.setdefault(priority, Histogram()).add(seconds)

    def report(self, period: float, cap: GlobalCap) -> list[str]:
        """The period's lines for the log, then a fresh period. Counts and times only."""
        lines = [f"outbox: bot-wide cap {cap.describe()}"]
        for key in sorted(set(self.calls) | set(self.refused)):
            method, kind = key
            line = f"outbox: {method} {kind}: {self.calls[key] / period:.2f}/s"
            if self.refused[key]:
                waits = self.retry_after[key]
                line += (
                    f", 429: {self.refused[key]} (retry_after max {max(waits):g} s,"
                    f" mean {sum(waits) / len(waits):.1f} s)"
                )
            else:
                line += ", 429: 0"
            lines.append(line)
        if self.unchanged:
            kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(self.unchanged.items()))
            lines.append(f"outbox: edits not made, the message showed that already: {kinds}")
        for priority in sorted(self.waits, reverse=True):
            h = self.waits[priority]
            lines.append(
                f"outbox: queue wait, priority {priority}: {h.total} item(s),"
                f" p50 {h.percentile(0.5):.3f} s, p95 {h.percentile(0.95):.3f} s,"
                f" max {h.largest:.3f} s"
            )
        self.calls.clear()
        self.refused.clear()
        self.retry_after.clear()
        self.waits.clear()
        self.unchanged.clear()
        return lines
