"""Random self-play: records for testing, and the engine's speed benchmark."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

from .actions import Action
from .games import Game
from .games.podkidnoy import game as game_module
from .records import export_record
from .rules import Rules

NAMES = ("A", "B", "C", "D", "E", "F", "G", "H")


def engine_kind() -> str:
    """Whether this process runs the pure-Python engine or a mypyc build of it."""
    return "pure Python" if (game_module.__file__ or "").endswith(".py") else "compiled (mypyc)"


def random_step(game: Game, rng: random.Random) -> tuple[int, Action]:
    """One uniformly random legal action among every seat that may act now."""
    moves = game.legal_by_seat()
    total = 0
    for _, acts in moves:
        total += len(acts)
    pick = int(rng.random() * total)
    for seat, acts in moves:
        if pick < len(acts):
            return seat, acts[pick]
        pick -= len(acts)
    raise AssertionError("nobody may act in a running game")


def play_random(game: Game, rng: random.Random, max_steps: int = 100_000) -> Game:
    for _ in range(max_steps):
        if game.result is not None:
            return game
        seat, action = random_step(game, rng)
        game.apply(seat, action)
    raise RuntimeError("a random game did not end")


def new_game(rules: Rules, players: int, seed: int) -> Game:
    return Game.from_seed(rules, NAMES[:players], seed)


def write_games(out: Path, games: int, players: tuple[int, int], seed: int, rules: Rules) -> int:
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    for i in range(games):
        k = rng.randint(*players)
        game_seed = rng.randrange(2**32)
        game = play_random(new_game(rules, k, game_seed), random.Random(game_seed))
        record = export_record(game, name=f"selfplay seed={seed} game={i} players={k}")
        path = out / f"game-{seed}-{i:05d}.json"
        path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return games


def bench(games: int, players: tuple[int, int], seed: int, rules: Rules) -> int:
    rng = random.Random(seed)
    steps = 0
    began = time.perf_counter()
    for _ in range(games):
        game = new_game(rules, rng.randint(*players), rng.randrange(2**32))
        play_random(game, rng)
        steps += len(game.history)
    took = time.perf_counter() - began
    print(
        f"games: {games}  players: {players[0]}-{players[1]}  rules: {rules.changed() or 'default'}"
    )
    print(f"engine: {engine_kind()}")
    print(f"seconds: {took:.3f}")
    print(f"games/s: {games / took:.0f}")
    print(f"actions/s: {steps / took:.0f}  (mean {steps / games:.1f} actions per game)")
    return 0
