"""Benchmark: durable actions per second through the game service, and the
latency of one ``apply`` (each one its own committed transaction).

    python -m durak.service.bench [--games N] [--players K] [--actions M] [--db PATH|URL]
                                  [--parallel] [--tiny]

Runs ``--games`` games side by side (one per chat), applying random legal
actions round-robin, one apply at a time; with ``--parallel`` each game has a
task of its own and their applies overlap (as the bot's presses in many chats
do). A finished game is followed by its "play again", which every player
confirms (the next game of the series starts with the last one). ``--tiny``
plays a few games for seconds, to show the benchmark still runs. Without ``--db`` it uses
a fresh SQLite file in the working folder (the service's default location, so
the same disk) and deletes it afterwards; ``--db postgresql://...`` runs on a
PostgreSQL database (``python -m tests.pgcluster --durable`` starts a throwaway
one with the server's default durability: fsync and ``synchronous_commit=on``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from pathlib import Path

from ..selfplay import random_step
from ..store import is_postgres
from .facade import GameService
from .types import RUNNING, GameInfo


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    k = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[k]


async def _start(service: GameService, chat: int, players: int, seed: int) -> GameInfo:
    await service.create_lobby(chat, 1, "P1", f"bench {chat}")
    for k in range(2, players + 1):
        await service.join(chat, k, f"P{k}")
    return await service.start(chat, 1, seed=seed)


async def _again(service: GameService, info: GameInfo) -> GameInfo:
    """Play again: the first player opens the lobby, the others confirm; the last
    confirmation starts the next game of the series."""
    lobby = await service.play_again(info.game_id, info.seats[0].user_id)
    following = lobby
    for seat in info.seats[1:]:
        following = await service.confirm(lobby.game_id, seat.user_id)
    if following.status != RUNNING:
        raise RuntimeError(f"game {following.game_id} did not start after play again")
    return following


async def run(
    games: int, players: int, actions: int, db: str | Path, seed: int, parallel: bool = False
) -> dict[str, float]:
    rng = random.Random(seed)
    opened = time.perf_counter()
    service = await GameService.open(db)
    try:
        open_s = time.perf_counter() - opened
        base = -int(time.time() * 1000) % 1_000_000 * 100  # fresh chats on a kept database
        tables = [
            await _start(service, base - (k + 1), players, rng.randrange(1 << 30))
            for k in range(games)
        ]
        latencies: list[float] = []
        finished = 0

        versions = [t.version for t in tables]

        async def play(k: int, rng: random.Random, until: int) -> None:
            """Game ``k``'s next action; with ``parallel``, its actions (and its next
            games') until ``until`` are done in all games."""
            nonlocal finished
            while len(latencies) < until:
                info = tables[k]
                game = info.game
                assert game is not None
                seat, action = random_step(game, rng)
                t0 = time.perf_counter()
                result = await service.apply(
                    info.game_id, info.seats[seat].user_id, action, versions[k]
                )
                latencies.append(time.perf_counter() - t0)
                versions[k] = result.version
                if result.finished:
                    finished += 1
                    tables[k] = await _again(service, info)
                    versions[k] = tables[k].version
                if not parallel:
                    return

        began = time.perf_counter()
        if parallel:
            rngs = [random.Random(rng.randrange(1 << 30)) for _ in range(games)]
            await asyncio.gather(*(play(k, rngs[k], actions) for k in range(games)))
        else:
            while len(latencies) < actions:
                for k in range(games):
                    await play(k, rng, actions)
        wall = time.perf_counter() - began
    finally:
        await service.close()
    return _figures(latencies, finished, wall, open_s)


def _figures(latencies: list[float], finished: int, wall: float, open_s: float) -> dict[str, float]:
    latencies = sorted(latencies)
    return {
        "actions": len(latencies),
        "games_finished": finished,
        "wall_s": wall,
        "open_s": open_s,
        "actions_per_s": len(latencies) / wall,
        "apply_only_per_s": len(latencies) / sum(latencies),
        "p50_ms": _percentile(latencies, 0.50) * 1000,
        "p90_ms": _percentile(latencies, 0.90) * 1000,
        "p99_ms": _percentile(latencies, 0.99) * 1000,
        "p999_ms": _percentile(latencies, 0.999) * 1000,
        "max_ms": latencies[-1] * 1000,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m durak.service.bench", description=__doc__)
    parser.add_argument("--games", type=int, default=8, help="games played side by side")
    parser.add_argument("--players", type=int, default=4, help="players per game (2-6)")
    parser.add_argument("--actions", type=int, default=20_000, help="actions to apply")
    parser.add_argument(
        "--db", default=None, help="a SQLite file (kept) or a postgresql:// URL (its games kept)"
    )
    parser.add_argument(
        "--parallel", action="store_true", help="each game a task of its own, applies overlap"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--tiny", action="store_true", help="2 games of 3 players, 400 actions: a run of seconds"
    )
    args = parser.parse_args(argv)
    if args.tiny:
        args.games, args.players, args.actions = 2, 3, 400
    if not 2 <= args.players <= 6 or args.games < 1 or args.actions < 1:
        parser.error("need 1+ games, 2-6 players, 1+ actions")
    path: str | Path = args.db or Path(f"durak-bench-{os.getpid()}.sqlite3")
    if args.db is None and Path(path).exists():
        parser.error(f"{path} exists")
    where = path
    if is_postgres(path):
        from ..store.postgres import redact

        where = redact(str(path))
    try:
        figures = asyncio.run(
            run(args.games, args.players, args.actions, path, args.seed, args.parallel)
        )
    finally:
        if args.db is None:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
    mode = "in parallel" if args.parallel else "side by side, one apply at a time"
    print(f"games: {args.games} {mode}  players: {args.players}  db: {where}")
    print(
        f"durable actions: {figures['actions']:.0f}  in {figures['wall_s']:.2f} s"
        f"  (games finished: {figures['games_finished']:.0f}, open: {figures['open_s']:.3f} s)"
    )
    print(f"durable actions/s: {figures['actions_per_s']:.0f}  (wall, including choosing moves)")
    print(f"apply calls/s: {figures['apply_only_per_s']:.0f}  (time inside apply only)")
    print(
        f"apply latency ms: p50 {figures['p50_ms']:.3f}  p90 {figures['p90_ms']:.3f}"
        f"  p99 {figures['p99_ms']:.3f}  p99.9 {figures['p999_ms']:.3f}"
        f"  max {figures['max_ms']:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
