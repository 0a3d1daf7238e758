"""``english`` (VARIANTS.md section 5): who opens a bout, and the draw by repetition.

When a bout is to start, the lead goes to the first active player clockwise
from the designated opener who can open with a pair (skipping the one who just
took); if nobody can, the designated opener leads one card. Before that, a
position already seen at the start of a bout ends the game as a draw (3a).
The opening's shape itself is checked in :mod:`.bout` (``check_opening``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...cards import RANK_LANES, ranks_of
from ...view import Outcome
from . import bout

if TYPE_CHECKING:
    from .game import Podkidnoy

#: ``end_reason`` of the draw by repetition.
REPETITION = "repetition"


def has_pair(hand: int) -> bool:
    """Two cards of one rank in ``hand``."""
    ranks = ranks_of(hand)
    while ranks:
        low = ranks & -ranks
        if (hand & low * RANK_LANES).bit_count() >= 2:
            return True
        ranks ^= low
    return False


def pair_opener(g: Podkidnoy, designated: int, taker: int) -> tuple[int, tuple[int, ...], bool]:
    """``(opener, seats passed over for having no pair, single lead)``: 5.2-5.3.
    A pair the bout's limit (with that opener's own defender) forbids is no pair."""
    passed: list[int] = []
    seat = designated
    for _ in range(g.n):
        if not g.out[seat] and seat != taker:
            defender = g.defender_for(seat)
            if defender >= 0 and has_pair(g.hands[seat]) and bout.limit_for(g, defender) >= 2:
                return seat, tuple(passed), False
            passed.append(seat)
        seat = (seat + 1) % g.n
    return designated, tuple(passed), True


def start_bout(g: Podkidnoy, designated: int, taker: int) -> None:
    """Begin the next bout under ``english``: a repeated position is a draw
    (3a); otherwise the pair rule picks the opener. ``g.attacker`` is then the
    opener after the pair rule, as RECORDS' ``attacker`` expects."""
    g.taker = taker
    window = (g.discard, len(g.stock))
    if window != g.window:  # a card left the hands for the discard or came from the stock
        g.positions.clear()
        g.window = window
    key = (designated, tuple(g.hands))
    if key in g.positions:
        draw_by_repetition(g)
        return
    g.positions.add(key)
    opener, g.no_pair, g.single_lead = pair_opener(g, designated, taker)
    bout.begin(g, opener)


def draw_by_repetition(g: Podkidnoy) -> None:
    """3a: the game ends at once as a draw; nobody leaves."""
    draw(g, REPETITION)


def draw(g: Podkidnoy, reason: str) -> None:
    """The game ends at once as a draw for ``reason``; nobody leaves (3a, and
    ``no_progress_draw``)."""
    g.result = Outcome(losers=(), draw=True)
    g.end_reason = reason
    g.attacker = g.defender = -1
    g.limit = 0
    g.throwers = g.passed = 0
    g.taking = False
    g.no_pair, g.single_lead = (), False
