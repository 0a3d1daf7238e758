"""Exact play when two players are left and the stock is gone.

Then nothing is hidden: the other player's hand is every card that is not in
the observer's hand, on the table or in the (public) discard. The position is
a finite two-player game without chance (with two players cards cannot circle
for ever: every bout either discards cards or shrinks the attacker's hand), so
a depth-first search with a transposition table decides it, the heuristic's
move tried first, usually in a few hundred positions.
"""

from __future__ import annotations

import time

from ..actions import Action
from ..games.podkidnoy import Podkidnoy
from .moves import search_moves
from .policy import normal
from .seen import Seen
from .turns import next_seat

_Key = tuple[object, ...]


class OutOfBudget(Exception):
    """The search met its node or time limit before deciding the position."""


def _key(game: Podkidnoy) -> _Key:
    return (
        tuple(game.hands),
        tuple(game.table),
        tuple(game.covers),
        game.attacker,
        game.defender,
        game.taking,
        game.passed,
        game.primary_passed,
        game.limit,
        game.shown,
    )


class Solver:
    """Whether ``me`` can avoid losing from a position, by exhaustive search."""

    def __init__(self, me: int, max_nodes: int = 40_000, deadline: float | None = None) -> None:
        self.me = me
        self.max_nodes = max_nodes
        self.deadline = deadline
        self.nodes = 0
        self.memo: dict[_Key, bool] = {}

    def safe(self, game: Podkidnoy) -> bool:
        """``me`` avoids losing (wins or draws) against every defence."""
        result = game.result
        if result is not None:
            return self.me not in result.losers
        key = _key(game)
        known = self.memo.get(key)
        if known is not None:
            return known
        self.nodes += 1
        if self.nodes > self.max_nodes or (
            self.deadline is not None
            and self.nodes % 256 == 0
            and time.perf_counter() > self.deadline
        ):
            raise OutOfBudget
        seat = next_seat(game)
        mine = seat == self.me
        value = not mine  # mine: any safe move will do; theirs: every move must be safe
        moves = search_moves(game, seat)
        if len(moves) > 1:
            first = normal(Seen.of_game(game, seat))
            moves = [first, *(a for a in moves if a != first)]
        for action in moves:
            child = game.clone()
            child.apply(seat, action)
            if self.safe(child) == mine:
                value = mine
                break
        self.memo[key] = value
        return value

    def safe_moves(self, game: Podkidnoy, moves: list[Action]) -> list[Action]:
        """Those of ``me``'s ``moves`` (``me`` moves now) that avoid losing."""
        out = []
        for action in moves:
            child = game.clone()
            child.apply(self.me, action)
            if self.safe(child):
                out.append(action)
        return out
