"""What an AI player may know: its seat's view plus the public history.

An :class:`Observation` is built only from ``game.view(seat)`` (its own hand,
counts of the others, the table) and a :class:`~durak.ai.public.PublicHistory`
(recorded from public views). Everything else an AI uses, where picked-up
cards are, the discard, who holds the trump card, is derived from those two
by :func:`track`, so two games that differ only in hidden cards give equal
observations. It holds only plain values: it pickles, for a worker process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import overload

from ..actions import Attack, Defend, ExchangeTrump, Pass, ShowTrump, Transfer
from ..cards import deck_mask, lowest_rank, suit_mask
from ..games import Game
from ..games.pile import PileGame
from ..games.podkidnoy import Podkidnoy
from ..games.podkidnoy.deal import OPENER_LOWEST_TRUMP, OPENER_NO_TRUMP
from ..rules import Rules
from ..view import View
from .pile import PileObservation, make_pile_observation
from .public import OPEN, TAKEN, PublicHistory, public_history


@dataclass(frozen=True, slots=True)
class Knowledge:
    """Where the public history places cards, and the bout's pass state."""

    known: tuple[int, ...]  # per seat: cards known to be in that hand (picked up, shown ...)
    discarded: int  # cards seen going to the discard
    trump_card: int  # the face-up trump card (-1 if none is known)
    trump_in_stock: bool  # it still lies under the stock
    in_stock: int  # cards that must still be in the stock (deduced from the deal)
    passed: int  # seat mask: throwers whose pass holds
    primary_passed: bool  # the primary attacker passed explicitly in this bout
    shown: int  # trumps shown for a transfer in this bout
    table: int  # every card on the table now


@dataclass(frozen=True, slots=True)
class Observation:
    """One seat's view, the public history, and what follows from them."""

    rules: Rules
    view: View
    history: PublicHistory
    knowledge: Knowledge

    @property
    def seat(self) -> int:
        assert self.view.seat is not None
        return self.view.seat

    @property
    def hand(self) -> int:
        """The seat's own hand as a card mask."""
        mask = 0
        for c in self.view.hand:
            mask |= 1 << c.id
        return mask


@overload
def observation_for(
    game: Podkidnoy, seat: int, history: PublicHistory | None = None
) -> Observation: ...


@overload
def observation_for(
    game: Game, seat: int, history: PublicHistory | None = None
) -> Observation | PileObservation: ...


def observation_for(
    game: Game, seat: int, history: PublicHistory | None = None
) -> Observation | PileObservation:
    """The observation of ``seat`` in a live game. It reads ``game.view(seat)``
    and the public history only (replayed from the game when not given; pass a
    :class:`~durak.ai.public.Recorder`'s history to skip the replay). A pile game
    gives a :class:`~durak.ai.pile.PileObservation`: its view alone."""
    if isinstance(game, PileGame):
        return make_pile_observation(game.rules, game.view(seat))
    if not isinstance(game, Podkidnoy):
        raise TypeError(f"no AI plays {game.rules.game}")
    if history is None:
        history = public_history(game)
    return make_observation(game.rules, game.view(seat), history)


def make_observation(rules: Rules, view: View, history: PublicHistory) -> Observation:
    if view.seat is None:
        raise ValueError("an observation belongs to a seat")
    if len(history.events) != view.moves:
        raise ValueError("the history does not match the view")
    return Observation(rules, view, history, track(rules, view, history))


def track(rules: Rules, view: View, history: PublicHistory) -> Knowledge:
    """Follow the public history to where it places cards now."""
    start = history.start
    n = len(start.counts)
    known = [0] * n
    trump_card, in_stock = start.trump_card, start.stock > 0
    if start.dealer_keeps_trump:
        known[start.dealer] |= 1 << trump_card
    if start.opener_card >= 0:
        known[start.opener] |= 1 << start.opener_card
    low_trump = int(view.trump) * 16 + int(lowest_rank(rules.deck))
    discarded, table, passed, shown = start.discarded, 0, 0, 0
    attacker, primary_passed = -1, False
    for ev in history.events:
        seat, action = ev.seat, ev.action
        if isinstance(action, Attack):
            if not table:
                attacker, passed, primary_passed, shown = seat, 0, False, 0
            for c in action.cards:
                known[seat] &= ~c.bit
                table |= c.bit
            passed = 0
        elif isinstance(action, Defend):
            known[seat] &= ~action.card.bit
            table |= action.card.bit
            passed = 0
        elif isinstance(action, Pass):
            passed |= 1 << seat
            primary_passed = primary_passed or seat == attacker
        elif isinstance(action, Transfer | ShowTrump):
            if isinstance(action, Transfer):
                known[seat] &= ~action.card.bit
                table |= action.card.bit
            else:
                known[seat] |= action.card.bit
                shown |= action.card.bit
            attacker, passed, primary_passed = seat, 0, False
        elif isinstance(action, ExchangeTrump):
            known[seat] = (known[seat] & ~(1 << low_trump)) | (1 << trump_card)
            trump_card = low_trump
        else:  # Take
            passed = 0
        if ev.closed != OPEN:
            if ev.closed == TAKEN:
                known[ev.taker] |= table
            else:
                discarded |= table
            table = passed = shown = 0
            primary_passed = False
            if ev.trump_to >= 0:
                known[ev.trump_to] |= 1 << trump_card
                in_stock = False
    must = 0
    if view.first_bout and in_stock:
        # Nobody has drawn yet: trumps the deal kept out of every hand are in the stock.
        trumps = suit_mask(int(view.trump)) & deck_mask(rules.deck)
        if start.opener_reason == OPENER_NO_TRUMP:
            must = trumps
        elif start.opener_reason == OPENER_LOWEST_TRUMP and start.opener_card >= 0:
            must = trumps & ((1 << start.opener_card) - 1)
        must &= ~(1 << trump_card)
    return Knowledge(
        known=tuple(known),
        discarded=discarded,
        trump_card=trump_card,
        trump_in_stock=in_stock and view.stock > 0,
        in_stock=must,
        passed=passed,
        primary_passed=primary_passed,
        shown=shown,
        table=table,
    )
