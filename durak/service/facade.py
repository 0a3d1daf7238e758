"""The service's one door: :class:`GameService`, a small facade over the core and a
class per concern. Its methods say in a line what they do; the concern's own
method says the rest (``Lobbies.create_lobby``, ``Play.apply``, ...).

Decisions worth knowing (the details are in each concern's module):

- Every change a user makes is one store transaction (:meth:`Core.write`): an
  action writes its log row, the new snapshot and version (and, when it ends the
  game, the ending and the tallies) together or not at all.
- The stored version of a game is the number of actions in its log; the database
  itself refuses a log entry that does not carry the game's new version, and the
  snapshot update is conditional on the old version, so even a second process on
  the same file cannot apply two actions for one version.
- A surrender (a player leaving a running game) ends it with that player alone
  as the loser, also with ``teams``; his tally counts a loss, everyone's counts a
  game played, and he deals the next game of the series.
- ``hand_over`` (``/leave`` in a running game): the AI plays the seat to the end
  and the leaver's tally counts what it scores; ``surrender`` ends the game.
- A cancelled game (lobby or running) changes no tally; ``expire_lobbies``,
  ``close_chat`` and ``migrate_chat`` cancel with ``by_user=None``.
- ``play_again`` opens a Play-again lobby with the previous game's seats (minus who
  left it) and rules (a series is played under one set of rules); each human
  confirms (``confirm``), it starts when all have or its creator starts it, and the
  series' rule names the dealer (RULES-NOTES 71-72). New chat settings apply to the
  next ``/newgame`` lobby; an open lobby takes them too.
- A lobby with a cap (``set_cap``) starts itself once full.
- AI seats (``kind == "ai"``) get negative user ids and no tallies.
- Deadlines are the front end's to keep (``set_deadline``); the service only
  stores them, for the running game's current version only, and drops a game's
  deadline in the transaction that ends it.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .. import store as stores
from ..actions import Action
from ..rules import Rules
from ..view import GameView
from .chats import Chats
from .core import Core
from .lobbies import Lobbies
from .messages import Messages
from .play import Play
from .reads import Reads
from .seats import Seats
from .series import NextGames
from .standings import GameRatings, GroupStats, PlayerRecord, Standings
from .types import (
    ApplyResult,
    ChatSettings,
    Deadline,
    GameInfo,
    LeaveResult,
    MessageRef,
    Seat,
    Tally,
    UserSettings,
)

if TYPE_CHECKING:
    from ..store.base import Store

#: The database file when the front end names none: in the working folder.
DEFAULT_PATH = "durak.sqlite3"


class GameService:
    """Lobbies and games of many chats over one store. Open with :meth:`open`."""

    def __init__(self, store: Store) -> None:
        """Use :meth:`open`; this does not load the running games."""
        self._core = core = Core(store)
        self._messages = Messages(core)
        self._series = NextGames(core, self._messages)
        self._play = Play(core, self._series)
        self._lobbies = Lobbies(core, self._play)
        self._seats = Seats(core)
        self._chats = Chats(core)
        self._reads = Reads(core)
        self._standings = Standings(core)

    @classmethod
    async def open(
        cls, path: str | os.PathLike[str] = DEFAULT_PATH, *, check: str = "quick"
    ) -> GameService:
        """Open the store at ``path`` and load every running game, checking each
        against a replay of its log. :class:`DatabaseError` if the file is unusable."""
        store = await stores.open_store(path, check=check)
        service = cls(store)
        try:
            await service._core.load_running()
            await service._series.continue_matches()
        except BaseException:
            await store.close()
            raise
        return service

    async def close(self) -> None:
        await self._core.store.close()
        self._core.live.clear()
        self._core.ended.clear()

    def fence_writes(self, fence: Callable[[], Awaitable[None]]) -> None:
        """Await ``fence`` before every write (the bot's lease: no write once it may be
        gone, none before it is sure again after a pause)."""
        self._core.store.fence = fence

    async def copy_to(self, target: str) -> None:
        """A copy of the database in the new file ``target`` (SQLite; see Store.copy_to)."""
        await self._core.store.copy_to(target)

    def after_checkpoints(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` after each checkpoint into the database file (SQLite)."""
        self._core.store.checkpointed = callback

    async def hold_checkpoints(self) -> None:
        """Nothing more written into the database's own file (see Store.hold_checkpoints)."""
        await self._core.store.hold_checkpoints()

    async def __aenter__(self) -> GameService:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def store(self) -> Store:
        """For maintenance and tests; front ends call the service's methods."""
        return self._core.store

    # ---- lobbies -------------------------------------------------------------

    async def create_lobby(
        self,
        chat_id: int,
        user_id: int,
        name: str,
        chat_title: str | None = None,
        rules: Rules | None = None,
        thread_id: int = 0,
    ) -> GameInfo:
        """Open a lobby in the chat's forum topic ``thread_id`` (0: no topic) with the chat's rule
        settings (or ``rules``, a game chosen for this lobby only: ``/newgame road``)."""
        return await self._lobbies.create_lobby(
            chat_id, user_id, name, chat_title, rules, thread_id
        )

    async def join(
        self, chat_id: int, user_id: int, name: str, thread_id: int = 0, app: bool = False
    ) -> GameInfo:
        """Sit down in the topic's lobby (joining confirms: ``ready``); ``app``: from the Mini
        App, by a player the front end cannot write to (``Seat.app``)."""
        return await self._lobbies.join(chat_id, user_id, name, thread_id, app)

    async def add_ai(
        self,
        chat_id: int,
        level: str,
        by_user: int,
        is_admin: bool = False,
        thread_id: int = 0,
        name: str = "AI {n} ({level})",
    ) -> GameInfo:
        """Seat an AI player (issue 6 plays it)."""
        return await self._lobbies.add_ai(chat_id, level, by_user, is_admin, thread_id, name)

    async def leave(self, chat_id: int, user_id: int, thread_id: int = 0) -> LeaveResult:
        """Leave the chat's lobby, or surrender its running game."""
        return await self._lobbies.leave(chat_id, user_id, thread_id)

    async def start(
        self,
        chat_id: int,
        user_id: int,
        is_admin: bool = False,
        seed: int | str | None = None,
        thread_id: int = 0,
    ) -> GameInfo:
        """Deal the lobby's game: only its creator or an admin, 2 to the deck's maximum players."""
        return await self._lobbies.start(chat_id, user_id, is_admin, seed, thread_id)

    async def choose_suit(
        self, game_id: int, user_id: int, suit: str | None = None, turn: int | None = None
    ) -> GameInfo:
        """Own trumps: ``user_id`` chooses ``suit`` as his trump for the series."""
        return await self._lobbies.choose_suit(game_id, user_id, suit, turn)

    async def set_cap(
        self,
        chat_id: int,
        user_id: int,
        cap: int | None,
        is_admin: bool = False,
        thread_id: int = 0,
    ) -> GameInfo:
        """The creator (or an admin) caps the lobby at ``cap`` players (``None``: the deck's
        maximum), a count the game allows and not below who sits already."""
        return await self._lobbies.set_cap(chat_id, user_id, cap, is_admin, thread_id)

    async def cancel(
        self, chat_id: int, user_id: int, is_admin: bool = False, thread_id: int = 0
    ) -> GameInfo:
        """End the topic's lobby or running game without a loser (the creator or an admin only)."""
        return await self._lobbies.cancel(chat_id, user_id, is_admin, thread_id)

    async def close_chat(self, chat_id: int, thread_id: int = 0) -> GameInfo | None:
        """The bot was removed from the chat: cancel the topic's open lobby or running game (no
        permission check, no tally change, ``by_user`` ``None``)."""
        return await self._lobbies.close_chat(chat_id, thread_id)

    async def expire_lobbies(self, idle_seconds: float, now: float | None = None) -> list[GameInfo]:
        """Cancel every lobby unchanged for ``idle_seconds`` (``by_user`` ``None``) and return
        them."""
        return await self._lobbies.expire_lobbies(idle_seconds, now)

    # ---- play ----------------------------------------------------------------

    async def apply(
        self,
        game_id: int,
        user_id: int,
        action: Action | Mapping[str, Any],
        version: int | None = None,
    ) -> ApplyResult:
        """Apply one player's action durably."""
        return await self._play.apply(game_id, user_id, action, version)

    async def play_slot(
        self, game_id: int, user_id: int, slot: int, version: int | None = None
    ) -> ApplyResult:
        """VARIANTS.md ``blind``: play the player's face-down hand slot ``slot``."""
        return await self._play.play_slot(game_id, user_id, slot, version)

    async def surrender(self, game_id: int, user_id: int) -> GameInfo:
        """The player leaves a running game: it ends with him as the loser."""
        return await self._play.surrender(game_id, user_id)

    async def hand_over(self, game_id: int, user_id: int) -> GameInfo:
        """The player leaves the running game: the AI plays his seat for the rest of it."""
        return await self._play.hand_over(game_id, user_id)

    # ---- series --------------------------------------------------------------

    async def play_again(self, game_id: int, user_id: int) -> GameInfo:
        """Open the Play-again lobby after game ``game_id``: the same players (who did not
        ``/leave`` it) and rules, its AI seats too, in the series' seat order."""
        return await self._series.play_again(game_id, user_id)

    async def confirm(self, lobby_id: int, user_id: int) -> GameInfo:
        """The player confirms he plays the Play-again lobby's game."""
        return await self._series.confirm(lobby_id, user_id)

    async def next_deal(self, game_id: int) -> GameInfo | None:
        """A sprint match's next deal after deal ``game_id``, started if it was not yet."""
        return await self._series.next_deal(game_id)

    # ---- seats ---------------------------------------------------------------

    async def set_deadline(self, game_id: int, version: int, deadline: float | None) -> bool:
        """Store the running game's turn deadline (a Unix time) for ``version``, or with ``None``
        drop it, so timers survive a restart."""
        return await self._seats.set_deadline(game_id, version, deadline)

    async def deadlines(self) -> list[Deadline]:
        """The stored deadlines of running games, the soonest first."""
        return await self._seats.deadlines()

    async def record_timeout(self, game_id: int, seat: int) -> Seat:
        """The player at ``seat`` let his time run out once more: count it, and from
        :data:`AWAY_AFTER` in a row on mark him away."""
        return await self._seats.record_timeout(game_id, seat)

    async def hand_to_ai(self, game_id: int, seat: int) -> Seat:
        """The group voted (``/skip``): the AI plays ``seat`` at once, as after his timeouts (the
        seat is away until he presses a button)."""
        return await self._seats.hand_to_ai(game_id, seat)

    async def set_app(self, game_id: int, user_id: int) -> bool:
        """His seat is the Mini App's only (``Seat.app``): the front end cannot write to him."""
        return await self._seats.set_app(game_id, user_id)

    async def mark_present(self, game_id: int, user_id: int) -> bool:
        """The player acted (pressed a button): clear his timeouts and away flag."""
        return await self._seats.mark_present(game_id, user_id)

    # ---- chats ---------------------------------------------------------------

    async def migrate_chat(self, old_chat_id: int, new_chat_id: int) -> None:
        """The group became a supergroup with a new id: move its settings, games, tallies (added to
        any the new id has) and group messages there, in one transaction."""
        return await self._chats.migrate_chat(old_chat_id, new_chat_id)

    async def toggle_notify(self, chat_id: int, user_id: int) -> bool:
        """``/notify_me``: subscribe to the chat's new lobbies, or unsubscribe."""
        return await self._chats.toggle_notify(chat_id, user_id)

    async def subscribers(self, chat_id: int) -> list[int]:
        return await self._chats.subscribers(chat_id)

    async def drop_subscriber(self, user_id: int) -> int:
        """A subscriber who blocked the bot leaves every chat's list (quietly)."""
        return await self._chats.drop_subscriber(user_id)

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        return await self._chats.chat_settings(chat_id)

    async def set_chat_settings(self, chat_id: int, **changes: Any) -> ChatSettings:
        """Change rule options (RULES.md names), ``turn_timeout`` (seconds or ``None``) or
        ``language``."""
        return await self._chats.set_chat_settings(chat_id, **changes)

    async def user_settings(self, user_id: int) -> UserSettings:
        return await self._chats.user_settings(user_id)

    async def set_user_language(self, user_id: int, language: str | None) -> UserSettings:
        return await self._chats.set_user_language(user_id, language)

    # ---- messages ------------------------------------------------------------

    async def set_message(
        self, game_id: int, kind: str, chat_id: int, message_id: int | None
    ) -> None:
        """Remember (or with ``None`` forget) a message posted for this game."""
        return await self._messages.set_message(game_id, kind, chat_id, message_id)

    async def message(self, game_id: int, kind: str, chat_id: int) -> int | None:
        return await self._messages.message(game_id, kind, chat_id)

    async def messages(self, game_id: int) -> tuple[MessageRef, ...]:
        return await self._messages.messages(game_id)

    # ---- reads ---------------------------------------------------------------

    async def game(self, game_id: int) -> GameInfo:
        """A lobby or game by id."""
        return await self._reads.game(game_id)

    async def active_game(self, chat_id: int, thread_id: int = 0) -> GameInfo | None:
        """The open lobby or running game of the chat's topic (0: no topic)."""
        return await self._reads.active_game(chat_id, thread_id)

    async def open_topics(self, chat_id: int) -> list[int]:
        """The forum topics of the chat (0: none) that have an open lobby or game."""
        return await self._reads.open_topics(chat_id)

    async def lobby(self, chat_id: int, thread_id: int = 0) -> GameInfo | None:
        return await self._reads.lobby(chat_id, thread_id)

    async def open_lobbies(self) -> list[GameInfo]:
        """Every open lobby (to re-arm their expiry after a restart)."""
        return await self._reads.open_lobbies()

    async def suit_choices(self) -> list[GameInfo]:
        """Every lobby choosing suits (to re-arm their clocks after a restart)."""
        return await self._reads.suit_choices()

    async def recent_games(self, chat_id: int, limit: int = 10) -> list[GameInfo]:
        """The chat's finished and cancelled games, the last to end first."""
        return await self._reads.recent_games(chat_id, limit)

    async def running_games(self) -> list[GameInfo]:
        """Every running game (to re-arm timers and messages after a restart)."""
        return await self._reads.running_games()

    async def games_of_user(self, user_id: int, include_ended: bool = False) -> list[GameInfo]:
        """The lobbies and running games the user sits in (with ended ones if asked)."""
        return await self._reads.games_of_user(user_id, include_ended)

    async def view(self, game_id: int, user_id: int) -> GameView:
        """What this player may see: his hand and legal actions, counts of the others."""
        return await self._reads.view(game_id, user_id)

    async def public_view(self, game_id: int) -> GameView:
        """What everyone may see (for a group message): no hand."""
        return await self._reads.public_view(game_id)

    async def export_record(self, game_id: int) -> dict[str, Any]:
        """The game as a ``durak-record/1`` record, replayed from the stored log (not from memory),
        so it shows exactly what is durable."""
        return await self._reads.export_record(game_id)

    async def export_match(self, game_id: int) -> dict[str, Any]:
        """The sprint match ``game_id`` ends (or is a deal of), every deal's record
        in order, as one ``durak-match/1`` document."""
        return await self._reads.export_match(game_id)

    async def tally(self, chat_id: int, user_id: int) -> Tally:
        return await self._reads.tally(chat_id, user_id)

    async def leaderboard(self, chat_id: int, limit: int = 10) -> list[Tally]:
        """Best first: the lowest share of losses, then the most games played."""
        return await self._reads.leaderboard(chat_id, limit)

    # ---- ratings (durak/service/ratings.py) -------------------------------------

    async def group_stats(self, chat_id: int, now: float | None = None) -> GroupStats:
        """The group's rating table, fools of the week and month, longest run."""
        return await self._standings.group(chat_id, now)

    async def player_record(self, chat_id: int, user_id: int) -> PlayerRecord | None:
        """A player's record against each other player of the group, his achievements."""
        return await self._standings.player(chat_id, user_id)

    async def find_player(self, chat_id: int, name: str) -> int | None:
        """The group's rated player of that name (``@`` and case aside), if one."""
        return await self._standings.find(chat_id, name)

    async def game_ratings(self, game_ids: list[int]) -> dict[int, GameRatings]:
        """Each rated game's rating changes and achievements."""
        return await self._standings.games(game_ids)
