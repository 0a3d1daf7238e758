"""Whole games through the real bot and the fake Bot API server on loopback."""

from __future__ import annotations

import asyncio
import random

import pytest

from bot.ui import callbacks as cb
from durak import Pass, game_from_record, replay
from tests.clock import LoopbackClock
from tests.fake_telegram import FakeTelegram, RateLimits
from tests.fake_telegram.fixtures import FakeTelegramFactory, async_test
from tests.fake_telegram.models import Chat, User

from .harness import SCALE, WEBHOOK_PATH, Table, durak_of, free_port, running_bot
from .textcards import cards_in


def friends(server: FakeTelegram, players: int) -> tuple[list[User], Chat]:
    # every other player has never opened a private chat with the bot
    users = [server.add_user(f"Player{i}", started=i % 2 == 0) for i in range(players)]
    outsider = server.add_user("Outsider", started=True)
    group = server.add_group("Friends", [*users, outsider], admins=[users[0]])
    return users, group


async def finished_game(table: Table, app) -> tuple[int, dict]:
    ended = table.ended()
    assert ended is not None
    data = next(b.callback_data for b in ended.buttons if b.callback_data)
    game_id = cb.decode(data).game_id
    record = await durak_of(app).service.export_record(game_id)
    return game_id, record


def public_cards(record: dict) -> set[str]:
    """Cards anyone at the table has seen face up: played, shown, the trump card, or
    trump change's second trump card once drawn."""
    start, end = game_from_record(record), replay(record)
    seen = set()
    for step in record["steps"]:
        seen.update(step.get("cards", []))
        for key in ("card", "attack"):
            if key in step:
                seen.add(step[key])
    for game in (start, end):
        public = game.view(None)
        for card in (public.trump_card, public.opener_card, public.second_trump_card):
            if card is not None:
                seen.add(str(card))
    return seen


@pytest.mark.parametrize("players", [2, 3, 4, 6])
@async_test
async def test_a_whole_game(players, make_fake_telegram: FakeTelegramFactory, tmp_path, errors):
    # the group's limit judged at the moments the outbox sent (not a busy machine's later)
    clock = LoopbackClock()
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE), clock=clock.now)
    users, group = friends(server, players)
    async with running_bot(server, tmp_path / "durak.sqlite3", send_clock=clock) as app:
        clock.follow(durak_of(app).outbox)
        table = Table(server, group, users, random.Random(players))
        await table.open_lobby()
        await table.join_all()
        await table.start()
        service = durak_of(app).service
        running = (await service.running_games())[0].game_id
        ended = await table.play_to_the_end(watch=(service, running))
        game_id, record = await finished_game(table, app)
        assert game_id == running
        result = record["steps"][-1]["expect"]["result"]
        board = {t.name: t for t in await service.leaderboard(group.id, limit=50)}
        await durak_of(app).outbox.idle(10)

    names = [u.first_name for u in users]
    assert sorted(board) == sorted(names)
    assert all(t.played == 1 for t in board.values())
    if "draw" in result:
        assert "draw" in (ended.plain_text or "")
        assert all(t.draws == 1 and t.losses == 0 for t in board.values())
    else:
        loser = result["loser"]
        assert loser in (ended.plain_text or "") and "durak" in (ended.plain_text or "")
        assert {n: t.losses for n, t in board.items()} == {n: int(n == loser) for n in names}

    shown = set()
    for text in server.texts_ever_shown(group, include_buttons=True):
        shown |= cards_in(text)
    assert shown <= public_cards(record), "a group message showed a card from a hand"
    assert not table.leaks, table.leaks
    assert not server.unanswered_callbacks()
    assert server.rate_limited_count(group) == 0, "the bot ran into the group limit"
    assert server.limit_violations() == 0
    # every edit changed something: none was refused (and paid for) as "not modified"
    assert server.not_modified_count() == 0, server.not_modified
    assert not errors.records, [r.getMessage() for r in errors.records]
    assert table.presses > 0 and game_id > 0


