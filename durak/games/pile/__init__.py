"""The pile games of PILE-GAMES.md: own trumps, piled and road."""

from __future__ import annotations

from .deal import dealer_and_choosing_order
from .game import PileGame

__all__ = ["PileGame", "dealer_and_choosing_order"]
