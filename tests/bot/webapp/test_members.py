"""Issue 36 item 4: getChatMember amplification. A page whose user is not seated made
``Bridge.find`` ask Telegram for his membership on every connection, uncached and
unlimited (1,380 calls a second from one client). Memberships are kept a minute per chat
and user (refusals too), one user gets a few sign-ins and then one every few seconds, and
Telegram is asked about a running game only. The minute is a clock the test moves."""

from __future__ import annotations

import asyncio

import pytest
from telegram.error import TimedOut

from bot.transport.members import KEEP, KEEP_FAILED, Members
from bot.webapp import LIMITS
from tests.fake_telegram.fixtures import async_test

from ..harness import durak_of
from .client import a_game, init_data, page
from .test_log_flood import Clock

TRIES = 10  # a user's sign-ins at once (LIMITS.tries)


class Telegram:
    """A stand-in for getChatMember: who is a member, and every question asked."""

    def __init__(self, members: set[tuple[int, int]]) -> None:
        self.members = members
        self.asked: list[tuple[int, int]] = []
        self.gate: asyncio.Event | None = None
        self.fail = False

    async def __call__(self, chat_id: int, user_id: int) -> bool:
        self.asked.append((chat_id, user_id))
        if self.gate is not None:
            await self.gate.wait()
        if self.fail:
            raise TimedOut()
        return (chat_id, user_id) in self.members


@async_test
async def test_an_answer_is_kept_a_minute_a_refusal_too():
    telegram, clock = Telegram({(-1, 7)}), Clock()
    members = Members(telegram, clock=clock)
    for _ in range(50):
        assert await members.is_member(-1, 7)
        assert not await members.is_member(-1, 8)
    assert telegram.asked == [(-1, 7), (-1, 8)]
    clock.now += KEEP - 1
    assert await members.is_member(-1, 7) and len(telegram.asked) == 2
    clock.now += 2  # a minute on: asked again
    assert await members.is_member(-1, 7) and not await members.is_member(-1, 8)
    assert len(telegram.asked) == 4
    assert await members.is_member(-2, 7) is False and len(telegram.asked) == 5  # per chat


@async_test
async def test_questions_at_once_wait_for_one_answer():
    telegram, clock = Telegram({(-1, 7)}), Clock()
    telegram.gate = asyncio.Event()
    members = Members(telegram, clock=clock)
    waiting = [asyncio.create_task(members.is_member(-1, 7)) for _ in range(100)]
    await asyncio.sleep(0)
    telegram.gate.set()
    assert all(await asyncio.gather(*waiting))
    assert telegram.asked == [(-1, 7)]


@async_test
async def test_a_question_telegram_did_not_answer_is_a_refusal_for_a_while():
    telegram, clock = Telegram({(-1, 7)}), Clock()
    telegram.fail = True  # (a 429, the network)
    members = Members(telegram, clock=clock)
    for _ in range(20):
        assert not await members.is_member(-1, 7)
    assert len(telegram.asked) == 1
    telegram.fail = False
    clock.now += KEEP_FAILED + 1
    assert await members.is_member(-1, 7) and len(telegram.asked) == 2


@async_test
async def test_memory_is_bounded():
    telegram, clock = Telegram(set()), Clock()
    members = Members(telegram, clock=clock, most=100)
    for user in range(1000):
        await members.is_member(-1, user)
    assert len(members._known) == 100
    clock.now += KEEP + 1
    await members.is_member(-1, 5000)
    assert len(members._known) == 1


@async_test
async def test_pages_of_spectators_ask_telegram_once_a_minute(make_fake_telegram, tmp_path, errors):
    """Ten pages of a member who does not play and ten of a stranger: one getChatMember
    each; more sign-ins of one user than his share are refused before any question; a
    minute later Telegram is asked again."""
    clock = Clock()
    tries = TRIES
    async with a_game(make_fake_telegram, tmp_path, clock=clock) as g:
        start = str(g.game_id)
        stranger = g.server.add_user("Stranger", started=True)
        for user, refusal in ((g.outsider, None), (stranger, "not_member")):
            for _ in range(tries):
                async with page(g.port, {"init": init_data(g.server, user, start)}) as p:
                    if refusal is None:
                        assert (await p.state())["you"] is None
                    else:
                        assert (await p.until("error"))["error"] == refusal
        assert g.server.request_count("getChatMember") == 2
        # his share of sign-ins used up: refused at once, nothing asked
        async with page(g.port, {"init": init_data(g.server, g.outsider, start)}) as p:
            assert (await p.until("error"))["error"] == "too_many_attempts"
        assert g.server.request_count("getChatMember") == 2
        clock.now += 61  # a minute on: his sign-ins back, Telegram asked again
        async with page(g.port, {"init": init_data(g.server, g.outsider, start)}) as p:
            assert (await p.state())["you"] is None
        assert g.server.request_count("getChatMember") == 3
    assert LIMITS.tries == TRIES
    assert not errors.records, [r.getMessage() for r in errors.records]


@pytest.mark.parametrize("how", ["cancelled", "finished"])
@async_test
async def test_telegram_is_asked_about_a_running_game_only(
    make_fake_telegram, tmp_path, errors, how
):
    async with a_game(make_fake_telegram, tmp_path) as g:
        service = durak_of(g.app).service
        if how == "cancelled":
            await service.cancel(g.group.id, g.users[0].id, is_admin=True)
        else:
            await g.table.play_to_the_end(timeout=120)
        assert (await service.game(g.game_id)).status != "running"
        start = str(g.game_id)
        async with page(g.port, {"init": init_data(g.server, g.outsider, start)}) as p:
            assert (await p.until("error"))["error"] == "no_game"
        assert g.server.request_count("getChatMember") == 0
        if how == "finished":  # a player still sees how his game ended
            async with page(g.port, {"init": init_data(g.server, g.users[0], start)}) as p:
                assert (await p.state())["over"]
    assert not errors.records, [r.getMessage() for r in errors.records]
