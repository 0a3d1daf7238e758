"""Who is a member of a group, as Telegram says (``getChatMember``), asked once a minute
at most per chat and user (issue 36 item 4).

A Mini App page of a user who is not seated asked Telegram on every connection, uncached
and unlimited: 1,380 calls a second from one client, which real Telegram answers with
429s that then turn real spectators away. Here each answer is kept for :data:`KEEP`
seconds (a refusal too), a failed question (a 429, the network) for
:data:`KEEP_FAILED` as a refusal, and questions about the same pair asked at once wait
for one answer. The clock is the caller's to give (tests move it by hand)."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from telegram import Bot
from telegram.error import TelegramError

__all__ = ["KEEP", "KEEP_FAILED", "Members", "chat_member"]

#: Seconds an answer is kept.
KEEP = 60.0
#: Seconds a question Telegram did not answer counts as a refusal before it is asked again.
KEEP_FAILED = 10.0
#: Pairs kept at most (the oldest answers go first).
MOST = 50_000

#: Asks Telegram: is this user a member of this chat (raises TelegramError if it cannot say).
Ask = Callable[[int, int], Awaitable[bool]]

MEMBER_STATUSES = frozenset({"creator", "administrator", "member"})


async def chat_member(bot: Bot, chat_id: int, user_id: int) -> bool:
    """``getChatMember``: a member, an admin, the creator, or restricted but still in."""
    found = await bot.get_chat_member(chat_id, user_id)
    return found.status in MEMBER_STATUSES or bool(getattr(found, "is_member", False))


class Members:
    """``await members.is_member(chat_id, user_id)``: cached, one question at a time."""

    def __init__(
        self,
        ask: Ask,
        *,
        keep: float = KEEP,
        keep_failed: float = KEEP_FAILED,
        clock: Callable[[], float] = time.monotonic,
        most: int = MOST,
    ) -> None:
        self.ask = ask
        self.keep = keep
        self.keep_failed = keep_failed
        self.clock = clock
        self.most = most
        #: (chat, user) -> (whether a member, until when), in the order they were asked
        self._known: OrderedDict[tuple[int, int], tuple[bool, float]] = OrderedDict()
        self._asking: dict[tuple[int, int], asyncio.Future[bool]] = {}
        self.asked = 0  # questions sent to Telegram

    async def is_member(self, chat_id: int, user_id: int) -> bool:
        key = (chat_id, user_id)
        known = self._known.get(key)
        if known is not None and self.clock() < known[1]:
            return known[0]
        asking = self._asking.get(key)
        if asking is not None:  # asked already: the same answer
            return await asyncio.shield(asking)
        asking = self._asking[key] = asyncio.get_running_loop().create_future()
        try:
            answer, keep = await self._ask(chat_id, user_id)
        except BaseException:  # (cancelled) those waiting with it are refused this once
            asking.set_result(False)
            raise
        finally:
            del self._asking[key]
        self._remember(key, answer, keep)
        asking.set_result(answer)
        return answer

    async def _ask(self, chat_id: int, user_id: int) -> tuple[bool, float]:
        self.asked += 1
        try:
            return await self.ask(chat_id, user_id), self.keep
        except TelegramError:
            return False, self.keep_failed

    def _remember(self, key: tuple[int, int], answer: bool, keep: float) -> None:
        now = self.clock()
        self._known.pop(key, None)
        self._known[key] = (answer, now + keep)
        while self._known:  # answers kept no longer, and the oldest beyond ``most``
            first, (_answer, until) = next(iter(self._known.items()))
            if until > now and len(self._known) <= self.most:
                break
            del self._known[first]
