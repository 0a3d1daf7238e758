"""Telegram's budget (issue 12): the bot-wide cap, fixed or learnt from 429s; private chats
within Telegram's pace; the per-minute metrics; who waits when the budget is short."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from dataclasses import replace

import pytest
import telegram

from bot.app import send_limits
from bot.config import ConfigError, from_env
from bot.transport.budget import GlobalCap, Histogram, Metrics
from bot.transport.outbox import Outbox, SendLimits
from tests.clock import idle, run_outbox
from tests.fake_telegram import FakeTelegram, RateLimits
from tests.fake_telegram.fixtures import FakeTelegramFactory, async_test

from .test_outbox import on_a_clock, running, texts

LOGGER = "bot.transport.outbox"
LIFTED = {"private_burst": 10**6, "private_per_second": 1e6, "group_max": 10**6}


# ------------------------------------------------------------------------- the cap alone


def test_a_fixed_cap_never_moves() -> None:
    cap = GlobalCap(28)
    for chat in (1, 2, 3, 4):
        cap.refused(chat, 0.0)
    cap.period_over(held_back=True)
    assert cap.per_second == 28 and cap.events == 1  # the event is counted, not acted on


def test_adaptive_doubles_until_the_first_event_then_steps_by_one() -> None:
    cap = GlobalCap(28, "adaptive", ceiling=200)
    cap.period_over(held_back=True)
    assert cap.per_second == 56
    cap.period_over(held_back=True)
    assert cap.per_second == 112
    assert [cap.refused(chat, 100.0) for chat in (1, 2, 3)] == [False, False, True]
    assert cap.per_second == 56
    cap.period_over(held_back=True)  # the period of the event: no step
    assert cap.per_second == 56
    for expected in (57, 58, 59):
        cap.period_over(held_back=True)
        assert cap.per_second == expected


def test_a_cap_that_held_nothing_back_learns_nothing() -> None:
    cap = GlobalCap(28, "adaptive", ceiling=200)
    for _ in range(10):
        cap.period_over(held_back=False)
    assert cap.per_second == 28


def test_an_event_is_three_chats_within_the_window() -> None:
    cap = GlobalCap(15, "adaptive", ceiling=100, event_window=10)
    cap.period_over(held_back=True)
    assert cap.per_second == 30
    assert not cap.refused(1, 0.0)
    assert not cap.refused(1, 1.0)  # the same chat again: its own limit
    assert not cap.refused(2, 4.0)
    assert not cap.refused(3, 12.5)  # chat 1's refusals are older than 10 s
    assert cap.per_second == 30
    assert cap.refused(1, 13.0)
    assert cap.per_second == 15
    assert [cap.refused(c, 30.0) for c in (1, 2, 3)][-1]
    assert cap.per_second == 15  # never below the floor (the configured start)


def test_one_overload_halves_once_and_the_ceiling_holds() -> None:
    cap = GlobalCap(10, "adaptive", ceiling=50, event_window=10)
    for _ in range(5):
        cap.period_over(held_back=True)
    assert cap.per_second == 50  # 10, 20, 40, then the ceiling
    assert [cap.refused(c, 0.0) for c in (1, 2, 3)][-1]
    assert [cap.refused(c, 5.0) for c in (4, 5, 6)] == [False, False, False]  # its echo
    assert cap.per_second == 25
    assert [cap.refused(c, 11.0) for c in (7, 8, 9)][-1]  # a new overload
    assert cap.per_second == 12.5


def test_histogram_percentiles_within_a_bucket() -> None:
    h = Histogram()
    for ms in range(1, 101):
        h.add(ms / 1000)
    assert 0.050 <= h.percentile(0.5) <= 0.050 * 1.05
    assert 0.095 <= h.percentile(0.95) <= 0.095 * 1.05
    two = Histogram()
    for _ in range(100):
        two.add(2.0)
    assert two.percentile(0.95) == pytest.approx(2.0)  # the largest caps the bucket's bound
    two.add(1.99)
    assert 1.99 <= two.percentile(0.005) <= 1.99 * 1.05
    assert h.percentile(1.0) == pytest.approx(0.1) and h.largest == pytest.approx(0.1)
    later = h.copy()
    later.add(5.0)
    assert later.minus(h).total == 1 and later.minus(h).percentile(0.5) == 5.0
    assert Histogram().percentile(0.95) == 0.0


def test_metrics_report_counts_and_times_only() -> None:
    m = Metrics()
    for _ in range(30):
        m.call("editMessageText", 5)
    m.call("sendMessage", -100)
    m.refusal("sendMessage", -100, 3.0)
    m.waited(3, 0.01)
    m.waited(0, 2.0)
    lines = m.report(60.0, GlobalCap(28))
    assert lines == [
        "outbox: bot-wide cap 28/s (fixed)",
        "outbox: editMessageText private: 0.50/s, 429: 0",
        "outbox: sendMessage group: 0.02/s, 429: 1 (retry_after max 3 s, mean 3.0 s)",
        "outbox: queue wait, priority 3: 1 item(s), p50 0.010 s, p95 0.010 s, max 0.010 s",
        "outbox: queue wait, priority 0: 1 item(s), p50 2.000 s, p95 2.000 s, max 2.000 s",
    ]
    assert m.report(60.0, GlobalCap(28)) == ["outbox: bot-wide cap 28/s (fixed)"]  # a new period


# ------------------------------------------------------------------------- the cap, live


async def keep_busy(outbox: Outbox, tg: FakeTelegram, chats: int, each: int) -> None:
    """More sends queued than the cap lets out: the cap is what limits."""
    users = [tg.add_user(f"U{i}", started=True) for i in range(chats)]
    for k in range(each):
        for user in users:
            outbox.send(user.id, f"line {k}")


@async_test
async def test_adaptive_finds_a_budget_of_60_a_second(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    """Telegram at 60/s bot-wide, the bot starting at 28/s: within three minutes it sends
    at 51/s or more, and fewer than 1 % of its requests are refused. Time here: rates and
    windows run twice as fast (the server's limit is 60 per 0.5 s), a minute lasts 1.5 s,
    on a clock the test moves (the outbox's and the server's): a request reaches the
    server at the moment the outbox sent it, however busy the machine is."""
    tg, clock = await on_a_clock(
        make_fake_telegram,
        RateLimits(global_max=60, global_window=0.5, **LIFTED),  # type: ignore[arg-type]
    )
    limits = SendLimits(
        group_interval=0,
        private_interval=0,
        global_per_second=2 * 28,
        global_mode="adaptive",
        global_ceiling=2 * 120,
        period=1.5,
        event_window=1.0,  # longer than the server's window: one overload, one halving
    )
    caps: list[tuple[float, float]] = []
    async with running(tg, limits, clock=clock) as outbox:
        await keep_busy(outbox, tg, chats=150, each=40)
        began = clock.now()
        while (elapsed := clock.now() - began) < 4.5 * limits.period:
            caps.append((elapsed, outbox.cap.per_second))
            await run_outbox(clock, outbox, clock.now() + 0.02)
        stats = tg.stats
    within_three_minutes = [cap for at, cap in caps if at <= 3 * limits.period + 0.2]
    assert max(within_three_minutes) >= 2 * 51, caps[::10]
    assert caps[-1][1] >= 2 * 51, caps[::10]
    assert stats.rate_limited <= 0.01 * (stats.accepted + stats.rate_limited), stats
    assert stats.accepted > 300


@async_test
async def test_a_fixed_cap_of_28_never_exceeds_telegrams_30(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    scale = 0.25
    tg, clock = await on_a_clock(
        make_fake_telegram,
        RateLimits(enforce=False, **LIFTED).scaled(scale),  # type: ignore[arg-type]
    )
    limits = SendLimits(group_interval=0, private_interval=0).scaled(scale)
    assert limits.global_mode == "fixed" and limits.global_per_second == 4 * 28
    async with running(tg, limits, clock=clock) as outbox:
        await keep_busy(outbox, tg, chats=50, each=4)
        await idle(clock, outbox)
    assert tg.stats.accepted == 200
    assert tg.limit_violations() == 0 and tg.rate_limited_count() == 0


# ------------------------------------------------------------------------- private chats


def most_in_a_window(times: Iterable[float], window: float) -> int:
    ordered = sorted(times)
    best, j = 0, 0
    for i, start in enumerate(ordered):
        j = max(j, i)
        while j < len(ordered) and ordered[j] < start + window:
            j += 1
        best = max(best, j - i)
    return best


@async_test
async def test_no_five_seconds_hold_more_than_five_sends_in_a_private_chat(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    """A player who must act now and then, and whose panel changes all the time: bursts for
    the urgent ones, but never six sends or edits in five seconds (time x0.3 here)."""
    scale = 0.3
    tg, clock = await on_a_clock(make_fake_telegram, RateLimits.observe_only().scaled(scale))
    ann = tg.add_user("Ann", started=True)
    async with running(tg, SendLimits().scaled(scale), clock=clock) as outbox:
        began = clock.now()
        k = 0
        while clock.now() - began < 14 * scale:
            k += 1
            outbox.show(ann.id, "panel:1", f"panel {k}")
            if k % 12 == 0:
                outbox.show(ann.id, "panel:2", f"your move {k}", priority=3)
            await run_outbox(clock, outbox, clock.now() + 0.02)
        await idle(clock, outbox)
    at = [r.at for r in tg.requests() if r.method != "getMe" and r.status == 200]
    assert len(at) >= 10
    assert most_in_a_window(at, 5 * scale) <= 5


@async_test
async def test_watchers_leave_the_last_send_of_the_window_to_the_actor(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    """After a run of panel refreshes for a player who watches, his turn still goes at
    once: the refreshes leave one send of the five-second window free."""
    scale = 0.2
    tg, clock = await on_a_clock(make_fake_telegram, RateLimits.observe_only().scaled(scale))
    ann = tg.add_user("Ann", started=True)
    limits = SendLimits().scaled(scale)
    async with running(tg, limits, clock=clock) as outbox:
        for k in range(6):  # refreshes, each sent as soon as the steady pace allows
            outbox.show(ann.id, "panel:1", f"watching {k}")
            await idle(clock, outbox)
            assert texts(tg, tg.private_chat(ann)) == [f"watching {k}"]
        shown = clock.now()
        outbox.show(ann.id, "panel:1", "your move", priority=3)
        await idle(clock, outbox)
        assert texts(tg, tg.private_chat(ann)) == ["your move"]
    at = [r.at for r in tg.requests() if r.method != "getMe"]
    waited = at[-1] - shown
    assert most_in_a_window(at, limits.private_window_max * limits.private_interval) <= 5
    assert waited < 0.5 * limits.private_interval  # no pause: the burst and the window allow it


@async_test
async def test_a_429_slows_the_chat_so_that_the_next_sends_pass(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    """Telegram stricter than the outbox expects (one send per 1.8 s, no burst): one 429,
    then that chat goes at half its pace, and no second 429 follows (time x0.2)."""
    scale = 0.2
    strict = RateLimits(private_burst=1, private_per_second=1 / 1.8).scaled(scale)
    tg, clock = await on_a_clock(make_fake_telegram, strict)
    ann, bob = tg.add_user("Ann", started=True), tg.add_user("Bob", started=True)
    async with running(tg, SendLimits().scaled(scale), clock=clock) as outbox:
        began = clock.now()
        k = 0
        while clock.now() - began < 2.5:  # the fake's retry_after is 1 s at the least
            k += 1
            outbox.show(ann.id, "panel:1", f"your move {k}", priority=3)
            outbox.show(bob.id, "panel:1", f"watching {k}")
            await run_outbox(clock, outbox, clock.now() + 0.01)
        await idle(clock, outbox)
    for user in (ann, bob):  # Bob's panel, paced for one who watches, meets one too
        statuses = [r.status for r in tg.requests() if str(r.params.get("chat_id")) == str(user.id)]
        assert statuses.count(429) <= 1, (user.first_name, statuses)
        after = statuses[statuses.index(429) + 1 :] if 429 in statuses else statuses
        assert len(after) >= 4 and set(after) == {200}, (user.first_name, statuses)
    assert tg.rate_limited_count(tg.private_chat(ann)) == 1


# ------------------------------------------------------------------------- metrics


@async_test
async def test_every_period_the_outbox_logs_its_budget_without_texts(
    make_fake_telegram: FakeTelegramFactory, caplog: pytest.LogCaptureFixture
) -> None:
    tg, clock = await on_a_clock(make_fake_telegram, RateLimits().scaled(0.02))
    ann = tg.add_user("Ann", started=True)
    group = tg.add_group("Durak", [ann])
    caplog.set_level(logging.INFO, LOGGER)
    limits = replace(SendLimits().scaled(0.02), period=0.3)
    async with running(tg, limits, clock=clock) as outbox:
        outbox.show(group.id, "table:1", "Ann holds 7♥ Q♠")
        outbox.show(ann.id, "panel:1", "your cards: 7♥ Q♠", priority=3)
        outbox.send(ann.id, "you hold 7♥")
        await idle(clock, outbox)
        await run_outbox(clock, outbox, clock.now() + 0.4)
    lines = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert "outbox: bot-wide cap 1400/s (fixed)" in lines
    assert any(line.startswith("outbox: sendMessage private: ") for line in lines)
    assert any(line.startswith("outbox: sendMessage group: ") for line in lines)
    assert any(line.startswith("outbox: queue wait, priority 3: 1 item(s)") for line in lines)
    assert any(line.startswith("outbox: queue wait, priority 0: 2 item(s)") for line in lines)
    assert all("♥" not in line and str(ann.id) not in line for line in lines)


# ------------------------------------------------------------------------- under pressure


@async_test
async def test_under_pressure_the_actor_goes_first_then_the_table_then_the_rest(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    tg = await make_fake_telegram(rate_limits=RateLimits.observe_only())
    watchers = [tg.add_user(f"W{i}", started=True) for i in range(8)]
    actors = [tg.add_user(f"A{i}", started=True) for i in range(3)]
    groups = [tg.add_group(f"G{i}", [actors[i]]) for i in range(3)]
    limits = SendLimits(global_per_second=40)  # far less than is waiting
    async with running(tg, limits, start=False) as outbox:
        for n in range(5):  # each slot shown five times: only the newest is sent
            for w in watchers:
                outbox.show(w.id, "panel:1", f"watching {n}")
            for g in groups:
                outbox.show(g.id, "table:1", f"table {n}", priority=2)
            for a in actors:
                outbox.show(a.id, "panel:1", f"your move {n}", priority=3)
        await outbox.start()
        await outbox.idle(5)
    order = [int(r.params["chat_id"]) for r in tg.requests("sendMessage")]
    assert order[:3] == [a.id for a in actors]
    assert order[3:6] == [g.id for g in groups]
    assert order[6:] == [w.id for w in watchers]
    assert all(texts(tg, tg.private_chat(w)) == ["watching 4"] for w in watchers)


# ------------------------------------------------------------------------- settings


TOKEN = {"DURAK_BOT_TOKEN": "123456:" + "A" * 35}


def test_the_budget_settings_come_from_the_environment() -> None:
    config = from_env(TOKEN)
    assert (config.global_per_second, config.global_mode) == (28.0, "adaptive")
    assert (config.global_ceiling, config.max_in_flight) == (100.0, 64)
    config = from_env(
        {
            **TOKEN,
            "DURAK_GLOBAL_PER_SECOND": "25.5",
            "DURAK_GLOBAL_MODE": "FIXED",
            "DURAK_GLOBAL_CEILING": "40",
            "DURAK_MAX_IN_FLIGHT": "128",
        }
    )
    limits = send_limits(config)
    assert (limits.global_per_second, limits.global_mode) == (25.5, "fixed")
    assert (limits.global_ceiling, limits.max_in_flight) == (40.0, 128)
    assert limits.private_interval == SendLimits().private_interval  # Telegram's pace stays


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DURAK_GLOBAL_PER_SECOND", "0"),
        ("DURAK_GLOBAL_PER_SECOND", "lots"),
        ("DURAK_GLOBAL_PER_SECOND", "nan"),
        ("DURAK_GLOBAL_MODE", "greedy"),
        ("DURAK_GLOBAL_CEILING", "10"),  # below the start
        ("DURAK_MAX_IN_FLIGHT", "0"),
        ("DURAK_MAX_IN_FLIGHT", "2.5"),
    ],
)
def test_a_wrong_budget_setting_is_named(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        from_env({**TOKEN, name: value})


@async_test
async def test_the_fake_bot_api_can_take_its_time(make_fake_telegram: FakeTelegramFactory) -> None:
    tg = await make_fake_telegram(call_delay=0.15)
    began = time.monotonic()
    async with telegram.Bot(tg.token, base_url=tg.base_url) as bot:  # getMe on the way in
        assert time.monotonic() - began >= 0.15
        began = time.monotonic()
        await asyncio.gather(*(bot.get_me() for _ in range(5)))  # concurrent, not queued
    assert time.monotonic() - began >= 0.15
