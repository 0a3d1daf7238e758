"""Outbox tests: against the fake Bot API server with time-compressed flood limits, plus a
property test of coalescing and ordering against an in-memory bot."""

from __future__ import annotations

import asyncio
import datetime as dtm
import functools
import itertools
import logging
import warnings
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
import telegram
from hypothesis import given, settings
from hypothesis import strategies as st
from telegram.error import BadRequest, NetworkError, RetryAfter, TimedOut

from bot.clock import MONOTONIC, Clock
from bot.transport.outbox import ANSWER, Outbox, SendLimits, retry_after_seconds
from bot.transport.request import AiohttpRequest, NotSentError, NotSentTimeout
from tests.clock import ManualClock, idle, run_outbox
from tests.fake_telegram import Chat, FakeTelegram, RateLimits
from tests.fake_telegram.fixtures import FakeTelegramFactory, async_test

SCALE = 0.02  # a minute lasts 1.2 s: 20 group edits per 1.2 s, 50 private edits per second
LIMITS = SendLimits().scaled(SCALE)
LOGGER = "bot.transport.outbox"


# ------------------------------------------------------------------------- helpers


@dataclass
class Probe:
    """What a ProbeBot saw: concurrency, and failures still to inject."""

    failures: list[Exception] = field(default_factory=list)
    #: Held until the test opens it (instead of a delay: "in flight" then means the
    #: same however busy the machine is).
    gate: asyncio.Event | None = None
    active: Counter[int] = field(default_factory=Counter)
    peak: int = 0
    peak_per_chat: int = 0
    calls: int = 0


class ProbeBot(telegram.Bot):
    """A real PTB bot whose sendMessage calls (or ``endpoint``'s) can be held back (until
    ``gate`` opens) or made to fail."""

    def __init__(
        self,
        server: FakeTelegram,
        *failures: Exception,
        gate: asyncio.Event | None = None,
        endpoint: str = "send_message",
    ) -> None:
        super().__init__(server.token, base_url=server.base_url)
        self._probe = Probe(list(failures), gate)  # PTB bots are frozen, except `_` names
        self._endpoint = endpoint

    @property
    def probe(self) -> Probe:
        return self._probe

    async def do_api_request(self, endpoint: str, *args: Any, **kwargs: Any) -> Any:
        if endpoint != self._endpoint:
            return await super().do_api_request(endpoint, *args, **kwargs)
        chat_id = kwargs["api_kwargs"]["chat_id"]
        probe = self._probe
        probe.calls += 1
        probe.active[chat_id] += 1
        probe.peak = max(probe.peak, probe.active.total())
        probe.peak_per_chat = max(probe.peak_per_chat, probe.active[chat_id])
        try:
            if probe.gate is not None:
                await probe.gate.wait()
            if probe.failures:
                raise probe.failures.pop(0)
            return await super().do_api_request(endpoint, *args, **kwargs)
        finally:
            probe.active[chat_id] -= 1


@dataclass
class Recorder:
    posted: list[tuple[int, str, int]] = field(default_factory=list)
    forbidden: list[int] = field(default_factory=list)

    async def on_posted(self, chat_id: int, place: str, message_id: int) -> None:
        self.posted.append((chat_id, place, message_id))

    async def on_forbidden(self, chat_id: int) -> None:
        self.forbidden.append(chat_id)


@asynccontextmanager
async def running(
    server: FakeTelegram,
    limits: SendLimits = LIMITS,
    *,
    bot: telegram.Bot | None = None,
    start: bool = True,
    recorder: Recorder | None = None,
    clock: Clock = MONOTONIC,
) -> AsyncIterator[Outbox]:
    """The outbox on ``server``; with a test's clock (``tests/clock.py``), that clock
    should be the server's too (``FakeTelegram(clock=clock.now)``)."""
    recorder = recorder or Recorder()
    # by default the bot's own request class, so the outbox takes its direct path (BotApi)
    bot = bot or telegram.Bot(server.token, base_url=server.base_url, request=AiohttpRequest())
    async with bot as client:
        outbox = Outbox(
            client,
            limits,
            on_posted=recorder.on_posted,
            on_forbidden=recorder.on_forbidden,
            clock=clock,
        )
        if start:
            await outbox.start()
        try:
            yield outbox
        finally:
            await outbox.stop(drain=False)


