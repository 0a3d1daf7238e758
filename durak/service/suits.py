"""Own trumps' suit choice (PILE-GAMES.md 2.2) as the service keeps it: pure helpers.

Before the first deal of an own-trumps series each player chooses a suit, in turn
clockwise from the first dealer's left neighbour. The service runs this in the
lobby after Start: the lobby row keeps the seed (which fixes the first dealer and
so the order) and the choice so far as JSON in its otherwise unused ``snapshot``
column, so a restart mid-choice loses nothing. AI seats choose at once; a player
whose time runs out gets the first free suit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..games import Game
from ..rules import Rules
from .types import Seat, SuitChoice

#: The suits in the order "the first free one" is taken.
SUITS = ("S", "H", "D", "C")


def choosing_order(rules: Rules, names: Sequence[str], seed: str) -> tuple[int, ...]:
    """The seats in choosing order for the deal ``seed`` will give (empty: these rules
    choose no suits); the game interface knows the deal's first dealer."""
    return Game.choosing_order(rules, names, seed)


def first_free(choice: SuitChoice) -> str:
    return next(s for s in SUITS if s not in choice.chosen)


def with_ai_choices(choice: SuitChoice, seats: Sequence[Seat]) -> SuitChoice:
    """AI seats choose at once, the first free suit, while it is their turn."""
    while choice.seat is not None and seats[choice.seat].is_ai:
        choice = SuitChoice(choice.order, (*choice.chosen, first_free(choice)))
    return choice


def trumps_of(choice: SuitChoice, seats: Sequence[Seat]) -> dict[str, str]:
    """The finished choice as ``Series.trumps``: each player's name to his suit."""
    return {seats[seat].name: suit for seat, suit in zip(choice.order, choice.chosen, strict=True)}


def dumps(choice: SuitChoice) -> str:
    return json.dumps(
        {
            "suit_choice": {
                "order": list(choice.order),
                "chosen": list(choice.chosen),
                "deadline": choice.deadline,
            }
        },
        separators=(",", ":"),
    )


def loads(text: str | None) -> SuitChoice | None:
    """A lobby's stored choice; ``None`` if it has none (or it is unreadable)."""
    if not text:
        return None
    try:
        data: Any = json.loads(text)["suit_choice"]
        order = tuple(int(s) for s in data["order"])
        chosen = tuple(str(s) for s in data["chosen"])
        deadline = data.get("deadline")
    except (ValueError, KeyError, TypeError):
        return None
    if len(chosen) > len(order) or any(s not in SUITS for s in chosen):
        return None
    return SuitChoice(order, chosen, None if deadline is None else float(deadline))
