"""How long a person waits for the bot's answer in a group while games run (issue 27
items 3 and 5): members ask ``/rules`` or ``/help`` (each member once: a repeat is ignored)
beside a running 4-player game, or beside four games in a forum's topics, and a
player joins a lobby there; the answer's wait is measured from the message (or the
press) to the answer's send or edit reaching the fake Bot API.

    python -m tests.bot.bench_answers [--games 1] [--asks 12] [--scale 0.1]

The bot runs with every Telegram limit compressed by ``--scale`` (the group's slot
is 3.1 s x scale); the waits are printed back at Telegram's real pace, in seconds
and in group slots. Every player presses a random button of his panel as fast as
the panel allows, so the group's budget is spent on the tables the whole time.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bot.transport.outbox import SendLimits
from tests.fake_telegram import FakeTelegram, RateLimits

from .harness import Table, running_bot
from .test_group_answers import group_requests, stop_playing

SLOT = 3.1  # the group's interval at Telegram's pace (SendLimits.group_interval)
COMMANDS = ("/rules", "/help")
ANSWERS = ("Rules in force", "Durak, the throw-in fool")


async def _player(table: Table, user, stop: asyncio.Event, think: float) -> None:
    """Press a random button of his panel, then think, until the game ends."""
    rng = random.Random(user.id)
    while not stop.is_set() and table.ended() is None:
        await table._press_one(user, None)
        await asyncio.sleep(think * (0.5 + rng.random()))


async def bench(games: int, asks: int, scale: float, think: float) -> dict[str, list[float]]:
    server = FakeTelegram(rate_limits=RateLimits().scaled(scale))
    await server.start()
    waits: dict[str, list[float]] = {"command": [], "lobby": []}
    try:
        users = [server.add_user(f"Player{i}", started=True) for i in range(4 * games + 2)]
        askers = [server.add_user(f"Member{i}") for i in range(asks)]  # each asks once
        group = server.add_group("Friends", users + askers, admins=[users[0]])
        topics = [server.add_topic(group, f"Durak {k}") for k in range(games + 1)]
        forum = games > 1
        tables = [
            Table(
                server,
                group,
                users[4 * k : 4 * k + 4],
                random.Random(k),
                topic=topics[k] if forum else None,
            )
            for k in range(games)
        ]
        with tempfile.TemporaryDirectory() as work:
            db = Path(work) / "durak.sqlite3"
            async with running_bot(server, db, SendLimits().scaled(scale), time_scale=scale):
                for table in tables:
                    await table.open_lobby()
                    await table.join_all()
                    await table.start()
                stop = asyncio.Event()
                tasks = [
                    asyncio.create_task(_player(t, u, stop, think * scale))
                    for t in tables
                    for u in t.users
                ]
                try:
                    await asyncio.sleep(4 * SLOT * scale)
                    await _ask(server, group, askers, tables, scale, waits["command"])
                    if forum:
                        lobby = Table(
                            server, group, users[-2:], random.Random(99), topic=topics[-1]
                        )
                        await lobby.open_lobby()
                        await _join(server, group, lobby, scale, waits["lobby"])
                finally:
                    await stop_playing(stop, tasks)
    finally:
        await server.stop()
    return waits


async def _ask(server, group, askers, tables, scale, into) -> None:
    for k, asker in enumerate(askers):
        if all(t.ended() is not None for t in tables):
            break
        command, expect = COMMANDS[k % len(COMMANDS)], ANSWERS[k % len(ANSWERS)]
        asked = time.monotonic()
        await asker.send(group, command, topic=tables[0].topic)
        found = await server.wait_for(
            lambda since=asked, expect=expect: next(
                (
                    r
                    for r in group_requests(server, group, since)
                    if expect in str(r.params.get("text"))
                ),
                None,
            ),
            60,
            what="the answer",
        )
        into.append((found.at - asked) / scale)
        await asyncio.sleep(2 * SLOT * scale)


async def _join(server, group, lobby: Table, scale, into) -> None:
    message = lobby.lobby()
    assert message is not None
    joiner = lobby.users[1]
    join = next(b for b in message.buttons if (b.callback_data or "")[1:2] == "j")
    pressed = time.monotonic()
    await (await joiner.press(message, join.callback_data or "")).wait(30)
    found = await server.wait_for(
        lambda: next(
            (
                r
                for r in group_requests(server, group, pressed)
                if r.params.get("message_id") == message.message_id
            ),
            None,
        ),
        60,
        what="the lobby's edit",
    )
    into.append((found.at - pressed) / scale)


def report(waits: dict[str, list[float]]) -> None:
    for what, values in waits.items():
        if not values:
            continue
        values = sorted(values)
        p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
        print(
            f"{what}: {len(values)} answers; wait at Telegram's pace: median"
            f" {statistics.median(values):.2f} s, p95 {p95:.2f} s, max {values[-1]:.2f} s"
            f" ({values[-1] / SLOT:.2f} group slots)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bot.bench_answers")
    parser.add_argument("--games", type=int, default=1, help="4-player games (>1: in topics)")
    parser.add_argument("--asks", type=int, default=12, help="commands asked")
    parser.add_argument("--scale", type=float, default=0.1, help="Telegram's limits x this")
    parser.add_argument("--think", type=float, default=2.0, help="seconds a player thinks")
    args = parser.parse_args(argv)
    if args.games < 1 or args.asks < 1 or args.scale <= 0:
        parser.error("--games and --asks must be positive, --scale above 0")
    began = time.perf_counter()
    waits = asyncio.run(bench(args.games, args.asks, args.scale, args.think))
    print(f"games: {args.games} of 4 players thinking {args.think} s, scale {args.scale}")
    report(waits)
    print(f"seconds: {time.perf_counter() - began:.1f}")
    return 0 if waits["command"] else 1


if __name__ == "__main__":
    sys.exit(main())
