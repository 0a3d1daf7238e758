"""Commands, permissions and the unhappy paths of a game, through the real bot."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

from bot.ui import callbacks as cb
from tests.fake_telegram import FakeTelegram
from tests.fake_telegram.fixtures import async_test

from .harness import Table, durak_of, friends_and_admin, running_bot

ROOT = Path(__file__).resolve().parents[2]


def button(message, kind: str) -> str:
    return next(
        b.callback_data for b in message.buttons if b.callback_data and b.callback_data[1] == kind
    )


@async_test
async def test_start_needs_the_creator_or_an_admin_and_two_players(make_fake_telegram, tmp_path):
    server, users, boss, group = await friends_and_admin(make_fake_telegram, players=3)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        table = Table(server, group, users, random.Random(1))
        lobby = await table.open_lobby()
        answer = await table.press(users[0], lobby, button(lobby, "s"))
        assert "two players" in answer
        await table.join_all()
        lobby = table.lobby()
        answer = await table.press(users[1], lobby, button(lobby, "s"))
        assert "creator or an admin" in answer
        assert not await durak_of(app).service.running_games()
        answer = await table.press(boss, lobby, button(lobby, "s"))
        assert "Dealt" in answer
        assert len(await durak_of(app).service.running_games()) == 1
        # the lobby's buttons are gone; a stale Join is refused kindly
        answer = await table.press(users[2], lobby, button(lobby, "j"), check=False)
        assert "no open lobby" in answer


@async_test
async def test_help_rules_stats_kick_to_the_ai_then_play_again(
    make_fake_telegram, tmp_path, errors
):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=3)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        service = durak_of(app).service
        table = Table(server, group, users, random.Random(2))
        await users[0].send(group, "/help")
        await server.wait_for_bot_message(group, contains="/newgame")
        await users[0].send(group, "/stats")
        first_stats = await server.wait_for_bot_message(group, contains="No rated games")
        await users[0].send(group, "/rules")
        await server.wait_for_bot_message(group, contains="Deck: 36 cards")
        await table.open_lobby()
        await table.join_all()
        await table.start()
        first = (await service.running_games())[0]
        said = await users[1].send(group, "/leave")  # in a game: a confirmation, in private
        await _boss.send(group, "/kick", reply_to=said)  # an admin's /kick: the AI plays his seat
        await server.wait_for_bot_message(group, contains="Player1 is out: the AI plays")
        kicked = (await service.game(first.game_id)).seats[1]
        assert kicked.left and kicked.away
        assert (await service.game(first.game_id)).status == "running"  # only /cancel ends it
        rest = Table(server, group, [users[0], users[2]], random.Random(2))
        await rest.play_to_the_end(timeout=120)
        await server.wait_for(lambda: table.ended() is not None, 10, what="the end message")
        ended = table.ended()
        done = await service.game(first.game_id)
        assert done.ending is not None and "durak" in (ended.plain_text or "")
        board = {t.name: t for t in await service.leaderboard(group.id)}
        assert {n: t.played for n, t in board.items()} == {
            "Player0": 1,
            "Player1": 1,
            "Player2": 1,
        }
        for k in range(3):  # the kicked player is the durak only if his seat lost
            assert board[f"Player{k}"].losses == int(k in done.ending.losers)
        await users[2].send(group, "/stats")
        # asked again within a minute: the same message, edited (the group's budget)
        stats = await server.wait_for(
            lambda: (
                (m := server.message(group, first_stats.message_id))
                and "Ratings" in (m.plain_text or "")
                and m
            )
        )
        assert "Player1 — " in (stats.plain_text or "")

        # Play again: a lobby of the players who stayed; once they confirm, it starts
        again = await table.press(users[2], ended, button(ended, "r"))
        assert "next game" in again
        await _confirm(table, service, users[0])
        second = (await service.running_games())[0]
        assert second.game_id != first.game_id
        assert [s.user_id for s in second.seats] == [users[0].id, users[2].id]
        await server.wait_for(
            lambda: all(
                (p := table.panel(u)) is not None
                and f"1g.{cb._b36(second.game_id)}." in str([b.callback_data for b in p.buttons])
                for u in (users[0], users[2])
            ),
            10,
            what="new panels",
        )
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_a_deleted_table_is_reposted_and_a_blocked_player_is_reported(
    make_fake_telegram, tmp_path, errors
):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=2)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        table = Table(server, group, users, random.Random(3))
        await table.open_lobby()
        await table.join_all()
        await table.start()
        info = (await bot.service.running_games())[0]
        await bot.outbox.idle(10)
        table_id = await bot.service.message(info.game_id, "table", group.id)
        assert table_id is not None
        server.mark_deleted(server.message(group, table_id))
        opener = users[info.game.attacker]
        other = users[1 - info.game.attacker]
        before = group.next_message_id - 1
        await other.block_bot()
        panel = table.panel(opener)
        tap = next(
            b.callback_data for b in panel.buttons if b.callback_data and ".c" in b.callback_data
        )
        assert await table.press(opener, panel, tap) == ""  # the opening card is played
        # the table was deleted: it comes back as a new message
        await server.wait_for(
            lambda: (
                bot.outbox.message_id(group.id, f"table:{info.game_id}") not in (None, table_id)
            ),
            10,
            what="a new table message",
        )
        await bot.outbox.idle(10)
        new_id = await bot.service.message(info.game_id, "table", group.id)
        assert new_id not in (None, table_id) and not server.message(group, new_id).deleted
        # the defender blocked the bot: his panel cannot reach him, the group hears of it
        warning = await server.wait_for_bot_message(
            group, after=before, contains="cannot get their cards"
        )
        assert other.first_name in (warning.plain_text or "")
    assert not errors.records, [r.getMessage() for r in errors.records]


def run_bot(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DURAK_")}
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_bot_refuses_to_start_without_a_good_token():
    missing = run_bot({})
    assert missing.returncode == 2 and "DURAK_BOT_TOKEN is not set" in missing.stderr
    bad = run_bot({"DURAK_BOT_TOKEN": "hello"})
    assert bad.returncode == 2 and "does not look like a bot token" in bad.stderr
    level = run_bot({"DURAK_BOT_TOKEN": "123456:" + "A" * 35, "DURAK_LOG_LEVEL": "LOUD"})
    assert level.returncode == 2 and "DURAK_LOG_LEVEL" in level.stderr


def test_help_explains_the_settings():
    out = run_bot({}, "--help")
    assert out.returncode == 0
    for name in ("DURAK_BOT_TOKEN", "DURAK_DB", "DURAK_API_URL", "DURAK_LOG_LEVEL"):
        assert name in out.stdout


@async_test
async def test_python_m_bot_plays_against_the_fake_server(
    fake_telegram: FakeTelegram, tmp_path: Path
) -> None:
    """The real entry point, as the README runs it: settings from the environment, its
    own event loop (uvloop where installed), the database file, stopped by a signal."""
    ann, bob = fake_telegram.add_user("Ann"), fake_telegram.add_user("Bob")
    group = fake_telegram.add_group("Friends", [ann, bob])
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DURAK_")}
    env = {
        **clean,
        "DURAK_BOT_TOKEN": fake_telegram.token,
        "DURAK_API_URL": fake_telegram.base_url,
        "DURAK_DB": str(tmp_path / "durak.sqlite3"),
        "DURAK_LOG_LEVEL": "INFO",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", cwd=ROOT, env=env, stderr=asyncio.subprocess.PIPE
    )
    try:
        await ann.send(group, "/newgame")
        lobby = await fake_telegram.wait_for_bot_message(group, timeout=30)
        assert "Ann" in (lobby.plain_text or "")
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0
    log = err.decode()
    expected = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    assert f"event loop: {expected}" in log
    assert fake_telegram.token not in log  # the token never reaches a log line
    assert (tmp_path / "durak.sqlite3").exists()


async def _confirm(table: Table, service, user) -> str:
    """Press "I'm in" on the Play-again lobby's message."""
    lobby = await service.active_game(table.group.id)
    assert lobby is not None
    data = cb.lobby("a", lobby.game_id)
    await table.server.wait_for(
        lambda: any(data in m.callback_data for m in table.bot_messages(table.group)),
        10,
        what="the Play-again lobby",
    )
    message = next(m for m in reversed(table.bot_messages(table.group)) if data in m.callback_data)
    return await table.press(user, message, data)
