"""The Mini App's door (issue 36 items 1, 3, 4): which pages may be held open, where a
connection comes from, how often one user may sign in, and how often one address is
written to the log.

A page's WebSocket stays inside its HTTP request for its whole life, so the listener's cap
(:mod:`bot.transport.listener`) cannot close it for room. The pages get a cap of their own
below the listener's (:func:`~bot.transport.listener.held_cap`): the rest is kept for
Telegram's webhook and the page's files. A connection that has not sent its initData yet
is the first to go when a page needs room, and one address may keep only a few of those
open at once: a crowd that never signs in can neither fill the cap nor push real pages out.
"""

from __future__ import annotations

import ipaddress
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from aiohttp import web

from .registry import Bucket

__all__ = ["Buckets", "Gate", "Held", "Throttle", "source_of"]

Clock = Callable[[], float]


def source_of(request: web.Request, header: str | None = None) -> str:
    """The address a connection comes from: the peer's, or, behind a proxy that the
    operator says sets it (``DURAK_WEBAPP_FORWARDED_HEADER``), that header's: for
    ``X-Forwarded-For`` its last address (the one the proxy added; the ones before it
    are the client's word). An IPv6 address counts by its /64, which one client holds."""
    given = None
    if header:
        values = request.headers.getall(header, [])
        if values:
            given = ",".join(values).rsplit(",", 1)[-1].strip()
    for text in (given, request.remote):
        if not text:
            continue
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            continue
        if isinstance(address, ipaddress.IPv6Address):
            if address.ipv4_mapped is not None:
                return str(address.ipv4_mapped)
            return str(ipaddress.IPv6Network((address, 64), strict=False))
        return str(address)
    return "?"


@dataclass(eq=False)
class Held:
    """One page's connection, from its upgrade to its end."""

    source: str
    drop: Callable[[], None]  # closes the connection at once


class Gate:
    """The pages held open: at most ``cap``; of those without initData yet at most
    ``per_source`` from one address, the oldest dropped first when a page needs room."""

    def __init__(self, cap: int, per_source: int) -> None:
        self.cap = cap
        self.per_source = per_source
        self._held: set[Held] = set()
        self._waiting: OrderedDict[Held, None] = OrderedDict()  # no initData yet, oldest first
        self._sources: Counter[str] = Counter()
        self.dropped = 0  # connections without initData closed for room

    def enter(self, source: str, drop: Callable[[], None]) -> Held | str:
        """A new page from ``source``, or why not: ``"source"`` (that address has its
        share of connections without initData open), ``"full"`` (every page held has
        signed in)."""
        if self._sources[source] >= self.per_source:
            return "source"
        if len(self._held) >= self.cap and not self.spare():
            return "full"
        held = Held(source, drop)
        self._held.add(held)
        self._waiting[held] = None
        self._sources[source] += 1
        return held

    def spare(self) -> bool:
        """Room for one more: the oldest connection without initData is closed. False
        if there is none."""
        oldest = next(iter(self._waiting), None)
        if oldest is None:
            return False
        self.leave(oldest)
        self.dropped += 1
        oldest.drop()
        return True

    def signed(self, held: Held) -> None:
        """Its initData came: it is no longer dropped for room."""
        if held in self._waiting:
            del self._waiting[held]
            self._sources[held.source] -= 1
            if self._sources[held.source] <= 0:
                del self._sources[held.source]

    def leave(self, held: Held) -> None:
        self.signed(held)
        self._held.discard(held)

    @property
    def count(self) -> int:
        return len(self._held)

    def waiting(self, source: str | None = None) -> int:
        """Connections without initData (from ``source``)."""
        return len(self._waiting) if source is None else self._sources[source]


@dataclass
class Buckets:
    """A token bucket per key (``burst`` at once, then ``rate`` a second): initData checks
    per user. A key whose bucket is full again is forgotten, so memory stays bounded by
    the keys of the last ``burst / rate`` seconds."""

    burst: float
    rate: float
    clock: Clock = time.monotonic
    _buckets: dict[Hashable, Bucket] = field(default_factory=dict)
    _swept: float = float("-inf")

    def take(self, key: Hashable) -> bool:
        now = self.clock()
        if now - self._swept > self.burst / self.rate:
            self._sweep(now)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = Bucket(self.burst, self.rate, at=now)
        return bucket.take(now)

    def _sweep(self, now: float) -> None:
        self._swept = now
        full = self.burst / self.rate
        for key in [k for k, b in self._buckets.items() if now - b.at >= full]:
            del self._buckets[key]


@dataclass
class Throttle:
    """At most one event per key every ``every`` seconds: a log line per address a
    minute. It remembers the keys of the last ``every`` seconds, at most ``most`` of
    them: past that, a new key gets nothing (a flood from that many addresses has been
    told of already)."""

    every: float = 60.0
    clock: Clock = time.monotonic
    most: int = 10_000
    _last: OrderedDict[Hashable, float] = field(default_factory=OrderedDict)

    def allow(self, key: Hashable) -> bool:
        now = self.clock()
        while self._last:  # the oldest first: forget those of more than ``every`` ago
            first, at = next(iter(self._last.items()))
            if now - at < self.every:
                break
            del self._last[first]
        if key in self._last or len(self._last) >= self.most:
            return False
        self._last[key] = now
        return True
