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

    def __reduce__(self) -> tuple[object, ...]:
        return (View, tuple(getattr(self, f.name) for f in fields(self)))

    @property
    def over(self) -> bool:
        return self.outcome is not None


#: What ``Game.view`` returns, one type per family of games.
GameView = View
