"""The AI players: baselines (random, greedy) and the three levels.

An agent chooses from an :class:`~durak.ai.observation.Observation` and a
random generator, nothing else: it cannot see a hidden card. Every level plays
every option of RULES.md; a choice is always one of ``obs.view.legal``.
"""

from __future__ import annotations

import logging
import random
import time
from typing import Protocol

from ..actions import EXCHANGE_TRUMP, PASS, TAKE, Action, Attack, ShowTrump, Transfer
from . import pile, policy
from .determinize import Sampler
from .endgame import OutOfBudget, Solver
from .mcts import search
from .moves import search_moves
from .observation import Observation
from .pile import PileObservation
from .seen import Seen

log = logging.getLogger(__name__)

#: How many times a heuristic proposed an action the rules refuse (a bug: the
#: tests require it to stay 0); the agent then plays a safe legal action.
FALLBACKS = [0]

#: The hard search's time per decision: 300 ms measured as strong as 600 ms
#: against greedy (BENCHMARKS.md), and a bot's AI seat answers sooner.
BUDGET_MS = 300


class Agent(Protocol):
    name: str

    def choose(self, obs: Observation | PileObservation, rng: random.Random) -> Action: ...


def checked(action: Action, obs: Observation) -> Action:
    legal = obs.view.legal
    if action in legal:
        return action
    FALLBACKS[0] += 1
    log.error("AI proposed an illegal %s at seat %s; playing safe", action, obs.seat)
    for safe in (TAKE, PASS):
        if safe in legal:
            return safe
    return legal[0]


class RandomAgent:
    """Uniform over the legal actions: the weakest baseline."""

    name = "random"

    def choose(self, obs: Observation | PileObservation, rng: random.Random) -> Action:
        if isinstance(obs, PileObservation):
            return pile.choose(self.name, obs, rng)
        return rng.choice(obs.view.legal)


class GreedyAgent:
    """The greedy baseline of issue 6 (see :func:`durak.ai.policy.greedy`)."""

    name = "greedy"

    def choose(self, obs: Observation | PileObservation, rng: random.Random) -> Action:
        if isinstance(obs, PileObservation):
            return pile.choose(self.name, obs, rng)
        return checked(policy.greedy(Seen.of_observation(obs)), obs)


class EasyAgent:
    """Sensible but beatable: greedy play that uses the variants when it sees
    them, and now and then a careless move (any single-card action)."""

    name = "easy"
    careless = 0.2

    def choose(self, obs: Observation | PileObservation, rng: random.Random) -> Action:
        if isinstance(obs, PileObservation):
            return pile.choose(self.name, obs, rng)
        legal = obs.view.legal
        if rng.random() < self.careless:
            simple = [a for a in legal if not isinstance(a, Attack) or len(a.cards) == 1]
            return rng.choice(simple)
        if EXCHANGE_TRUMP in legal:
            return EXCHANGE_TRUMP
        transfers = [a for a in legal if isinstance(a, Transfer | ShowTrump)]
        if transfers and rng.random() < 0.5:
            return rng.choice(transfers)
        return checked(policy.greedy(Seen.of_observation(obs)), obs)


class NormalAgent:
    """A good heuristic player (:func:`durak.ai.policy.normal`): cheapest
    cover, keeps trumps, wise throw-ins, takes rather than spend dearly, counts
    cards once the stock is gone."""

    name = "normal"

    def choose(self, obs: Observation | PileObservation, rng: random.Random) -> Action:
        if isinstance(obs, PileObservation):
            return pile.choose(self.name, obs, rng)
        return checked(policy.normal(Seen.of_observation(obs)), obs)


