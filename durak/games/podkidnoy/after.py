"""After a bout (RULES.md sections 5 and 6): the table goes to the discard or to
the defender, everyone refills, players with no cards leave, the game may end,
and the next bout begins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...rules import NO_PROGRESS, NO_PROGRESS_TAKES
from ...view import Outcome
from . import blind, bout, english

if TYPE_CHECKING:
    from .game import Podkidnoy


def close_bout(g: Podkidnoy) -> None:
    attacker, defender = g.attacker, g.defender
    before = (g.discard, len(g.stock), g.out.count(True))
    cards = 0
    for c in g.table:
        cards |= 1 << c
    for c in g.covers:
        if c >= 0:
            cards |= 1 << c
    taken = g.taking
    if taken:
        if g.varied and g.rules.partial_defence:
            cards = discard_covered(g)
        g.hands[defender] |= cards
    else:
        g.discard += len(g.table) + len(g.covers)
        g.discard_mask |= cards
        if g.rules.show_last_discard:
            note_discard(g, g.table, g.covers)
    arrived = blind.taken_order(g) if g.varied else None
    g.table, g.covers = [], []
    g.open = 0
    g.first_bout = False
    stock = list(g.stock) if arrived is not None else None
    refill(g, attacker, defender)
    if not g.stock:
        hands = g.hands
        for s in range(g.n):
            if not hands[s]:
                g.out[s] = True
    if stock is not None and arrived is not None:
        blind.arrived(g, arrived, stock)
    if finished(g):
        return
    if (g.discard, len(g.stock), g.out.count(True)) != before:
        g.stall = 0
    elif taken:
        g.stall += 1
        if g.stall >= NO_PROGRESS_TAKES and g.rules.no_progress_draw:
            english.draw(g, NO_PROGRESS)
            return
    if taken:
        nxt = g.next_active(defender)
    else:
        nxt = defender if not g.out[defender] else g.next_active(defender)
    if g.varied and g.rules.english:
        english.start_bout(g, nxt, defender if taken else -1)
        return
    bout.begin(g, nxt)


def discard_covered(g: Podkidnoy) -> int:
    """VARIANTS.md 4.1 (``partial_defence``): on a take the covered attack cards
    and their covers go to the discard; the rest (a mask) is picked up."""
    kept = 0
    for a, c in zip(g.table, g.covers, strict=True):
        if c >= 0:
            g.discard += 2
            g.discard_mask |= 1 << a | 1 << c
        else:
            kept |= 1 << a
    if g.rules.show_last_discard and kept.bit_count() < len(g.table):
        pairs = [(a, c) for a, c in zip(g.table, g.covers, strict=True) if c >= 0]
        note_discard(g, [a for a, _ in pairs], [c for _, c in pairs])
    return kept


def return_bout(g: Podkidnoy) -> None:
    """VARIANTS.md 6.2 (``return_last_card``): every attack card goes back to the
    attacker; nothing is discarded or taken; the defender opens against him.
    Nothing is left to draw and both still hold cards, so nobody leaves."""
    attacker, defender = g.attacker, g.defender
    for c in g.table:
        g.hands[attacker] |= 1 << c
    g.table, g.covers = [], []
    g.open = 0
    g.first_bout = False
    g.return_used = True
    bout.begin(g, defender)


def refill(g: Podkidnoy, attacker: int, defender: int) -> None:
    """The primary attacker draws up to 6 first, then every other player
    clockwise from him, the defender last; each draws his whole share."""
    hands, stock, n = g.hands, g.stock, g.n
    if not stock:
        return
    order = [attacker]
    for k in range(1, n):
        s = (attacker + k) % n
        if s != defender and not g.out[s]:
            order.append(s)
    if defender != attacker:
        order.append(defender)
    size = g.rules.hand_size
    for s in order:
        need = size - hands[s].bit_count()
        while need > 0 and stock:
            hands[s] |= 1 << stock.pop()
            need -= 1
    if not stock and g.second_trump >= 0:
        g.trump = g.second_trump >> 4  # trump_change: the second trump card was drawn


def note_discard(g: Podkidnoy, table: list[int], covers: list[int]) -> None:
    """``show_last_discard`` (VARIANTS.md section 10): the pairs of the latest bout
    that discarded any, in table order (covers ``-1`` for none)."""
    g.last_discard = tuple(zip(table, covers, strict=True))


def finished(g: Podkidnoy) -> bool:
    """End the game if at most one player (one team) still holds cards."""
    holding = [s for s in range(g.n) if not g.out[s]]
    if g.rules.teams:
        teams = {s % 2 for s in holding}
        if len(teams) > 1:
            return False
        losers = tuple(s for s in range(g.n) if teams and s % 2 in teams)
    else:
        if len(holding) > 1:
            return False
        losers = tuple(holding)
    g.result = Outcome(losers=losers, draw=not losers)
    g.attacker = g.defender = -1
    g.limit = 0
    g.throwers = g.passed = 0
    g.taking = False
    return True
