"""``blind`` (VARIANTS.md section 3): the AI chooses a slot, not a card.

Under ``blind`` a seat's view has ``hand == ()`` and ``legal == ()``: it sees
its own hand as face-down slots (``view.slots``, a card only where it has seen
it) and the other hand face up (``view.shown_hands``). An agent therefore
answers with a :class:`SlotChoice`, the index of one of its slots, and the
caller turns it into the action with ``game.slot_action(seat, choice.slot)``
(:func:`durak.ai.to_action` does that for any choice). Nothing here reads a
hidden card: an unseen slot is chosen as "an unknown card", its chances
counted over every card the seat cannot place (the unseen pool).

The heuristic (``greedy``, ``easy``, ``normal``; ``hard`` plays it too: the
search deals hidden cards into other hands, and here the hidden cards are the
observer's own, so it falls back to this player):

- defending, the answer is accepted whether or not it beats; a failed answer
  takes both cards. So: the cheapest seen card that beats, else an unseen slot
  (it beats with the pool's odds), else the cheapest seen card;
- attacking, the card leaves the hand either way, and a failed answer gives
  the defender two cards and us the lead again. So: the card (a seen one, or
  an unseen slot at the pool's average) that the defender's hand beats least
  often, keeping the seen cards that beat best, ties to the cheapest.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..cards import card_of, deck_mask
from .masks import beaters_for, worth
from .observation import Observation


@dataclass(frozen=True, slots=True)
class SlotChoice:
    """A blind seat's decision: play the card in its slot ``slot`` (0-based, the
    order of ``view.slots``); ``game.slot_action(seat, slot)`` makes the action."""

    slot: int

    def __reduce__(self) -> tuple[object, ...]:
        return (SlotChoice, (self.slot,))


def is_blind(obs: Observation) -> bool:
    return obs.view.slots is not None


def random_slot(obs: Observation, rng: random.Random) -> SlotChoice:
    slots = obs.view.slots
    assert slots
    return SlotChoice(rng.randrange(len(slots)))


def unseen_pool(obs: Observation) -> int:
    """Every card the seat cannot place: not seen in its slots, not in the other
    hand, on the table, known discarded, or the trump card still under the stock."""
    view, know = obs.view, obs.knowledge
    placed = obs.hand | know.discarded | know.table
    for _, cards in view.shown_hands:
        for c in cards:
            placed |= 1 << c.id
    if know.trump_in_stock and know.trump_card >= 0:
        placed |= 1 << know.trump_card
    return deck_mask(obs.rules.deck) & ~placed


def choose_slot(obs: Observation) -> SlotChoice:
    """The blind heuristic (see the module docstring)."""
    view = obs.view
    slots = view.slots
    assert slots
    trump = int(view.trump)
    beaters = beaters_for(obs.rules, trump)
    unseen = [i for i, c in enumerate(slots) if c is None]
    pool = unseen_pool(obs)
    size = pool.bit_count()
    if view.table:  # the answer to the one attack card
        attack = view.table[0][0].id
        seen = [(i, c.id) for i, c in enumerate(slots) if c is not None]
        winners = [(worth(c, trump), i) for i, c in seen if beaters[attack] >> c & 1]
        if winners:
            return SlotChoice(min(winners)[1])
        if unseen:
            return SlotChoice(unseen[0])
        return SlotChoice(min((worth(c, trump), i) for i, c in seen)[1])
    other = 0
    for _, cards in view.shown_hands:
        for c in cards:
            other |= 1 << c.id
    held = max(other.bit_count(), 1)

    def beaten(card: int) -> float:
        """The share of the defender's cards that beat ``card``."""
        return (beaters[card] & other).bit_count() / held

    options: list[tuple[float, int, int]] = []
    for i, card in enumerate(slots):
        if card is not None:
            options.append((beaten(card.id), worth(card.id, trump), i))
    if unseen and size:
        chance = sum(beaten(c) for c in range(64) if pool >> c & 1) / size
        options.append((chance, 1 << 10, unseen[0]))  # ties go to a card we know
    elif unseen:
        options.append((1.0, 1 << 10, unseen[0]))
    return SlotChoice(min(options)[2])


def describe(obs: Observation) -> str:
    """For debugging: the seat's slots as it sees them."""
    slots = obs.view.slots or ()
    return " ".join("??" if c is None else str(card_of(c.id)) for c in slots)
