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


#: A bound on the deals of one random sprint match: a knock-out repeats drawn
#: deals without a bound (VARIANTS.md 12.3), so a runaway is an error, not a hang.
MAX_DEALS = 1000


def play_match(first: Game, rng: random.Random) -> list[Game]:
    """Play ``first`` and, while its :meth:`~Game.next_game` says the match
    continues (VARIANTS.md ``sprint``), every following deal: the deals in order."""
    deals = [play_random(first, rng)]
    while True:
        series = deals[-1].next_game()
        if not series.continues:
            return deals
        if len(deals) >= MAX_DEALS:
            raise RuntimeError("a random match did not end")
        names = series.players or deals[-1].players
        game = Game.from_seed(first.rules, names, rng.randrange(2**32), series)
        deals.append(play_random(game, rng))


def write_games(out: Path, games: int, players: tuple[int, int], seed: int, rules: Rules) -> int:
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    written = 0
    for i in range(games):
        k = rng.randint(*players)
        game_seed = rng.randrange(2**32)
        if rules.sprint:  # one record a deal, the whole match
            deals = play_match(new_game(rules, k, game_seed), random.Random(game_seed))
            for d, game in enumerate(deals):
                name = f"selfplay seed={seed} game={i} deal={d} players={game.n}"
                path = out / f"game-{seed}-{i:05d}-{d:03d}.json"
                text = json.dumps(export_record(game, name=name), indent=1)
                path.write_text(text + "\n", encoding="utf-8")
            written += len(deals)
            continue
        game = play_random(new_game(rules, k, game_seed), random.Random(game_seed))
        record = export_record(game, name=f"selfplay seed={seed} game={i} players={k}")
        path = out / f"game-{seed}-{i:05d}.json"
        path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        written += 1
    return written


def bench(games: int, players: tuple[int, int], seed: int, rules: Rules) -> int:
    rng = random.Random(seed)
    steps = dealt = 0
    began = time.perf_counter()
    for _ in range(games):
        game = new_game(rules, rng.randint(*players), rng.randrange(2**32))
        if rules.sprint:
            deals = play_match(game, rng)
            dealt += len(deals)
            steps += sum(len(d.history) for d in deals)
            continue
        play_random(game, rng)
        steps += len(game.history)
    took = time.perf_counter() - began
    print(
        f"games: {games}  players: {players[0]}-{players[1]}  rules: {rules.changed() or 'default'}"
    )
    if rules.sprint:
        print(f"sprint: {games} matches, {dealt} deals ({dealt / took:.0f} deals/s)")
    print(f"engine: {engine_kind()}")
    print(f"seconds: {took:.3f}")
    print(f"games/s: {games / took:.0f}")
    print(f"actions/s: {steps / took:.0f}  (mean {steps / games:.1f} actions per game)")
    return 0