def texts(server: FakeTelegram, chat: Chat) -> list[str | None]:
    """What the chat shows now, oldest message first."""
    return [m.plain_text for m in server.messages(chat, include_deleted=False)]


def requests_to(server: FakeTelegram, chat_id: int) -> list[Any]:
    return [r for r in server.requests() if str(r.params.get("chat_id")) == str(chat_id)]


async def until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Until ``condition()`` holds (a guard: a correct outbox gets there at once)."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.001)


def warnings_logged(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == LOGGER and r.levelno >= logging.WARNING]


async def on_a_clock(
    make_fake_telegram: FakeTelegramFactory, rate_limits: RateLimits
) -> tuple[FakeTelegram, ManualClock]:
    """A server whose flood limits run on a clock the test moves (give it to the outbox
    too): requests reach it at the moment the outbox sends them, however busy the
    machine is, so what the limits say is about the outbox's pacing alone."""
    clock = ManualClock()
    return await make_fake_telegram(rate_limits=rate_limits, clock=clock.now), clock


async def show_steadily(
    clock: ManualClock, outbox: Outbox, chat_id: int, count: int, gap: float
) -> float:
    """Show ``count`` versions of one slot, ``gap`` s apart on the clock; returns the
    seconds (on the clock) until the last was sent."""
    started = clock.now()
    for i in range(count):
        outbox.show(chat_id, "table:1", f"<b>Move</b> {i}")
        await run_outbox(clock, outbox, clock.now() + gap)
    await idle(clock, outbox)
    return clock.now() - started


# ------------------------------------------------------------------------- pacing


