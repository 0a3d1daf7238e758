"""The store interface: what the game service asks of a database, whichever it is.

Two backends implement it, SQLite (:mod:`durak.store.sqlite`, the default) and
PostgreSQL; the service talks only to :class:`Store` and :class:`Tx`, and the
same service tests run against both. Rows travel as the small values below and
those of :mod:`durak.service.types`; JSON columns (rules, start, snapshot,
steps, settings) stay text, so the store never needs to understand a game.

What every backend guarantees (the service relies on each):

- One transaction per user change: :meth:`Store.transaction` commits all of its
  statements or none. :meth:`Store.reading` sees one consistent state.
- The action log is append-only, and an action is written only if its game is
  still running at ``version - 1`` (:meth:`Store.record_action` returns
  ``False`` otherwise): the version check is the fence that keeps two writers,
  even two processes, from both applying version N+1.
- At most one lobby or running game per chat (``insert_game`` returns ``None``).
- Schema migrations are versioned in the database; a database newer than the
  code is refused with :class:`~durak.service.errors.DatabaseError`, as is any
  failure of the database itself.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from ..service.ratings import RatedGame
from ..service.types import Deadline, Ending, MessageRef, Seat, Tally


@dataclass(frozen=True, slots=True)
class GameRow:
    """One row of ``games``; JSON columns stay text (the service reads them)."""

    game_id: int
    chat_id: int
    status: str
    creator_id: int
    rules: str
    previous_game_id: int | None
    seed: str | None
    start: str | None
    version: int
    snapshot: str | None
    end_reason: str | None
    losers: str | None
    draw: int | None
    ended_by: int | None
    created_at: float
    updated_at: float
    #: The forum topic the game was opened in (``message_thread_id``); 0 for none.
    thread_id: int = 0
    #: The lobby's cap of players chosen by its creator (``None``: the deck's maximum).
    cap: int | None = None

    def ending(self) -> Ending | None:
        if self.end_reason is None:
            return None
        losers = tuple(json.loads(self.losers)) if self.losers else ()
        return Ending(self.end_reason, losers, bool(self.draw), self.ended_by)


@dataclass(frozen=True, slots=True)
class LoggedAction:
    """One row of the append-only action log."""

    version: int
    seat: int
    user_id: int
    step: str  # JSON of the record step, e.g. {"do": "take"}
    created_at: float


@dataclass(frozen=True, slots=True)
class ActionWrite:
    """Everything one action writes: the log entry, the game's new version and
    snapshot, and when the action ends the game, the ending and the tallies."""

    game_id: int
    chat_id: int
    version: int  # the version the game moves to
    seat: int
    user_id: int
    step: str
    snapshot: str
    now: float
    ending: Ending | None = None
    tallies: tuple[tuple[int, int, int], ...] = ()  # (user_id, losses, draws)
    #: A rated game's end: its players' ratings are updated in the same transaction.
    rated: RatedGame | None = None


class Tx(Protocol):
    """The statements, used inside :meth:`Store.transaction` or :meth:`Store.reading`.

    Methods that change a game return ``False`` (or ``None``) when the game is not
    in the state they expect, rather than raising: the service decides what that
    means for the user."""

    # ---- chats and users
    async def upsert_chat(self, chat_id: int, title: str | None, now: float) -> None: ...
    async def chat_settings(self, chat_id: int) -> str | None: ...
    async def set_chat_settings(self, chat_id: int, settings: str, now: float) -> None: ...
    async def upsert_user(self, user_id: int, name: str, now: float) -> None: ...
    async def user_language(self, user_id: int) -> str | None: ...
    async def set_user_language(self, user_id: int, language: str | None, now: float) -> None: ...

    # ---- games
    async def game_row(self, game_id: int) -> GameRow | None: ...
    async def open_game_in_chat(self, chat_id: int, thread_id: int = 0) -> GameRow | None: ...
    async def open_threads(self, chat_id: int) -> list[int]: ...
    async def game_ids(self, status: str) -> list[int]: ...
    async def game_ids_of_user(self, user_id: int, statuses: Iterable[str]) -> list[int]: ...
    async def idle_lobbies(self, before: float) -> list[GameRow]: ...
    async def ended_game_ids(self, chat_id: int, limit: int) -> list[int]: ...
    async def next_game_of(self, game_id: int) -> int | None: ...
    async def insert_game(
        self,
        chat_id: int,
        creator_id: int,
        rules: str,
        now: float,
        *,
        previous_game_id: int | None = None,
        seed: str | None = None,
        start: str | None = None,
        snapshot: str | None = None,
        thread_id: int = 0,
    ) -> int | None: ...
    async def update_lobby(
        self, game_id: int, now: float, *, creator_id: int | None = None, rules: str | None = None
    ) -> bool: ...
    async def set_lobby_state(
        self, game_id: int, seed: str | None, state: str | None, now: float
    ) -> bool:
        """A lobby's pre-game state (own trumps' suit choice) in its ``seed`` and
        ``snapshot`` columns, or with ``None`` none; ``False`` unless it is a lobby."""
        ...

    async def start_game(
        self, game_id: int, seed: str, start: str, snapshot: str, now: float
    ) -> bool: ...
    async def end_game(
        self, game_id: int, from_status: str, to_status: str, ending: Ending, now: float
    ) -> bool: ...
    async def repair_snapshot(
        self, game_id: int, version: int, snapshot: str, now: float
    ) -> None: ...
    async def log(self, game_id: int) -> list[LoggedAction]: ...

    # ---- seats
    async def seats(self, game_id: int, app: bool = True) -> list[Seat]: ...
    async def replace_seats(self, game_id: int, seats: Sequence[Seat]) -> None: ...
    async def add_seat(self, game_id: int, seat: Seat) -> None: ...
    async def record_timeout(self, game_id: int, seat: int, away_after: int) -> Seat | None: ...
    async def mark_present(self, game_id: int, user_id: int) -> bool: ...
    async def set_ready(self, game_id: int, user_id: int) -> bool: ...
    async def set_app(self, game_id: int, user_id: int) -> Seat | None: ...
    async def hand_to_ai(self, game_id: int, user_id: int) -> Seat | None: ...
    async def set_cap(self, game_id: int, cap: int | None, now: float) -> bool: ...
    async def toggle_notify(self, chat_id: int, user_id: int, now: float) -> bool: ...
    async def subscribers(self, chat_id: int) -> list[int]: ...
    async def drop_subscriber(self, user_id: int) -> int: ...

    # ---- timers, chats that move, tallies, messages
    async def deadlines(self) -> list[Deadline]: ...
    async def migrate_chat(self, old_chat_id: int, new_chat_id: int, now: float) -> None: ...
    async def add_tallies(self, chat_id: int, rows: Sequence[tuple[int, int, int]]) -> None: ...
    async def tally(self, chat_id: int, user_id: int) -> Tally | None: ...
    async def leaderboard(self, chat_id: int, limit: int) -> list[Tally]: ...
    async def all_tallies(self) -> list[Tally]: ...
    async def rate_game(self, game: RatedGame) -> None: ...
    async def rating_lines(self, chat_id: int) -> list[tuple[Any, ...]]: ...
    async def fools_since(self, chat_id: int, since: float) -> list[tuple[Any, ...]]: ...
    async def head_to_head(self, chat_id: int, user_id: int) -> list[tuple[Any, ...]]: ...
    async def feats_of(self, chat_id: int, user_id: int) -> list[str]: ...
    async def game_ratings(
        self, game_id: int
    ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]: ...
    async def names(self, user_ids: Sequence[int]) -> dict[int, str]: ...
    async def messages(self, game_id: int) -> list[MessageRef]: ...


class Store(Protocol):
    """A database of games. Backends open with an ``open`` classmethod of their own;
    :func:`durak.store.open_store` picks the backend from the database's name."""

    path: str  # what the store was opened with (a file, or a URL without its password)

    def transaction(self) -> AbstractAsyncContextManager[Tx]:
        """A write transaction: committed when the block ends, rolled back on any
        exception. Database failures come out as ``DatabaseError``."""
        ...

    def reading(self) -> AbstractAsyncContextManager[Tx]:
        """A read transaction: one consistent view of the database."""
        ...

    async def record_action(self, write: ActionWrite) -> bool:
        """One action (a hot write). ``False``, with nothing written, if the game is
        no longer running at ``write.version - 1``."""
        ...

    async def put_deadline(self, game_id: int, version: int, deadline: float | None) -> bool | None:
        """Store (or with ``None`` drop) a running game's turn deadline for ``version``
        (a hot write). ``True`` if done, ``False`` if the game is not running at
        ``version``, ``None`` if there is no such game."""
        ...

    async def put_message(
        self, game_id: int, kind: str, chat_id: int, message_id: int | None
    ) -> bool:
        """Remember (or with ``None`` forget) a message posted for a game (a hot write);
        ``False``, with nothing written, if there is no such game."""
        ...

    async def check(self, full: bool = False) -> list[str]:
        """The problems an integrity check finds; empty if the database is sound."""
        ...

    #: Awaited before every write, when set: raises if this process may no longer write
    #: (PostgreSQL: the bot's lease, durak/store/lease.py; SQLite has none to ask).
    fence: Callable[[], Awaitable[None]] | None

    #: Called, when set, after each checkpoint the store ran into its database file
    #: (SQLite: the bot then notes the file's header, bot/dbguard.py; PostgreSQL: never).
    checkpointed: Callable[[], None] | None

    async def copy_to(self, target: str) -> None:
        """Write a copy of the whole database, as this store sees it, to the new file
        ``target`` (SQLite: a file deleted under the running bot is saved from its open
        connection). :class:`DatabaseError` if it cannot, or where the server keeps the
        data (PostgreSQL: its own backups)."""
        ...

    async def hold_checkpoints(self) -> None:
        """Write nothing more into the database's own file, only to its log (SQLite: no
        more WAL checkpoints; the file at the path was overwritten in place, and the
        WAL is what is left to save from: see bot/dbguard.py)."""
        ...

    async def close(self) -> None: ...
