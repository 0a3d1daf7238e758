"""Forum topics end to end (issue 10 item 6): each topic of a group has its own game,
and everything the bot sends for a game is in the topic where it was opened."""

from __future__ import annotations

import asyncio
import random

from tests.fake_telegram import RateLimits
from tests.fake_telegram.fixtures import FakeTelegramFactory, async_test

from .harness import SCALE, Table, durak_of, running_bot


@async_test
async def test_two_topics_play_two_games_each_in_its_topic(
    make_fake_telegram: FakeTelegramFactory, tmp_path, errors
):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Player{i}", started=True) for i in range(4)]
    group = server.add_group("Forum", users, admins=[users[0]])
    topic_a = server.add_topic(group, "Durak A")
    topic_b = server.add_topic(group, "Durak B")
    a = Table(server, group, users[:2], random.Random(1), topic=topic_a)
    b = Table(server, group, users[2:], random.Random(2), topic=topic_b)
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        for table in (a, b):
            await table.open_lobby()
            await table.join_all()
            await table.start()
        service = durak_of(app).service
        running = await service.running_games()
        assert sorted(g.thread_id for g in running) == sorted((topic_a, topic_b))
        await asyncio.gather(a.play_to_the_end(), b.play_to_the_end())
        await durak_of(app).outbox.idle(10)

    said = [m for m in server.messages(group, include_deleted=True) if m.sender.is_bot]
    assert said and all(m.topic in (topic_a, topic_b) for m in said)  # nothing in General
    for table, others in ((a, users[2:]), (b, users[:2])):
        mine = [m for m in said if m.topic == table.topic]
        lobbies = [m for m in mine if any("1j." in str(v.reply_markup) for v in m.history)]
        assert len(lobbies) == 1  # its lobby
        assert table.ended() is not None  # its end, in its topic
        for m in mine:  # only this table's players are named in its topic
            assert not any(u.first_name in (m.plain_text or "") for u in others)


@async_test
async def test_newgame_in_general_opens_its_own_lobby_beside_a_topics(
    make_fake_telegram: FakeTelegramFactory, tmp_path, errors
):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Player{i}", started=True) for i in range(3)]
    group = server.add_group("Forum", users, admins=[users[0]])
    topic = server.add_topic(group, "Durak")
    in_topic = Table(server, group, users[:1], random.Random(1), topic=topic)
    general = Table(server, group, users[1:], random.Random(2))
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        await in_topic.open_lobby()
        # A reply in General carries a message_thread_id but is no topic message.
        note = await users[2].send(group, "anyone?")
        await users[1].send(group, "/newgame", reply_to=note)
        await server.wait_for(lambda: general.lobby() is not None, 10, what="a General lobby")
        await general.join_all()
        await general.start()
        service = durak_of(app).service
        lobby = await service.lobby(group.id, topic)
        assert lobby is not None and lobby.thread_id == topic
        running = await service.active_game(group.id)
        assert running is not None and running.status == "running" and running.thread_id == 0
        await durak_of(app).outbox.idle(10)
    topic_lobby = in_topic.lobby()
    assert topic_lobby is not None and "Player1" not in (topic_lobby.plain_text or "")
    assert all(m.topic is None for m in general.bot_messages(group))


@async_test
async def test_a_topic_deleted_under_a_running_game_moves_the_game_to_general(
    make_fake_telegram: FakeTelegramFactory, tmp_path, errors
):
    """An admin deletes the topic (and its messages, the table among them) mid-game: the
    game goes on, its table and end message in General instead of nowhere."""
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Player{i}", started=True) for i in range(2)]
    group = server.add_group("Forum", users, admins=[users[0]])
    topic = server.add_topic(group, "Durak")
    table = Table(server, group, users, random.Random(3), topic=topic)
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        await table.open_lobby()
        await table.join_all()
        await table.start()
        await durak_of(app).outbox.idle(10)
        server.delete_topic(group, topic)
        table.topic = None  # what the players now see is in General
        await table.play_to_the_end()
        await durak_of(app).outbox.idle(10)
        (game,) = await durak_of(app).service.recent_games(group.id)
        assert game.status == "finished"
    in_general = [m for m in server.messages(group, include_deleted=False) if m.sender.is_bot]
    assert in_general and all(m.topic is None for m in in_general)
    assert table.ended() is not None  # the end message reached the group
