"""A game to and from JSON, exactly, at any moment, whatever the game.

Each family writes its own snapshot (``Game.snapshot``); this module only picks
the family back from the snapshot's rules when restoring.
"""

from __future__ import annotations

from typing import Any

from .games import Game, restore


def to_snapshot(game: Game) -> dict[str, Any]:
    return game.snapshot()


def from_snapshot(data: Any) -> Game:
    """Restore a game; :class:`~durak.errors.MalformedRecord` if the snapshot is damaged."""
    return restore(data)