class HardAgent:
    """Search (:func:`durak.ai.mcts.search`) over deals consistent with what the
    seat knows, with the normal player as the playout policy."""

    name = "hard"
    depth = 1  # tree levels below the root (1: flat UCB, measured best)
    exploration = 0.7  # UCB constant (results are 0..1)
    policy_opponents = False  # the others move by the heuristic in the tree too

    def __init__(self, budget_ms: int | None = BUDGET_MS, iterations: int | None = None) -> None:
        self.seconds = budget_ms / 1000 if budget_ms is not None else None
        self.iterations = iterations
        self.last_iterations = 0

    def choose(self, obs: Observation | PileObservation, rng: random.Random) -> Action:
        if isinstance(obs, PileObservation):
            return pile.choose(self.name, obs, rng)
        try:
            return checked(self._choose(obs, rng), obs)
        except ValueError:  # IllegalAction included: a deal the sampler got wrong (a bug)
            FALLBACKS[0] += 1
            log.exception("the hard search failed at seat %s; playing normal", obs.seat)
            return checked(policy.normal(Seen.of_observation(obs)), obs)

    def _choose(self, obs: Observation, rng: random.Random) -> Action:
        began = time.perf_counter()
        seconds = self.seconds
        if perfect_information(obs):
            deadline = began + seconds / 2 if seconds is not None else None
            nodes = 40_000 if self.iterations is None else 50 * self.iterations
            action = solve(obs, rng, deadline, nodes)
            if action is not None:
                self.last_iterations = 1
                return action
            if seconds is not None:
                seconds = max(0.05, seconds - (time.perf_counter() - began))
        result = search(
            obs,
            rng,
            seconds=seconds,
            iterations=self.iterations,
            exploration=self.exploration,
            depth=self.depth,
            policy_opponents=self.policy_opponents,
        )
        self.last_iterations = result.iterations
        return result.action


def perfect_information(obs: Observation) -> bool:
    """Two players left, the stock gone, the discard seen: nothing is hidden."""
    view = obs.view
    active = sum(not s.out for s in view.seats)
    return active == 2 and view.stock == 0 and view.discard == obs.knowledge.discarded.bit_count()


def solve(
    obs: Observation, rng: random.Random, deadline: float | None, max_nodes: int = 40_000
) -> Action | None:
    """A move that avoids losing against any defence, the heuristic's if it
    does; ``None`` if the search ran out of budget or every move loses (then
    the search for the likeliest mistake of the other player takes over)."""
    game = Sampler(obs)(rng)  # the only deal there is
    first = policy.normal(Seen.of_observation(obs))
    moves = [a for a in search_moves(game, obs.seat) if a in obs.view.legal]
    if first in obs.view.legal:
        moves = [first, *(a for a in moves if a != first)]
    if len(moves) == 1:
        return moves[0]
    solver = Solver(obs.seat, max_nodes, deadline)
    try:
        for action in moves:
            child = game.clone()
            child.apply(obs.seat, action)
            if solver.safe(child):
                return action
    except OutOfBudget:
        return None
    return None


LEVELS = ("easy", "normal", "hard")
AGENTS = ("random", "greedy", *LEVELS)


def make_agent(name: str, budget_ms: int | None = None, iterations: int | None = None) -> Agent:
    """An agent by name; ``budget_ms`` / ``iterations`` bound the hard search
    (default: :data:`BUDGET_MS`)."""
    if name == "random":
        return RandomAgent()
    if name == "greedy":
        return GreedyAgent()
    if name == "easy":
        return EasyAgent()
    if name == "normal":
        return NormalAgent()
    if name == "hard":
        if budget_ms is None and iterations is None:
            budget_ms = BUDGET_MS
        return HardAgent(budget_ms, iterations)
    raise ValueError(f"unknown AI {name!r}: one of {', '.join(AGENTS)}")


def decide(
    level: str,
    observation: Observation | PileObservation,
    seed: int,
    budget_ms: int | None = None,
    iterations: int | None = None,
) -> Action:
    """The bot's entry point: a pure function of picklable arguments, to run in
    a worker process. The same arguments give the same action, except that a
    time budget lets the hard search's depth depend on the machine."""
    return make_agent(level, budget_ms, iterations).choose(observation, random.Random(seed))
