"""Information-set Monte Carlo tree search (single observer, SO-ISMCTS).

Each iteration deals the hidden cards anew (:class:`~durak.ai.determinize.Sampler`),
walks one tree shared by all deals, choosing by UCB among the actions that deal
allows (a node counts how often it was available), and plays the game out with
the normal heuristic for every seat. A node stores the result of the seat that
moved into it, so every seat in the tree plays for itself (or its team).

Deterministic given the seed when bounded by iterations only; a time budget
makes the iteration count, and so the choice, depend on the machine's speed.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

from ..actions import Action, Attack, Defend
from ..games.podkidnoy import Podkidnoy
from .determinize import Sampler
from .masks import worth
from .moves import search_moves
from .observation import Observation
from .policy import normal
from .seen import Seen
from .turns import next_seat


class Node:
    __slots__ = ("avail", "children", "seat", "visits", "wins")

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.visits = 0
        self.avail = 1
        self.wins = 0.0
        self.children: dict[tuple[int, Action], Node] = {}


@dataclass(frozen=True, slots=True)
class SearchResult:
    action: Action
    iterations: int
    seconds: float


def candidates(
    legal: tuple[Action, ...] | list[Action], table: list[int], covers: list[int], trump: int
) -> list[Action]:
    """The legal actions worth searching: single cards and whole same-rank groups
    (mixed throw-ins and partial groups add branches, rarely value), and covers
    of the hardest uncovered card only (the cover order does not matter when
    the defender answers before anyone throws in)."""
    hardest, hardest_worth = -1, -1
    for a, c in zip(table, covers, strict=True):
        if c < 0 and worth(a, trump) > hardest_worth:
            hardest, hardest_worth = a, worth(a, trump)
    biggest: dict[int, int] = {}
    for act in legal:
        if isinstance(act, Attack) and len(act.cards) > 1:
            rank = act.cards[0].rank
            if all(c.rank == rank for c in act.cards):
                biggest[rank] = max(biggest.get(rank, 0), len(act.cards))
    out: list[Action] = []
    for act in legal:
        if isinstance(act, Attack):
            cards = act.cards
            if len(cards) > 1 and biggest.get(cards[0].rank) != len(cards):
                continue
            if len(cards) > 1 and any(c.rank != cards[0].rank for c in cards):
                continue
        elif isinstance(act, Defend) and act.attack.id != hardest:
            continue
        out.append(act)
    return out


def _ordered(first: Action, acts: list[Action]) -> list[Action]:
    """The heuristic's choice first: it is tried first and kept on ties."""
    if first in acts:
        return [first, *(a for a in acts if a != first)]
    return [first, *acts]


#: A playout longer than this is caught in a cycle (with the stock gone, cards
#: nobody can beat may circle the table forever); its fates count as open.
PLAYOUT_STEPS = 600


def playout(game: Podkidnoy, root: int) -> list[float]:
    """Play on with the normal heuristic for every seat until ``root``'s fate is
    known; the result of every seat: 1 safe, 0 lost, between for the open fates."""
    cut = not game.rules.teams and game.n > 2
    out = game.out
    steps = 0
    while not game.over and steps < PLAYOUT_STEPS:
        if cut and out[root]:
            break
        seat = next_seat(game)
        game.apply(seat, normal(Seen.of_game(game, seat)))
        steps += 1
    n = game.n
    result = game.result
    if result is not None:
        losers = result.losers
        return [0.0 if s in losers else 1.0 for s in range(n)]
    active = n - sum(out)
    share = 1.0 - 1.0 / active
    return [1.0 if out[s] else share for s in range(n)]


def search(
    obs: Observation,
    rng: random.Random,
    seconds: float | None = 0.6,
    iterations: int | None = None,
    exploration: float = 0.7,
    depth: int = 3,
    policy_opponents: bool = False,
) -> SearchResult:
    """The action with the most visits after the budget (seconds and/or
    iterations, whichever ends first). With ``policy_opponents`` the other
    seats move by the heuristic inside the tree too (their moves only branch
    it), and ``depth`` counts the observer's own decisions."""
    began = time.perf_counter()
    view, me = obs.view, obs.seat
    table = [a.id for a, _ in view.table]
    covers = [c.id if c is not None else -1 for _, c in view.table]
    trump = int(view.trump)
    first = normal(Seen.of_observation(obs))
    acts = candidates(view.legal, table, covers, trump)
    root_acts = _ordered(first, acts) if first in view.legal else acts
    if len(root_acts) <= 1:
        return SearchResult(root_acts[0], 0, time.perf_counter() - began)
    if seconds is None and iterations is None:
        raise ValueError("a search needs a time or an iteration budget")
    deadline = began + seconds if seconds is not None else math.inf
    limit = iterations if iterations is not None else 1 << 62
    sampler = Sampler(obs)
    root = Node(me)
    log, sqrt = math.log, math.sqrt
    done = 0
    while done < limit and (done == 0 or time.perf_counter() < deadline):
        game = sampler(rng)
        node, seat, choices, path = root, me, root_acts, []
        level = 0
        while True:
            children = node.children
            fresh: Action | None = None
            for a in choices:
                child = children.get((seat, a))
                if child is None:
                    if fresh is None:
                        fresh = a
                else:
                    child.avail += 1
            if fresh is not None:
                child = children[seat, fresh] = Node(seat)
                game.apply(seat, fresh)
                path.append(child)
                break
            best, best_value = choices[0], -1.0
            for a in choices:
                child = children[seat, a]
                value = child.wins / child.visits + exploration * sqrt(
                    log(child.avail) / child.visits
                )
                if value > best_value:
                    best, best_value = a, value
            child = children[seat, best]
            game.apply(seat, best)
            path.append(child)
            node = child
            level += 1
            if game.over or level >= depth:
                break
            seat = next_seat(game)
            if policy_opponents:
                while seat != me and not game.over:
                    act = normal(Seen.of_game(game, seat))
                    nxt = node.children.get((seat, act))
                    if nxt is None:
                        nxt = node.children[seat, act] = Node(seat)
                    game.apply(seat, act)
                    node = nxt
                    seat = next_seat(game)
                if game.over:  # (not game.result: mypyc would keep it narrowed)
                    break
            choices = search_moves(game, seat)
        rewards = playout(game, me)
        for child in path:
            child.visits += 1
            child.wins += rewards[child.seat]
        done += 1
    best_act, best_key = root_acts[0], (-1, -1.0)
    for a in root_acts:
        child = root.children.get((me, a))
        if child is not None:
            key = (child.visits, child.wins / child.visits)
            if key > best_key:
                best_act, best_key = a, key
    return SearchResult(best_act, done, time.perf_counter() - began)
