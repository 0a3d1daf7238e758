"""Who moves next when several seats may act at once.

The engine lets the defender and the throwers act in any order (at a real
table, whoever is quicker). Simulations, the arena and terminal play need one
order; this one is how a calm table plays: the defender answers first, then the
throwers in priority order, the primary attacker first and then clockwise.
"""

from __future__ import annotations

from ..games.podkidnoy import Podkidnoy


def next_seat(game: Podkidnoy) -> int:
    """The seat that moves next; -1 once the game is over."""
    if game.result is not None:
        return -1
    if not game.table:
        return game.attacker
    if not game.taking and game.open:
        return game.defender
    n, attacker = game.n, game.attacker
    best, best_key = -1, n
    for s in game.actors():
        key = (s - attacker) % n
        if key < best_key:
            best, best_key = s, key
    return best
