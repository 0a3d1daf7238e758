"""The bot's only way to send and edit messages, paced to Telegram's flood limits.

Telegram allows about 20 sends/edits a minute in a group, one a second in a private chat and
30 a second for the whole bot, while the game redraws a table and every player's panel after
each move. So the outbox keeps only the latest content per message *place*, sends each chat's
items in order at that chat's pace, lets the most urgent chat go first, and waits out 429s in
the chat that got them without holding up the others. The bot-wide cap is fixed or learnt
(``bot/transport/budget.py``), and every minute a few INFO lines say what the budget was spent on.

Message texts may contain a player's hand: they are never logged at INFO or above.
"""

from __future__ import annotations

import asyncio
import datetime as dtm
import hashlib
import heapq
import itertools
import json
import logging
import warnings
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import telegram
from telegram import InlineKeyboardMarkup, InputFile
from telegram.constants import ParseMode
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
)
from telegram.warnings import PTBDeprecationWarning, PTBUserWarning

from ..clock import MONOTONIC, Clock
from .budget import MODES, GlobalCap, Metrics
from .request import BotApi, NotSent

__all__ = ["ANSWER", "DEFAULT_LIMITS", "Outbox", "SendLimits"]

_LOGGER = logging.getLogger(__name__)
_NO_PREVIEW = {"is_disabled": True}
# The outbox sends through BotApi (transport/request.py), not the named methods of PTB's Bot: they
# would parse every answer into a Message (a fifth of a busy bot's CPU). For a bot on another
# request class BotApi calls Bot.do_api_request, which asks to use the named method instead:
warnings.filterwarnings("ignore", message=r"Please use 'Bot\.", category=PTBUserWarning)
_NOT_MODIFIED = "message is not modified"
_GONE = ("message to edit not found", "message can't be edited")
#: A forum topic deleted (or closed to the bot) under a running game: its posts go to General.
_TOPIC_GONE = ("message thread not found", "topic_deleted", "topic_closed")

