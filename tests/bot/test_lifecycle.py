"""Turn timers, settings, admin commands and a group's life cycle, through the
real bot and the fake Bot API (time runs 20x faster: a 60 s turn takes 3 s)."""

from __future__ import annotations

import asyncio
import json
import random

from bot.ui import callbacks as cb
from bot.ui import settings_menu as menu
from durak import check_record
from tests.fake_telegram import RateLimits
from tests.fake_telegram.fixtures import async_test

from .harness import SCALE, Table, durak_of, friends_and_admin, running_bot


async def started(table: Table) -> None:
    await table.open_lobby()
    await table.join_all()
    await table.start()


@async_test
async def test_timers_finish_a_game_in_which_one_player_never_presses(
    make_fake_telegram, tmp_path, errors
):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=2)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        await bot.service.set_chat_settings(group.id, turn_timeout=10)  # 0.5 s here
        table = Table(server, group, users[:1], random.Random(4))  # only Player0 presses
        await started(Table(server, group, users, random.Random(4)))
        info = (await bot.service.running_games())[0]
        # the table shows the time left
        await server.wait_for(
            lambda: "left" in (table.bot_messages(group)[-1].plain_text or ""), 10, what="a clock"
        )
        await table.play_to_the_end(timeout=120)
        final = await bot.service.game(info.game_id)
        assert final.status == "finished"
        sleeper = final.seats[1]
        assert sleeper.away, "two timeouts in a row mark a player away"
        steps = (await bot.service.export_record(info.game_id))["steps"]
        assert any(s.get("player") == sleeper.name for s in steps), "the bot played for him"
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_timers_and_away_work_the_same_in_a_pile_game(make_fake_telegram, tmp_path, errors):
    """PILE-GAMES.md through the same clock: a player who never presses in a road game
    is played by his timeouts (take, or lead his lowest card), then marked away and
    played by the AI, and the game ends."""
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=3)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        await bot.service.set_chat_settings(group.id, game="road", turn_timeout=10)  # 0.5 s
        await started(Table(server, group, users, random.Random(5)))
        info = (await bot.service.running_games())[0]
        assert info.rules.game == "road"
        table = Table(server, group, users[:2], random.Random(5))  # Player2 never presses
        await table.play_to_the_end(timeout=180)
        final = await bot.service.game(info.game_id)
        assert final.status == "finished"
        sleeper = final.seats[2]
        steps = (await bot.service.export_record(info.game_id))["steps"]
        mine = [s for s in steps if s.get("player") == sleeper.name]
        assert mine, "the clock played for him"
        assert all(s["do"] in ("lead", "beat", "take") for s in mine)
        assert sleeper.away or len(mine) < 2, "two timeouts in a row mark a player away"
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_a_pending_deadline_survives_a_restart(make_fake_telegram, tmp_path, errors):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=3)
    db = tmp_path / "db.sqlite3"
    async with running_bot(server, db) as app:
        bot = durak_of(app)
        await bot.service.set_chat_settings(group.id, turn_timeout=30)  # 1.5 s here
        await started(Table(server, group, users, random.Random(5)))
        info = (await bot.service.running_games())[0]
        (deadline,) = await bot.service.deadlines()
        assert deadline.game_id == info.game_id and deadline.version == info.version == 0
    # down before the deadline; nobody presses anything
    async with running_bot(server, db) as app:
        bot = durak_of(app)
        for _ in range(100):
            now = await bot.service.game(info.game_id)
            if now.version > 0:
                break
            await asyncio.sleep(0.05)
        assert now.version >= 1, "the opener's time ran out after the restart"
        step = (await bot.service.export_record(info.game_id))["steps"][0]
        assert step["do"] == "attack" and step["player"] == now.seats[info.game.attacker].name
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_every_setting_changes_the_next_games_rules(make_fake_telegram, tmp_path, errors):
    server, users, boss, group = await friends_and_admin(make_fake_telegram, players=4)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        table = Table(server, group, users, random.Random(6))
        await users[0].send(group, "/settings")
        refused = await server.wait_for_bot_message(
            server.private_chat(users[0]), contains="admins"
        )
        assert refused is not None
        await boss.send(group, "/settings")
        await server.wait_for(
            lambda: any(
                "Settings for new games" in (m.plain_text or "") for m in table.bot_messages(group)
            ),
            10,
            what="the settings menu",
        )
        expected = {}
        for code, name, values in menu.OPTIONS:
            if name in ("language", "own_trumps_take"):  # own trumps' option: not offered
                continue
            msg = next(
                m
                for m in table.bot_messages(group)
                if "Settings for new games" in (m.plain_text or "")
            )
            answer = await table.press(users[0], msg, cb.setting(code))
            assert "admins" in answer, "a non-admin cannot change settings"
            assert await table.choose_setting(boss, msg.message_id, code, 1) == ("", "")
            current = (await bot.service.chat_settings(group.id)).to_dict()
            expected[name] = current[name]
            assert current[name] == values[1]
        await started(table)
        info = (await bot.service.running_games())[0]
        for name, value in expected.items():
            if name not in ("turn_timeout", "recap"):  # the chat's, not the game's rules
                assert getattr(info.rules, name) == value, name
        assert info.rules.deck == 52 and info.rules.teams and info.rules.transfer
        lobby_text = table.bot_messages(group)
        assert any("transfer" in (m.plain_text or "") for m in lobby_text)
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_admin_commands_are_refused_to_others(make_fake_telegram, tmp_path, errors):
    server, users, boss, group = await friends_and_admin(make_fake_telegram, players=3)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        table = Table(server, group, users, random.Random(7))
        await started(table)
        info = (await bot.service.running_games())[0]
        target = await users[1].send(group, "hello")  # a message to reply to
        server.send_message(users[2], group, "/kick", reply_to=target)
        await server.wait_for_bot_message(group, contains="admins")
        server.send_message(users[2], group, "/cancel")  # refused in private
        await server.wait_for_bot_message(
            server.private_chat(users[2]), contains="creator or an admin"
        )
        assert (await bot.service.game(info.game_id)).status == "running"
        # the admin kicks Player1: the AI plays his seat, the game goes on to its end
        server.send_message(boss, group, "/kick", reply_to=target)
        await server.wait_for_bot_message(group, contains="the AI plays his seat")
        assert (await bot.service.game(info.game_id)).seats[1].left
        rest = Table(server, group, [users[0], users[2]], random.Random(7))
        await rest.play_to_the_end(timeout=120)
        await server.wait_for(lambda: table.ended() is not None, 10, what="the end")
        final = await bot.service.game(info.game_id)
        assert final.status == "finished" and final.ending is not None
        # the finished game's record comes as a document and replays
        ended = table.ended()
        record_button = next(
            b.callback_data for b in ended.buttons if b.callback_data.startswith("1h.")
        )
        await table.press(users[0], ended, record_button)
        doc = await server.wait_for(
            lambda: next((m for m in server.messages(group) if m.document is not None), None),
            10,
            what="the record",
        )
        record = json.loads(doc.document.data)
        report = check_record(record)
        assert not report.failures and record["format"] == "durak-record/1"
        server.send_message(users[0], group, "/history")
        history = await server.wait_for_bot_message(group, contains="Recent games")
        assert "durak" in (history.plain_text or "")  # a played game's end, not a surrender
        # a new lobby, cancelled by its creator
        await users[0].send(group, "/newgame")
        await server.wait_for(lambda: table.lobby() is not None, 10, what="a lobby")
        server.send_message(users[0], group, "/cancel")  # confirmed in private
        ask = await server.wait_for(
            lambda: next(
                (
                    m
                    for m in server.messages(server.private_chat(users[0]))
                    if any(d.startswith("1w.") for d in m.callback_data)
                ),
                None,
            ),
            10,
            what="the question",
        )
        await table.press(users[0], ask, next(d for d in ask.callback_data if d.endswith(".y")))
        await server.wait_for_bot_message(group, contains="cancelled")
        assert await bot.service.active_game(group.id) is None
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_removed_from_a_group_and_migrated_groups(make_fake_telegram, tmp_path, errors):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Player{i}", started=True) for i in range(2)]
    basic = server.add_group("Old group", users, admins=[users[0]], supergroup=False)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        table = Table(server, basic, users, random.Random(8))
        await started(table)
        info = (await bot.service.running_games())[0]
        new = server.migrate_group(basic)
        await server.wait_for(
            lambda: bot.outbox.message_id(new.id, f"table:{info.game_id}") is not None,
            10,
            what="the table in the supergroup",
        )
        moved = await bot.service.game(info.game_id)
        assert moved.chat_id == new.id and moved.status == "running"
        # the game goes on in the supergroup and its tally lands there
        table = Table(server, new, users, random.Random(9))
        await table.play_to_the_end()
        board = await bot.service.leaderboard(new.id)
        assert sorted(t.name for t in board) == ["Player0", "Player1"]
        # a lobby in the new group; then the bot is removed: it is closed
        await users[0].send(new, "/newgame")
        await server.wait_for(lambda: table.lobby() is not None, 10, what="a lobby")
        server.remove_bot_from_group(new)
        for _ in range(100):
            if await bot.service.active_game(new.id) is None:
                break
            await asyncio.sleep(0.05)
        assert await bot.service.active_game(new.id) is None
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_an_idle_lobby_expires(make_fake_telegram, tmp_path, errors):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=2)
    async with running_bot(server, tmp_path / "db.sqlite3", lobby_idle=0.5) as app:
        bot = durak_of(app)
        table = Table(server, group, users, random.Random(10))
        await table.open_lobby()
        info = await bot.service.active_game(group.id)
        await server.wait_for(
            lambda: any(
                "Nobody started" in (m.plain_text or "") for m in table.bot_messages(group)
            ),
            10,
            what="the lobby closed",
        )
        assert (await bot.service.game(info.game_id)).status == "cancelled"
        assert table.lobby() is None, "its buttons are gone"
    assert not errors.records, [r.getMessage() for r in errors.records]
