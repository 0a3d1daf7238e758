"""A press during a restart is kept (issue 10, item 10): the panels newest before the
restart stay valid, and a resumed game posts nothing that is still on screen."""

from __future__ import annotations

import random

from tests.fake_telegram.fixtures import async_test

from .harness import Table, durak_of, friends_and_admin, running_bot


@async_test
async def test_a_press_made_while_the_bot_was_down_is_applied(make_fake_telegram, tmp_path, errors):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=2)
    db = tmp_path / "db.sqlite3"
    table = Table(server, group, users, random.Random(5))
    async with running_bot(server, db) as app:
        await table.open_lobby()
        await table.join_all()
        await table.start()
        bot = durak_of(app)
        info = (await bot.service.running_games())[0]
        assert info.game is not None
        opener = users[info.game.attacker]
        await bot.outbox.idle(10)
        version = info.version
    panel = table.panel(opener)
    assert panel is not None
    tap = next(
        b.callback_data for b in panel.buttons if b.callback_data and ".c" in b.callback_data
    )
    press = await opener.press(panel, tap)  # the bot is down: Telegram keeps the update
    posts_before = server.request_count("sendMessage")
    async with running_bot(server, db) as app:
        answer = await press.wait(10)
        assert answer.text in (None, ""), answer.text  # not "This panel is old"
        bot = durak_of(app)
        assert (await bot.service.game(info.game_id)).version == version + 1
        await bot.outbox.idle(10)
    # the move itself notifies the defender (one new panel); nothing else was posted again
    posts = [r for r in server.requests("sendMessage")][posts_before:]
    assert len(posts) <= 1, [r.params.get("chat_id") for r in posts]
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_a_resumed_game_posts_nothing_still_on_screen(make_fake_telegram, tmp_path, errors):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=3)
    db = tmp_path / "db.sqlite3"
    table = Table(server, group, users, random.Random(6))
    async with running_bot(server, db) as app:
        await table.open_lobby()
        await table.join_all()
        await table.start()
        await durak_of(app).outbox.idle(10)
    posts_before = server.request_count("sendMessage")
    async with running_bot(server, db) as app:
        assert await durak_of(app).service.running_games()
        await durak_of(app).outbox.idle(10)
    assert server.request_count("sendMessage") == posts_before
    assert server.request_count("deleteMessage") == 0
    assert not errors.records, [r.getMessage() for r in errors.records]
