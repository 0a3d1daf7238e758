"""Road (ДУРАК ДОРОЖНЫЙ, PILE-GAMES.md section 4): the pile is cleared once it holds
a card per player in the game, and a take picks up only the bottom card."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .game import PileGame


def after_beat(g: PileGame, seat: int, in_game_before: int) -> None:
    """Rule 4.5: a pile of as many cards as players were in the game before this
    card (its player counted) goes to the discard and its player leads (his next
    player if he is out); otherwise the next player answers the new top card."""
    if len(g.pile) >= in_game_before:
        g.discard += len(g.pile)
        for i in g.pile:
            g.discard_mask |= 1 << i
        g.last_cleared = list(g.pile)
        g.pile.clear()
        g.turn = g.next_player(seat) if g.out[seat] else seat
        g.phase = "lead"
    else:
        g.turn, g.phase = g.next_player(seat), "answer"


def take(g: PileGame, seat: int) -> None:
    """Rule 4.6: the bottom card; the next player answers the same top card, or
    leads if the pile is now empty."""
    g.hands[seat] |= 1 << g.pile.pop(0)
    g.turn = g.next_player(seat)
    g.phase = "answer" if g.pile else "lead"
