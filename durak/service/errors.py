"""The game service's refusals: one base type, one stable code each.

A front end maps ``error.code`` to its own (translated) text, so the codes are
part of the API and never change meaning. ``str(error)`` is an English sentence
for logs and developers.

Codes:

==================== ===================================================================
``unknown_game``     no game or lobby with that id
``not_in_game``      the user holds no seat in that game or lobby
``stale_version``    the action was sent against an old version: someone acted first
``illegal_move``     (class :class:`IllegalMove` only) the rules refuse the action; the
                     instance's ``.code`` is the engine's code from RECORDS.md
                     (``not_your_turn``, ``cannot_beat``, ...)
``bad_action``       the action is not readable (not an action, a malformed step)
``lobby_exists``     the chat already has an open lobby
``game_running``     the chat already has a running game (a kind of ``lobby_exists``)
``no_lobby``         the chat has no open lobby (or no lobby or game, for ``leave``/``cancel``)
``lobby_full``       the lobby holds as many players as the deck allows
``already_joined``   the user already sits in this lobby
``not_enough_players`` fewer than two players at the start
``bad_player_count`` the rules do not fit this many players (teams need 4 or 6)
``not_allowed``      only the lobby's creator (or a chat admin) may do this
``not_running``      the game has not started yet (it is still a lobby)
``game_over``        the game has already finished or was cancelled
``invalid_setting``  an unknown setting or a value it cannot take
``database_error``   the database is damaged, foreign, newer than this code, or failed
``choosing_suits``   own trumps: the lobby's players are choosing their suits (no joining,
                     leaving or seating now)
``not_your_choice``  own trumps: another player chooses his suit now
``suit_taken``       own trumps: that suit is already someone's (or no suit)
==================== ===================================================================
"""

from __future__ import annotations

from ..errors import IllegalAction


class ServiceError(Exception):
    """Base of every refusal of the game service; ``code`` is stable snake_case."""

    code: str = "service_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"


class UnknownGame(ServiceError):
    code = "unknown_game"


class NotInGame(ServiceError):
    code = "not_in_game"


class StaleVersion(ServiceError):
    """Someone acted first: the game moved on since the version the caller saw.

    ``current`` is the game's version now, or -1 when another writer moved it
    in the store (read the game again)."""

    code = "stale_version"

    def __init__(self, message: str, current: int) -> None:
        super().__init__(message)
        self.current = current


class IllegalMove(ServiceError):
    """The engine refused the action; ``code`` is the engine's code (RECORDS.md)."""

    code = "illegal_move"

    def __init__(self, error: IllegalAction) -> None:
        super().__init__(error.message)
        self.code = error.code
        self.engine_error = error


class BadAction(ServiceError):
    code = "bad_action"


class LobbyExists(ServiceError):
    code = "lobby_exists"


class GameRunning(LobbyExists):
    code = "game_running"


class NoLobby(ServiceError):
    code = "no_lobby"


class LobbyFull(ServiceError):
    code = "lobby_full"


class AlreadyJoined(ServiceError):
    code = "already_joined"


class NotEnoughPlayers(ServiceError):
    code = "not_enough_players"


class BadPlayerCount(ServiceError):
    code = "bad_player_count"


class NotAllowed(ServiceError):
    code = "not_allowed"


class NotRunning(ServiceError):
    code = "not_running"


class GameOver(ServiceError):
    code = "game_over"


class InvalidSetting(ServiceError):
    code = "invalid_setting"


class DatabaseError(ServiceError):
    """The store cannot be used: damaged, foreign, newer than this code, or failing."""

    code = "database_error"


class ChoosingSuits(ServiceError):
    code = "choosing_suits"


class NotYourChoice(ServiceError):
    code = "not_your_choice"


class SuitTaken(ServiceError):
    code = "suit_taken"


#: Every code a :class:`ServiceError` may carry besides the engine's own.
SERVICE_CODES = tuple(
    cls.code
    for cls in (
        UnknownGame,
        NotInGame,
        StaleVersion,
        BadAction,
        LobbyExists,
        GameRunning,
        NoLobby,
        LobbyFull,
        AlreadyJoined,
        NotEnoughPlayers,
        BadPlayerCount,
        NotAllowed,
        NotRunning,
        GameOver,
        InvalidSetting,
        DatabaseError,
        ChoosingSuits,
        NotYourChoice,
        SuitTaken,
    )
)
