"""The pending-update queue behind getUpdates, with Telegram's offset and long-poll rules."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .errors import GET_UPDATES_CONFLICT, conflict

# Update kinds Telegram only sends when explicitly listed in allowed_updates.
OPT_IN_KINDS = frozenset({"chat_member", "message_reaction", "message_reaction_count"})


@dataclass(frozen=True)
class PendingUpdate:
    update_id: int
    kind: str
    payload: dict[str, Any]


class UpdateQueue:
    """Updates wait here until confirmed by a getUpdates ``offset`` (like Telegram).

    Only the newest getUpdates call may wait: a new call terminates an older long poll,
    which then answers 409 Conflict.
    """

    def __init__(self, first_update_id: int = 1) -> None:
        self._pending: deque[PendingUpdate] = deque()
        self._next_id = first_update_id
        self._signal = asyncio.Event()
        self._generation = 0
        self.allowed: frozenset[str] | None = None  # None: Telegram's default set
        self.pushed = 0
        self.confirmed = 0
        self.dropped = 0  # never delivered because of allowed_updates

    def __len__(self) -> int:
        return len(self._pending)

    def _wake(self) -> None:
        self._signal.set()
        self._signal = asyncio.Event()

    def push(self, kind: str, payload: dict[str, Any]) -> int:
        update_id = self._next_id
        self._next_id += 1
        self._pending.append(PendingUpdate(update_id, kind, {"update_id": update_id, **payload}))
        self.pushed += 1
        self._wake()
        return update_id

    def clear(self) -> None:
        self._pending.clear()

    def confirm(self, offset: int) -> None:
        pending = self._pending
        if offset < 0:
            while len(pending) > -offset:
                pending.popleft()
                self.confirmed += 1
            return
        while pending and pending[0].update_id < offset:
            pending.popleft()
            self.confirmed += 1

    def set_allowed(self, kinds: Iterable[str] | None) -> None:
        if kinds is not None:
            self.allowed = frozenset(kinds) or None

    def _is_allowed(self, kind: str) -> bool:
        if self.allowed is None:
            return kind not in OPT_IN_KINDS
        return kind in self.allowed

    def take(self, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` oldest allowed updates (they stay queued until confirmed)."""
        batch: list[PendingUpdate] = []
        pending = self._pending
        while pending and len(batch) < limit:
            update = pending.popleft()
            if self._is_allowed(update.kind):
                batch.append(update)
            else:
                self.dropped += 1
        pending.extendleft(reversed(batch))
        return [update.payload for update in batch]

    def pop(self) -> PendingUpdate | None:
        """The oldest allowed update, taken off the queue for a webhook's delivery (which
        counts it :attr:`confirmed` once the webhook answered it; see :meth:`put_back`)."""
        pending = self._pending
        while pending:
            update = pending.popleft()
            if self._is_allowed(update.kind):
                return update
            self.dropped += 1
        return None

    def put_back(self, update: PendingUpdate) -> None:
        """A popped update whose delivery failed: back in the queue, in update_id order
        (older than whatever was never popped; several may come back in any order)."""
        pending = self._pending
        at = 0
        while at < len(pending) and pending[at].update_id < update.update_id:
            at += 1
        pending.insert(at, update)
        self._wake()

    async def wait_pushed(self) -> None:
        """Until an update is pushed (or put back)."""
        await self._signal.wait()

    async def poll(
        self,
        offset: int | None,
        limit: int,
        timeout: float,
        allowed: Iterable[str] | None,
    ) -> list[dict[str, Any]]:
        self.set_allowed(allowed)
        self._generation += 1
        generation = self._generation
        self._wake()  # an older long poll notices it was superseded
        if offset is not None:
            self.confirm(offset)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if generation != self._generation:
                raise conflict(GET_UPDATES_CONFLICT)
            batch = self.take(limit)
            remaining = deadline - loop.time()
            if batch or remaining <= 0:
                return batch
            signal = self._signal
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(signal.wait(), remaining)
