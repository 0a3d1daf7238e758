"""Benchmark: games played wholly through the Mini App's WebSocket, by simulated pages,
through the real bot and the fake Bot API on loopback.

    python -m tests.bot.webapp.bench_webapp [--games 20] [--players 4] [--seconds 20]
        [--think 0]

Each player has his page open (an aiohttp WebSocket with initData made with the test's
token). When his state says he may act, he sends a random legal move for that state's
version (after ``--think`` seconds x uniform [0.5, 2], a human's pause). Printed: the
time from a move's send to each open page's receiving the state it led to (every page
of the game, the mover's included: p50/p95/p99), and the Bot API's sends+edits per
applied action in the window (the panels of players with the page open are not edited;
the group's table still is, about one edit each 3 s a group).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from tests.fake_telegram import FakeTelegram, RateLimits

from ..harness import WEBAPP_PATH, Table, durak_of, free_port, running_bot
from .client import init_data, offered

#: When the first move for a game's version was sent, and every move sent.
SENT: dict[tuple[int, int], float] = {}
MOVES: list[int] = []
SENDS = ("sendMessage", "editMessageText", "editMessageReplyMarkup", "sendDocument")


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def player(
    port: int,
    data: str,
    game: int,
    rng: random.Random,
    think: float,
    stop: asyncio.Event,
    sent: dict[tuple[int, int], float],
    seen: list[float],
    moves: list[int],
) -> None:
    url = f"http://127.0.0.1:{port}{WEBAPP_PATH}/ws"
    async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:
        await ws.send_str(json.dumps({"init": data, "game": game}))
        acted = -1
        newest = -1  # each state is timed once, when this page first sees it
        pending: asyncio.Task[None] | None = None
        while not stop.is_set():
            try:
                msg = await ws.receive(timeout=0.5)
            except TimeoutError:
                continue
            if msg.type != aiohttp.WSMsgType.TEXT:
                break
            got = json.loads(msg.data)
            state = got.get("state")
            if state is None:
                continue
            version = state["version"]
            at = sent.get((state["game"], version))
            if version > newest:
                if at is not None:
                    seen.append(time.perf_counter() - at)
                if pending is not None:  # the state he was thinking about is gone
                    pending.cancel()
                    pending = None
            newest = max(newest, version)
            if state["over"] or not offered(state) or acted == version:
                continue
            acted = version
            # the pause is a task of its own: this page goes on reading meanwhile
            pending = asyncio.create_task(
                press(ws, state, rng.choice(offered(state)), think * rng.uniform(0.5, 2.0))
            )
        if pending is not None:
            pending.cancel()


async def press(ws: Any, state: dict[str, Any], step: Any, pause: float) -> None:
    if pause:
        await asyncio.sleep(pause)
    if ws.closed:  # the window ended while he thought
        return
    version = state["version"]
    SENT.setdefault((state["game"], version + 1), time.perf_counter())
    MOVES.append(version)
    await ws.send_str(json.dumps({"move": step, "version": version}))


async def run(args: argparse.Namespace) -> dict[str, Any]:
    server = await FakeTelegram(rate_limits=RateLimits()).start()
    port = free_port()
    folder = Path(tempfile.mkdtemp())
    try:
        async with running_bot(
            server, folder / "bench.sqlite3", webapp_port=port, time_scale=1.0
        ) as app:
            service = durak_of(app).service
            games: list[tuple[int, list[Any]]] = []
            for g in range(args.games):
                users = [server.add_user(f"P{g}x{i}", started=True) for i in range(args.players)]
                group = server.add_group(f"G{g}", users, admins=[users[0]])
                table = Table(server, group, users, random.Random(g))
                await table.open_lobby()
                await table.join_all()
                await table.start()
                running = [i for i in await service.running_games() if i.chat_id == group.id]
                games.append((running[0].game_id, users))
            with contextlib.suppress(TimeoutError):  # what the deals queued, sent first
                await durak_of(app).outbox.idle(args.games * 4.0)
            before = {m: server.request_count(m) for m in SENDS}
            versions = {gid: (await service.game(gid)).version for gid, _ in games}
            stop = asyncio.Event()
            sent = SENT
            seen: list[float] = []
            moves = MOVES
            rng = random.Random(args.seed)
            tasks = [
                asyncio.create_task(
                    player(
                        port,
                        init_data(server, u),
                        gid,
                        random.Random(rng.random()),
                        args.think,
                        stop,
                        sent,
                        seen,
                        moves,
                    )
                )
                for gid, users in games
                for u in users
            ]
            await asyncio.sleep(args.seconds)
            stop.set()
            for failed in await asyncio.gather(*tasks, return_exceptions=True):
                if isinstance(failed, BaseException):
                    print(f"a page failed: {failed!r}", file=sys.stderr)
            applied = 0
            for gid, _ in games:
                info = await service.game(gid)
                applied += info.version - versions[gid]
            after = {m: server.request_count(m) for m in SENDS}
    finally:
        await server.stop()
    calls = sum(after[m] - before[m] for m in SENDS)
    return {"seen": seen, "applied": applied, "calls": calls, "moves": len(moves)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bot.webapp.bench_webapp")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--think", type=float, default=0.0, help="a human's pause, seconds")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    out = asyncio.run(run(args))
    seen = out["seen"]
    applied = out["applied"]
    print(
        f"games {args.games} x {args.players} players, {args.seconds:g} s, think {args.think:g} s"
    )
    print(f"applied actions: {applied} ({applied / args.seconds:.1f}/s); moves sent {out['moves']}")
    print(
        f"move -> state on each open page: {len(seen)} deliveries, "
        f"p50 {percentile(seen, 0.5) * 1000:.1f} ms, p95 {percentile(seen, 0.95) * 1000:.1f} ms,"
        f" p99 {percentile(seen, 0.99) * 1000:.1f} ms"
    )
    per = out["calls"] / applied if applied else float("nan")
    print(f"Bot API sends+edits: {out['calls']} = {per:.2f} per applied action")
    return 0


if __name__ == "__main__":
    sys.exit(main())