@async_test
async def test_group_slot_coalesces_within_the_group_limit(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    tg, clock = await on_a_clock(make_fake_telegram, RateLimits().scaled(SCALE))
    group = tg.add_group("Durak", [tg.add_user("Ann")])
    async with running(tg, clock=clock) as outbox:
        elapsed = await show_steadily(clock, outbox, group.id, 100, 0.02)
    assert texts(tg, group) == ["Move 99"]
    edits = tg.request_count("editMessageText")
    # far fewer than 100 shows: one per group slot
    assert elapsed / LIMITS.group_interval - 1 <= edits <= elapsed / LIMITS.group_interval + 1
    assert tg.rate_limited_count(group) == 0
    assert group.stats.peak_in_window <= 20 and tg.limit_violations(group) == 0


@async_test
async def test_private_panel_is_paced_per_chat(make_fake_telegram: FakeTelegramFactory) -> None:
    tg, clock = await on_a_clock(make_fake_telegram, RateLimits().scaled(SCALE))
    ann = tg.add_user("Ann", started=True)
    async with running(tg, clock=clock) as outbox:
        elapsed = await show_steadily(clock, outbox, ann.id, 100, 0.01)
    assert texts(tg, tg.private_chat(ann)) == ["Move 99"]
    edits = tg.request_count("editMessageText")
    assert 1 <= edits <= elapsed / LIMITS.private_interval + LIMITS.private_burst
    assert tg.rate_limited_count() == 0


@async_test
async def test_a_private_chat_may_burst_then_keeps_the_pace(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    scale = 0.1  # a private chat: 10 a second, bursts of 3 (the server), 2 (the outbox)
    limits = SendLimits().scaled(scale)
    tg, clock = await on_a_clock(make_fake_telegram, RateLimits().scaled(scale))
    ann = tg.add_user("Ann", started=True)
    rest = limits.private_interval * limits.private_burst  # the bucket refills
    async with running(tg, limits, clock=clock) as outbox:
        for i in range(5):
            outbox.send(ann.id, f"line {i}", priority=1)
        await idle(clock, outbox)
        await run_outbox(clock, outbox, clock.now() + rest)
        outbox.send(ann.id, "again", priority=1)
        outbox.send(ann.id, "and again", priority=1)
        await idle(clock, outbox)
        await run_outbox(clock, outbox, clock.now() + rest)
        outbox.send(ann.id, "just so")  # priority 0: keeps the spare send for urgent ones
        outbox.send(ann.id, "just so again")
        await idle(clock, outbox)
    sent = [*(f"line {i}" for i in range(5)), "again", "and again", "just so", "just so again"]
    assert texts(tg, tg.private_chat(ann)) == sent
    at = [r.at for r in tg.requests("sendMessage") if r.status == 200]
    interval = limits.private_interval
    assert limits.private_burst == 2
    assert at[1] - at[0] < interval * 0.8  # the first two at once (paced: a whole interval)
    for k in (2, 3, 4):  # then the steady pace: the k-th send no sooner than (k - 1) intervals
        assert at[k] - at[0] > (k - 1) * interval * 0.95
    assert at[6] - at[5] < interval * 0.8  # a rested chat may burst again
    assert at[8] - at[7] > interval * 0.95  # but not for priority 0
    assert tg.rate_limited_count() == 0


@async_test
async def test_many_chats_stay_under_the_global_limit(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    scale = 0.1  # 30 per 0.1 s for the whole bot; the outbox spaces sends 1/280 s apart
    tg, clock = await on_a_clock(make_fake_telegram, RateLimits().scaled(scale))
    users = [tg.add_user(f"U{i}", started=True) for i in range(300)]
    async with running(tg, SendLimits().scaled(scale), clock=clock) as outbox:
        for user in users:
            outbox.show(user.id, "panel:1", f"cards of {user.first_name}")
        await idle(clock, outbox)
    assert all(texts(tg, tg.private_chat(u)) == [f"cards of {u.first_name}"] for u in users)
    assert tg.rate_limited_count() == 0 and tg.limit_violations() == 0


@async_test
async def test_concurrency_is_bounded_and_one_request_per_chat(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    tg = await make_fake_telegram(rate_limits=RateLimits.observe_only())
    users = [tg.add_user(f"U{i}", started=True) for i in range(10)]
    gate = asyncio.Event()
    bot = ProbeBot(tg, gate=gate)  # every send held until the gate opens
    fast = SendLimits(group_interval=0, private_interval=0, global_per_second=1e4, max_in_flight=4)
    async with running(tg, fast, bot=bot) as outbox:
        for i, user in itertools.product(range(3), users):
            outbox.send(user.id, f"line {i}")
        await until(lambda: bot.probe.active.total() == 4)
        await asyncio.sleep(0.05)  # were the bound broken, a fifth would start meanwhile
        gate.set()
        await outbox.idle(5)
    assert bot.probe.peak == 4 and bot.probe.peak_per_chat == 1
    assert all(texts(tg, tg.private_chat(u)) == ["line 0", "line 1", "line 2"] for u in users)


# ------------------------------------------------------------------------- order


@async_test
async def test_highest_priority_first_then_oldest(make_fake_telegram: FakeTelegramFactory) -> None:
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [tg.add_user(f"U{i}", started=True) for i in range(12)]
    *others, urgent = users
    async with running(tg, replace(LIMITS, max_in_flight=1), start=False) as outbox:
        for user in others:
            outbox.show(user.id, "panel:1", f"panel of {user.first_name}")
        outbox.show(urgent.id, "panel:1", "your move", priority=1)
        outbox.show(urgent.id, "panel:1", "your move, hurry")  # merged: keeps priority 1
        outbox.show(urgent.id, "lobby:1", "stale lobby")
        outbox.forget(urgent.id, "lobby:1")  # the chat's priority is derived from its items again
        await outbox.start()
        await outbox.idle(5)
    order = [int(r.params["chat_id"]) for r in tg.requests("sendMessage")]
    assert order == [urgent.id, *(u.id for u in others)]
    assert texts(tg, tg.private_chat(urgent)) == ["your move, hurry"]


@async_test
async def test_send_keeps_its_place_after_a_show(make_fake_telegram: FakeTelegramFactory) -> None:
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    group = tg.add_group("Durak", [tg.add_user("Ann")])
    async with running(tg, start=False) as outbox:
        outbox.show(group.id, "table:1", "table v1")
        outbox.send(group.id, "Bob is the durak!", priority=3)  # below ANSWER: no overtaking
        outbox.show(group.id, "table:1", "table v2")  # coalesced: keeps the first place
        await outbox.start()
        await outbox.idle(5)
        outbox.show(group.id, "table:1", "table v3")
        outbox.send(group.id, "Next game?")
        await outbox.stop(drain=True)
    assert texts(tg, group) == ["table v3", "Bob is the durak!", "Next game?"]
    methods = [r.method for r in tg.requests() if r.method != "getMe"]
    assert methods == ["sendMessage", "sendMessage", "editMessageText", "sendMessage"]


@async_test
async def test_forget_drops_the_slot(make_fake_telegram: FakeTelegramFactory) -> None:
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    group = tg.add_group("Durak", [tg.add_user("Ann")])
    async with running(tg, start=False) as outbox:
        outbox.remember(group.id, "table:1", 999)
        outbox.show(group.id, "table:1", "gone")
        outbox.show(group.id, "lobby:1", "join us")
        outbox.forget(group.id, "table:1")
        await outbox.start()
        await outbox.idle(5)
        assert outbox.message_id(group.id, "table:1") is None
        assert outbox.message_id(group.id, "lobby:1") == 1
    assert texts(tg, group) == ["join us"]


@async_test
async def test_forget_while_posting_keeps_no_id(make_fake_telegram: FakeTelegramFactory) -> None:
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    group = tg.add_group("Durak", [tg.add_user("Ann")])
    recorder = Recorder()
    gate = asyncio.Event()
    bot = ProbeBot(tg, gate=gate)
    async with running(tg, bot=bot, recorder=recorder) as outbox:
        outbox.show(group.id, "table:1", "game over soon")
        await until(lambda: bot.probe.active[group.id] == 1)  # on its way
        outbox.forget(group.id, "table:1")  # the game ended while its table was being posted
        gate.set()
        await outbox.idle(5)
        assert outbox.message_id(group.id, "table:1") is None
    assert recorder.posted == [] and texts(tg, group) == ["game over soon"]


# ------------------------------------------------------------------------- messages


@async_test
async def test_notify_posts_anew_and_deletes_the_old(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    ann = tg.add_user("Ann", started=True)
    chat = tg.private_chat(ann)
    recorder = Recorder()
    async with running(tg, recorder=recorder) as outbox:
        outbox.show(ann.id, "panel:1", "waiting")
        await outbox.idle(5)
        first = outbox.message_id(ann.id, "panel:1")
        outbox.show(ann.id, "panel:1", "your move", notify=True)
        outbox.show(ann.id, "panel:1", "your move: 6♠ to beat")  # still a notification
        await outbox.idle(5)
        second = outbox.message_id(ann.id, "panel:1")
        outbox.show(ann.id, "panel:1", "you beat it")
        await outbox.idle(5)
    assert first is not None and second is not None and second != first
    assert recorder.posted == [(ann.id, "panel:1", first), (ann.id, "panel:1", second)]
    assert tg.message(chat, first).deleted
    assert [v.plain_text for v in tg.message(chat, second).history] == [
        "your move: 6♠ to beat",
        "you beat it",
    ]
    assert tg.request_count("sendMessage") == 2 and tg.request_count("deleteMessage") == 1


@async_test
async def test_deleted_message_is_posted_again(make_fake_telegram: FakeTelegramFactory) -> None:
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    group = tg.add_group("Durak", [tg.add_user("Ann")])
    recorder = Recorder()
    bot = telegram.Bot(tg.token, base_url=tg.base_url)
    async with running(tg, bot=bot, recorder=recorder) as outbox:
        outbox.show(group.id, "table:1", "round 1")
        await outbox.idle(5)
        first = outbox.message_id(group.id, "table:1")
        assert first is not None
        await bot.delete_message(group.id, first)  # e.g. an admin deleted the table
        outbox.show(group.id, "table:1", "round 2")
        await outbox.idle(5)
        second = outbox.message_id(group.id, "table:1")
    assert texts(tg, group) == ["round 2"]
    assert second is not None and second != first
    assert recorder.posted == [(group.id, "table:1", first), (group.id, "table:1", second)]
    assert [r.status for r in tg.requests("editMessageText")] == [400]


@async_test
async def test_an_edit_that_changes_nothing_is_not_made(
    make_fake_telegram: FakeTelegramFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """Telegram refuses an edit to the content a message shows ("message is not
    modified"), and the refusal costs a request of the chat's budget: the outbox knows
    what it last sent to each message and does not make such an edit (issue 33 item 7),
    whether the content is given, made at send time, or coalesced back to what is shown."""
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    group = tg.add_group("Durak", [tg.add_user("Ann")])
    join = {"inline_keyboard": [[{"text": "Join", "callback_data": "j"}]]}
    start = {"inline_keyboard": [[{"text": "Start", "callback_data": "s"}]]}
    caplog.set_level(logging.DEBUG, LOGGER)
    async with running(tg) as outbox:
        outbox.show(group.id, "table:1", "<b>same</b>", join)
        await outbox.idle(5)
        outbox.show(group.id, "table:1", "<b>same</b>", join)  # nothing to change
        outbox.show_later(group.id, "table:1", lambda: ("<b>same</b>", join))
        await outbox.idle(5)
        outbox.show(group.id, "table:1", "<b>same</b>", start)  # the buttons change
        await outbox.idle(5)
        outbox.show(group.id, "table:1", "other", start)  # queued behind the group's pace,
        outbox.show(group.id, "table:1", "<b>same</b>", start)  # then back to what it shows
        await outbox.idle(5)
        metrics = outbox.metrics
    assert tg.request_count("sendMessage") == 1 and tg.request_count("editMessageText") == 1
    assert tg.not_modified_count() == 0
    assert texts(tg, group) == ["same"] and tg.buttons(group, 1)[0].text == "Start"
    assert warnings_logged(caplog) == []
    assert metrics.total_unchanged == 3  # and the minute's log line says so


@async_test
async def test_an_edit_is_made_where_the_content_shown_is_not_known(
    make_fake_telegram: FakeTelegramFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """After a restart (the id remembered, the content not) and after a failed edit the
    outbox cannot know what the message shows: it edits; Telegram's "not modified" is then
    a success, and what it confirms is known again."""
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    group = tg.add_group("Durak", [tg.add_user("Ann")])
    caplog.set_level(logging.DEBUG, LOGGER)
    async with running(tg) as outbox:
        outbox.show(group.id, "table:1", "<b>same</b>")
        await outbox.idle(5)
        message_id = outbox.message_id(group.id, "table:1")
    assert message_id is not None
    async with running(tg) as outbox:  # a restart: the id from the database
        outbox.remember(group.id, "table:1", message_id)
        outbox.show(group.id, "table:1", "<b>same</b>")
        await outbox.idle(5)
        outbox.show(group.id, "table:1", "<b>same</b>")  # known now: not sent
        await outbox.idle(5)
    assert [r.status for r in tg.requests("editMessageText")] == [400]
    assert "not modified" in (tg.requests("editMessageText")[0].description or "")
    assert warnings_logged(caplog) == []
    bot = ProbeBot(tg, endpoint="edit_message_text")
    async with running(tg, bot=bot) as outbox:
        outbox.remember(group.id, "table:1", message_id)
        outbox.show(group.id, "table:1", "<b>same</b>")  # not modified: known now
        await outbox.idle(5)
        bot.probe.failures.append(RuntimeError("boom"))
        outbox.show(group.id, "table:1", "other")  # fails before it reaches Telegram
        await outbox.idle(5)
        outbox.show(group.id, "table:1", "<b>same</b>")  # not known after the failure: sent
        await outbox.idle(5)
        outbox.show(group.id, "table:1", "<b>same</b>")
        await outbox.idle(5)
    assert bot.probe.calls == 3 and texts(tg, group) == ["same"]
    assert [r.status for r in tg.requests("editMessageText")] == [400, 400, 400]
    [failed] = warnings_logged(caplog)
    assert "RuntimeError" in failed.getMessage()


# ------------------------------------------------------------------------- errors


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")  # PTB's own
@async_test
async def test_flood_wait_is_waited_out_without_losing_items(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    tg, clock = await on_a_clock(make_fake_telegram, RateLimits().scaled(0.01))  # 20 per 0.6 s
    group = tg.add_group("Durak", [tg.add_user("Ann")])
    other = tg.add_user("Bob", started=True)
    careless = SendLimits(group_interval=0.001, private_interval=0.001, global_per_second=1e4)
    async with running(tg, careless, clock=clock) as outbox:
        outbox.show(group.id, "table:1", "table 0")
        for i in range(25):
            outbox.send(group.id, f"line {i}")
        await run_outbox(clock, outbox, clock.now() + 0.1)  # the 21st: retry after 1 s
        assert tg.rate_limited_count(group) == 1
        outbox.show(group.id, "table:1", "table final")
        outbox.send(other.id, "not blocked by the group's wait")
        await run_outbox(clock, outbox, clock.now() + 0.01)
        assert texts(tg, tg.private_chat(other)) == ["not blocked by the group's wait"]
        assert len(texts(tg, group)) == 20  # while the group still waits
        await idle(clock, outbox)
    assert texts(tg, group) == ["table final", *(f"line {i}" for i in range(25))]
    assert 1 <= tg.rate_limited_count(group) <= 2  # it waited, rather than asking again
    assert tg.limit_violations() == 0


@async_test
async def test_forbidden_calls_back_once_per_burst(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    ann, ghost = tg.add_user("Ann", started=True), tg.add_user("Ghost")  # Ghost never started
    recorder = Recorder()
    async with running(tg, recorder=recorder) as outbox:
        outbox.show(ghost.id, "panel:1", "your cards")
        outbox.show(ann.id, "panel:1", "your cards")
        await outbox.idle(5)
        await ann.block_bot()
        outbox.show(ann.id, "panel:1", "more cards")
        outbox.send(ann.id, "dropped with the failure")
        outbox.send(ann.id, "dropped too")
        await outbox.idle(5)
        outbox.show(ann.id, "panel:1", "still blocked")  # same burst: no second callback
        await outbox.idle(5)
        assert Counter(recorder.forbidden) == {ghost.id: 1, ann.id: 1}
        await ann.start_bot()
        outbox.show(ann.id, "panel:1", "welcome back")
        await outbox.idle(5)
        await ann.block_bot()
        outbox.send(ann.id, "blocked again")
        await outbox.idle(5)
    assert Counter(recorder.forbidden) == {ghost.id: 1, ann.id: 2}
    refused = [r for r in requests_to(tg, ann.id) if r.status == 403]
    assert len(refused) == 3  # "more cards", "still blocked", "blocked again"
    assert tg.texts_ever_shown(tg.private_chat(ann)) == ["your cards", "welcome back"]


@async_test
async def test_worker_survives_an_unexpected_exception(
    make_fake_telegram: FakeTelegramFactory, caplog: pytest.LogCaptureFixture
) -> None:
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    group = tg.add_group("Durak", [tg.add_user("Ann")])
    bot = ProbeBot(tg, RuntimeError("boom"))
    caplog.set_level(logging.INFO, LOGGER)
    async with running(tg, bot=bot) as outbox:
        outbox.show(group.id, "table:1", "Ann holds 7♥ Q♠")
        await outbox.idle(5)
        outbox.show(group.id, "table:1", "Ann holds 7♥")
        await outbox.idle(5)
    assert texts(tg, group) == ["Ann holds 7♥"]
    [warning] = warnings_logged(caplog)
    message = warning.getMessage()
    assert str(group.id) in message and "table:1" in message and "RuntimeError" in message
    assert all("♥" not in r.getMessage() for r in caplog.records if r.levelno >= logging.INFO)
    assert warning.exc_info is None


@async_test
async def test_network_errors_are_retried_then_dropped(
    make_fake_telegram: FakeTelegramFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """Requests that never left (NotSent) are retried, up to network_retries."""
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    group = tg.add_group("Durak", [tg.add_user("Ann")])
    bot = ProbeBot(tg, NotSentTimeout(), NotSentError("connection refused"))
    async with running(tg, bot=bot) as outbox:
        outbox.send(group.id, "after two retries")
        await outbox.idle(5)
        assert texts(tg, group) == ["after two retries"] and bot.probe.calls == 3
        assert warnings_logged(caplog) == []
        bot.probe.failures.extend(NotSentError("down") for _ in range(4))
        outbox.send(group.id, "lost")
        outbox.send(group.id, "after the loss")
        await outbox.idle(5)
    assert texts(tg, group) == ["after two retries", "after the loss"]
    [warning] = warnings_logged(caplog)
    assert "4 network errors" in warning.getMessage()


@async_test
async def test_a_send_that_may_have_reached_telegram_is_not_sent_twice(
    make_fake_telegram: FakeTelegramFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """A read timeout or a hang-up after the request went out: Telegram may have posted the
    message, so it is not posted again (a message twice); the operator sees a WARNING."""
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    group = tg.add_group("Durak", [tg.add_user("Ann")])
    bot = ProbeBot(tg, TimedOut(), NetworkError("connection reset"))
    async with running(tg, bot=bot) as outbox:
        outbox.send(group.id, "maybe one")
        outbox.send(group.id, "maybe two")
        outbox.send(group.id, "surely three")
        await outbox.idle(5)
    assert bot.probe.calls == 3 and texts(tg, group) == ["surely three"]
    assert [w.getMessage().endswith("not sent again") for w in warnings_logged(caplog)] == [
        True,
        True,
    ]


@async_test
async def test_migrated_group_items_are_dropped(
    make_fake_telegram: FakeTelegramFactory, caplog: pytest.LogCaptureFixture
) -> None:
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    old = tg.add_group("Basic", [tg.add_user("Ann")], supergroup=False)
    new = tg.migrate_group(old)
    async with running(tg) as outbox:
        outbox.show(old.id, "table:1", "table")
        outbox.send(old.id, "hello")
        await outbox.idle(5)
    assert tg.request_count("sendMessage") == 1
    [warning] = warnings_logged(caplog)
    assert f"migrated to {new.id}" in warning.getMessage()


def test_retry_after_seconds_reads_int_and_timedelta(monkeypatch: pytest.MonkeyPatch) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PTB warns when a RetryAfter is built, too
        whole, fraction = RetryAfter(3), RetryAfter(dtm.timedelta(seconds=1.5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert retry_after_seconds(whole) == 3.0
        assert retry_after_seconds(fraction) == 1.5
        monkeypatch.setenv("PTB_TIMEDELTA", "1")  # PTB then returns a timedelta
        assert retry_after_seconds(fraction) == 1.5


def test_scaled_limits() -> None:
    limits = SendLimits().scaled(0.5)
    assert (limits.group_interval, limits.private_interval) == (1.55, 0.525)
    assert limits.global_per_second == 56.0 and limits.max_in_flight == 64
    assert (limits.slow_for, limits.period, limits.event_window) == (30.0, 30.0, 5.0)
    assert limits.interval(-100) == 1.55 and limits.interval(100) == 0.525
    with pytest.raises(ValueError):
        SendLimits().scaled(0)


# ------------------------------------------------------------------------- properties


class MemoryBot:
    """An in-memory stand-in for telegram.Bot: what each chat shows, with no HTTP."""

    def __init__(self) -> None:
        self.shown: dict[tuple[int, int], str] = {}
        self.sends: list[tuple[int, str]] = []
        self.not_modified = 0
        self._ids = itertools.count(1)

    async def do_api_request(self, endpoint: str, api_kwargs: dict[str, Any]) -> Any:
        """The outbox's only way to call the Bot API."""
        call = {
            "send_message": self.send_message,
            "edit_message_text": self.edit_message_text,
            "delete_message": self.delete_message,
        }[endpoint]
        return await call(**api_kwargs)

    async def send_message(self, chat_id: int, text: str, **_: Any) -> Any:
        await asyncio.sleep(0)
        message_id = next(self._ids)
        self.shown[(chat_id, message_id)] = text
        self.sends.append((chat_id, text))
        return {"message_id": message_id}  # the Bot API JSON

    async def edit_message_text(
        self, text: str, *, chat_id: int, message_id: int, **_: Any
    ) -> None:
        await asyncio.sleep(0)
        if (chat_id, message_id) not in self.shown:
            raise BadRequest("Message to edit not found")
        if self.shown[(chat_id, message_id)] == text:
            self.not_modified += 1
            raise BadRequest("Message is not modified: same content")
        self.shown[(chat_id, message_id)] = text

    async def delete_message(self, chat_id: int, message_id: int) -> None:
        del self.shown[(chat_id, message_id)]


OPERATIONS = st.lists(
    st.tuples(
        st.integers(-2, 2).filter(bool),  # two groups, two private chats
        st.sampled_from(
            ["show a", "show b", "same a", "same b", "notify a", "send", "forget a", "pause"]
        ),
    ),
    max_size=40,
)


@settings(max_examples=40, deadline=None)
@given(OPERATIONS)
def test_latest_content_and_every_send_arrive(operations: list[tuple[int, str]]) -> None:
    asyncio.run(check_latest_content_and_every_send_arrive(operations))


async def check_latest_content_and_every_send_arrive(operations: list[tuple[int, str]]) -> None:
    bot = MemoryBot()
    limits = SendLimits(group_interval=0.002, private_interval=0.001, global_per_second=5e3)
    outbox = Outbox(bot, limits)  # type: ignore[arg-type]
    await outbox.start()
    latest: dict[tuple[int, str], str | None] = {}
    sent: list[tuple[int, str]] = []
    for n, (chat_id, operation) in enumerate(operations):
        verb, _, slot = operation.partition(" ")
        if verb in ("show", "notify", "same"):
            text = operation if verb == "same" else f"{operation} {n}"  # "same": repeated
            latest[(chat_id, slot)] = text
            outbox.show(chat_id, slot, text, notify=verb == "notify")
        elif verb == "send":
            sent.append((chat_id, f"send {n}"))
            outbox.send(chat_id, f"send {n}")
        elif verb == "forget":
            latest[(chat_id, slot)] = None
            outbox.forget(chat_id, slot)
        else:
            await asyncio.sleep(0.002)
    await outbox.idle(5)
    await outbox.stop()
    for (chat_id, slot), text in latest.items():
        message_id = outbox.message_id(chat_id, slot)
        if text is None:
            assert message_id is None
        else:
            assert message_id is not None and bot.shown[(chat_id, message_id)] == text
    for chat_id in {chat_id for chat_id, _ in operations}:
        arrived = [text for c, text in bot.sends if c == chat_id and text.startswith("send")]
        assert arrived == [text for c, text in sent if c == chat_id]
    assert bot.not_modified == 0  # the outbox knew what each message showed


@async_test
async def test_show_later_renders_only_what_is_sent(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    tg, clock = await on_a_clock(make_fake_telegram, RateLimits().scaled(SCALE))
    ann = tg.add_user("Ann", started=True)
    rendered: list[int] = []

    def content(n: int) -> tuple[str, None]:
        rendered.append(n)
        return f"Move {n}", None

    async with running(tg, clock=clock) as outbox:
        for n in range(50):  # far faster than a private chat may be edited
            outbox.show_later(ann.id, "panel:1", functools.partial(content, n))
            await run_outbox(clock, outbox, clock.now() + 0.001)
        await idle(clock, outbox)
        outbox.show_later(ann.id, "panel:1", lambda: (1 / 0, None))  # type: ignore[arg-type]
        outbox.show(ann.id, "panel:2", "still working")
        await idle(clock, outbox)
    assert texts(tg, tg.private_chat(ann)) == ["Move 49", "still working"]
    assert rendered[-1] == 49 and len(rendered) <= 10  # one rendering per send, not per show
    assert (
        len(rendered) == tg.request_count("sendMessage") + tg.request_count("editMessageText") - 1
    )


@async_test
async def test_an_answer_goes_first_and_the_table_it_displaced_next(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    """A person's answer (priority ANSWER) goes before the tables queued ahead of it,
    two answers in a row at most: then the oldest displaced item goes (issue 27 items
    3 and 5)."""
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    group = tg.add_group("Durak", [tg.add_user("Ann")])
    async with running(tg, start=False) as outbox:
        outbox.show(group.id, "table:1", "table one", priority=2)
        outbox.show(group.id, "table:2", "table two", priority=2)
        outbox.send(group.id, "the rules", priority=ANSWER)
        outbox.send(group.id, "the stats", priority=ANSWER)
        outbox.send(group.id, "the help", priority=ANSWER)
        await outbox.start()
        await outbox.idle(5)
    assert texts(tg, group) == ["the rules", "the stats", "table one", "the help", "table two"]
