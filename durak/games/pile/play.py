"""Playing a pile game: the one place that decides legality (``verify``), the
actions themselves, the legal list, and the end of the game (PILE-GAMES.md
sections 1, 2.6, 3.4, 4.4 and the refusals of 6.6).

What differs between the three games (what a take picks up, the refill, road's
clearing) lives in :mod:`.own_trumps`, :mod:`.piled` and :mod:`.road`; this module
only calls them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...actions import TAKE, Action, Beat, Lead, Take
from ...cards import BEATERS, card_of, ids_of
from ...errors import IllegalAction
from ...rules import NO_PROGRESS_TAKES
from ...view import Outcome
from . import own_trumps, piled, road

if TYPE_CHECKING:
    from .game import PileGame

LEAD, ANSWER = "lead", "answer"


def verify(g: PileGame, seat: int, action: Action) -> None:
    """Raise the refusal of PILE-GAMES.md 6.6, the first in its order that applies."""
    if g.result is not None:
        raise IllegalAction("game_over", "the game has ended")
    if not 0 <= seat < g.n or g.out[seat]:
        raise IllegalAction("not_your_turn", "this player has left the game")
    kind = type(action)
    if kind is not Lead and kind is not Beat and kind is not Take:
        raise IllegalAction(
            "variant_off", f"{action.words().split()[0]} is not played in pile games"
        )
    if seat != g.turn:
        raise IllegalAction("not_your_turn", f"{g.players[g.turn]} is on turn")
    if kind is Lead:
        if g.phase == ANSWER:
            raise IllegalAction("must_answer", "beat the top card or take first")
    elif g.phase == LEAD:
        raise IllegalAction("must_lead", "lead a card onto the pile")
    if kind is Take:
        return
    card = action.card  # type: ignore[union-attr]
    if not g.hands[seat] >> card.id & 1:
        raise IllegalAction("not_in_hand", f"{g.players[seat]} does not hold {card}")
    if kind is Beat and not BEATERS[g.suits[seat]][g.pile[-1]] >> card.id & 1:
        raise IllegalAction("cannot_beat", f"{card} does not beat {card_of(g.pile[-1])}")


def legal(g: PileGame, seat: int) -> list[Action]:
    """Every action ``seat`` may apply now, by the same tests as :func:`verify`:
    the cards in id order, then ``take``."""
    if g.result is not None or seat != g.turn:
        return []
    hand = g.hands[seat]
    if g.phase == LEAD:
        return [Lead(card_of(i)) for i in ids_of(hand)]
    acts: list[Action] = [
        Beat(card_of(i)) for i in ids_of(hand & BEATERS[g.suits[seat]][g.pile[-1]])
    ]
    acts.append(TAKE)
    return acts


def apply(g: PileGame, seat: int, action: Action) -> None:
    """Apply a decision and every automatic step after it; refuse and change nothing."""
    verify(g, seat, action)
    game = g.rules.game
    progress = (g.discard, len(g.stock), g.out.count(True))
    if type(action) is Take:
        if game == "road":
            road.take(g, seat)
        elif game == "piled":
            piled.take(g, seat)
        else:
            own_trumps.take(g, seat)
    else:
        card = action.card  # type: ignore[union-attr]
        before = g.in_game()
        g.hands[seat] &= ~(1 << card.id)
        g.pile.append(card.id)
        if game == "piled":
            piled.refill(g, seat)
        if not g.hands[seat]:
            g.out[seat] = True
        if type(action) is Lead:
            g.turn, g.phase = g.next_player(seat), ANSWER
        elif game == "road":
            road.after_beat(g, seat, before)
        elif g.out[seat]:
            g.turn, g.phase = g.next_player(seat), LEAD
        else:
            g.phase = LEAD
    g.history.append((seat, action))
    settle(g, seat if type(action) is not Lead else -1)
    if (g.discard, len(g.stock), g.out.count(True)) != progress:
        g.stall = 0
    elif type(action) is Take:
        g.stall += 1
        if g.stall >= NO_PROGRESS_TAKES and g.rules.no_progress_draw and g.result is None:
            g.result = Outcome((), True)  # RULES-NOTES.md 77: nobody can be made the durak
            g.turn, g.phase = -1, LEAD


def settle(g: PileGame, answerer: int = -1) -> None:
    """Rule 1.7: end the game when at most one player holds cards, unless that one
    is on turn to answer; ``answerer`` is the seat that has just answered (his
    answer as the last player ends the game)."""
    holders = [s for s in range(g.n) if g.hands[s]]
    if len(holders) > 1:
        return
    if not holders:
        g.result = Outcome((), True)
    else:
        last = holders[0]
        if last != answerer and last == g.turn and g.phase == ANSWER:
            return
        g.result = Outcome((last,), False)
    g.turn, g.phase = -1, LEAD
