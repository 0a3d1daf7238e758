"""Anonymous and channel senders (issue 10, item 7): seats are real users only, and an
anonymous admin (a message sent as the group itself) is an admin."""

from __future__ import annotations

import random

from bot.ui import callbacks as cb
from tests.fake_telegram.fixtures import async_test
from tests.fake_telegram.models import Chat

from .harness import Table, durak_of, friends_and_admin, running_bot

PEOPLE = "Seats are for people"


@async_test
async def test_a_channel_or_an_anonymous_admin_opens_no_lobby(make_fake_telegram, tmp_path, errors):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=2)
    channel = Chat(-1_002_000_000_001, "channel", title="News")
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        service = durak_of(app).service
        server.send_as_chat(group, "/newgame", channel)
        await server.wait_for_bot_message(group, contains=PEOPLE, timeout=10)
        server.send_as_chat(group, "/newgame", group)
        await server.wait_for_bot_message(group, contains=PEOPLE, timeout=10)
        assert await service.active_game(group.id) is None
        # a person's lobby: a channel cannot cancel it, nor leave it for anyone
        table = Table(server, group, users, random.Random(1))
        await table.open_lobby()
        server.send_as_chat(group, "/cancel", channel)
        await server.wait_for_bot_message(group, contains="creator or an admin", timeout=10)
        server.send_as_chat(group, "/leave", channel)
        await server.wait_for_bot_message(group, contains=PEOPLE, timeout=10)
        lobby = await service.active_game(group.id)
        assert lobby is not None and [s.user_id for s in lobby.seats] == [users[0].id]
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_an_anonymous_admin_is_an_admin(make_fake_telegram, tmp_path, errors):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=2)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        service = durak_of(app).service
        server.send_as_chat(group, "/settings", group)
        prefix = cb.setting("x")[:2]
        await server.wait_for(
            lambda: any(
                any((b.callback_data or "").startswith(prefix) for b in m.buttons)
                for m in server.messages(group)
            ),
            10,
            what="the settings menu",
        )
        table = Table(server, group, users, random.Random(1))
        await table.open_lobby()
        server.send_as_chat(group, "/cancel", group)
        await server.wait_for_bot_message(group, contains="cancelled", timeout=10)
        assert await service.active_game(group.id) is None
    assert not errors.records, [r.getMessage() for r in errors.records]
