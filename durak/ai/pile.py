"""AI players for the pile games (PILE-GAMES.md): own trumps, piled, road.

A pile-game seat decides from its own :class:`~durak.view.PileView` only (its
hand, the pile, counts, the public suits): :class:`PileObservation` holds nothing
else, so two games that differ only in hidden cards give equal observations and
equal decisions.

The levels: ``normal`` is a heuristic (below); ``easy`` plays normal but now and
then a random legal action; ``greedy`` beats with its lowest beating card and
leads its lowest card; ``random`` is uniform. ``hard`` plays as ``normal``: there
is no search for the pile games yet.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..actions import TAKE, Action, Beat, Lead
from ..cards import Card
from ..rules import Rules
from ..view import PileView

#: A card of the seat's own suit is worth this many ranks more (it beats anything else).
TRUMP_BONUS = 9
#: easy: the share of random decisions.
CARELESS = 0.3


@dataclass(frozen=True, slots=True)
class PileObservation:
    """One seat's pile-game view (and the rules): everything its AI may use."""

    rules: Rules
    view: PileView

    def __reduce__(self) -> tuple[object, ...]:
        return (PileObservation, (self.rules, self.view))

    @property
    def seat(self) -> int:
        assert self.view.seat is not None
        return self.view.seat

    @property
    def my_suit(self) -> int:
        """The seat's trump suit: the game's, or in own trumps his own."""
        v = self.view
        suit = v.trumps[self.seat] if v.trumps else v.trump
        return -1 if suit is None else int(suit)


def make_pile_observation(rules: Rules, view: PileView) -> PileObservation:
    if view.seat is None:
        raise ValueError("an observation belongs to a seat")
    return PileObservation(rules, view)


def value(card: Card, suit: int) -> int:
    """How much a card is worth keeping: its rank, more if it is of the seat's suit."""
    return int(card.rank) + (TRUMP_BONUS if card.suit == suit else 0)


def next_in_game(view: PileView, seat: int) -> int:
    """The seat that answers a card led by ``seat`` (the next player still in)."""
    n = len(view.seats)
    for k in range(1, n + 1):
        s = (seat + k) % n
        if not view.seats[s].out:
            return s
    return seat


def normal(obs: PileObservation) -> Action:
    """The heuristic. Answering: beat with the cheapest beating card (every beat
    sheds a card, and in own trumps and piled the beater sheds a second one by
    leading), unless that would spend a high card of his own suit for a cheap
    take. Leading: in own trumps a card of the next player's own suit if he holds
    one (only a higher card of that suit beats it, and a take costs 10), the
    highest such; otherwise the lowest card not of his own suit."""
    view, suit = obs.view, obs.my_suit
    legal = view.legal
    if view.phase == "answer":
        beats = [a for a in legal if isinstance(a, Beat)]
        if not beats:
            return TAKE
        best = min(beats, key=lambda a: value(a.card, suit))
        cost = view.take_cost or 1
        hand = len(view.hand)
        if best.card.suit == suit and cost <= 1 and hand > 4 and int(best.card.rank) >= 12:
            return TAKE
        return best
    leads = [a for a in legal if isinstance(a, Lead)]
    if view.trumps:
        victim = next_in_game(view, obs.seat)
        theirs = view.trumps[victim]
        aimed = [a for a in leads if a.card.suit == theirs and theirs != suit]
        if aimed:
            return max(aimed, key=lambda a: int(a.card.rank))
    return min(leads, key=lambda a: (value(a.card, suit), int(a.card.suit)))


def greedy(obs: PileObservation) -> Action:
    """The baseline: the lowest-ranked beating card, else take; the lowest card to lead."""
    legal = obs.view.legal
    plays = [a for a in legal if isinstance(a, Beat | Lead)]
    if not plays:
        return TAKE
    return min(plays, key=lambda a: (int(a.card.rank), int(a.card.suit)))


def choose(level: str, obs: PileObservation, rng: random.Random) -> Action:
    """The decision of ``level`` (one of the agents' names) from a pile observation."""
    legal = obs.view.legal
    if not legal:
        raise ValueError("this seat has nothing to decide")
    if level == "random":
        return rng.choice(legal)
    if level == "easy" and rng.random() < CARELESS:
        # careless, but not idle: a card when he has one to play (a take moves
        # nothing out of play, and takes alone can go round for ever)
        plays = [a for a in legal if a != TAKE]
        return rng.choice(plays or legal)
    action = greedy(obs) if level == "greedy" else normal(obs)
    return action if action in legal else legal[0]
