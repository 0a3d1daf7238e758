"""The public history of a game: what everyone at the table saw happen.

Every decision is public in durak (cards are played face up, takes and passes
are announced), but the engine's action log does not say when a bout closed,
who picked the table up, or who drew the face-up trump card. Those moments are
public too, so a :class:`Recorder` notes them after each action, reading only
``game.view(None)`` (the public view): nothing here can see a hidden card.

VARIANTS.md: a bout may also close by ``return_card`` (the cards go back to
the attacker), by ``blind``'s failed answer (the defender takes both cards:
seen as a close that discarded nothing), and a ``partial_defence`` take
discards the covered pairs (the tracker applies that rule). Who drew
``trump_change``'s second trump card is noted like the trump card's drawer.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..actions import Action, Attack, Defend, ReturnCard, Take, Transfer
from ..games import Game, Podkidnoy
from ..records import game_from_record
from ..view import View

#: ``PublicEvent.closed`` values (RETURNED: ``return_card``, back to the attacker).
OPEN, BEATEN, TAKEN, RETURNED = 0, 1, 2, 3


@dataclass(frozen=True, slots=True)
class PublicStart:
    """The public facts of the game's start."""

    counts: tuple[int, ...]  # cards in each hand
    stock: int  # cards in the stock, the face-up trump card included
    discard: int  # cards already discarded (a position may start with some)
    discarded: int  # the mask of those that are known (all were played face up)
    trump_card: int  # card id of the face-up trump card, -1 if none is known
    dealer: int  # -1 for a game set up from a position
    opener: int
    opener_reason: str
    opener_card: int  # the announced lowest trump, -1 if none

    @classmethod
    def of(cls, view: View, discarded: int = 0) -> PublicStart:
        assert view.seat is None, "the public start is read from the public view"
        return cls(
            counts=tuple(s.cards for s in view.seats),
            stock=view.stock,
            discard=view.discard,
            discarded=discarded,
            trump_card=view.trump_card.id if view.trump_card is not None else -1,
            dealer=view.dealer if view.dealer is not None else -1,
            opener=view.opener if view.opener is not None else -1,
            opener_reason=view.opener_reason,
            opener_card=view.opener_card.id if view.opener_card is not None else -1,
        )

    @property
    def dealer_keeps_trump(self) -> bool:
        """A deal that used the whole deck: the dealer's last card shows trump
        and stays in his hand (RULES.md section 2)."""
        return self.stock == 0 and self.dealer >= 0 and self.trump_card >= 0


@dataclass(frozen=True, slots=True)
class PublicEvent:
    """One applied action and the public consequences it had."""

    seat: int
    action: Action
    closed: int = OPEN  # OPEN, BEATEN or TAKEN: did this action end the bout?
    taker: int = -1  # who picked the table up (closed == TAKEN)
    trump_to: int = -1  # who drew the face-up trump card in the refill that followed
    second_to: int = -1  # trump_change: who drew the second trump card (it is shown)


@dataclass(frozen=True, slots=True)
class PublicHistory:
    """The start and every action so far, with their public consequences."""

    start: PublicStart
    events: tuple[PublicEvent, ...]


class Recorder:
    """Keeps the public history of one live game; call :meth:`record` after
    every ``game.apply``. One recorder serves every seat: the history is public."""

    def __init__(self, game: Podkidnoy) -> None:
        view = game.view(None)
        # The view shows the discard as a count; which cards a position's discard
        # holds is public too (each was played face up), so it is read as well.
        self.start = PublicStart.of(view, game.discard_mask)
        self.events: list[PublicEvent] = []
        self._last = view
        self._blind = game.rules.blind

    def record(self, game: Podkidnoy, seat: int, action: Action) -> PublicEvent:
        before, after = self._last, game.view(None)
        if after.moves != before.moves + 1:
            raise ValueError("the recorder missed an action")
        event = _event(before, after, seat, action, self._blind)
        self.events.append(event)
        self._last = after
        return event

    def history(self) -> PublicHistory:
        return PublicHistory(self.start, tuple(self.events))


def public_history(game: Game) -> PublicHistory:
    """The public history of ``game``, rebuilt by replaying its actions from its
    start: for a caller that did not keep a :class:`Recorder` (a game restored
    from a snapshot). Only the public view of each replayed step is read."""
    replay = game_from_record(
        {
            "format": "durak-record/1",
            "rules": game.rules.to_record(),
            "players": list(game.players),
            "start": game.start,
        }
    )
    if not isinstance(replay, Podkidnoy):
        raise ValueError(f"no public history for {game.rules.game}")
    recorder = Recorder(replay)
    for seat, action in game.history:
        replay.apply(seat, action)
        recorder.record(replay, seat, action)
    return recorder.history()


def _played(action: Action) -> int:
    if isinstance(action, Attack):
        return len(action.cards)
    return 1 if isinstance(action, Defend | Transfer) else 0


def _event(before: View, after: View, seat: int, action: Action, blind: bool) -> PublicEvent:
    if not before.table or after.table:
        return PublicEvent(seat, action)  # an opening, a trump exchange, or the bout goes on
    assert before.defender is not None and before.attacker is not None
    if isinstance(action, ReturnCard):
        return PublicEvent(seat, action, RETURNED, before.attacker)
    taken = (
        before.taking
        or isinstance(action, Take)
        or (blind and after.discard == before.discard)  # a failed answer: he takes both
    )
    taker = before.defender if taken else -1
    trump_to = second_to = -1
    if before.stock and (before.trump_card_in_stock or before.second_trump_hidden):
        counts = [s.cards for s in before.seats]
        counts[seat] -= _played(action)
        if taken:
            counts[taker] += _taken(before, action, after)
        drawers = _drawers(before, counts, after)
        bottom = 0
        if before.second_trump_hidden:
            second_to = drawers.get(0, -1)
            bottom = 1
        if before.trump_card_in_stock:
            trump_to = drawers.get(bottom, -1)
    return PublicEvent(seat, action, TAKEN if taken else BEATEN, taker, trump_to, second_to)


def _taken(before: View, action: Action, after: View) -> int:
    """How many cards the taker picked up: the whole table, or under
    ``partial_defence`` the uncovered attack cards (the covered pairs went to
    the discard, which is public: the discard grew by them)."""
    table = sum(1 + (c is not None) for _, c in before.table) + _played(action)
    return table - (after.discard - before.discard)


def _drawers(before: View, counts: list[int], after: View) -> dict[int, int]:
    """Who drew the stock's bottom cards in the refill (position 0 is the last
    card drawn): the draw order is the attacker first, then clockwise, the
    defender last (RULES.md section 5); each seat's draw is read off the counts
    after the refill."""
    assert before.attacker is not None and before.defender is not None
    n, attacker, defender = len(counts), before.attacker, before.defender
    order = [attacker]
    order += [
        s
        for s in ((attacker + k) % n for k in range(1, n))
        if s != defender and not before.seats[s].out
    ]
    if defender != attacker:
        order.append(defender)
    stock = before.stock
    out: dict[int, int] = {}
    for s in order:
        draw = max(after.seats[s].cards - counts[s], 0)
        for _ in range(min(draw, stock)):
            stock -= 1
            if stock <= 1:
                out[stock] = s
    return out
