"""The arena: many seeded games between given agents, with loss rates.

Seats rotate: each deal is played once per rotation of the agents around the
table, so no agent profits from a seat or from a lucky deal. A loss is being
the durak (with ``teams``, being in the losing team); a draw is nobody's loss.
Intervals are 95% Wilson score intervals over seat-games.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from ..games import Game, PileGame, Podkidnoy
from ..rules import Rules
from ..selfplay import engine_kind
from .agents import AGENTS, Agent, HardAgent, make_agent
from .observation import make_observation
from .pile import make_pile_observation
from .public import Recorder
from .turns import next_seat

#: Agents that never beat a card can pass cards round the table for ever once
#: the stock is gone; a game this long is stopped and reported as unfinished.
MAX_MOVES = 3000
#: The same for the pile games, whose games run longer (every take refills a hand).
PILE_MAX_MOVES = 20_000


@dataclass(frozen=True, slots=True)
class GameResult:
    index: int
    seats: tuple[str, ...]  # the agent at each seat
    losers: tuple[int, ...]
    draw: bool
    moves: int
    times: tuple[tuple[str, float, bool], ...]  # (agent, seconds, searched) per decision
    unfinished: bool = False  # stopped after MAX_MOVES


@dataclass(slots=True)
class Tally:
    seat_games: int = 0
    losses: int = 0
    times: list[float] = field(default_factory=list)
    searched: list[float] = field(default_factory=list)


def parse_agents(text: str) -> list[str]:
    """``hard,greedy*3`` -> ``["hard", "greedy", "greedy", "greedy"]``."""
    out: list[str] = []
    for part in text.split(","):
        name, _, count = part.strip().partition("*")
        if name not in AGENTS:
            raise ValueError(f"unknown agent {name!r}: one of {', '.join(AGENTS)}")
        try:
            k = int(count) if count else 1
        except ValueError:
            raise ValueError(f"bad count in {part!r}") from None
        if k < 1:
            raise ValueError(f"bad count in {part!r}")
        out += [name] * k
    return out


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion k/n."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def play_game(
    index: int,
    agents: Sequence[str],
    rules: Rules,
    seed: int,
    budget_ms: int | None = None,
    iterations: int | None = None,
) -> GameResult:
    """Game ``index`` of an arena: deal ``index // k`` with the agents rotated
    by ``index % k`` seats."""
    k = len(agents)
    deal, turn = divmod(index, k)
    seats = tuple(agents[(s + turn) % k] for s in range(k))
    players: list[Agent] = [make_agent(name, budget_ms, iterations) for name in seats]
    names = [f"{name}-{s}" for s, name in enumerate(seats)]
    if not rules.podkidnoy:
        return _play_pile_game(
            index, seats, players, Game.from_seed(rules, names, f"{seed}:{deal}"), seed
        )
    game = Podkidnoy.from_seed(rules, names, f"{seed}:{deal}")
    recorder = Recorder(game)
    rng = random.Random(f"arena:{seed}:{index}")
    times: list[tuple[str, float, bool]] = []
    while game.result is None and len(game.history) < MAX_MOVES:
        seat = next_seat(game)
        obs = make_observation(rules, game.view(seat), recorder.history())
        agent = players[seat]
        began = time.perf_counter()
        action = agent.choose(obs, rng)
        took = time.perf_counter() - began
        searched = isinstance(agent, HardAgent) and agent.last_iterations > 0
        times.append((seats[seat], took, searched))
        game.apply(seat, action)
        recorder.record(game, seat, action)
    if game.result is None:  # a cycle: counted as nobody's loss, and reported
        return GameResult(index, seats, (), True, len(game.history), tuple(times), True)
    return GameResult(
        index, seats, game.result.losers, game.result.draw, len(game.history), tuple(times)
    )


def _play_pile_game(
    index: int, seats: tuple[str, ...], players: list[Agent], game: Game, seed: int
) -> GameResult:
    """A pile game of the arena: one player on turn at a time, each deciding from
    his own pile view."""
    assert isinstance(game, PileGame)
    rng = random.Random(f"arena:{seed}:{index}")
    times: list[tuple[str, float, bool]] = []
    while game.result is None and len(game.history) < PILE_MAX_MOVES:
        seat = game.turn
        obs = make_pile_observation(game.rules, game.view(seat))
        began = time.perf_counter()
        action = players[seat].choose(obs, rng)
        times.append((seats[seat], time.perf_counter() - began, False))
        game.apply(seat, action)
    if game.result is None:
        return GameResult(index, seats, (), True, len(game.history), tuple(times), True)
    return GameResult(
        index, seats, game.result.losers, game.result.draw, len(game.history), tuple(times)
    )


_Chunk = tuple[list[int], list[str], Rules, int, int | None, int | None]


def _chunk(args: _Chunk) -> list[GameResult]:
    indices, agents, rules, seed, budget_ms, iterations = args
    return [play_game(i, agents, rules, seed, budget_ms, iterations) for i in indices]


def run(
    agents: list[str],
    games: int,
    seed: int,
    rules: Rules,
    budget_ms: int | None = None,
    iterations: int | None = None,
    jobs: int = 1,
) -> list[GameResult]:
    rules.check_players(len(agents))
    indices = list(range(games))
    if jobs <= 1:
        return _chunk((indices, agents, rules, seed, budget_ms, iterations))
    parts = [indices[j::jobs] for j in range(jobs)]
    with ProcessPoolExecutor(jobs) as pool:
        chunks = pool.map(_chunk, [(p, agents, rules, seed, budget_ms, iterations) for p in parts])
        results = [r for chunk in chunks for r in chunk]
    return sorted(results, key=lambda r: r.index)


def tally(results: list[GameResult]) -> dict[str, Tally]:
    out: dict[str, Tally] = {}
    for r in results:
        for s, name in enumerate(r.seats):
            t = out.setdefault(name, Tally())
            t.seat_games += 1
            t.losses += s in r.losers
        for name, took, searched in r.times:
            out[name].times.append(took)
            if searched:
                out[name].searched.append(took)
    return out


def _ms(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return (
        f"mean {1000 * statistics.fmean(ordered):.2f}  p50 {1000 * statistics.median(ordered):.2f}"
        f"  p95 {1000 * p95:.2f}  max {1000 * ordered[-1]:.1f}  ({len(ordered)} decisions)"
    )


def report(
    results: list[GameResult], agents: list[str], rules: Rules, seed: int, seconds: float
) -> str:
    games = len(results)
    draws = sum(r.draw for r in results)
    lines = [
        f"arena: {games} games  players: {len(agents)}  agents: {','.join(agents)}  seed: {seed}",
        f"rules: {rules.changed() or 'default'}  engine: {engine_kind()}  wall: {seconds:.1f} s",
        f"{'agent':<8} {'seat-games':>10} {'losses':>7} {'loss rate':>10}  95% CI",
    ]
    for name, t in tally(results).items():
        lo, hi = wilson(t.losses, t.seat_games)
        rate = t.losses / t.seat_games if t.seat_games else 0.0
        lines.append(
            f"{name:<8} {t.seat_games:>10} {t.losses:>7} {100 * rate:>9.1f}%"
            f"  [{100 * lo:.1f}%, {100 * hi:.1f}%]"
        )
    lo, hi = wilson(draws, games)
    lines.append(
        f"draws: {draws} of {games} games ({100 * draws / max(games, 1):.1f}%,"
        f" [{100 * lo:.1f}%, {100 * hi:.1f}%])"
    )
    seat_games = sum(len(r.seats) for r in results)
    lost = sum(len(r.losers) for r in results)
    unfinished = sum(r.unfinished for r in results)
    if unfinished:
        lines.append(f"unfinished (stopped at {MAX_MOVES} moves, counted as draws): {unfinished}")
    fair = 100 * lost / max(seat_games, 1)
    lines.append(f"mean loss rate of a seat (what equal players would get): {fair:.1f}%")
    lines.append("decision time (ms):")
    for name, t in tally(results).items():
        lines.append(f"  {name:<8} all: {_ms(t.times)}")
        if t.searched:
            lines.append(f"  {name:<8} searched: {_ms(t.searched)}")
    return "\n".join(lines)
