"""The values the game service hands out: small, frozen, front-end neutral."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..actions import Action
from ..games import Game
from ..rules import Rules

LOBBY, RUNNING, FINISHED, CANCELLED = "lobby", "running", "finished", "cancelled"
STATUSES = (LOBBY, RUNNING, FINISHED, CANCELLED)

HUMAN, AI = "human", "ai"

#: How a game ended: played to the end, a player surrendered (left), or cancelled.
PLAYED, SURRENDER = "played", "surrender"

#: Seconds a player has for a decision in a chat that never chose a turn time.
DEFAULT_TURN_TIMEOUT = 60

#: Consecutive timed-out decisions after which a seat counts as away: from the
#: second one on the AI plays his seat at once (issue 11: the first timeout may be a
#: glance away, the second in a row is an absence that would cost every later turn).
AWAY_AFTER = 2


@dataclass(frozen=True, slots=True)
class Seat:
    """One seat. ``name`` is the name the engine and records use, unique in the
    game; AI seats have ``kind == "ai"``, a ``level`` and a negative ``user_id``.
    ``timeouts`` counts the player's consecutive timed-out decisions; ``away``
    is set once they reach :data:`AWAY_AFTER`, until he acts again. ``ready``: in a
    Play-again lobby, the player confirmed he plays the next game. ``left``: the
    player left the running game with ``/leave``; the AI plays his seat (it stays
    ``away`` for good) and his tally still counts what that seat scores. ``app``: he
    joined from the Mini App and the bot cannot write to him (he never started it):
    his place is the page, nothing is sent to him in private."""

    seat: int
    user_id: int
    name: str
    kind: str = HUMAN
    level: str | None = None
    timeouts: int = 0
    away: bool = False
    ready: bool = False
    left: bool = False
    app: bool = False

    @property
    def is_ai(self) -> bool:
        return self.kind == AI


@dataclass(frozen=True, slots=True)
class Ending:
    """How a game ended. ``losers`` are seats (a whole team with ``teams``; the
    surrendering player after a surrender); ``by_user`` surrendered or cancelled."""

    reason: str  # "played" | "surrender" | "cancelled"
    losers: tuple[int, ...] = ()
    draw: bool = False
    by_user: int | None = None

    @property
    def loser(self) -> int | None:
        return self.losers[0] if len(self.losers) == 1 else None


@dataclass(frozen=True, slots=True)
class MessageRef:
    """A message the front end posted for a game and wants to edit later."""

    kind: str  # free text chosen by the front end, e.g. "table", "lobby", "panel"
    chat_id: int
    message_id: int


@dataclass(frozen=True, slots=True)
class SuitChoice:
    """Own trumps (PILE-GAMES.md 2.2): the lobby's players choose their suits in
    turn before the first deal. ``order`` lists seats in choosing order (clockwise
    from the first dealer's left neighbour), ``chosen`` the suit letters chosen so
    far, in that order; ``deadline`` is when the one choosing now gets the first
    free suit (a Unix time; ``None`` without a turn time)."""

    order: tuple[int, ...]
    chosen: tuple[str, ...] = ()
    deadline: float | None = None

    @property
    def seat(self) -> int | None:
        """The seat choosing now; ``None`` once everyone has."""
        return self.order[len(self.chosen)] if len(self.chosen) < len(self.order) else None

    @property
    def free(self) -> tuple[str, ...]:
        return tuple(s for s in "SHDC" if s not in self.chosen)


@dataclass(frozen=True, slots=True)
class GameInfo:
    """A lobby or game as stored. ``game`` is the live engine object for running
    games (read it, never call ``apply`` on it: only the service may change it)
    and a rebuilt one for finished games; ``None`` for lobbies and for games
    cancelled before they started."""

    game_id: int
    chat_id: int
    status: str
    version: int
    seats: tuple[Seat, ...]
    creator_id: int
    rules: Rules
    game: Game | None
    created_at: float
    updated_at: float
    messages: tuple[MessageRef, ...] = ()
    ending: Ending | None = None
    seed: str | None = None
    previous_game_id: int | None = None
    #: Own trumps: the suit choice under way in this lobby (after Start).
    suit_choice: SuitChoice | None = None
    #: The forum topic the game lives in (``message_thread_id``); 0 for none. Every
    #: group message of the game goes there.
    thread_id: int = 0
    #: The lobby's cap of players chosen by its creator (``None``: the deck's maximum);
    #: the lobby starts itself when it is full.
    cap: int | None = None

    @property
    def again(self) -> bool:
        """A Play-again lobby: the next game of a series, its players confirm."""
        return self.status == LOBBY and self.previous_game_id is not None

    @property
    def room(self) -> int:
        """How many players the lobby seats at most (its cap, or the deck's maximum)."""
        return min(self.cap or self.rules.max_players, self.rules.max_players)

    def seat_of(self, user_id: int) -> int | None:
        for s in self.seats:
            if s.user_id == user_id:
                return s.seat
        return None

    def message(self, kind: str, chat_id: int | None = None) -> int | None:
        for m in self.messages:
            if m.kind == kind and (chat_id is None or m.chat_id == chat_id):
                return m.message_id
        return None


@dataclass(frozen=True, slots=True)
class Deadline:
    """A running game's stored turn deadline (a Unix time) for one version."""

    game_id: int
    chat_id: int
    version: int
    deadline: float


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """What one durable action did. ``game`` is the live engine object: render
    from it right away, do not keep it."""

    game_id: int
    chat_id: int
    version: int
    seat: int
    action: Action
    game: Game
    finished: bool
    ending: Ending | None
    #: A sprint deal that ended with the match going on: the next deal, started.
    next_game_id: int | None = None


@dataclass(frozen=True, slots=True)
class LeaveResult:
    """``left`` a lobby, ``closed`` it (the last human left), or ``surrendered``."""

    outcome: str
    info: GameInfo


@dataclass(frozen=True, slots=True)
class Tally:
    """One player's record in one chat."""

    chat_id: int
    user_id: int
    name: str
    played: int
    losses: int
    draws: int

    @property
    def loss_rate(self) -> float:
        return self.losses / self.played if self.played else 0.0


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """Per-chat settings: the rules for new lobbies, a turn timeout in seconds
    (``None``: no limit; a chat that never chose one gets the default), a language."""

    chat_id: int
    rules: Rules
    turn_timeout: int | None = DEFAULT_TURN_TIMEOUT
    language: str | None = None
    #: The end message's recap (the decisive bout, cards taken, rating changes).
    recap: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.rules.to_dict(),
            "turn_timeout": self.turn_timeout,
            "language": self.language,
            "recap": self.recap,
        }


@dataclass(frozen=True, slots=True)
class UserSettings:
    user_id: int
    language: str | None = None