#: A keyboard: PTB's object, or the Bot API's JSON (bot/ui/keyboards.py builds that).
Markup = InlineKeyboardMarkup | dict[str, Any]
#: Content made when it is sent: a place shown many times between two sends renders once.
Render = Callable[[], tuple[str, Markup | None]]
#: Asked right after a render, at send time: whether that content notifies its reader.
Decide = Callable[[], bool]
OnPosted = Callable[[int, str, int], Awaitable[None]]
OnForbidden = Callable[[int], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class SendLimits:
    """How fast the outbox may talk to Telegram; the defaults sit just under its limits."""

    group_interval: float = 3.1  # min seconds between sends/edits in one group chat (20/min)
    private_interval: float = 1.05  # seconds per send/edit in one private chat, on average
    # Telegram lets a private chat go over one a second in a short burst: up to this many
    # sends/edits at once, then one per private_interval (a token bucket). The spare one is
    # what lets the player who must act see his turn at once after another player's move.
    private_burst: int = 2
    # ... and however the bursts fall, never more than private_window_max sends/edits in any
    # private_window_max * private_interval seconds (Telegram's "about one a second": five
    # in any five seconds; 5.25 s leaves a margin for the network's jitter).
    private_window_max: int = 5
    slow_for: float = 60.0  # after a 429 in a chat: half its pace, no burst, this long
    # A new outbox (a restart, a takeover) cannot know what the process before it sent: as
    # if each chat's last send had just gone, its first send waits one interval, and a
    # private chat goes at the slow pace (half, no burst) for its first window (the bot's
    # limits, bot/app.py's send_limits; off here for tests of a steady outbox)
    cold_start: bool = False
    global_per_second: float = 28.0  # whole bot (the start, in adaptive mode)
    global_mode: str = "fixed"  # or "adaptive": learn the real budget (bot/transport/budget.py)
    global_ceiling: float = 100.0  # adaptive: never above this
    period: float = 60.0  # the metrics' log lines and the adaptive cap's steps, seconds
    event_window: float = 10.0  # 429s in 3 chats within this many seconds: a bot-wide one
    max_in_flight: int = 64  # concurrent HTTP requests (the bot's connection pool must allow it)
    network_retries: int = 3  # retries after TimedOut/NetworkError before an item is dropped
    retry_backoff: float = 1.0  # wait before the first such retry; doubles each time

    def __post_init__(self) -> None:
        if min(self.group_interval, self.private_interval, self.retry_backoff) < 0:
            raise ValueError("intervals must not be negative")
        if self.slow_for < 0:
            raise ValueError("intervals must not be negative")
        if self.global_per_second <= 0 or self.max_in_flight < 1 or self.network_retries < 0:
            raise ValueError("global_per_second and max_in_flight must be positive")
        if self.private_burst < 1 or self.private_window_max < 1:
            raise ValueError("private_burst and private_window_max must be at least 1")
        if self.global_mode not in MODES:
            raise ValueError(f"global_mode must be one of {MODES}")
        if self.period <= 0 or self.event_window <= 0:
            raise ValueError("period and event_window must be positive")

    def scaled(self, factor: float) -> SendLimits:
        """The same limits with time compressed, to match ``RateLimits().scaled(factor)``."""
        if factor <= 0:
            raise ValueError("factor must be positive")
        return replace(
            self,
            group_interval=self.group_interval * factor,
            private_interval=self.private_interval * factor,
            slow_for=self.slow_for * factor,
            global_per_second=self.global_per_second / factor,
            global_ceiling=self.global_ceiling / factor,
            period=self.period * factor,
            event_window=self.event_window * factor,
            retry_backoff=self.retry_backoff * factor,
        )

    def cap(self) -> GlobalCap:
        return GlobalCap(
            self.global_per_second,
            self.global_mode,
            ceiling=self.global_ceiling,
            event_window=self.event_window,
        )

    def interval(self, chat_id: int) -> float:
        """Groups (and channels) have negative ids, private chats are users' positive ids."""
        return self.group_interval if chat_id < 0 else self.private_interval

    def burst(self, chat_id: int) -> int:
        return 1 if chat_id < 0 else self.private_burst


DEFAULT_LIMITS = SendLimits()

#: Items of this priority or above answer a person (a command's reply, the lobby he has
#: just joined): they go before anything queued in their chat, tables included
#: (issue 27 items 3 and 5).
ANSWER = 4
#: ... but at most this many in a row: then the oldest item they displaced goes (a
#: lobby posted and joined at once are both answered at once; a flood of answers
#: leaves the tables every third slot).
OVERTAKE_RUN = 2


@dataclass(slots=True, eq=False)
class _Item:
    """One queued message: a place's latest content (``place`` set) or a one-off send."""

    seq: int  # enqueue order; "oldest first" among chats of equal priority
    place: str | None
    text: str
    markup: Markup | None
    notify: bool
    priority: int
    attempts: int = 0  # network errors so far
    forgotten: bool = False  # its place was forgotten while it was in flight
    document: tuple[str, bytes] | None = None  # (file name, content): sent with text as caption
    render: Render | None = None  # makes text and markup at send time (show_later)
    decide: Decide | None = None  # whether the rendered content notifies (show_later)
    queued_at: float = 0.0  # when its content was first shown: what it waits since
    method: str = ""  # the Bot API method last tried (for the metrics of a failure)
    thread: int = 0  # the forum topic a new message goes to (message_thread_id); 0: none
    reply_to: int = 0  # a new message answers this message of the chat (0: none)
    fingerprint: bytes = b""  # of the content as it goes out (set when it is rendered)

    @property
    def label(self) -> str:
        """What logs may say about the item (never its text)."""
        return self.place if self.place is not None else "<send>"

    def absorb(self, newer: _Item) -> None:
        """Coalesce: the newer content wins, but a notification (or the question whether
        to send one), the higher priority and the time it waits since stay."""
        self.text = newer.text
        self.markup = newer.markup
        self.render = newer.render
        if newer.decide is not None:  # else the older one still asks (about the chat's
            self.decide = newer.decide  # reader at send time, not about this content)
        self.notify = self.notify or newer.notify
        self.priority = max(self.priority, newer.priority)


@dataclass(slots=True, eq=False)
class _Chat:
    """One chat's FIFO queue and pacing state."""

    chat_id: int
    interval: float
    tolerance: float = 0.0  # (burst - 1) * interval: how far sends may run ahead of the pace
    queue: deque[_Item] = field(default_factory=deque)
    places: dict[str, _Item] = field(default_factory=dict)  # the queued item of each place
    priority: int = 0  # the highest priority queued: the head must go first anyway
    ready_at: float = float("-inf")  # no send/edit before this (a 429, a network error)
    paced_to: float = float("-inf")  # when the sends so far would end at the steady pace
    busy: _Item | None = None  # the item in flight (at most one per chat)
    heap_key: tuple[object, ...] | None = None  # the live heap entry; older ones are stale
    forbidden: bool = False  # inside a burst of Forbidden answers
    window: float = 0.0  # at most window_max sends/edits in any window seconds (0: no window)
    window_max: int = 0
    sent: deque[float] = field(default_factory=deque)  # the starts of the latest sends
    slow_until: float = float("-inf")  # after a 429: half the pace, no burst, until then
    overtook: int = 0  # answers sent in a row ahead of older items (OVERTAKE_RUN at most)

    def recompute_priority(self) -> None:
        self.priority = max((item.priority for item in self.queue), default=0)


class Outbox:
    """Queues shows and sends, and delivers them from one worker task within the limits.

    Sends/edits start at least ``1 / cap`` apart, so at a fixed 28/s no second ever holds
    more than 29 of them (Telegram allows 30); the cap may also adapt (``bot/transport/budget.py``).
    Deleting the message a notification replaced is not paced: it is not a send.
    ``on_posted`` and ``on_forbidden`` are awaited before the chat's next item starts, so
    ids are persisted in the order they were posted.

    Two heaps index the chats that have something queued and nothing in flight: ``_waiting``
    by the time they may send again, ``_ready`` by (-priority, oldest item). A chat's
    ``heap_key`` names its live entry, so entries made stale by a change are skipped on pop
    instead of searched for.
    """

    def __init__(
        self,
        bot: telegram.Bot,
        limits: SendLimits = DEFAULT_LIMITS,
        *,
        on_posted: OnPosted | None = None,
        on_forbidden: OnForbidden | None = None,
        clock: Clock = MONOTONIC,
    ) -> None:
        self._bot = bot
        self.api = BotApi(bot)  # also the handlers' way to answer a pressed button
        self._limits = limits
        self._on_posted = on_posted
        self._on_forbidden = on_forbidden
        self._clock = clock
        self._chats: dict[int, _Chat] = {}
        self._ids: dict[tuple[int, str], int] = {}
        #: (chat, place) -> (its message id, the fingerprint of what Telegram confirmed it
        #: shows): an edit to that same content is not made (issue 33 item 7). Unknown
        #: after a failure, a restart or a remembered id: then the edit is made.
        self._shown: dict[tuple[int, str], tuple[int, bytes]] = {}
        self._gone_topics: set[tuple[int, int]] = set()  # (chat, thread) that refused a post
        self._releasing: set[tuple[int, str]] = set()  # drop the id once the place is sent
        self._ready: list[tuple[int, int, int]] = []  # (-priority, head seq, chat id)
        self._waiting: list[tuple[float, int]] = []  # (ready_at, chat id)
        self._seq = itertools.count()
        self.cap = limits.cap()
        self.metrics = Metrics()
        self._period_ends = clock.now() + limits.period
        self._born = clock.now()  # cold_start: each chat's pace as if it had just sent then
        self._held_back = False  # the cap made a ready send wait in this period
        self._global_ready_at = float("-inf")
        self._pending = 0
        self._in_flight = 0
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._worker: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ public API

    async def start(self) -> None:
        """Start the worker task (again, after a stop)."""
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._run(), name="outbox")

    async def stop(
        self, drain: bool = True, timeout: float = 10.0, hurry: asyncio.Event | None = None
    ) -> None:
        """Stop the worker; with ``drain``, first give queued items ``timeout`` s to go out
        (or until ``hurry`` is set). What is left unsent is logged at INFO, item by item
        (chat, place and method; never a text)."""
        if drain and self._worker is not None:
            waits = [asyncio.ensure_future(self._idle.wait())]
            if hurry is not None:
                waits.append(asyncio.ensure_future(hurry.wait()))
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            for wait in waits:
                wait.cancel()
        tasks = [*self._tasks, *([self._worker] if self._worker else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._worker = None
        self._log_unsent()

    def _log_unsent(self) -> None:
        unsent = [(chat_id, item) for chat_id, chat in self._chats.items() for item in chat.queue]
        for chat_id, item in unsent:
            _LOGGER.info("outbox: unsent at stop: chat %s place %s", chat_id, item.label)
        if unsent:
            _LOGGER.info("outbox stopped with %d item(s) unsent", len(unsent))
        else:
            _LOGGER.info("outbox stopped: everything queued was sent")

    def remember(self, chat_id: int, place: str, message_id: int) -> None:
        """Seed a place's message id (e.g. from the database after a restart)."""
        self._ids[(chat_id, place)] = message_id

    @property
    def requests_in_flight(self) -> int:
        """Bot API requests started and not yet answered."""
        return self._in_flight

    @property
    def is_idle(self) -> bool:
        """Nothing queued, nothing in flight."""
        return self._idle.is_set()

    def message_id(self, chat_id: int, place: str) -> int | None:
        return self._ids.get((chat_id, place))

    def show(
        self,
        chat_id: int,
        place: str,
        text: str,
        markup: Markup | None = None,
        *,
        notify: bool = False,
        priority: int = 0,
        thread: int = 0,
    ) -> None:
        """Make ``place`` display ``text``: edit its message, or post one (``notify`` always
        posts a new one, so the user is notified, and deletes the old; in a private chat
        a place's post without ``notify`` is silent). A new post goes to the forum topic
        ``thread`` (0: none). Content still queued for the place is replaced where it stands,
        keeping its position in the chat's queue."""
        item = _Item(
            next(self._seq), place, text, markup, notify, priority, queued_at=self._clock.now()
        )
        item.thread = thread
        self._show(chat_id, place, item)

    def _show(self, chat_id: int, place: str, item: _Item) -> None:
        chat = self._chat(chat_id)
        queued = chat.places.get(place)
        idle = queued is None and item.render is None and not self._place_pending(chat_id, place)
        if idle and self._shows_already(chat_id, item):
            self.metrics.skipped(chat_id)
            return
        if queued is None:
            self._enqueue(chat, item)
        else:
            queued.absorb(item)
            chat.priority = max(chat.priority, queued.priority)
        self._reschedule(chat)

    def show_later(
        self,
        chat_id: int,
        place: str,
        render: Render,
        *,
        notify: bool = False,
        priority: int = 0,
        thread: int = 0,
        decide: Decide | None = None,
    ) -> None:
        """:meth:`show` with content that ``render()`` makes when the item is sent (so it
        shows the state of that moment): a game that moves faster than the chat may be
        edited is rendered for the edits that happen, not for every move. ``decide``,
        asked right after that render, says whether it notifies (``notify`` then only
        forces it): whether content asks something of its reader is known only for the
        content sent, not for the state that queued it (issue 11)."""
        item = _Item(
            next(self._seq), place, "", None, notify, priority, render=render, decide=decide
        )
        item.queued_at = self._clock.now()
        item.thread = thread
        self._show(chat_id, place, item)

    def send(
        self,
        chat_id: int,
        text: str,
        markup: Markup | None = None,
        *,
        priority: int = 0,
        thread: int = 0,
        reply_to: int = 0,
    ) -> None:
        """Queue a one-off new message (to the forum topic ``thread``, 0: none; as an
        answer to message ``reply_to``, 0: none), delivered in order with the chat's
        other items: pacing is per chat, as Telegram limits a group."""
        chat = self._chat(chat_id)
        item = _Item(
            next(self._seq), None, text, markup, False, priority, queued_at=self._clock.now()
        )
        item.thread = thread
        item.reply_to = reply_to
        self._enqueue(chat, item)
        self._reschedule(chat)

    def send_document(
        self,
        chat_id: int,
        filename: str,
        content: bytes,
        caption: str = "",
        *,
        priority: int = 0,
        thread: int = 0,
    ) -> None:
        """Queue a file (a game record), paced like any other message of the chat."""
        chat = self._chat(chat_id)
        item = _Item(
            next(self._seq), None, caption, None, False, priority, queued_at=self._clock.now()
        )
        item.thread = thread
        item.document = (filename, content)
        self._enqueue(chat, item)
        self._reschedule(chat)

    def release(self, chat_id: int, place: str) -> None:
        """The place is done with (a finished game's panel, a closed menu): its queued
        content is still delivered, then its message id is dropped. Unlike :meth:`forget`,
        nothing shown last is lost; like it, memory is not kept for the place for ever."""
        key = (chat_id, place)
        if self._place_pending(chat_id, place):
            self._releasing.add(key)
        else:
            self._drop_id(key)
            self._releasing.discard(key)

    def pending(self, chat_id: int, place: str) -> bool:
        """Whether newer content for ``place`` is queued or on its way: what the chat
        shows of it now is about to change."""
        return self._place_pending(chat_id, place)

    def _place_pending(self, chat_id: int, place: str) -> bool:
        chat = self._chats.get(chat_id)
        if chat is None:
            return False
        return place in chat.places or (chat.busy is not None and chat.busy.place == place)

    def _released(self, chat_id: int, place: str | None) -> None:
        """A place's item was delivered: drop its id if the place was released meanwhile."""
        if place is None or (chat_id, place) not in self._releasing:
            return
        if not self._place_pending(chat_id, place):
            self._releasing.discard((chat_id, place))
            self._drop_id((chat_id, place))

    def forget(self, chat_id: int, place: str) -> None:
        """Drop the place: its queued content, its message id, and the id of a post in flight."""
        self._drop_id((chat_id, place))
        self._releasing.discard((chat_id, place))
        chat = self._chats.get(chat_id)
        if chat is None:
            return
        if chat.busy is not None and chat.busy.place == place:
            chat.busy.forgotten = True
        queued = chat.places.get(place)
        if queued is not None:
            self._remove(chat, queued)
            self._reschedule(chat)
            self._update_idle()

    def _drop_id(self, key: tuple[int, str]) -> None:
        self._ids.pop(key, None)
        self._shown.pop(key, None)

    def _shows_already(self, chat_id: int, item: _Item) -> bool:
        """Whether sending ``item`` (its content made) would edit its place's message to
        the content Telegram last confirmed it shows: Telegram would refuse that as
        "message is not modified", and the refusal costs a request of the chat's budget.
        A notification is a new post, never skipped; a message whose content the outbox
        does not know (after a failure, a restart, an id remembered) is edited."""
        if item.place is None or item.notify:
            return False
        key = (chat_id, item.place)
        shown = self._shown.get(key)
        if shown is None or shown[0] != self._ids.get(key):
            return False
        if not item.fingerprint:
            item.fingerprint = _fingerprint(item)
        return shown[1] == item.fingerprint

    async def idle(self, timeout: float | None = None) -> None:
        """Wait until nothing is queued or in flight; raises TimeoutError after ``timeout``."""
        async with asyncio.timeout(timeout):
            await self._idle.wait()

    # ------------------------------------------------------------------ queue bookkeeping

    def _chat(self, chat_id: int) -> _Chat:
        chat = self._chats.get(chat_id)
        if chat is None:
            limits = self._limits
            interval = limits.interval(chat_id)
            tolerance = (limits.burst(chat_id) - 1) * interval
            chat = self._chats[chat_id] = _Chat(chat_id, interval, tolerance)
            if chat_id > 0:  # a private chat: also no more than so many in any window
                chat.window = limits.private_window_max * interval
                chat.window_max = limits.private_window_max
                chat.sent = deque(maxlen=limits.private_window_max)
            if limits.cold_start:  # no effect once the start is that long past
                chat.paced_to = self._born + interval
                chat.slow_until = self._born + chat.window
        return chat

    def _enqueue(self, chat: _Chat, item: _Item, *, front: bool = False) -> None:
        if front:
            chat.queue.appendleft(item)
        else:
            chat.queue.append(item)
        if item.place is not None:
            chat.places[item.place] = item
        chat.priority = item.priority if len(chat.queue) == 1 else max(chat.priority, item.priority)
        self._pending += 1
        self._idle.clear()

    def _remove(self, chat: _Chat, item: _Item) -> None:
        chat.queue.remove(item)
        self._unlist(chat, item)

    def _take_head(self, chat: _Chat) -> _Item:
        """The chat's next item. A person's answer (priority :data:`ANSWER` or above: a
        command's reply, the lobby he joined) goes first, before whatever is queued,
        places included; after :data:`OVERTAKE_RUN` answers in a row the oldest item
        they displaced goes (so a table waits that many slots at most, however many
        answers queue). Otherwise the oldest of the highest priority, so a
        chat's table (priority 2) goes before a pile of panels (0) queued ahead of it.
        Items of one priority keep their order, and a one-off send below :data:`ANSWER`
        never overtakes a show queued before it (an announcement follows the table it is
        about)."""
        item = self._choose(chat)
        if item is chat.queue[0]:
            chat.queue.popleft()
        else:
            chat.queue.remove(item)
        self._unlist(chat, item)
        return item

    def _choose(self, chat: _Chat) -> _Item:
        queue = chat.queue
        if chat.priority >= ANSWER:
            answer = next(i for i in queue if i.priority >= ANSWER)
            if answer is queue[0]:
                chat.overtook = 0
                return answer
            if chat.overtook < OVERTAKE_RUN:
                chat.overtook += 1
                return answer
        chat.overtook = 0
        rest = [i for i in queue if i.priority < ANSWER] if chat.priority >= ANSWER else queue
        top = max(i.priority for i in rest)
        item = rest[0]
        if item.priority < top:
            ahead: list[_Item] = []
            for later in rest:
                if later.priority == top:
                    if later.place is not None or all(i.place is None for i in ahead):
                        item = later
                    break
                ahead.append(later)
        return item

    def _unlist(self, chat: _Chat, item: _Item) -> None:
        if item.place is not None and chat.places.get(item.place) is item:
            del chat.places[item.place]
        chat.recompute_priority()
        self._pending -= 1

    def _drop_queue(self, chat: _Chat) -> int:
        dropped = len(chat.queue)
        chat.queue.clear()
        chat.places.clear()
        chat.priority = 0
        self._pending -= dropped
        return dropped

    def _requeue(self, chat: _Chat, item: _Item) -> None:
        """Put a failed item back at the front, merged with newer content for its place."""
        if item.forgotten:
            return
        if item.place is not None:
            newer = chat.places.get(item.place)
            if newer is not None:
                self._remove(chat, newer)
                item.absorb(newer)
        self._enqueue(chat, item, front=True)

    def _update_idle(self) -> None:
        if self._pending == 0 and self._in_flight == 0:
            self._idle.set()

    # ------------------------------------------------------------------ scheduling

    def _reschedule(self, chat: _Chat) -> None:
        """Index a chat after a change from outside the worker, and wake the worker if needed."""
        if self._schedule(chat, self._clock.now()):
            self._wake.set()

    def _schedule(self, chat: _Chat, now: float) -> bool:
        """Push the chat's entry into the heap that fits its state; True if it changed."""
        if chat.busy is not None or not chat.queue:
            chat.heap_key = None
            return False
        ready_at = self._ready_at(chat, now)
        if ready_at > now:
            key: tuple[object, ...] = ("wait", ready_at)
        else:
            key = ("ready", -chat.priority, chat.queue[0].seq)
        if key == chat.heap_key:
            return False
        chat.heap_key = key
        if key[0] == "wait":
            heapq.heappush(self._waiting, (ready_at, chat.chat_id))
        else:
            heapq.heappush(self._ready, (-chat.priority, chat.queue[0].seq, chat.chat_id))
        return True

    def _promote(self, now: float) -> None:
        """Move chats whose pause is over from the waiting heap to the ready heap."""
        while self._waiting and self._waiting[0][0] <= now:
            ready_at, chat_id = heapq.heappop(self._waiting)
            chat = self._chats.get(chat_id)
            if chat is not None and chat.heap_key == ("wait", ready_at):
                chat.heap_key = None
                self._schedule(chat, now)

    @staticmethod
    def _ready_at(chat: _Chat, now: float) -> float:
        """When the chat's next send/edit may start: GCRA (the token bucket as one number),
        and in a private chat the sliding window (``window_max`` sends in any ``window``).

        Only an item above priority 0 (a player who must act, a reply) may use the burst
        and the window's last send; priority 0 (a panel refreshed for someone who just
        watches) goes at the steady pace and leaves both for the moment the player must
        act. A chat slowed by a 429 has no burst at all."""
        urgent = chat.priority > 0 and now >= chat.slow_until
        at = max(chat.ready_at, chat.paced_to - (chat.tolerance if urgent else 0.0))
        if chat.window:
            allowed = chat.window_max if urgent else max(1, chat.window_max - 1)
            if len(chat.sent) >= allowed:
                at = max(at, chat.sent[-allowed] + chat.window)
        return at

    def _pop_ready(self) -> _Chat | None:
        while self._ready:
            neg_priority, seq, chat_id = heapq.heappop(self._ready)
            chat = self._chats.get(chat_id)
            if chat is not None and chat.heap_key == ("ready", neg_priority, seq):
                chat.heap_key = None
                return chat
        return None

    def _pump(self, now: float) -> float | None:
        """Start what may go now; return seconds until more may go (None: until woken)."""
        self._promote(now)
        while self._in_flight < self._limits.max_in_flight:
            if self._ready and now < self._global_ready_at:
                self._held_back = True
                return self._global_ready_at - now
            chat = self._pop_ready()
            if chat is None:
                return self._waiting[0][0] - now if self._waiting else None
            if not self._dispatch(chat, now):  # nothing went: the chat's next may go now
                self._schedule(chat, now)
        return None  # every request place is taken; a finishing request wakes the worker

    def _dispatch(self, chat: _Chat, now: float) -> bool:
        """Start the chat's next item; False if it needs no request (the message already
        shows its content, or its content could not be made), which spends no slot."""
        item = self._take_head(chat)
        if not self._prepared(chat, item):
            self._released(chat.chat_id, item.place)
            self._update_idle()
            return False
        chat.busy = item
        # GCRA, the token bucket as one number: a burst, then one send per interval
        slowed = 2.0 if now < chat.slow_until else 1.0
        chat.paced_to = max(chat.paced_to, now) + chat.interval * slowed
        if chat.window:
            chat.sent.append(now)
        self._global_ready_at = now + self.cap.interval
        self.metrics.waited(item.priority, now - item.queued_at)
        self._in_flight += 1
        task = asyncio.create_task(self._deliver(chat, item), name=f"outbox:{chat.chat_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    def _prepared(self, chat: _Chat, item: _Item) -> bool:
        """Make the item's content now, as it goes out (``show_later``), and ask whether
        it notifies; False if it need not go (its message shows it already) or cannot (a
        failure to make it is dropped like a failed request, the text not logged)."""
        try:
            if item.render is not None:
                item.text, item.markup = item.render()
                item.render = None
            if item.decide is not None:  # at the moment the content was made, not before
                item.notify = item.decide() or item.notify
                item.decide = None
            item.fingerprint = b"" if item.place is None else _fingerprint(item)
            if self._shows_already(chat.chat_id, item):
                self.metrics.skipped(chat.chat_id)
                return False
        except Exception as exc:
            self._unexpected(chat, item, exc)
            return False
        return True

    async def _run(self) -> None:
        """The worker: start requests as the limits allow, sleep until the next may go."""
        while True:
            try:
                now = self._clock.now()
                if now >= self._period_ends:
                    self._period_over(now)
                delay = self._pump(now)
                until_period = self._period_ends - now
                delay = until_period if delay is None else min(delay, until_period)
            except Exception:  # a bug here must not stop every message for good
                _LOGGER.exception("outbox worker error")
                delay = 1.0
            self._wake.clear()  # no await since _pump: nothing was missed
            await self._sleep(delay)

    def _period_over(self, now: float) -> None:
        """Every ``period``: the metrics' lines at INFO (counts and times, never a text),
        and the adaptive cap's step."""
        period = self._limits.period + max(0.0, now - self._period_ends)
        self._period_ends = now + self._limits.period
        self._prune(now)
        metrics = self.metrics
        if metrics.calls or metrics.refused or metrics.waits or metrics.unchanged:
            for line in metrics.report(period, self.cap):
                _LOGGER.info(line)
        before = self.cap.per_second
        self.cap.period_over(self._held_back)
        self._held_back = False
        if self.cap.per_second != before:
            _LOGGER.info("outbox: bot-wide cap raised to %g/s", self.cap.per_second)

    def _prune(self, now: float) -> None:
        """Drop the pacing state of chats with nothing queued whose pace no longer binds
        (it would be made afresh the same): one entry per chat ever seen is not kept."""
        idle = [
            chat_id
            for chat_id, chat in self._chats.items()
            if not chat.queue
            and chat.busy is None
            and chat.heap_key is None
            and max(chat.ready_at, chat.paced_to, chat.slow_until) <= now
            and (not chat.sent or chat.sent[-1] + chat.window <= now)
        ]
        for chat_id in idle:
            del self._chats[chat_id]

    async def _sleep(self, delay: float | None) -> None:
        await self._clock.wait(self._wake, delay)

    # ------------------------------------------------------------------ delivery

    async def _deliver(self, chat: _Chat, item: _Item) -> None:
        """Run one request in its own task, so a slow chat never holds up the others."""
        try:
            await self._perform(chat.chat_id, item)
            chat.forbidden = False
            self.metrics.delivered(item.priority, self._clock.now() - item.queued_at)
        except Exception as exc:  # every failure is classified; the outbox keeps running
            if item.place is not None:  # what the message shows now is not known
                self._shown.pop((chat.chat_id, item.place), None)
            await self._failed(chat, item, exc)
        finally:
            chat.busy = None
            self._in_flight -= 1
            self._released(chat.chat_id, item.place)
            self._schedule(chat, self._clock.now())
            self._update_idle()
            self._wake.set()

    async def _perform(self, chat_id: int, item: _Item) -> None:
        if item.place is None:
            await self._post(chat_id, item)
            return
        key = (chat_id, item.place)
        previous = self._ids.get(key)
        if previous is not None and not item.notify:
            await self._edit(chat_id, previous, item)
            if self._ids.get(key) == previous:  # what the message shows now
                self._shown[key] = (previous, item.fingerprint)
            return
        message_id = await self._post(chat_id, item)
        if not item.forgotten:
            self._ids[key] = message_id
            self._shown[key] = (message_id, item.fingerprint)
            await self._announce(chat_id, item.place, message_id)
        if previous is not None:
            await self._delete_quietly(chat_id, previous)

    async def _post(self, chat_id: int, item: _Item) -> int:
        if (chat_id, item.thread) in self._gone_topics:
            item.thread = 0
        if item.document is not None:
            self._calling(item, "sendDocument", chat_id)
            name, content = item.document
            sent = await self._bot.send_document(
                chat_id,
                InputFile(content, filename=name),
                caption=item.text or None,
                parse_mode=ParseMode.HTML,
                message_thread_id=item.thread or None,
            )
            return sent.message_id
        params = _message_params(chat_id, item)
        if item.thread:  # edits need no thread: the message is already in its topic
            params["message_thread_id"] = item.thread
        if item.reply_to:  # a reply that outlives its message (the table may be gone)
            params["reply_parameters"] = {
                "message_id": item.reply_to,
                "allow_sending_without_reply": True,
            }
        if item.place is not None and not item.notify and chat_id > 0:
            # a private panel posted only because it has no message yet (or lost it):
            # nothing he must act on, so no notification (issue 11)
            params["disable_notification"] = True
        self._calling(item, "sendMessage", chat_id)
        message = await self.api.call("sendMessage", params)
        try:
            return int(message["message_id"])
        except (TypeError, KeyError, ValueError):
            raise TelegramError("sendMessage answered without a message id") from None

    async def _edit(self, chat_id: int, message_id: int, item: _Item) -> None:
        try:
            params = _message_params(chat_id, item, message_id=message_id)
            self._calling(item, "editMessageText", chat_id)
            await self.api.call("editMessageText", params)
        except BadRequest as exc:
            description = exc.message.lower()
            if _NOT_MODIFIED in description:
                return  # already shows this content
            if any(gone in description for gone in _GONE):
                raise _MessageGone(message_id) from exc
            raise

    async def _delete_quietly(self, chat_id: int, message_id: int) -> None:
        """Remove the message a notification replaced; a leftover is only cosmetic."""
        self.metrics.call("deleteMessage", chat_id)
        try:
            await self.api.call("deleteMessage", {"chat_id": chat_id, "message_id": message_id})
        except Exception as exc:
            _LOGGER.debug("chat %s: could not delete message %s: %r", chat_id, message_id, exc)

    def _calling(self, item: _Item, method: str, chat_id: int) -> None:
        item.method = method
        self.metrics.call(method, chat_id)

    async def _announce(self, chat_id: int, place: str, message_id: int) -> None:
        if self._on_posted is None:
            return
        try:
            await self._on_posted(chat_id, place, message_id)
        except Exception:
            _LOGGER.exception("on_posted failed for chat %s place %s", chat_id, place)

    # ------------------------------------------------------------------ failures

    async def _failed(self, chat: _Chat, item: _Item, exc: Exception) -> None:
        """Decide what a failed request means for the item and for the chat's queue."""
        if isinstance(exc, RetryAfter):
            wait = retry_after_seconds(exc)
            _LOGGER.info("chat %s: flood control, waiting %.1f s", chat.chat_id, wait)
            self._refused(chat, item, wait)
            self._pause(chat, wait)
            self._requeue(chat, item)
        elif isinstance(exc, _MessageGone):
            _LOGGER.debug("chat %s place %s: message gone, posting anew", chat.chat_id, item.place)
            key = (chat.chat_id, item.label)
            if self._ids.get(key) == exc.message_id:  # not replaced by remember() meanwhile
                self._drop_id(key)
            self._requeue(chat, item)
        elif isinstance(exc, Forbidden):
            await self._lost_access(chat)
        elif isinstance(exc, ChatMigrated):
            dropped = 1 + self._drop_queue(chat)
            _LOGGER.warning(
                "chat %s migrated to %s: dropped %d item(s)", chat.chat_id, exc.new_chat_id, dropped
            )
        elif isinstance(exc, NetworkError) and not isinstance(exc, BadRequest):
            self._retry_network(chat, item, exc)
        elif (
            isinstance(exc, BadRequest)
            and item.thread
            and any(gone in exc.message.lower() for gone in _TOPIC_GONE)
        ):
            # the topic was deleted (or closed) under the game: the game goes on, its
            # messages in General rather than nowhere
            _LOGGER.info(
                "chat %s: forum topic %s is gone (%s); posting in General",
                chat.chat_id,
                item.thread,
                exc.message,
            )
            self._gone_topics.add((chat.chat_id, item.thread))
            item.thread = 0
            self._requeue(chat, item)
        elif isinstance(exc, TelegramError):
            name = type(exc).__name__
            _LOGGER.warning(
                "chat %s place %s: dropped after %s: %s",
                chat.chat_id,
                item.label,
                name,
                exc.message,
            )
        else:
            self._unexpected(chat, item, exc)

    def _unexpected(self, chat: _Chat, item: _Item, exc: Exception) -> None:
        """A bug (in making the content, or here): the item is dropped; the traceback is
        for DEBUG only, as it might quote the text."""
        name = type(exc).__name__
        _LOGGER.warning(
            "chat %s place %s: dropped after unexpected %s", chat.chat_id, item.label, name
        )
        _LOGGER.debug("unexpected outbox failure", exc_info=exc)

    async def _lost_access(self, chat: _Chat) -> None:
        """Blocked or never started: queued items would fail too; tell the bot once a burst."""
        dropped = self._drop_queue(chat)
        _LOGGER.info("chat %s: forbidden, dropped %d more item(s)", chat.chat_id, dropped)
        if chat.forbidden:
            return
        chat.forbidden = True
        if self._on_forbidden is None:
            return
        try:
            await self._on_forbidden(chat.chat_id)
        except Exception:
            _LOGGER.exception("on_forbidden failed for chat %s", chat.chat_id)

    def _refused(self, chat: _Chat, item: _Item, wait: float) -> None:
        """A 429: the chat goes at half its pace for a while (so its next sends do not meet
        another), and 429s in several chats at once are the bot-wide limit's."""
        now = self._clock.now()
        self.metrics.refusal(item.method or "?", chat.chat_id, wait)
        chat.slow_until = now + wait + self._limits.slow_for
        if self.cap.refused(chat.chat_id, now):
            _LOGGER.info(
                "outbox: 429s in %d chats within %g s: the bot-wide limit; cap now %g/s",
                self.cap.event_chats,
                self.cap.event_window,
                self.cap.per_second,
            )

    def _retry_network(self, chat: _Chat, item: _Item, exc: NetworkError) -> None:
        if not isinstance(exc, NotSent) and item.method not in _IDEMPOTENT:
            # the server may have acted on it: a second sendMessage would be a second message
            _LOGGER.warning(
                "chat %s place %s: %s may have been sent (%s); not sent again",
                chat.chat_id,
                item.label,
                item.method,
                type(exc).__name__,
            )
            return
        item.attempts += 1
        if item.attempts > self._limits.network_retries:
            _LOGGER.warning(
                "chat %s place %s: dropped after %d network errors, last %s",
                chat.chat_id,
                item.label,
                item.attempts,
                type(exc).__name__,
            )
            return
        backoff = self._limits.retry_backoff * 2 ** (item.attempts - 1)
        self._pause(chat, backoff)
        self._requeue(chat, item)

    def _pause(self, chat: _Chat, seconds: float) -> None:
        """Nothing more in this chat for ``seconds``, and then no burst: one at a time."""
        chat.ready_at = max(chat.ready_at, self._clock.now() + seconds)
        chat.paced_to = max(chat.paced_to, chat.ready_at + chat.tolerance)  # no burst after


#: Calls that do no harm when the server gets them twice (an edit to the same content is
#: "not modified"), so a network error after they may have been sent is retried.
_IDEMPOTENT = frozenset({"editMessageText", "deleteMessage"})


def _content(item: _Item) -> dict[str, Any]:
    """What a message shows, as the Bot API takes it: text, parse mode, link preview, buttons."""
    content: dict[str, Any] = {
        "text": item.text,
        "parse_mode": "HTML",
        "link_preview_options": _NO_PREVIEW,
    }
    if item.markup is not None:
        content["reply_markup"] = item.markup
    return content


def _message_params(chat_id: int, item: _Item, **more: Any) -> dict[str, Any]:
    """sendMessage / editMessageText parameters as the Bot API takes them."""
    return {"chat_id": chat_id, **_content(item), **more}


def _fingerprint(item: _Item) -> bytes:
    """A short digest of the item's content (all an edit could change), kept per place
    instead of its text."""
    encoded = json.dumps(_content(item), ensure_ascii=False, separators=(",", ":"), default=_dict)
    return hashlib.blake2b(encoded.encode(), digest_size=16).digest()


def _dict(value: object) -> Any:
    if isinstance(value, InlineKeyboardMarkup):  # a keyboard made with PTB's classes
        return value.to_dict()
    raise TypeError(f"cannot encode a {type(value).__name__}")


class _MessageGone(Exception):
    """The place's message was deleted (or is not the bot's): post a new one instead."""

    def __init__(self, message_id: int) -> None:
        super().__init__(message_id)
        self.message_id = message_id


def retry_after_seconds(exc: RetryAfter) -> float:
    """``retry_after`` in seconds: PTB 22 gives an int or, when so configured, a timedelta."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = exc.retry_after
    if isinstance(value, dtm.timedelta):
        return value.total_seconds()
    return float(value)
