"""Does every game end? Self-play of every game family with the AI levels, with
players the turn clock plays (``Game.timeout_action``), with both at one table,
and with random players, counting the actions until the end (issue 27 item 6).

    python -m durak.ai.endings [--games 20] [--players 4] [--cap 20000]

Podkidnoy lets several seats act at once (the throwers and the defender); the bot
acts for whichever seat is ready first, so each step here picks a random seat
among those who may act, as the bot's AI pool and turn clock would. A game not
over after ``--cap`` actions is counted as unfinished: the figure that matters is
that there are none, and the longest game. The hard level searches a fixed
number of iterations (``--iterations``), not a time budget, so the run is
reproducible and its length does not depend on the machine.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..games import Game, Podkidnoy
from ..rules import NO_PROGRESS, Rules
from .agents import Agent, make_agent, to_action
from .observation import make_observation
from .pile import make_pile_observation
from .public import Recorder

#: Every family a group can choose: the game list's entries and the options that
#: change play on top of classic (VARIANTS.md), and the pile games.
FAMILIES: dict[str, dict[str, object]] = {
    "classic": {},
    "perevodnoy": {"transfer": True},
    "sprint": {"sprint": True},
    "blind": {"blind": True},
    "english": {"english": True},
    "damka": {"damka": True},
    "japanese": {"japanese": "H"},
    "trump_change": {"trump_change": True},
    "partial_defence": {"partial_defence": True},
    "return_last_card": {"return_last_card": True},
    "cap_5": {"bout_limit": 5},
    "own_trumps": {"game": "own_trumps"},
    "own_trumps_pile": {"game": "own_trumps", "own_trumps_take": "pile"},
    "piled": {"game": "piled"},
    "road": {"game": "road"},
}

#: Who sits at the table: one kind for every seat, or the AI and the clock in turn.
TABLES = ("easy", "normal", "hard", "timeout", "normal+timeout", "random")


@dataclass(frozen=True, slots=True)
class Ending:
    over: bool
    actions: int
    no_progress: bool  # the draw of ``no_progress_draw``


def seats_of(table: str, n: int) -> list[str]:
    if table == "normal+timeout":
        return ["normal" if s % 2 == 0 else "timeout" for s in range(n)]
    return [table] * n


def play(rules: Rules, table: str, n: int, seed: int, cap: int, iterations: int) -> Ending:
    """One game from ``seed`` with ``table``'s players, to its end or ``cap`` actions."""
    kinds = seats_of(table, n)
    agents: list[Agent | None] = [
        None if k == "timeout" else make_agent(k, None, iterations if k == "hard" else None)
        for k in kinds
    ]
    game = Game.from_seed(rules, [f"P{s}" for s in range(n)], f"endings:{seed}")
    rng = random.Random(seed)
    recorder = Recorder(game) if isinstance(game, Podkidnoy) else None
    while game.result is None and len(game.history) < cap:
        seat = rng.choice(game.actors())
        agent = agents[seat]
        if agent is None:
            action = game.timeout_action(seat)
        else:
            view = game.view(seat)
            obs = (
                make_observation(rules, view, recorder.history())  # type: ignore[arg-type]
                if recorder is not None
                else make_pile_observation(rules, view)  # type: ignore[arg-type]
            )
            action = to_action(game, seat, agent.choose(obs, rng))
        game.apply(seat, action)
        if recorder is not None:
            recorder.record(game, seat, action)  # type: ignore[arg-type]
    reason = getattr(game.view(None), "end_reason", None)
    return Ending(game.result is not None, len(game.history), reason == NO_PROGRESS)


def players_for(rules: Rules, wanted: int) -> int:
    low, high = rules.player_range()
    return min(max(wanted, low), high)


def run(
    families: Sequence[str],
    tables: Sequence[str],
    games: int,
    players: int,
    cap: int,
    iterations: int,
    draw: bool = True,
) -> int:
    print(f"games: {games} a row  players: {players} (or the family's nearest)  cap: {cap}")
    print(f"no_progress_draw: {'on' if draw else 'off'}")
    print(f"hard: {iterations} search iterations a decision")
    print(f"{'family':17}{'players':17}{'n':>3}{'ended':>9}{'longest':>9}{'mean':>7}"
          f"{'no-progress draws':>19}{'s':>7}")  # fmt: skip
    unfinished = longest = 0
    for family in families:
        rules = Rules.from_dict({**FAMILIES[family], "no_progress_draw": draw})
        n = players_for(rules, players)
        for table in tables:
            began = time.perf_counter()
            ends = [play(rules, table, n, seed, cap, iterations) for seed in range(games)]
            over = sum(e.over for e in ends)
            most = max(e.actions for e in ends)
            mean = sum(e.actions for e in ends) / len(ends)
            stalls = sum(e.no_progress for e in ends)
            unfinished += games - over
            if table != "random":
                longest = max(longest, most)
            took = time.perf_counter() - began
            print(f"{family:17}{table:17}{n:>3}{f'{over}/{games}':>9}{most:>9}{mean:>7.0f}"
                  f"{stalls:>19}{took:>7.1f}", flush=True)  # fmt: skip
    print(f"unfinished: {unfinished}; the longest game with AI or clock players: {longest} actions")
    return 1 if unfinished else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m durak.ai.endings", description=__doc__)
    parser.add_argument("--games", type=int, default=20, help="games per family and table")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--cap", type=int, default=20_000, help="actions before giving up")
    parser.add_argument("--iterations", type=int, default=30, help="hard: search iterations")
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument(
        "--without-draw", action="store_true", help="no_progress_draw off: what the rule ends"
    )
    args = parser.parse_args(argv)
    families = [f for f in args.families.split(",") if f]
    tables = [t for t in args.tables.split(",") if t]
    for name in families:
        if name not in FAMILIES:
            parser.error(f"unknown family {name!r}: one of {', '.join(FAMILIES)}")
    for name in tables:
        if name not in TABLES:
            parser.error(f"unknown table {name!r}: one of {', '.join(TABLES)}")
    if args.games < 1 or args.cap < 1 or args.iterations < 1:
        parser.error("--games, --cap and --iterations must be positive")
    draw = not args.without_draw
    return run(families, tables, args.games, args.players, args.cap, args.iterations, draw)


if __name__ == "__main__":
    raise SystemExit(main())
