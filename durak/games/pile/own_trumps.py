"""Own trumps (ВСЯК СВОЙ КОЗЫРЬ, PILE-GAMES.md section 2): each player's suit, the
six swap after the deal, and the take of 3 or 10 top cards (or the pile)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ...cards import ids_of

if TYPE_CHECKING:
    from .game import PileGame

SUIT_LETTERS = "SHDC"


def six(suit: int) -> int:
    """The id of the six of ``suit``."""
    return suit * 16 + 6


def take_count(g: PileGame, seat: int) -> int:
    """How many cards a take costs ``seat`` now (rule 2.7, D4: at most the pile)."""
    if g.rules.own_trumps_take == "pile":
        return len(g.pile)
    due = 10 if g.pile[-1] >> 4 == g.suits[seat] else 3
    return min(due, len(g.pile))


def take(g: PileGame, seat: int) -> None:
    """Rule 2.7: pick up the top cards; the taker's next player leads onto the rest."""
    k = take_count(g, seat)
    for i in g.pile[len(g.pile) - k :]:
        g.hands[seat] |= 1 << i
    del g.pile[len(g.pile) - k :]
    g.turn, g.phase = g.next_player(seat), "lead"


def assign_suits(choosing: Sequence[int], seed: int | str) -> dict[int, int]:
    """Suits when nobody chose (self-play, benchmarks): each player in the choosing
    order takes a random suit still free, drawn from the seed."""
    rng = random.Random(f"durak:suits:{seed}")
    free = [0, 1, 2, 3]
    suits: dict[int, int] = {}
    for seat in choosing:
        suits[seat] = free.pop(rng.randrange(len(free)))
    return suits


def receivers(g: PileGame) -> list[tuple[int, int]]:
    """Rule 2.4 (a): ``(receiver, giver)`` for every player who lacks his own six."""
    moves = []
    for seat in range(g.n):
        s = six(g.suits[seat])
        if not g.hands[seat] >> s & 1:
            giver = next(o for o in range(g.n) if g.hands[o] >> s & 1)
            moves.append((seat, giver))
    return moves


def swap(
    g: PileGame,
    draws: Mapping[int, int] | None,
    rng: random.Random | None,
) -> dict[int, int]:
    """Rule 2.4: every six to its owner first, then each giver draws one card from
    his receiver's hand as it is after the sixes moved (never the receiver's own
    six). ``draws`` (receiver -> card id, a record's ``swap_draws``) names the
    cards; without it ``rng`` draws them. Returns the draws made; ``ValueError``
    if ``draws`` does not fit."""
    moves = receivers(g)
    for receiver, giver in moves:
        s = 1 << six(g.suits[receiver])
        g.hands[giver] &= ~s
        g.hands[receiver] |= s
    if draws is not None and set(draws) != {r for r, _ in moves}:
        raise ValueError("swap_draws must name exactly the players who receive their six")
    made: dict[int, int] = {}
    for receiver, _ in moves:
        allowed = g.hands[receiver] & ~(1 << six(g.suits[receiver]))
        if draws is not None:
            card = draws[receiver]
            if not allowed >> card & 1:
                raise ValueError("a swap draw is not in the receiver's hand (or is his six)")
        else:
            assert rng is not None
            options = list(ids_of(allowed))
            card = options[rng.randrange(len(options))]
        made[receiver] = card
    for receiver, giver in moves:
        card = made[receiver]
        g.hands[receiver] &= ~(1 << card)
        g.hands[giver] |= 1 << card
    return made
