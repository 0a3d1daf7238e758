"""``blind`` (VARIANTS.md section 3): a player's own hand as face-down slots.

The engine keeps, per seat, the order of his slots (the dealt cards in deal
order, then each new card at the end: the cards taken back after a failed
answer, then the draws in draw order) and the cards of his own hand he has seen
face up (the trump card he drew, the two cards he took back). The rules of the
bout itself (one card against one) live in :mod:`.bout`; this module only
remembers what a panel shows, which a real player would remember by arranging
his cards.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ...actions import Action, Attack, Defend
from ...cards import Card, card_of

if TYPE_CHECKING:
    from .game import Podkidnoy


def start_slots(g: Podkidnoy, orders: Iterable[tuple[int, Iterable[int]]]) -> None:
    """The first slot order of each seat: ``(seat, card ids in order)``."""
    if g.slots is None:
        return
    for seat, ids in orders:
        g.slots[seat] = [c for c in ids if g.hands[seat] >> c & 1]


def dealt(g: Podkidnoy, ids: list[int], dealer: int) -> None:
    """Slots after the deal: each seat's cards in the order he was dealt them."""
    n, size = g.n, g.rules.hand_size
    start_slots(
        g,
        (
            (seat, [ids[k] for k in range(n * size) if (dealer + 1 + k) % n == seat])
            for seat in range(n)
        ),
    )


def taken_order(g: Podkidnoy) -> list[int] | None:
    """At the end of a bout: the cards the defender takes back, in slot order
    (the attack card, then his own), or ``None`` without ``blind``."""
    if g.slots is None:
        return None
    if not g.taking:
        return []
    order: list[int] = []
    for a, c in zip(g.table, g.covers, strict=True):
        order.append(a)
        if c >= 0:
            order.append(c)
    return order


def face_up_draws(g: Podkidnoy) -> int:
    """The cards of the stock that are drawn face up (so the drawer has seen
    them): the trump card, and ``trump_change``'s second trump card, which is
    shown to everyone when drawn (VARIANTS.md 1.3 and 3)."""
    up = 1 << g.trump_card if g.trump_card >= 0 else 0
    if g.second_trump >= 0:
        up |= 1 << g.second_trump
    return up


def arrived(g: Podkidnoy, taken: list[int], stock_before: list[int]) -> None:
    """After the refill: append each seat's new cards to his slots (the cards
    taken back, both seen, then his draws in draw order) and forget the cards
    that left his hand."""
    assert g.slots is not None
    drawn = stock_before[len(g.stock) :]
    drawn.reverse()  # the stock is drawn from its end
    up = face_up_draws(g) if drawn else 0
    taker = g.defender
    for seat in range(g.n):
        hand = g.hands[seat]
        new = taken if seat == taker else []
        came = sum(1 << c for c in new)  # the cards back from the table go to the end
        slots = [c for c in g.slots[seat] if hand >> c & 1 and not came >> c & 1]
        known = 0
        for c in slots:
            known |= 1 << c
        seen = g.seen[seat] & hand
        for c in (*new, *drawn):
            if hand >> c & 1 and not known >> c & 1:
                slots.append(c)
                known |= 1 << c
                if c in new or up >> c & 1:
                    seen |= 1 << c
        rest = hand & ~known
        while rest:  # nothing else arrives; kept so the slots always hold the hand
            low = rest & -rest
            slots.append(low.bit_length() - 1)
            rest ^= low
        g.slots[seat], g.seen[seat] = slots, seen


def slot_cards(g: Podkidnoy, seat: int) -> list[int]:
    """``seat``'s hand in slot order (the cards he holds now)."""
    assert g.slots is not None
    hand = g.hands[seat]
    return [c for c in g.slots[seat] if hand >> c & 1]


def own_slots(g: Podkidnoy, seat: int) -> tuple[Card | None, ...]:
    """What ``seat``'s panel shows of his own hand: a card only where he has seen it."""
    seen = g.seen[seat]
    return tuple(card_of(c) if seen >> c & 1 else None for c in slot_cards(g, seat))


def shown_hands(g: Podkidnoy, seat: int) -> tuple[tuple[int, tuple[Card, ...]], ...]:
    """The other hands, face up, each in its owner's slot order."""
    return tuple((s, tuple(card_of(c) for c in slot_cards(g, s))) for s in range(g.n) if s != seat)


def slot_action(g: Podkidnoy, seat: int, slot: int) -> Action:
    """The card in ``seat``'s slot ``slot``, as his opening or his answer now.
    ``ValueError`` for a slot he does not have; the action is verified, so a
    seat that may not play now gets the refusal :meth:`apply` would give."""
    if g.slots is None:
        raise ValueError("only blind has face-down slots")
    if not 0 <= seat < g.n:
        raise ValueError(f"there is no seat {seat}")
    cards = slot_cards(g, seat)
    if not 0 <= slot < len(cards):
        raise ValueError(f"{g.players[seat]} has no slot {slot}")
    card = card_of(cards[slot])
    action: Action
    if g.table and seat == g.defender:
        action = Defend(card_of(g.table[0]), card)
    else:
        action = Attack((card,))
    g.verify(seat, action)
    return action
