"""AI players in the bot: seated from the lobby, playing off the event loop,
resumed after a restart."""

from __future__ import annotations

import asyncio
import random

from tests.fake_telegram import RateLimits
from tests.fake_telegram.fixtures import async_test

from .harness import SCALE, Table, durak_of, running_bot


def ai_button(lobby, level: str) -> str:
    kind = {"easy": "x", "normal": "y", "hard": "z"}[level]
    return next(b.callback_data for b in lobby.buttons if (b.callback_data or "")[:2] == "1" + kind)


async def lobby_with_ai(server, table: Table, levels: list[str]) -> None:
    await table.open_lobby()
    await table.join_all()
    for level in levels:
        lobby = table.lobby()
        answer = await table.press(table.users[0], lobby, ai_button(lobby, level))
        assert "AI" in answer
    count = len(table.users) + len(levels)
    await server.wait_for(
        lambda: f"{count} players" in (table.lobby().plain_text or ""), 10, what="AI seats"
    )


@async_test
async def test_ai_players_fill_the_empty_seats(make_fake_telegram, tmp_path, errors):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    human = server.add_user("Human", started=True)
    other = server.add_user("Other", started=True)
    group = server.add_group("Friends", [human, other], admins=[human])
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        table = Table(server, group, [human], random.Random(13))
        await lobby_with_ai(server, table, ["easy", "normal", "hard"])
        lobby = table.lobby()
        # only the creator (or an admin) seats AI players
        answer = await table.press(other, lobby, ai_button(lobby, "easy"), check=False)
        assert "creator or an admin" in answer
        assert "🤖" in (lobby.plain_text or "")
        await table.start()
        info = (await bot.service.running_games())[0]
        assert [s.is_ai for s in info.seats] == [False, True, True, True]
        await table.play_to_the_end(watch=(bot.service, info.game_id))
        record = await bot.service.export_record(info.game_id)
        board = await bot.service.leaderboard(group.id)
    ai_names = {s.name for s in info.seats if s.is_ai}
    acted = {s["player"] for s in record["steps"] if "player" in s}
    assert ai_names <= acted, "every AI seat played"
    assert [t.name for t in board] == ["Human"], "AI players keep no tally"
    assert not table.leaks
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_a_restart_resumes_the_ai_turn(make_fake_telegram, tmp_path, errors):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    human = server.add_user("Human", started=True)
    group = server.add_group("Friends", [human], admins=[human])
    db = tmp_path / "db.sqlite3"
    table = Table(server, group, [human], random.Random(14))
    async with running_bot(server, db, ai_pause=60.0) as app:  # the AI "thinks" for a minute
        bot = durak_of(app)
        await bot.service.set_chat_settings(group.id, turn_timeout=None)
        await lobby_with_ai(server, table, ["normal", "normal"])
        await table.start()
        info = (await bot.service.running_games())[0]
        # the human plays until the game waits for an AI only
        for _ in range(200):
            info = await bot.service.game(info.game_id)
            if not any(s == 0 for s in info.game.actors()):
                break
            panel = table.panel(human)
            legal = [b for b in panel.buttons if b.callback_data and not b.text.startswith("(")]
            button = random.Random(len(table.answers)).choice(legal)
            await table.press(human, panel, button.callback_data or "")
            await asyncio.sleep(0.05)
        assert info.status == "running" and 0 not in info.game.actors()
        waiting = info.version
    async with running_bot(server, db) as app:
        bot = durak_of(app)
        for _ in range(200):
            now = await bot.service.game(info.game_id)
            if now.version > waiting or now.status != "running":
                break
            await asyncio.sleep(0.05)
        assert now.version > waiting, "the AI played after the restart"
    assert not errors.records, [r.getMessage() for r in errors.records]