@async_test
async def test_a_whole_game_by_webhook(make_fake_telegram: FakeTelegramFactory, tmp_path, errors):
    """Updates POSTed to the bot (Telegram's webhook delivery) with 10 ms a call: the game
    plays to its end, every press answered, no getUpdates, Telegram asked for 100
    connections (at 40 a round trip of 80 ms bounds the updates near 500 a second)."""
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE), call_delay=0.01)
    port = free_port()
    server.webhook_target = f"http://127.0.0.1:{port}/{WEBHOOK_PATH}"
    users, group = friends(server, 3)
    async with running_bot(server, tmp_path / "durak.sqlite3", webhook_port=port) as app:
        table = Table(server, group, users, random.Random(3))
        await table.open_lobby()
        await table.join_all()
        await table.start()
        service = durak_of(app).service
        running = (await service.running_games())[0].game_id
        await table.play_to_the_end(watch=(service, running))
        game_id, record = await finished_game(table, app)
        await durak_of(app).outbox.idle(10)
    assert game_id == running and record["steps"][-1]["expect"]["result"]
    [registered] = server.requests("setWebhook")
    assert int(registered.params["max_connections"]) == 100
    assert server.request_count("getUpdates") == 0
    assert server.webhook is not None and server.webhook.failed == 0
    assert server.webhook.delivered >= table.presses  # every press came by the webhook
    assert table.presses > 0 and not server.unanswered_callbacks()
    assert server.not_modified_count() == 0, server.not_modified
    assert not table.leaks, table.leaks
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_restart_in_the_middle_of_a_game(make_fake_telegram, tmp_path, errors):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users, group = friends(server, 3)
    db = tmp_path / "durak.sqlite3"
    table = Table(server, group, users, random.Random(7))
    async with running_bot(server, db) as app:
        await table.open_lobby()
        await table.join_all()
        await table.start()
        stop = asyncio.Event()
        service = durak_of(app).service
        watch = (service, (await service.running_games())[0].game_id)
        players = [asyncio.create_task(table.play(u, stop, watch)) for u in users]
        await server.wait_for(lambda: table.presses >= 40, 60, what="40 presses")
        stop.set()
        await asyncio.gather(*players)
        info = (await durak_of(app).service.running_games())[0]
        version_before = info.version
    # the bot is down; the old panels stay in the chats. A new process resumes.
    async with running_bot(server, db) as app:
        info = (await durak_of(app).service.running_games())[0]
        assert info.version == version_before
        await table.play_to_the_end(watch=(durak_of(app).service, info.game_id))
        _, record = await finished_game(table, app)
        assert len(record["steps"]) > version_before
    assert not table.leaks, table.leaks
    assert not server.unanswered_callbacks()
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_stale_foreign_forged_and_double_clicks(make_fake_telegram, tmp_path, errors):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users, group = friends(server, 2)
    outsider = next(u for u in group.members.values() if u.first_name == "Outsider")
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        table = Table(server, group, users, random.Random(3))
        await table.open_lobby()
        await table.join_all()
        await table.start()
        service = durak_of(app).service
        info = (await service.running_games())[0]
        version = info.version
        opener = users[info.game.attacker]
        panel = table.panel(opener)
        assert panel is not None
        card_button = next(b for b in panel.buttons if b.callback_data and ".c" in b.callback_data)
        data = card_button.callback_data or ""

        # an outsider forges a click on the group's table message
        table_msg = table.bot_messages(group)[-1]
        answer = await table.press(outsider, table_msg, data, check=False)
        assert "not playing" in answer
        # garbage
        answer = await table.press(opener, panel, "1g.zz.zz.q", check=False)
        assert "not valid" in answer
        answer = await table.press(opener, panel, "x" * 64, check=False)
        assert "not valid" in answer
        assert (await service.game(info.game_id)).version == version

        # the same click twice at once: it applies once
        first = await opener.press(panel, data)
        second = await opener.press(panel, data)
        answers = [await first.wait(10), await second.wait(10)]
        assert (await service.game(info.game_id)).version == version + 1
        assert sum(bool(a.text) for a in answers) == 1  # the second one was refused
        # ... with a toast: a card that cannot be played now loses nothing (issue 11)
        assert not any(a.show_alert for a in answers)
        # a pass must name the table its player saw: made without it, it is refused
        answer = await table.press(opener, panel, cb.move(info.game_id, None, Pass()), check=False)
        assert "not valid" in answer
        await durak_of(app).outbox.idle(10)

        # a click on a panel that has been replaced by a newer one
        for user in users:
            newest = table.panel(user)
            old = [
                m
                for m in server.messages(server.private_chat(user))
                if m.sender.is_bot
                and m is not newest
                and not m.deleted
                and any(b.callback_data and b.callback_data.startswith("1g.") for b in m.buttons)
            ]
            for message in old:
                button = next(b for b in message.buttons if b.callback_data)
                answer = await table.press(user, message, button.callback_data or "")
                assert "old" in answer
        assert (await service.game(info.game_id)).version == version + 1
    assert not server.unanswered_callbacks()
    assert not errors.records, [r.getMessage() for r in errors.records]
