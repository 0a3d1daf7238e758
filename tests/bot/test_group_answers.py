"""A person is answered within one group slot while games run (issue 27 items 3
and 5): the group's 20 sends+edits a minute are shared by its tables, and a
command's reply or the lobby someone has just joined used to queue behind them
(``/rules`` answered 5-58 s later, a lobby showing "1 player" 20 s after a join).
Now an answer goes before the tables; the table edit it displaces waits one slot.

No time is asserted: what is counted is how many of the group's paced requests
(sends and edits) start between the person's action and his answer. At most one
can: the request already on its way when he acted (a slot is not taken back)."""

from __future__ import annotations

import asyncio
import random
import time

from tests.fake_telegram import FakeTelegram, RateLimits
from tests.fake_telegram.fixtures import async_test
from tests.fake_telegram.models import Chat

from .harness import SCALE, Table, durak_of, running_bot

PACED = {"sendmessage", "editmessagetext", "editmessagereplymarkup", "senddocument"}


def group_requests(server: FakeTelegram, group: Chat, since: float) -> list:
    return [
        r
        for r in server.requests()
        if r.method.lower() in PACED and r.params.get("chat_id") == group.id and r.at >= since
    ]


def before_answer(server: FakeTelegram, group: Chat, since: float, answered) -> int:
    """The group's paced requests that started after ``since`` and before the first
    request ``answered`` accepts."""
    for count, r in enumerate(group_requests(server, group, since)):
        if answered(r):
            return count
    raise AssertionError("no answer")


async def keep_playing(tables: list[Table]) -> tuple[asyncio.Event, list[asyncio.Task]]:
    stop = asyncio.Event()
    tasks = [
        asyncio.create_task(t.play(u, stop, max_presses=100_000)) for t in tables for u in t.users
    ]
    return stop, tasks


async def stop_playing(stop: asyncio.Event, tasks: list[asyncio.Task]) -> None:
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)


def busy(server: FakeTelegram, group: Chat, since: float) -> bool:
    """The group's budget is spent: its tables were edited in the last slots."""
    return len(group_requests(server, group, since)) >= 3


@async_test
async def test_a_lobby_and_a_command_beside_four_running_games(make_fake_telegram, tmp_path):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Player{i}", started=True) for i in range(10)]
    group = server.add_group("Forum", users, admins=[users[0]])
    topics = [server.add_topic(group, f"Durak {k}") for k in range(5)]
    games = [
        Table(server, group, users[2 * k : 2 * k + 2], random.Random(k), topic=topics[k])
        for k in range(4)
    ]
    lobby_table = Table(server, group, users[8:], random.Random(9), topic=topics[4])
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        await durak_of(app).service.set_chat_settings(group.id, sprint=True)
        for table in games:
            await table.open_lobby()
            await table.join_all()
            await table.start()
        stop, tasks = await keep_playing(games)
        try:
            await lobby_table.open_lobby()
            interval = 3.1 * SCALE
            await asyncio.sleep(6 * interval)
            assert busy(server, group, time.monotonic() - 4 * interval)
            # the second player joins the sprint lobby
            lobby = lobby_table.lobby()
            assert lobby is not None and "1 player" in (lobby.plain_text or "")
            joiner = users[9]
            join = next(b for b in lobby.buttons if (b.callback_data or "")[1:2] == "j")
            pressed = time.monotonic()
            await (await joiner.press(lobby, join.callback_data or "")).wait(10)
            await server.wait_for(
                lambda: "Player9" in (server.message(group, lobby.message_id).plain_text or ""),
                10,
                what="the joiner in the lobby",
            )
            joined = before_answer(
                server,
                group,
                pressed,
                lambda r: r.params.get("message_id") == lobby.message_id,
            )
            # a command asked meanwhile, in a running game's topic
            assert busy(server, group, time.monotonic() - 4 * interval)
            asked = time.monotonic()
            await users[0].send(group, "/rules", topic=topics[0])
            await server.wait_for_bot_message(group, contains="Rules in force")
            replied = before_answer(
                server, group, asked, lambda r: "Rules in force" in str(r.params.get("text"))
            )
        finally:
            await stop_playing(stop, tasks)
    assert joined <= 1, f"{joined} group requests went before the lobby's edit"
    assert replied <= 1, f"{replied} group requests went before the reply to /rules"
    assert server.limit_violations() == 0


@async_test
async def test_rules_during_a_four_player_game(make_fake_telegram, tmp_path):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Player{i}", started=True) for i in range(4)]
    group = server.add_group("Friends", users, admins=[users[0]])
    table = Table(server, group, users, random.Random(4))
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        await durak_of(app).service.set_chat_settings(group.id, deck=52)  # a longer game
        await table.open_lobby()
        await table.join_all()
        await table.start()
        stop, tasks = await keep_playing([table])
        counts = []
        try:
            interval = 3.1 * SCALE
            for k in range(3):  # three members ask while the table keeps moving
                await asyncio.sleep(4 * interval)
                if table.ended() is not None:
                    break
                asked = time.monotonic()
                await users[k].send(group, "/rules")
                await server.wait_for(
                    lambda since=asked: any(
                        "Rules in force" in str(r.params.get("text"))
                        for r in group_requests(server, group, since)
                    ),
                    10,
                    what="the answer",
                )
                counts.append(
                    before_answer(
                        server,
                        group,
                        asked,
                        lambda r: "Rules in force" in str(r.params.get("text")),
                    )
                )
            assert table.ended() is None or counts, "the game ended before anyone asked"
        finally:
            await stop_playing(stop, tasks)
    assert counts and all(c <= 1 for c in counts), counts
    assert server.limit_violations() == 0
