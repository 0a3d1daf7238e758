"""Every game the engine plays, behind one interface (:class:`Game`).

``Game.from_seed(rules, players, seed)`` deals the game ``rules.game`` names;
the families register themselves here.
"""

from __future__ import annotations

from .base import AFTER_DRAW, AFTER_LOSS, FIRST, SERIES, Game, Series, family, register, restore
from .pile import PileGame
from .podkidnoy import Podkidnoy

register(Podkidnoy)
register(PileGame)

__all__ = [
    "AFTER_DRAW",
    "AFTER_LOSS",
    "FIRST",
    "SERIES",
    "Game",
    "PileGame",
    "Podkidnoy",
    "Series",
    "family",
    "register",
    "restore",
]
