"""Shared helpers for the pile-game tests."""

from __future__ import annotations

from typing import Any

from durak import Rules
from durak.actions import Action, action_from_words
from durak.games import Game
from durak.games.pile import PileGame

#: (rules, player counts) for every pile game the random tests sweep.
PILE_CASES: list[tuple[Rules, tuple[int, ...]]] = [
    (Rules(game="own_trumps"), (3, 4)),
    (Rules(game="own_trumps", own_trumps_take="pile"), (3, 4)),
    (Rules(game="piled"), (2, 3, 4, 5, 6)),
    (Rules(game="road"), (3, 4, 5, 6)),
]
NAMES = ("A", "B", "C", "D", "E", "F")


def start(game: str, players: str, start: dict[str, Any], **options: Any) -> PileGame:
    g = Game.from_start(Rules(game=game, **options), list(players), start)
    assert isinstance(g, PileGame)
    return g


def act(g: Game, text: str) -> None:
    """Apply ``"B beat 6H"``."""
    words = text.split()
    g.apply(g.seat_of(words[0]), action_from_words(words[1:]))


def action(text: str) -> Action:
    return action_from_words(text.split())


def hand(g: Game, name: str) -> list[str]:
    return sorted(str(c) for c in g.hand(g.seat_of(name)))


def cards(text: str) -> list[str]:
    return sorted(text.split())
