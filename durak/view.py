"""What one seat may see of a game, and how a game ended."""

from __future__ import annotations

from dataclasses import dataclass, fields

from .actions import Action
from .cards import Card, Suit


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: a draw, or the losing seat(s) (a whole team with ``teams``)."""

    losers: tuple[int, ...] = ()
    draw: bool = False

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle through the constructor: a mypyc-compiled frozen dataclass
        cannot be restored field by field (AI decisions run in worker processes)."""
        return (Outcome, (self.losers, self.draw))

    @property
    def loser(self) -> int | None:
        """The durak; ``None`` for a draw (and for a team loss, see ``losers``)."""
        return self.losers[0] if len(self.losers) == 1 else None


@dataclass(frozen=True, slots=True)
class SeatInfo:
    seat: int
    name: str
    cards: int
    out: bool
    team: int | None

    def __reduce__(self) -> tuple[object, ...]:
        return (SeatInfo, (self.seat, self.name, self.cards, self.out, self.team))


@dataclass(frozen=True, slots=True)
class View:
    """A game as one seat sees it: its own hand, and only counts of the others.

    ``seat`` is ``None`` (and ``hand`` empty) for the public view, which is what
    a group message may show.
    """

    seat: int | None
    hand: tuple[Card, ...]
    legal: tuple[Action, ...]
    seats: tuple[SeatInfo, ...]
    trump: Suit
    trump_card: Card | None
    trump_card_in_stock: bool
    stock: int
    discard: int
    table: tuple[tuple[Card, Card | None], ...]
    attacker: int | None
    defender: int | None
    throwers: tuple[int, ...]
    limit: int | None
    taking: bool
    waiting_for: tuple[int, ...]
    opener: int | None
    opener_reason: str
    opener_card: Card | None
    first_bout: bool
    dealer: int | None
    outcome: Outcome | None
    moves: int
    # ---- VARIANTS.md (each keeps its default unless its option is on) -------------
    #: ``trump_change``: the face-down second trump card still lies under the trump card.
    second_trump_hidden: bool = False
    #: ``trump_change``: the second trump card once drawn (shown to everyone; its
    #: suit is trump from then on); ``None`` while it lies face down, or without the option.
    second_trump_card: Card | None = None
    #: ``sprint``: the match so far (deals played, wins, who is still in).
    match: MatchView | None = None
    #: ``show_last_discard``: the latest bout that discarded cards, as pairs in table
    #: order; ``None`` when the option is off (or nothing was discarded yet: ``()``).
    last_discard: tuple[tuple[Card, Card | None], ...] | None = None
    #: ``blind``, the seat's own view: his hand as face-down slots in slot order, a
    #: slot showing its card only if he has seen it (``None`` = face down). ``hand``
    #: and ``legal`` stay empty under ``blind``: he plays a slot
    #: (:meth:`Game.slot_action`), never a card he cannot see.
    slots: tuple[Card | None, ...] | None = None
    #: ``blind``: the other players' hands, face up, in their slot order: ``(seat, cards)``.
    shown_hands: tuple[tuple[int, tuple[Card, ...]], ...] = ()
    #: ``english``: the seats the lead passed over because they had no pair (in the
    #: order checked), and whether nobody could open with a pair (one card is led).
    no_pair: tuple[int, ...] = ()
    single_lead: bool = False
    #: ``return_last_card``: the one return of this game has been used.
    return_used: bool = False
    #: Why the game ended, when it is not the plain end: ``"repetition"`` (English's
    #: draw by a repeated position); ``None`` otherwise.
    end_reason: str | None = None

    def __reduce__(self) -> tuple[object, ...]:
        return (View, tuple(getattr(self, f.name) for f in fields(self)))

    @property
    def over(self) -> bool:
        return self.outcome is not None


@dataclass(frozen=True, slots=True)
class MatchView:
    """A sprint match (VARIANTS.md section 2) as everyone sees it. Players are named,
    not seated: a knock-out deals each deal to fewer players."""

    #: 10 for a two-player match; ``None`` for a knock-out.
    deals: int | None
    #: Deals finished, this one included once it has ended.
    played: int
    #: Two players: ``(name, wins)`` for both; a knock-out: ``()``.
    wins: tuple[tuple[str, int], ...]
    #: The players still in the match (a knock-out shrinks it), in seat order.
    remaining: tuple[str, ...]
    #: A knock-out: the players knocked out so far, in the order they went.
    eliminated: tuple[str, ...]
    #: Once decided: the match winner (``None`` for a drawn match, see ``draw``).
    winner: str | None
    draw: bool

    def __reduce__(self) -> tuple[object, ...]:
        return (MatchView, tuple(getattr(self, f.name) for f in fields(self)))

    @property
    def decided(self) -> bool:
        return self.winner is not None or self.draw


@dataclass(frozen=True, slots=True)
class PileView:
    """A pile game (PILE-GAMES.md) as one seat sees it: its own hand, counts of the
    others, the pile. ``seat`` is ``None`` (and ``hand``, ``legal`` empty) for the
    public view. Field names shared with :class:`View` mean the same."""

    seat: int | None
    hand: tuple[Card, ...]
    legal: tuple[Action, ...]
    seats: tuple[SeatInfo, ...]
    #: ``rules.game``: "own_trumps", "piled" or "road".
    game: str
    #: The pile, bottom first (play order): ``pile[-1]`` is the top card.
    pile: tuple[Card, ...]
    #: The player on turn and what he must do ("lead" or "answer"); ``None`` once over.
    turn: int | None
    phase: str | None
    #: The game's trump suit (``piled``, ``road``); ``None`` in ``own_trumps``.
    trump: Suit | None
    #: ``own_trumps``: each seat's own suit, ``None`` for no suit; ``()`` elsewhere.
    trumps: tuple[Suit | None, ...]
    #: ``piled``: the face-up trump card (drawn last); ``road``: the card that shows
    #: trump (the dealer's last card, or with 5 players the card out of play).
    trump_card: Card | None
    #: ``piled``: the trump card still lies under the stock.
    trump_card_in_stock: bool
    #: ``road`` with 5 players: the 36th card, out of play for the whole game.
    out_of_play: Card | None
    #: Cards left to draw, the trump card included (``piled``; 0 elsewhere).
    stock: int
    #: Cards in the discard (``road``; 0 elsewhere).
    discard: int
    #: How many cards a take would cost the player on turn now (phase "answer";
    #: own trumps: 3 or 10 or the whole pile; piled: the pile; road: 1); else ``None``.
    take_cost: int | None
    #: ``road`` with ``show_last_discard``: the last pile cleared; ``None`` otherwise.
    last_cleared: tuple[Card, ...] | None
    waiting_for: tuple[int, ...]
    dealer: int | None
    outcome: Outcome | None
    moves: int
    #: Why the game ended, when it is not the plain end: ``"no_progress"``
    #: (``no_progress_draw``, RULES-NOTES.md 77).
    end_reason: str | None = None

    def __reduce__(self) -> tuple[object, ...]:
        return (PileView, tuple(getattr(self, f.name) for f in fields(self)))

    @property
    def over(self) -> bool:
        return self.outcome is not None


#: What ``Game.view`` returns, one type per family of games.
GameView = View | PileView
