"""The one game interface: what the service, the store, the records, the timers,
the bot and the AI know of a game, whichever game it is.

Like OpenSpiel's ``State``: who may act, the legal actions, ``apply`` with typed
refusals, a per-seat view and a public view, the result, snapshot and restore,
and the next game of a series. Each family of games implements it in its own
module (``games/podkidnoy/``, ``games/pile.py``) and registers itself; callers
build games through :meth:`Game.from_seed`, :meth:`Game.from_start` and
:func:`restore`, which pick the family from ``rules.game``.

Seats are ints in clockwise order; names are for records and views only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..actions import Action
from ..cards import Card
from ..errors import IllegalAction
from ..rules import Rules
from ..view import GameView, Outcome

#: How a game of a series follows the one before it (RULES.md sections 2-3).
FIRST, AFTER_LOSS, AFTER_DRAW = "first", "after_loss", "after_draw"
SERIES = (FIRST, AFTER_LOSS, AFTER_DRAW)


@dataclass(frozen=True, slots=True)
class Series:
    """What the next game of a series needs to know of the games before it.

    Players are named, not seated: the next game may seat fewer players (a
    knock-out sprint drops each deal's durak). ``continues`` says the next game
    follows at once, without asking anyone (a sprint match that is not decided).
    """

    kind: str = FIRST
    dealer: str | None = None
    previous_loser: str | None = None
    #: Who plays the next game, in seat order; ``None``: the same players.
    players: tuple[str, ...] | None = None
    #: Sprint: the match so far, as the record's ``match`` start field.
    match: dict[str, Any] | None = None
    #: Own trumps: each player's suit letter, kept for the whole series.
    trumps: dict[str, str] | None = None
    continues: bool = False

    def __reduce__(self) -> tuple[object, ...]:
        return (
            Series,
            (
                self.kind,
                self.dealer,
                self.previous_loser,
                self.players,
                self.match,
                self.trumps,
                self.continues,
            ),
        )


def series_dealer(
    names: Sequence[str], series: Series, first: Callable[[], int]
) -> tuple[int, int | None]:
    """``(dealer, previous loser)`` of a game of ``series`` (RULES.md section 2, for every
    family): ``first()`` draws the first game's dealer; after a loss the loser deals;
    after a draw the dealer stays."""
    if series.kind == FIRST:
        return first(), None
    if series.kind == AFTER_LOSS:
        if series.previous_loser is None:
            raise ValueError("after_loss needs previous_loser")
        loser = list(names).index(series.previous_loser)
        return loser, loser
    if series.kind == AFTER_DRAW:
        if series.dealer is None:
            raise ValueError("after_draw needs the dealer")
        return list(names).index(series.dealer), None
    raise ValueError(f"no such series: {series.kind!r}")


class Game:
    """One game of any family. Subclasses implement every method below."""

    __slots__ = ("history", "n", "players", "result", "rules", "start")

    #: The ``rules.game`` values a subclass plays.
    GAMES: ClassVar[tuple[str, ...]] = ()

    rules: Rules
    players: tuple[str, ...]
    n: int
    result: Outcome | None
    history: list[tuple[int, Action]]
    start: dict[str, Any]

    # ---- construction: the family is chosen by ``rules.game`` ------------------------

    @classmethod
    def from_seed(
        cls,
        rules: Rules,
        players: Sequence[str],
        seed: int | str,
        series: Series | None = None,
    ) -> Game:
        """A shuffled deal. The first game of a series draws its dealer from the
        seed; later ones follow ``series`` (the previous game's :meth:`next_game`)."""
        return family(rules).from_seed(rules, players, seed, series)

    @classmethod
    def choosing_order(
        cls, rules: Rules, players: Sequence[str], seed: int | str
    ) -> tuple[int, ...]:
        """The seats, in turn, that choose their own trump suit before the first deal
        ``seed`` gives (own trumps, PILE-GAMES.md 2.2); empty for a game without that
        choice. A lobby asks its players in this order before it deals."""
        chosen = family(rules)
        return () if chosen is cls else chosen.choosing_order(rules, players, seed)

    @classmethod
    def from_start(cls, rules: Rules, players: Sequence[str], start: dict[str, Any]) -> Game:
        """The game at a record's ``start`` (a deck order or a position);
        :class:`~durak.errors.MalformedRecord` if it is not well formed."""
        return family(rules).from_start(rules, players, start)

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Game:
        """The game a :meth:`snapshot` describes; ``MalformedRecord`` if damaged."""
        raise NotImplementedError

    def clone(self) -> Game:
        """An independent copy of the state without the history (for search)."""
        raise NotImplementedError

    # ---- playing ----------------------------------------------------------------------

    def actors(self) -> list[int]:
        """The seats that may act now (each has at least one legal action), ascending."""
        raise NotImplementedError

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may apply now; empty if none."""
        raise NotImplementedError

    def legal_by_seat(self) -> list[tuple[int, Sequence[Action]]]:
        """``(seat, legal_actions(seat))`` for every seat in :meth:`actors`."""
        return [(s, self.legal_actions(s)) for s in self.actors()]

    def verify(self, seat: int, action: Action) -> None:
        """Raise :class:`IllegalAction` unless ``seat`` may apply ``action`` now."""
        raise NotImplementedError

    def can_apply(self, seat: int, action: Action) -> bool:
        try:
            self.verify(seat, action)
        except IllegalAction:
            return False
        return True

    def apply(self, seat: int, action: Action) -> None:
        """Apply ``seat``'s decision and every automatic step after it, or raise
        :class:`IllegalAction` and change nothing."""
        raise NotImplementedError

    def timeout_seats(self) -> list[int]:
        """The seats a turn clock that ran out acts for, in the order it acts."""
        return self.actors()

    def timeout_action(self, seat: int) -> Action:
        """What is played for ``seat`` when his time runs out (he must be an actor):
        a move that makes progress and commits him least (pass, the cheapest card that
        beats, or his lowest card; take only when he cannot beat)."""
        raise NotImplementedError

    # ---- reading ----------------------------------------------------------------------

    @property
    def over(self) -> bool:
        return self.result is not None

    def view(self, seat: int | None = None) -> GameView:
        """What ``seat`` may see; ``None`` is the public view (no hidden card)."""
        raise NotImplementedError

    def slot_action(self, seat: int, slot: int) -> Action:
        """The action of playing ``seat``'s hand slot ``slot`` now, for a seat that
        cannot see its own cards (VARIANTS.md ``blind``: the view shows slots, and
        the service turns the slot a player taps into the card of the action).
        ``IllegalAction`` if he may not play now; ``ValueError`` for a game without
        slots or a slot he does not have."""
        raise ValueError(f"{self.rules.game} has no face-down slots")

    def hand(self, seat: int) -> tuple[Card, ...]:
        """The cards ``seat`` holds, in display order (the engine's truth, not a view)."""
        raise NotImplementedError

    def hand_sizes(self) -> list[int]:
        raise NotImplementedError

    @property
    def scored(self) -> Outcome | None:
        """What the group's tally records for this game once it is over: its
        result, or ``None`` while a match it belongs to records nothing yet."""
        return self.result

    def next_game(self) -> Series:
        """How the next game of the series is dealt (the game must be over)."""
        raise NotImplementedError

    def seat_of(self, name: str) -> int:
        try:
            return self.players.index(name)
        except ValueError:
            raise KeyError(f"no player {name!r}") from None

    # ---- records and snapshots ---------------------------------------------------------

    def expected(self, key: str) -> Any:
        """The value of a record expectation ``key`` now, in the record's JSON form
        (RECORDS.md, VARIANTS.md 12.7, PILE-GAMES.md 6.7). ``KeyError`` for a key this
        game does not know (a malformed step). ``legal``, ``illegal``, ``hands`` and
        ``hand_sizes`` are the checker's own."""
        raise NotImplementedError

    def snapshot(self) -> dict[str, Any]:
        """The whole state as JSON, exactly, at any moment; with ``start`` and
        ``history`` so a restored game can still be exported as a record."""
        raise NotImplementedError


_FAMILIES: dict[str, type[Game]] = {}


def register(cls: type[Game]) -> type[Game]:
    """Make ``cls`` the family of every game in ``cls.GAMES``."""
    for name in cls.GAMES:
        _FAMILIES[name] = cls
    return cls


def family(rules: Rules) -> type[Game]:
    """The class that plays ``rules.game``."""
    try:
        return _FAMILIES[rules.game]
    except KeyError:
        raise ValueError(f"no engine plays {rules.game!r}") from None


def restore(data: Any) -> Game:
    """A game from its :meth:`Game.snapshot`, whatever its family."""
    from ..errors import MalformedRecord

    if not isinstance(data, dict) or not isinstance(data.get("rules"), dict):
        raise MalformedRecord("not a game snapshot")
    try:
        rules = Rules.from_record(data["rules"])
    except ValueError as e:
        raise MalformedRecord(f"damaged snapshot: {e}") from None
    return family(rules).restore(data)


def read_start_and_history(
    data: dict[str, Any], n: int
) -> tuple[dict[str, Any], list[tuple[int, Action]]]:
    """A snapshot's ``start`` and ``history`` (every family writes them alike, so a
    restored game can still be exported as a record); ``MalformedRecord`` if damaged."""
    from ..actions import action_from_step
    from ..errors import MalformedRecord

    start = data["start"]
    if not isinstance(start, dict):
        raise MalformedRecord("start must be an object")
    history = data["history"]
    if not isinstance(history, list):
        raise MalformedRecord("history must be a list")
    actions: list[tuple[int, Action]] = []
    for entry in history:
        if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[1], dict):
            raise MalformedRecord("a history entry is [seat, step]")
        seat = entry[0]
        if type(seat) is not int or not 0 <= seat < n:
            raise MalformedRecord(f"bad seat {seat!r}")
        actions.append((seat, action_from_step(entry[1])))
    return start, actions
