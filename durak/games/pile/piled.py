"""Piled (ДУРАК НАВАЛЕННЫЙ, PILE-GAMES.md section 3): hands of 3 refilled from a
stock after every lead and beat, the first lead by the lowest trump, and the
take of the whole pile."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...cards import suit_mask

if TYPE_CHECKING:
    from .game import PileGame

HAND = 3


def refill(g: PileGame, seat: int) -> None:
    """Rule 3.5: the player who has just played draws up to 3 (the trump card last:
    it is ``stock[0]``)."""
    stock = g.stock
    while stock and g.hands[seat].bit_count() < HAND:
        g.hands[seat] |= 1 << stock.pop()


def take(g: PileGame, seat: int) -> None:
    """Rule 3.6: the whole pile; the taker's next player leads onto the empty pile."""
    for i in g.pile:
        g.hands[seat] |= 1 << i
    g.pile.clear()
    g.turn, g.phase = g.next_player(seat), "lead"


def lowest_trump_holder(g: PileGame) -> int:
    """Rule 3.3: the seat holding the lowest trump, or -1 if no hand holds one."""
    best = holder = -1
    trumps = suit_mask(g.trump)
    for seat in range(g.n):
        mine = g.hands[seat] & trumps
        if mine:
            card = (mine & -mine).bit_length() - 1
            if best < 0 or card < best:
                best, holder = card, seat
    return holder
