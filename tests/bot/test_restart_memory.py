"""What a restart forgets (issue 26 item 7): a chat's recent sends, and whose questions
wait for an answer."""

from __future__ import annotations

import itertools
import types

import pytest
import telegram

from bot.app import send_limits
from bot.config import Config
from bot.flows import context
from bot.flows.context import PENDING_MAX, Questions
from bot.transport.outbox import Outbox, SendLimits
from bot.transport.request import AiohttpRequest
from tests.clock import ManualClock, idle
from tests.fake_telegram import FakeTelegram, RateLimits
from tests.fake_telegram.fixtures import FakeTelegramFactory, async_test

TOKEN = "123456789:" + "A" * 35


async def sends(
    server: FakeTelegram,
    clock: ManualClock,
    limits: SendLimits,
    chat_id: int,
    count: int,
    kill: bool,
) -> None:
    """One bot process's outbox: ``count`` urgent messages to ``chat_id``; ``kill``: gone
    the moment the last is sent (as kill -9), else once they are all delivered. Its
    time and the server's are the test's clock: a request reaches the server at the
    moment the outbox sent it, however busy the machine is."""
    bot = telegram.Bot(server.token, base_url=server.base_url, request=AiohttpRequest())
    async with bot as client:
        outbox = Outbox(client, limits, clock=clock)
        await outbox.start()
        for i in range(count):
            outbox.send(chat_id, f"message {i}", priority=2)
        await idle(clock, outbox)
        await outbox.stop(drain=not kill)


@async_test
async def test_a_restarted_bot_does_not_burst_into_a_chat_the_last_one_just_used(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    """Telegram's private-chat bucket (about one a second, a small burst) does not reset
    with the bot: the process killed had just spent it, and its successor's burst was
    refused (429). The bot's limits start each chat as if it had just sent."""
    clock = ManualClock()
    server = await make_fake_telegram(rate_limits=RateLimits(), clock=clock.now)  # Telegram's
    user = server.add_user("Ann", started=True)
    # the process killed had run for long: its burst and pace as usual
    await sends(server, clock, SendLimits(), user.id, 5, kill=True)
    await sends(server, clock, send_limits(Config(token=TOKEN)), user.id, 3, kill=False)
    assert server.rate_limited_count() == 0
    assert len(server.messages(server.private_chat(user))) == 8


def test_one_users_flood_of_questions_never_pushes_out_anothers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """/leave asks in private with a one-use token; the questions waiting are capped (the
    oldest forgotten first), and one player asking again and again pushes out only his
    own."""
    tokens = itertools.count(1)
    monkeypatch.setattr(context.secrets, "randbits", lambda bits: next(tokens))
    questions = Questions(types.SimpleNamespace(show=lambda *args, **kwargs: None))

    def ask(game_id: int, user_id: int) -> None:
        questions.ask("v", types.SimpleNamespace(game_id=game_id), user_id)  # type: ignore[arg-type]

    ask(7, 1)  # token 1
    for game in range(PENDING_MAX + 10):  # player 2's flood, over many games: tokens 2...
        ask(game, 2)
    assert questions.take(1, "v", 7, 1) is not None  # player 1's question is still open
    newest = PENDING_MAX + 11
    assert questions.take(newest, "v", PENDING_MAX + 9, 2) is not None  # the flood's newest
    assert questions.take(2, "v", 0, 2) is None  # its oldest, forgotten
    assert questions.take(1, "v", 7, 1) is None  # one use


def test_the_questions_waiting_stay_bounded() -> None:
    questions = Questions(types.SimpleNamespace(show=lambda *args, **kwargs: None))
    for user in range(PENDING_MAX + 50):
        questions.ask("v", types.SimpleNamespace(game_id=1), user)  # type: ignore[arg-type]
    assert len(questions._pending) == PENDING_MAX
    assert sum(len(t) for t in questions._of_user.values()) == PENDING_MAX
    assert all(questions._of_user.values())
