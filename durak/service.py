"""The game service: lobbies, running games, tallies and settings, durable in SQLite.

Front ends (the Telegram bot, a terminal, tests) call only this; it never
imports a front end. Every change a user makes is one store transaction: an
action writes its log row, the new snapshot and version (and, when it ends the
game, the ending and the tallies) together or not at all.

Running games live in memory (``game_id`` -> engine ``Game`` + version),
loaded and checked against their action logs at :meth:`GameService.open` (the
log wins where a stored snapshot disagrees). An action is applied to the
in-memory game first (the engine refuses before it changes anything), then
written; if the write fails or the caller is cancelled, the in-memory game is
dropped and rebuilt from the store's log on next use. New games enter memory
only after their COMMIT. So memory never runs ahead of the disk.

The stored version of a game is the number of actions in its log; the database
itself refuses a log entry that does not carry the game's new version, and the
snapshot update is conditional on the old version, so even a second process on
the same file cannot apply two actions for one version.

Locks, always taken in this order so they cannot deadlock: the chat's lock
(lobby life cycle), then the game's lock (actions, surrender, timeouts, reads
of a running game), then the store's lock (inside ``transaction``/``reading``).
Only ``migrate_chat`` holds two chat locks (and two game locks): each pair in
ascending id order.

Decisions worth knowing:

- A surrender (a player leaving a running game) ends it with that player alone
  as the loser, also with ``teams``; his tally counts a loss, everyone's counts a
  game played, and he deals the next game of the series.
- A cancelled game (lobby or running) changes no tally.
- ``play_again`` opens a Play-again lobby with the previous game's seats (minus who
  left it) and rules (a series is played under one set of rules); each human
  confirms (``confirm``), it starts when all have or its creator starts it, and the
  series' rule names the dealer (RULES-NOTES 71-72). New chat settings apply to the
  next ``/newgame`` lobby.
- ``hand_over`` (``/leave`` in a running game): the AI plays the seat to the end
  and the leaver's tally counts what it scores; ``surrender`` ends the game.
- A lobby with a cap (``set_cap``) starts itself once full.
- Changing chat settings while a lobby is open changes that lobby's rules too
  (rules are picked before a game starts, never during one).
- AI seats (``kind == "ai"``) get negative user ids and no tallies.
- Turn time: a chat that never chose one gets ``DEFAULT_TURN_TIMEOUT`` (60 s);
  a stored ``None`` means no limit. Settings store only the keys a chat chose,
  so the two stay apart. Databases from schema 1 stored every key on each
  change: their ``null`` stays "no limit" (what those chats' menus showed).
- Deadlines are the front end's to keep (``set_deadline``); the service only
  stores them, for the running game's current version only, and drops a
  game's deadline in the transaction that ends it (last action, surrender,
  cancel, ``close_chat``, ``migrate_chat`` giving way).
- ``record_timeout`` counts a seat's timed-out decisions in a row; from
  ``AWAY_AFTER`` (2) on the seat is ``away``. ``mark_present`` clears both.
  Running games keep their seats' state in memory (written after COMMIT, like
  the version), so ``mark_present`` for a present player costs no SQL. A new
  game of a series starts with everyone present.
- ``expire_lobbies``, ``close_chat`` and ``migrate_chat`` cancel with
  ``by_user=None``: nobody asked, so nobody is named.
- ``migrate_chat`` moves a group's row, games, tallies (added up) and group
  messages to its supergroup id; if both ids have an open game, the old chat's
  is cancelled unless it is running and the new one's is a lobby.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import re
import secrets
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from types import TracebackType
from typing import Any

from . import service_errors as suits_errors
from . import service_suits as suits
from .actions import Action, action_from_step
from .errors import IllegalAction, MalformedRecord
from .games import AFTER_LOSS, Game, Series
from .games import FIRST as FIRST_GAME
from .records import export_record, replay
from .rules import Rules
from .service_errors import (
    AlreadyJoined,
    BadAction,
    BadPlayerCount,
    DatabaseError,
    GameOver,
    GameRunning,
    IllegalMove,
    InvalidSetting,
    LobbyExists,
    LobbyFull,
    NoLobby,
    NotAllowed,
    NotEnoughPlayers,
    NotInGame,
    NotRunning,
    ServiceError,
    StaleVersion,
    UnknownGame,
)
from .service_types import (
    AI,
    AWAY_AFTER,
    CANCELLED,
    DEFAULT_TURN_TIMEOUT,
    FINISHED,
    HUMAN,
    LOBBY,
    PLAYED,
    RUNNING,
    SURRENDER,
    ApplyResult,
    ChatSettings,
    Deadline,
    Ending,
    GameInfo,
    LeaveResult,
    MessageRef,
    Seat,
    SuitChoice,
    Tally,
    UserSettings,
)
from .snapshot import to_snapshot
from .store import ActionWrite, GameRow, LoggedAction, open_store
from .store.base import Store, Tx
from .view import GameView

__all__ = ["DEFAULT_PATH", "GameService"]

log = logging.getLogger(__name__)

#: The database file when the front end names none: in the working folder.
DEFAULT_PATH = "durak.sqlite3"

_RULE_NAMES = frozenset(f.name for f in fields(Rules))
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})?$")
_MAX_TIMEOUT = 24 * 3600
_MAX_NAME = 64
_ENDED_CACHE = 64


class _Conflict(Exception):
    """The database moved on under us (a concurrent writer); rolls the transaction back."""


class _Damaged(Exception):
    """A running game whose log cannot be replayed."""


@dataclass(slots=True, eq=False)
class _Live:
    """A running game in memory; its ``version`` always equals the stored one.

    ``info`` is the game's :class:`GameInfo` as last read, kept equal to the store's (an
    action updates it; any other write to the game drops it), so that reading a running
    game, which the bot does on every button press, costs no trip to the database."""

    game_id: int
    chat_id: int
    game: Game
    version: int
    seats: tuple[Seat, ...]
    info: GameInfo | None = None

    def seat_of(self, user_id: int) -> int:
        for s in self.seats:
            if s.user_id == user_id:
                return s.seat
        raise NotInGame(f"user {user_id} has no seat in game {self.game_id}")

    def set_seat(self, seat: Seat) -> None:
        """Take a seat's new state, once it is committed."""
        self.seats = tuple(seat if s.seat == seat.seat else s for s in self.seats)
        self.info = None


class GameService:
    """Lobbies and games of many chats over one store. Open with :meth:`open`."""

    def __init__(self, store: Store) -> None:
        """Use :meth:`open`; this does not load the running games."""
        self._store = store
        self._live: dict[int, _Live] = {}
        self._damaged: dict[int, str] = {}
        self._repair: set[int] = set()  # loaded games whose stored snapshot must be rewritten
        self._ended: OrderedDict[int, Game] = OrderedDict()
        self._game_locks: weakref.WeakValueDictionary[int, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._chat_locks: weakref.WeakValueDictionary[int, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )

    @classmethod
    async def open(
        cls, path: str | os.PathLike[str] = DEFAULT_PATH, *, check: str = "quick"
    ) -> GameService:
        """Open the store at ``path`` and load every running game, checking each
        against a replay of its log. :class:`DatabaseError` if the file is unusable."""
        store = await open_store(path, check=check)
        service = cls(store)
        try:
            await service._load_running()
        except BaseException:
            await store.close()
            raise
        return service

    async def close(self) -> None:
        await self._store.close()
        self._live.clear()
        self._ended.clear()

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
        return self._store

    # ---- lobbies ------------------------------------------------------------------

    async def create_lobby(
        self,
        chat_id: int,
        user_id: int,
        name: str,
        chat_title: str | None = None,
        rules: Rules | None = None,
        thread_id: int = 0,
    ) -> GameInfo:
        """Open a lobby in the chat's forum topic ``thread_id`` (0: no topic) with the
        chat's rule settings (or ``rules``, a game chosen for this lobby only:
        ``/newgame road``); its creator sits first. Each topic has its own open game."""
        async with self._chat_lock(chat_id), self._store.transaction() as tx:
            await self._refuse_open(tx, chat_id, thread_id)
            now = time.time()
            await tx.upsert_chat(chat_id, chat_title, now)
            settings = self._settings(chat_id, await tx.chat_settings(chat_id))
            await tx.upsert_user(user_id, name, now)
            chosen = rules if rules is not None else settings.rules
            game_id = await tx.insert_game(
                chat_id, user_id, _rules_json(chosen), now, thread_id=thread_id
            )
            if game_id is None:
                raise LobbyExists(f"chat {chat_id} already has an open lobby or game")
            await tx.add_seat(game_id, Seat(0, user_id, _seat_name(name, (), 0)))
            return await self._info(tx, await self._row(tx, game_id))

    async def join(self, chat_id: int, user_id: int, name: str, thread_id: int = 0) -> GameInfo:
        """Sit down in the topic's lobby (joining confirms: ``ready``). The lobby that
        is full with him (its cap reached) starts itself: the dealt game is returned."""
        async with self._chat_lock(chat_id):
            async with self._store.transaction() as tx:
                row = await self._open_lobby(tx, chat_id, changing=True, thread_id=thread_id)
                seats = await tx.seats(row.game_id)
                if any(s.user_id == user_id for s in seats):
                    raise AlreadyJoined(f"user {user_id} already sits in lobby {row.game_id}")
                rules = _rules(row.rules)
                _check_room(row, rules, len(seats))
                now = time.time()
                await tx.upsert_user(user_id, name, now)
                await tx.add_seat(
                    row.game_id,
                    Seat(
                        len(seats),
                        user_id,
                        _seat_name(name, seats, len(seats)),
                        ready=row.previous_game_id is not None,  # joining confirms
                    ),
                )
                await tx.update_lobby(row.game_id, now)
                found = await self._start_if_full(tx, row.game_id)
            return self._started(found)

    async def add_ai(
        self,
        chat_id: int,
        level: str,
        by_user: int,
        is_admin: bool = False,
        thread_id: int = 0,
        name: str = "AI {n} ({level})",
    ) -> GameInfo:
        """Seat an AI player (issue 6 plays it); only the creator or an admin may.

        ``name`` is the seat's name with ``{n}`` (the AI's number) and ``{level}``: the
        bot passes it in the group's language, since the name is stored with the seat."""
        async with self._chat_lock(chat_id), self._store.transaction() as tx:
            row = await self._open_lobby(tx, chat_id, changing=True, thread_id=thread_id)
            _check_may(row, by_user, is_admin, "add an AI player")
            seats = await tx.seats(row.game_id)
            rules = _rules(row.rules)
            _check_room(row, rules, len(seats))
            ai_id = min([s.user_id for s in seats if s.is_ai] + [0]) - 1
            name = _seat_name(name.format(n=-ai_id, level=level), seats, len(seats))
            await tx.add_seat(row.game_id, Seat(len(seats), ai_id, name, AI, level))
            await tx.update_lobby(row.game_id, time.time())
            found = await self._start_if_full(tx, row.game_id)
        return self._started(found)

    async def leave(self, chat_id: int, user_id: int, thread_id: int = 0) -> LeaveResult:
        """Leave the chat's lobby, or surrender its running game.

        When the lobby's creator leaves, the next human in it becomes the creator;
        when no human is left, the lobby is cancelled (``outcome == "closed"``).
        """
        async with self._chat_lock(chat_id):
            left: tuple[_Live | None, LeaveResult] | None = None
            async with self._store.transaction() as tx:
                row = await tx.open_game_in_chat(chat_id, thread_id)
                if row is None:
                    raise NoLobby(f"chat {chat_id} has no open lobby or game")
                if row.status == LOBBY:
                    left = await self._leave_lobby(tx, row, user_id)
            if left is not None:
                live, result = left
                self._started((live, result.info))
                return result
            return LeaveResult("surrendered", await self.surrender(row.game_id, user_id))

    async def _leave_lobby(
        self, tx: Tx, row: GameRow, user_id: int
    ) -> tuple[_Live | None, LeaveResult]:
        """Without him; a Play-again lobby where everyone left has confirmed starts
        (``info`` is then running)."""
        if suits.loads(row.snapshot) is not None:
            raise suits_errors.ChoosingSuits(f"lobby {row.game_id} is choosing suits")
        seats = await tx.seats(row.game_id)
        if not any(s.user_id == user_id for s in seats):
            raise NotInGame(f"user {user_id} is not in lobby {row.game_id}")
        kept: list[Seat] = []
        for s in seats:
            if s.user_id != user_id:
                kept.append(replace(s, seat=len(kept)))  # a confirmation stays
        await tx.replace_seats(row.game_id, kept)
        now = time.time()
        humans = [s for s in kept if not s.is_ai]
        outcome = "left"
        if not humans:
            await tx.end_game(
                row.game_id, LOBBY, CANCELLED, Ending(CANCELLED, by_user=user_id), now
            )
            outcome = "closed"
        elif row.creator_id == user_id:
            await tx.update_lobby(row.game_id, now, creator_id=humans[0].user_id)
        else:
            await tx.update_lobby(row.game_id, now)
        if outcome == "left" and row.previous_game_id is not None:
            live, info = await self._start_if_full(tx, row.game_id)
            return live, LeaveResult(outcome, info)
        return None, LeaveResult(outcome, await self._info(tx, await self._row(tx, row.game_id)))

    async def start(
        self,
        chat_id: int,
        user_id: int,
        is_admin: bool = False,
        seed: int | str | None = None,
        thread_id: int = 0,
    ) -> GameInfo:
        """Deal the lobby's game: only its creator or an admin, 2 to the deck's
        maximum players. ``seed`` defaults to a random one; it is stored.

        Own trumps first has its players choose their suits (:meth:`choose_suit`):
        the lobby stays a lobby, with ``suit_choice`` set, until the last one has."""
        async with self._chat_lock(chat_id):
            async with self._store.transaction() as tx:
                row = await self._open_lobby(tx, chat_id, thread_id=thread_id)
                _check_may(row, user_id, is_admin, "start the game")
                if suits.loads(row.snapshot) is not None:
                    raise suits_errors.ChoosingSuits(f"lobby {row.game_id} is choosing suits")
                if row.previous_game_id is not None:  # his Start confirms him too
                    await tx.set_ready(row.game_id, user_id)
                found = await self._begin(tx, row, seed)
            return self._started(found)

    async def _begin(
        self, tx: Tx, row: GameRow, seed: int | str | None = None
    ) -> tuple[_Live | None, GameInfo]:
        """Start the lobby ``row`` (inside its transaction, the chat's lock held).

        A Play-again lobby seats only who confirmed (and its AI players), and its
        game follows the series of the game before it (:meth:`_lobby_series`)."""
        seats = await tx.seats(row.game_id)
        rules = _rules(row.rules)
        series: Series | None = None
        if row.previous_game_id is not None:
            # who did not confirm stays out; ``ready`` means nothing in a running game
            kept = [s for s in seats if s.ready or s.is_ai]
            seats = [replace(s, seat=k, ready=False) for k, s in enumerate(kept)]
            await tx.replace_seats(row.game_id, seats)
        _check_count(rules, len(seats))
        if row.previous_game_id is not None:
            series = await self._lobby_series(tx, row.previous_game_id, seats)
        seed_text = str(secrets.randbits(63) if seed is None else seed)
        if suits.needs_choice(rules) and (series is None or series.trumps is None):
            order = suits.choosing_order(rules, [s.name for s in seats], seed_text)
            choice = suits.with_ai_choices(SuitChoice(order), seats)
            return await self._suit_step(tx, row, seats, rules, seed_text, choice)
        return await self._deal(tx, row, seats, rules, seed_text, series)

    async def _start_if_full(self, tx: Tx, game_id: int) -> tuple[_Live | None, GameInfo]:
        """A lobby starts itself when it is full (its cap reached) or, a Play-again
        lobby, when every human in it confirmed; else it stays as it is."""
        row = await self._row(tx, game_id)
        seats = await tx.seats(game_id)
        rules = _rules(row.rules)
        full = row.cap is not None and len(seats) >= min(row.cap, rules.max_players)
        confirmed = row.previous_game_id is not None and all(s.ready or s.is_ai for s in seats)
        if len(seats) >= 2 and (full or confirmed) and suits.loads(row.snapshot) is None:
            try:
                rules.check_players(len(seats))
            except ValueError:
                pass
            else:
                return await self._begin(tx, row)
        return None, await self._info(tx, row)

    async def _lobby_series(self, tx: Tx, previous_id: int, seats: list[Seat]) -> Series:
        """The series a Play-again lobby's game continues: who deals follows the rule
        (RULES.md section 2: the loser deals, after a draw the dealer stays). With other
        players than the series names (someone did not confirm, or joined), only the
        dealer carries over, if he plays; else the dealer is drawn as in a first game."""
        row = await self._row(tx, previous_id)
        previous = list(await tx.seats(previous_id))
        ending = row.ending()
        if ending is not None and ending.reason == SURRENDER:
            loser = previous[ending.losers[0]].name
            series = Series(AFTER_LOSS, dealer=loser, previous_loser=loser)
        else:
            series = (await self._ended_game(tx, row, previous)).next_game()
        names = tuple(s.name for s in seats)
        expected = series.players or tuple(s.name for s in previous)
        if names == expected:
            return series
        needed = [n for n in (series.dealer, series.previous_loser) if n is not None]
        if series.kind != FIRST_GAME and needed and all(n in names for n in needed):
            return Series(series.kind, series.dealer, series.previous_loser)
        return Series()

    async def _deal(
        self,
        tx: Tx,
        row: GameRow,
        seats: list[Seat],
        rules: Rules,
        seed_text: str,
        series: Series | None,
    ) -> tuple[_Live, GameInfo]:
        """Deal the lobby ``row`` (inside its transaction, the chat's lock held)."""
        game = Game.from_seed(rules, [s.name for s in seats], seed_text, series)
        now = time.time()
        ok = await tx.start_game(
            row.game_id, seed_text, _json(game.start), _snapshot_text(game), now
        )
        if not ok:
            raise NoLobby(f"lobby {row.game_id} changed while starting; try again")
        live = _Live(row.game_id, row.chat_id, game, 0, tuple(seats))
        return live, await self._info(tx, await self._row(tx, row.game_id), live)

    def _started(self, found: tuple[_Live | None, GameInfo]) -> GameInfo:
        """After the commit: a dealt game enters memory (never before its commit)."""
        live, info = found
        if live is not None:
            self._live.setdefault(live.game_id, live)
        return info

    async def _suit_step(
        self,
        tx: Tx,
        row: GameRow,
        seats: list[Seat],
        rules: Rules,
        seed_text: str,
        choice: SuitChoice,
    ) -> tuple[_Live | None, GameInfo]:
        """Store the suit choice so far, or deal once everyone has chosen."""
        if choice.seat is None:
            series = Series(trumps=suits.trumps_of(choice, seats))
            return await self._deal(tx, row, seats, rules, seed_text, series)
        now = time.time()
        timeout = self._settings(row.chat_id, await tx.chat_settings(row.chat_id)).turn_timeout
        deadline = None if timeout is None else now + timeout
        choice = SuitChoice(choice.order, choice.chosen, deadline)
        if not await tx.set_lobby_state(row.game_id, seed_text, suits.dumps(choice), now):
            raise NoLobby(f"lobby {row.game_id} changed while starting; try again")
        return None, await self._info(tx, await self._row(tx, row.game_id))

    async def choose_suit(
        self, game_id: int, user_id: int, suit: str | None = None, turn: int | None = None
    ) -> GameInfo:
        """Own trumps: ``user_id`` chooses ``suit`` as his trump for the series. With
        ``suit`` ``None`` (his time ran out) he gets the first free suit; ``turn``
        (how many had chosen when the clock started) makes a late clock do nothing.
        Refusals: ``no_lobby``, ``not_in_game``, ``not_your_choice``, ``suit_taken``."""
        async with self._store.reading() as tx:
            chat_id = (await self._row(tx, game_id)).chat_id
        async with self._chat_lock(chat_id):
            async with self._store.transaction() as tx:
                row = await self._row(tx, game_id)
                choice = suits.loads(row.snapshot) if row.status == LOBBY else None
                if choice is None or row.seed is None:
                    raise NoLobby(f"game {game_id} is not choosing suits")
                seats = await tx.seats(game_id)
                seat = next((s.seat for s in seats if s.user_id == user_id), None)
                if seat is None:
                    raise NotInGame(f"user {user_id} is not in lobby {game_id}")
                if seat != choice.seat or (turn is not None and turn != len(choice.chosen)):
                    raise suits_errors.NotYourChoice(f"seat {choice.seat} chooses now")
                letter = suits.first_free(choice) if suit is None else suit
                if letter not in choice.free:
                    raise suits_errors.SuitTaken(f"{letter!r} is not a free suit")
                choice = SuitChoice(choice.order, (*choice.chosen, letter))
                choice = suits.with_ai_choices(choice, seats)
                found = await self._suit_step(tx, row, seats, _rules(row.rules), row.seed, choice)
            return self._started(found)

    async def suit_choices(self) -> list[GameInfo]:
        """Every lobby choosing suits, e.g. to re-arm their clocks after a restart."""
        return [info for info in await self.open_lobbies() if info.suit_choice is not None]

    async def cancel(
        self, chat_id: int, user_id: int, is_admin: bool = False, thread_id: int = 0
    ) -> GameInfo:
        """End the topic's lobby or running game without a loser (the creator or an
        admin only). No tally changes."""
        async with self._chat_lock(chat_id):
            async with self._store.reading() as tx:
                row = await tx.open_game_in_chat(chat_id, thread_id)
            if row is None:
                raise NoLobby(f"chat {chat_id} has no open lobby or game")
            _check_may(row, user_id, is_admin, "cancel the game")
            info = await self._cancel(row, user_id)
            if info is None:
                raise GameOver(f"game {row.game_id} has already ended")
            return info

    async def close_chat(self, chat_id: int, thread_id: int = 0) -> GameInfo | None:
        """The bot was removed from the chat: cancel the topic's open lobby or running
        game (no permission check, no tally change, ``by_user`` ``None``). The cancelled
        game, or ``None`` if nothing was open. :meth:`open_topics` lists the topics."""
        async with self._chat_lock(chat_id):
            async with self._store.reading() as tx:
                row = await tx.open_game_in_chat(chat_id, thread_id)
            return None if row is None else await self._cancel(row, None)

    async def expire_lobbies(self, idle_seconds: float, now: float | None = None) -> list[GameInfo]:
        """Cancel every lobby unchanged for ``idle_seconds`` (``by_user`` ``None``)
        and return them. ``now`` (a Unix time) only moves the cut-off, for tests."""
        if not idle_seconds >= 0:
            raise ValueError(f"idle_seconds must be 0 or more, not {idle_seconds!r}")
        cutoff = (time.time() if now is None else now) - idle_seconds
        async with self._store.reading() as tx:
            rows = await tx.idle_lobbies(cutoff)
        expired = []
        for row in rows:
            async with self._chat_lock(row.chat_id):
                info = await self._cancel(row, None, idle_before=cutoff)
            if info is not None:
                expired.append(info)
        return expired

    async def _cancel(
        self, row: GameRow, by_user: int | None, idle_before: float | None = None
    ) -> GameInfo | None:
        """Cancel an open game (the chat's lock held); ``None`` if it ended
        meanwhile or, with ``idle_before``, is no longer a lobby idle since then."""
        async with self._game_lock(row.game_id):
            async with self._store.transaction() as tx:
                if idle_before is not None:
                    current = await self._row(tx, row.game_id)
                    if current.status != LOBBY or current.updated_at >= idle_before:
                        return None
                ending = Ending(CANCELLED, by_user=by_user)
                if not await tx.end_game(row.game_id, row.status, CANCELLED, ending, time.time()):
                    return None
                live = self._live.get(row.game_id)
                info = await self._info(tx, await self._row(tx, row.game_id), live)
            self._forget(row.game_id)
            return info

    def _forget(self, game_id: int) -> None:
        """A running game ended without an action: out of memory, into the cache."""
        live = self._live.pop(game_id, None)
        self._damaged.pop(game_id, None)
        if live is not None:
            self._remember_ended(game_id, live.game)

    # ---- playing ------------------------------------------------------------------

    async def apply(
        self,
        game_id: int,
        user_id: int,
        action: Action | Mapping[str, Any],
        version: int | None = None,
    ) -> ApplyResult:
        """Apply one player's action durably.

        ``action`` is an engine action or its record step (``{"do": "take"}``).
        With ``version`` (what the player saw), an action against an older
        version is refused with :class:`StaleVersion`: someone acted first.
        Without it the action applies to whatever the game is now. Refusals:
        ``unknown_game``, ``not_running``, ``game_over``, ``not_in_game``,
        ``stale_version``, the engine's codes via :class:`IllegalMove`,
        ``bad_action``, ``database_error``.

        A sprint deal that ends with the match going on is followed at once by the
        match's next deal (``next_game_id``; see :meth:`next_deal`).
        """
        act = _as_action(action)
        return await self._after(await self._apply(game_id, user_id, lambda g, s: act, version))

    async def play_slot(
        self, game_id: int, user_id: int, slot: int, version: int | None = None
    ) -> ApplyResult:
        """VARIANTS.md ``blind``: play the player's face-down hand slot ``slot``. The
        engine turns the slot into the card (:meth:`Game.slot_action`), so the player
        never names a card he cannot see. Refusals as :meth:`apply`; a slot he does
        not have, or a game without slots, is ``bad_action``."""
        if type(slot) is not int:
            raise BadAction(f"not a slot: {slot!r}")
        return await self._after(
            await self._apply(game_id, user_id, lambda g, s: g.slot_action(s, slot), version)
        )

    async def _after(self, result: ApplyResult) -> ApplyResult:
        """Once an action is committed: a sprint match goes on with its next deal."""
        if not result.finished or not _continues(result.game):
            return result
        try:
            following = await self.next_deal(result.game_id)
        except ServiceError as e:  # the start-up sweep (or Play again) tries again
            log.warning("game %d: the match's next deal did not start: %s", result.game_id, e)
            return result
        return replace(result, next_game_id=following.game_id if following else None)

    async def _apply(
        self,
        game_id: int,
        user_id: int,
        resolve: Callable[[Game, int], Action],
        version: int | None,
    ) -> ApplyResult:
        async with self._game_lock(game_id):
            live = await self._running(game_id)
            seat = live.seat_of(user_id)
            if version is not None and version != live.version:
                raise StaleVersion(
                    f"game {game_id} is at version {live.version}, not {version}", live.version
                )
            game = live.game
            try:
                act = resolve(game, seat)
                game.apply(seat, act)
            except IllegalAction as e:
                raise IllegalMove(e) from None
            except (ValueError, TypeError) as e:  # refused before any change
                raise BadAction(f"not a playable action: {e}") from None
            except BaseException:
                self._live.pop(game_id, None)  # an engine bug: trust only the store now
                raise
            new_version = live.version + 1
            result = game.result
            ending = None if result is None else Ending(PLAYED, result.losers, result.draw)
            step = _json(act.step())
            snapshot = _snapshot_text(game)
            write = ActionWrite(
                game_id,
                live.chat_id,
                new_version,
                seat,
                user_id,
                step,
                snapshot,
                time.time(),
                ending,
                () if ending is None else tuple(_scored_rows(live.seats, game)),
            )
            try:
                if not await self._store.record_action(write):
                    raise _Conflict
            except _Conflict:
                self._live.pop(game_id, None)
                raise StaleVersion(f"game {game_id} moved on in the store", -1) from None
            except BaseException:
                # Memory ran ahead of a failed write: rebuild from the store on next use.
                self._live.pop(game_id, None)
                raise
            live.version = new_version
            if live.info is not None:
                live.info = replace(live.info, version=new_version, updated_at=write.now)
            if ending is not None:
                self._live.pop(game_id, None)
                self._remember_ended(game_id, game)
            return ApplyResult(
                game_id, live.chat_id, new_version, seat, act, game, ending is not None, ending
            )

    async def surrender(self, game_id: int, user_id: int) -> GameInfo:
        """The player leaves a running game: it ends with him as the loser."""
        async with self._game_lock(game_id):
            live = await self._running(game_id)
            seat = live.seat_of(user_id)
            ending = Ending(SURRENDER, (seat,), False, user_id)
            try:
                async with self._store.transaction() as tx:
                    if not await tx.end_game(game_id, RUNNING, FINISHED, ending, time.time()):
                        raise GameOver(f"game {game_id} has already ended")
                    await tx.add_tallies(live.chat_id, _tally_rows(live.seats, ending))
                    info = await self._info(tx, await self._row(tx, game_id), live)
            except BaseException:
                self._live.pop(game_id, None)
                raise
            self._live.pop(game_id, None)
            self._remember_ended(game_id, live.game)
            return info

    async def play_again(self, game_id: int, user_id: int) -> GameInfo:
        """Open the Play-again lobby after game ``game_id``: the same players (who did
        not ``/leave`` it) and rules, its AI seats too, in the series' seat order; the
        presser has confirmed. Once it exists, a press confirms him in it
        (:meth:`confirm`); when every human has, it starts (the series' dealer deals)."""
        async with self._store.reading() as tx:
            row = await self._row(tx, game_id)
        async with self._chat_lock(row.chat_id):
            async with self._store.transaction() as tx:
                following = await tx.next_game_of(game_id)
                if following is None:
                    return await self._again_lobby(tx, game_id, user_id)
                found = await self._confirm(tx, await self._row(tx, following), user_id)
            return self._started(found)

    async def confirm(self, lobby_id: int, user_id: int) -> GameInfo:
        """The player confirms he plays the Play-again lobby's game; when every human
        in it has, it starts (returned running). Confirming twice changes nothing."""
        async with self._store.reading() as tx:
            row = await self._row(tx, lobby_id)
        async with self._chat_lock(row.chat_id):
            async with self._store.transaction() as tx:
                found = await self._confirm(tx, await self._row(tx, lobby_id), user_id)
            return self._started(found)

    async def _confirm(self, tx: Tx, row: GameRow, user_id: int) -> tuple[_Live | None, GameInfo]:
        if row.status != LOBBY:
            seats = await tx.seats(row.game_id)
            if row.status == RUNNING and any(s.user_id == user_id for s in seats):
                return None, await self._info(tx, row)  # it started: he plays it
            raise GameOver(f"game {row.game_id} is no longer a lobby")
        if row.previous_game_id is None:
            raise NotAllowed(f"lobby {row.game_id} is not a Play-again lobby")
        if suits.loads(row.snapshot) is not None:
            raise suits_errors.ChoosingSuits(f"lobby {row.game_id} is choosing suits")
        if not any(s.user_id == user_id for s in await tx.seats(row.game_id)):
            raise NotInGame(f"user {user_id} has no seat in lobby {row.game_id}")
        if await tx.set_ready(row.game_id, user_id):
            await tx.update_lobby(row.game_id, time.time())
        return await self._start_if_full(tx, row.game_id)

    async def _again_lobby(self, tx: Tx, game_id: int, user_id: int) -> GameInfo:
        row = await self._row(tx, game_id)
        ending = _ended(row)
        seats = list(await tx.seats(game_id))
        mine = next((s for s in seats if s.user_id == user_id), None)
        if mine is None:
            raise NotInGame(f"user {user_id} did not play game {game_id}")
        if mine.left:
            raise NotAllowed(f"user {user_id} left game {game_id}")
        await self._refuse_open(tx, row.chat_id, row.thread_id)
        if ending.reason != SURRENDER:
            series = (await self._ended_game(tx, row, seats)).next_game()
            if series.players is not None:
                seats = await self._series_seats(tx, row, seats, series.players)
        kept = [s for s in seats if not s.left]
        seats = [
            Seat(k, s.user_id, s.name, s.kind, s.level, ready=s.user_id == user_id)
            for k, s in enumerate(kept)
        ]
        creator = row.creator_id if any(s.user_id == row.creator_id for s in seats) else user_id
        new_id = await tx.insert_game(
            row.chat_id,
            creator,
            row.rules,
            time.time(),
            previous_game_id=game_id,
            thread_id=row.thread_id,  # the series plays on in its topic
        )
        if new_id is None:
            raise LobbyExists(f"chat {row.chat_id} already has an open lobby or game")
        await tx.replace_seats(new_id, seats)
        return await self._info(tx, await self._row(tx, new_id))

    async def set_cap(
        self,
        chat_id: int,
        user_id: int,
        cap: int | None,
        is_admin: bool = False,
        thread_id: int = 0,
    ) -> GameInfo:
        """The creator (or an admin) caps the lobby at ``cap`` players (``None``: the
        deck's maximum), a count the game allows and not below who sits already. A
        lobby full with it starts itself (returned running)."""
        async with self._chat_lock(chat_id):
            async with self._store.transaction() as tx:
                row = await self._open_lobby(tx, chat_id, changing=True, thread_id=thread_id)
                _check_may(row, user_id, is_admin, "cap the lobby")
                seats = await tx.seats(row.game_id)
                if cap is not None:
                    if type(cap) is not int or cap < max(2, len(seats)):
                        raise BadPlayerCount(f"a cap of {cap!r} with {len(seats)} seated")
                    _check_count(_rules(row.rules), cap)
                await tx.set_cap(row.game_id, cap, time.time())
                found = await self._start_if_full(tx, row.game_id)
            return self._started(found)

    async def hand_over(self, game_id: int, user_id: int) -> GameInfo:
        """The player leaves the running game (``/leave``, confirmed): the AI plays his
        seat for the rest of it, and his tally counts what that seat scores (he is the
        durak only if it loses). Unlike :meth:`surrender`, the game goes on."""
        async with self._game_lock(game_id):
            live = await self._running(game_id)
            seat = live.seats[live.seat_of(user_id)]
            if seat.left:
                raise NotInGame(f"user {user_id} already left game {game_id}")
            try:
                async with self._store.transaction() as tx:
                    updated = await tx.hand_to_ai(game_id, user_id)
                    if updated is None:
                        raise NotInGame(f"user {user_id} already left game {game_id}")
            except BaseException:
                self._live.pop(game_id, None)  # memory may lag the disk: reload on next use
                raise
            live.set_seat(updated)
        return await self.game(game_id)

    # ---- /notify_me ---------------------------------------------------------------

    async def toggle_notify(self, chat_id: int, user_id: int) -> bool:
        """``/notify_me``: subscribe to the chat's new lobbies, or unsubscribe; ``True``
        if he is subscribed now."""
        async with self._store.transaction() as tx:
            return await tx.toggle_notify(chat_id, user_id, time.time())

    async def subscribers(self, chat_id: int) -> list[int]:
        async with self._store.reading() as tx:
            return await tx.subscribers(chat_id)

    async def drop_subscriber(self, user_id: int) -> int:
        """A subscriber who blocked the bot leaves every chat's list (quietly)."""
        async with self._store.transaction() as tx:
            return await tx.drop_subscriber(user_id)

    async def next_deal(self, game_id: int) -> GameInfo | None:
        """A sprint match's next deal after deal ``game_id``, started if it was not
        yet (the service does so itself after the ending action; the start-up sweep
        after a crash in between). ``None`` if the match does not go on."""
        async with self._store.reading() as tx:
            row = await self._row(tx, game_id)
        async with self._chat_lock(row.chat_id):
            async with self._store.transaction() as tx:
                following = await tx.next_game_of(game_id)
                if following is not None:
                    return await self._info(tx, await self._row(tx, following))
                row = await self._row(tx, game_id)
                if row.status != FINISHED or row.start is None:
                    return None
                ending = row.ending()
                if ending is None or ending.reason != PLAYED:
                    return None
                seats = await tx.seats(game_id)
                if not _continues(await self._ended_game(tx, row, seats)):
                    return None
                found = await self._next_game(tx, game_id, None)
            if isinstance(found, GameInfo):
                return found
            live, info = found
            self._live.setdefault(live.game_id, live)
        # The match keeps one table message: the next deal edits the same one.
        table = next((m for m in info.messages if m.kind == "table"), None)
        if table is None:
            for m in await self.messages(game_id):
                if m.kind == "table" and m.chat_id == row.chat_id:
                    await self.set_message(info.game_id, "table", m.chat_id, m.message_id)
                    info = await self.game(info.game_id)
        return info

    async def _continue_matches(self, recent: int = 200) -> None:
        """At open: a sprint deal that ended just before a crash, its match not
        decided, gets its next deal now. Only the ``recent`` last finished games are
        looked at: a crash leaves at most the games that ended right before it."""
        async with self._store.reading() as tx:
            ids = sorted(await tx.game_ids(FINISHED))[-recent:]
            candidates = []
            for game_id in ids:
                row = await self._row(tx, game_id)
                try:
                    sprint = _rules(row.rules).sprint
                except DatabaseError:
                    continue
                if sprint and await tx.next_game_of(game_id) is None:
                    candidates.append(game_id)
        for game_id in candidates:
            try:
                following = await self.next_deal(game_id)
            except ServiceError as e:
                log.warning("game %d: its match's next deal could not start: %s", game_id, e)
                continue
            if following is not None:
                log.info("game %d: the match goes on with deal %d", game_id, following.game_id)

    async def _next_game(
        self, tx: Tx, game_id: int, user_id: int | None
    ) -> GameInfo | tuple[_Live, GameInfo]:
        """``play_again`` (``user_id`` pressed it) or ``next_deal`` (``None``) inside its
        transaction: the existing next game, or the new one (to be put in memory
        after the commit). The next game seats the players its series names."""
        row = await self._row(tx, game_id)
        following = await tx.next_game_of(game_id)
        if following is not None:
            return await self._info(tx, await self._row(tx, following))
        ending = _ended(row)
        seats = list(await tx.seats(game_id))
        if user_id is not None and not any(s.user_id == user_id for s in seats):
            raise NotInGame(f"user {user_id} did not play game {game_id}")
        await self._refuse_open(tx, row.chat_id, row.thread_id)
        if ending.reason == SURRENDER:
            loser = seats[ending.losers[0]].name
            series = Series(AFTER_LOSS, dealer=loser, previous_loser=loser)
        else:
            series = (await self._ended_game(tx, row, seats)).next_game()
        if series.players is not None:
            seats = await self._series_seats(tx, row, seats, series.players)
        # The next game starts with everyone present.
        seats = [replace(s, timeouts=0, away=False) for s in seats]
        rules = _rules(row.rules)
        seed = str(secrets.randbits(63))
        game = Game.from_seed(rules, [s.name for s in seats], seed, series)
        new_id = await tx.insert_game(
            row.chat_id,
            row.creator_id if user_id is None else user_id,
            row.rules,
            time.time(),
            previous_game_id=game_id,
            seed=seed,
            start=_json(game.start),
            snapshot=_snapshot_text(game),
            thread_id=row.thread_id,  # the series plays on in its topic
        )
        if new_id is None:
            raise LobbyExists(f"chat {row.chat_id} already has an open lobby or game")
        await tx.replace_seats(new_id, seats)
        live = _Live(new_id, row.chat_id, game, 0, tuple(seats))
        return live, await self._info(tx, await self._row(tx, new_id), live)

    async def _series_seats(
        self, tx: Tx, row: GameRow, seats: list[Seat], names: tuple[str, ...]
    ) -> list[Seat]:
        """The seats of the players ``names`` (in that order), renumbered: a
        knock-out drops players, and the match after it seats them all again, so
        players are looked for in this game and the games of the series before it."""
        known = {s.name: s for s in seats}
        previous = row.previous_game_id
        for _ in range(64):  # a series longer than this has its players in the last games
            if previous is None or all(n in known for n in names):
                break
            for s in await tx.seats(previous):
                known.setdefault(s.name, s)
            previous = (await self._row(tx, previous)).previous_game_id
        missing = [n for n in names if n not in known]
        if missing:
            raise NotAllowed(f"the next game seats unknown players {missing}")
        return [replace(known[n], seat=k) for k, n in enumerate(names)]

    # ---- turn timers and absent players -------------------------------------------

    async def set_deadline(self, game_id: int, version: int, deadline: float | None) -> bool:
        """Store the running game's turn deadline (a Unix time) for ``version``, or
        with ``None`` drop it, so timers survive a restart. ``False`` (nothing
        stored) when the game is no longer running at ``version``: a deadline for
        a state that is gone is never kept. An ending drops it by itself."""
        if deadline is not None and not math.isfinite(deadline):
            raise ValueError(f"a deadline must be a finite Unix time, not {deadline!r}")
        stored = await self._store.put_deadline(game_id, version, deadline)
        if stored is None:
            raise UnknownGame(f"no game {game_id}")
        return stored

    async def deadlines(self) -> list[Deadline]:
        """The stored deadlines of running games, the soonest first."""
        async with self._store.reading() as tx:
            return await tx.deadlines()

    async def record_timeout(self, game_id: int, seat: int) -> Seat:
        """The player at ``seat`` let his time run out once more: count it, and
        from :data:`AWAY_AFTER` in a row on mark him away. The updated seat.

        Also accepted for a game that has just ended (the timed-out action may
        have ended it); a lobby is refused with :class:`NotRunning`."""
        async with self._game_lock(game_id):
            live = self._live.get(game_id)
            if live is not None and not 0 <= seat < len(live.seats):
                raise NotInGame(f"game {game_id} has no seat {seat}")
            try:
                async with self._store.transaction() as tx:
                    if live is None and (await self._row(tx, game_id)).status == LOBBY:
                        raise NotRunning(f"game {game_id} has not started yet")
                    updated = await tx.record_timeout(game_id, seat, AWAY_AFTER)
                    if updated is None:
                        raise NotInGame(f"game {game_id} has no seat {seat}")
            except BaseException:
                if live is not None:  # memory may lag the disk now: reload on next use
                    self._live.pop(game_id, None)
                raise
            if live is not None:
                live.set_seat(updated)
            return updated

    async def hand_to_ai(self, game_id: int, seat: int) -> Seat:
        """The group voted (``/skip``): the AI plays ``seat`` at once, as after his
        timeouts (the seat is away until he presses a button). The updated seat."""
        async with self._game_lock(game_id):
            live = self._live.get(game_id)
            if live is not None and not 0 <= seat < len(live.seats):
                raise NotInGame(f"game {game_id} has no seat {seat}")
            try:
                async with self._store.transaction() as tx:
                    if (await self._row(tx, game_id)).status != RUNNING:
                        raise NotRunning(f"game {game_id} is not running")
                    # away from the next timeout on, i.e. now; his count goes on as one
                    updated = await tx.record_timeout(game_id, seat, 0)
                    if updated is None:
                        raise NotInGame(f"game {game_id} has no seat {seat}")
            except BaseException:
                if live is not None:
                    self._live.pop(game_id, None)
                raise
            if live is not None:
                live.set_seat(updated)
            return updated

    async def mark_present(self, game_id: int, user_id: int) -> bool:
        """The player acted (pressed a button): clear his timeouts and away flag.
        ``True`` if that changed something. Called on every press, so a present
        player of a running game costs neither a lock nor SQL: memory knows."""
        live = self._live.get(game_id)
        if live is not None and not _absent(live.seats[live.seat_of(user_id)]):
            return False
        if live is not None and live.seats[live.seat_of(user_id)].left:
            return False  # he left: the AI keeps his seat
        async with self._game_lock(game_id):
            live = self._live.get(game_id)
            if live is not None:
                seat = live.seats[live.seat_of(user_id)]
                if not _absent(seat):
                    return False
            try:
                async with self._store.transaction() as tx:
                    changed = await tx.mark_present(game_id, user_id)
                    if not changed and live is None:
                        await self._row(tx, game_id)  # UnknownGame
                        if not any(s.user_id == user_id for s in await tx.seats(game_id)):
                            raise NotInGame(f"user {user_id} has no seat in game {game_id}")
            except BaseException:
                if live is not None:  # memory may lag the disk now: reload on next use
                    self._live.pop(game_id, None)
                raise
            if live is not None:
                live.set_seat(replace(seat, timeouts=0, away=False))
            return changed

    # ---- chats that move or go ----------------------------------------------------

    async def migrate_chat(self, old_chat_id: int, new_chat_id: int) -> None:
        """The group became a supergroup with a new id: move its settings, games,
        tallies (added to any the new id has) and group messages there, in one
        transaction; a running game plays on under the new id. Idempotent.

        If both ids hold an open game, the old chat's is cancelled, unless it is
        running and the new chat's is only a lobby (then the lobby is)."""
        if old_chat_id == new_chat_id:
            return
        low, high = sorted((old_chat_id, new_chat_id))
        async with self._chat_lock(low), self._chat_lock(high):
            async with self._store.reading() as tx:
                old_open = await tx.open_game_in_chat(old_chat_id)
                new_open = await tx.open_game_in_chat(new_chat_id)
            ids = sorted(r.game_id for r in (old_open, new_open) if r is not None)
            async with contextlib.AsyncExitStack() as held:
                for game_id in ids:
                    await held.enter_async_context(self._game_lock(game_id))
                dropped: GameRow | None = None
                try:
                    async with self._store.transaction() as tx:
                        now = time.time()
                        if old_open is not None and new_open is not None:
                            keep_old = old_open.status == RUNNING and new_open.status == LOBBY
                            dropped = new_open if keep_old else old_open
                            ending = Ending(CANCELLED)
                            if not await tx.end_game(
                                dropped.game_id, dropped.status, CANCELLED, ending, now
                            ):
                                dropped = None  # it ended meanwhile: nothing in the way
                        await tx.migrate_chat(old_chat_id, new_chat_id, now)
                except BaseException:
                    for game_id in ids:  # memory may lag the disk now: reload on next use
                        self._live.pop(game_id, None)
                    raise
                if dropped is not None:
                    self._forget(dropped.game_id)
                for live in self._live.values():
                    if live.chat_id == old_chat_id:
                        live.chat_id = new_chat_id
                        live.info = None

    # ---- reading ------------------------------------------------------------------

    async def game(self, game_id: int) -> GameInfo:
        """A lobby or game by id; :class:`UnknownGame` if there is none."""
        live = self._live.get(game_id)
        if live is not None and live.info is not None:
            # No waiting for an action in flight: its move is in ``game`` already and its
            # version comes with its commit. Whoever acts on what he read goes through
            # apply(), which checks against the game under its lock.
            return live.info
        async with self._game_lock(game_id):
            live = self._live.get(game_id)
            if live is not None and live.info is not None:
                return live.info
            async with self._store.reading() as tx:
                return await self._info(tx, await self._row(tx, game_id))

    async def active_game(self, chat_id: int, thread_id: int = 0) -> GameInfo | None:
        """The open lobby or running game of the chat's topic (0: no topic)."""
        async with self._store.reading() as tx:
            row = await tx.open_game_in_chat(chat_id, thread_id)
        return None if row is None else await self._info_of(row.game_id, row.chat_id)

    async def open_topics(self, chat_id: int) -> list[int]:
        """The forum topics of the chat (0: none) that have an open lobby or game."""
        async with self._store.reading() as tx:
            return await tx.open_threads(chat_id)

    async def lobby(self, chat_id: int, thread_id: int = 0) -> GameInfo | None:
        info = await self.active_game(chat_id, thread_id)
        return info if info is not None and info.status == LOBBY else None

    async def open_lobbies(self) -> list[GameInfo]:
        """Every open lobby, e.g. to re-arm their expiry after a restart."""
        async with self._store.reading() as tx:
            ids = await tx.game_ids(LOBBY)
        infos = [await self.game(game_id) for game_id in ids]
        return [info for info in infos if info.status == LOBBY]

    async def recent_games(self, chat_id: int, limit: int = 10) -> list[GameInfo]:
        """The chat's finished and cancelled games, the last to end first."""
        async with self._store.reading() as tx:
            ids = await tx.ended_game_ids(chat_id, max(0, limit))
        return [await self.game(game_id) for game_id in ids]

    async def running_games(self) -> list[GameInfo]:
        """Every running game, e.g. to re-arm timers and messages after a restart."""
        return [await self.game(game_id) for game_id in sorted(self._live)]

    async def games_of_user(self, user_id: int, include_ended: bool = False) -> list[GameInfo]:
        """The lobbies and running games the user sits in (with ended ones if asked)."""
        statuses = (LOBBY, RUNNING, FINISHED, CANCELLED) if include_ended else (LOBBY, RUNNING)
        async with self._store.reading() as tx:
            ids = await tx.game_ids_of_user(user_id, statuses)
        found = []
        for game_id in ids:
            try:
                found.append(await self.game(game_id))
            except UnknownGame:  # pragma: no cover - games are never deleted
                continue
        return found

    async def view(self, game_id: int, user_id: int) -> GameView:
        """What this player may see: his hand and legal actions, counts of the others."""
        game, live_seats = await self._game_object(game_id)
        for s in live_seats:
            if s.user_id == user_id:
                return game.view(s.seat)
        raise NotInGame(f"user {user_id} has no seat in game {game_id}")

    async def public_view(self, game_id: int) -> GameView:
        """What everyone may see (for a group message): no hand."""
        game, _ = await self._game_object(game_id)
        return game.view(None)

    async def export_record(self, game_id: int) -> dict[str, Any]:
        """The game as a ``durak-record/1`` record, replayed from the stored log
        (not from memory), so it shows exactly what is durable."""
        async with self._store.reading() as tx:
            row = await self._row(tx, game_id)
            if row.start is None:
                raise NotRunning(f"game {game_id} has not started")
            seats = await tx.seats(game_id)
            entries = await tx.log(game_id)
        try:
            game = replay(_record(row, seats, entries))
        except (MalformedRecord, IllegalAction, ValueError, KeyError, TypeError) as e:
            raise DatabaseError(f"game {game_id} cannot be replayed from its log: {e}") from e
        name = f"game {game_id} in chat {row.chat_id}"
        ending = row.ending()
        if ending is not None and ending.reason == SURRENDER:
            name += f", {seats[ending.losers[0]].name} surrendered"
        elif ending is not None and ending.reason == CANCELLED:
            name += ", cancelled"
        return export_record(game, name=name)

    # ---- front-end messages -----------------------------------------------------

    async def set_message(
        self, game_id: int, kind: str, chat_id: int, message_id: int | None
    ) -> None:
        """Remember (or with ``None`` forget) a message posted for this game, so it
        can be edited after a restart: e.g. ``("table", group)``, ``("panel", user)``."""
        async with self._game_lock(game_id):  # no other change to the game meanwhile
            if not await self._store.put_message(game_id, kind, chat_id, message_id):
                raise UnknownGame(f"no game {game_id}")
            live = self._live.get(game_id)
            if live is not None and live.info is not None:
                # the store's list after the write, in the store's order (kind, then chat)
                kept = [m for m in live.info.messages if (m.kind, m.chat_id) != (kind, chat_id)]
                if message_id is not None:
                    kept.append(MessageRef(kind, chat_id, message_id))
                kept.sort(key=lambda m: (m.kind, m.chat_id))
                live.info = replace(live.info, messages=tuple(kept))

    async def message(self, game_id: int, kind: str, chat_id: int) -> int | None:
        async with self._store.reading() as tx:
            for m in await tx.messages(game_id):
                if m.kind == kind and m.chat_id == chat_id:
                    return m.message_id
        return None

    async def messages(self, game_id: int) -> tuple[MessageRef, ...]:
        async with self._store.reading() as tx:
            return tuple(await tx.messages(game_id))

    # ---- tallies and settings ---------------------------------------------------

    async def tally(self, chat_id: int, user_id: int) -> Tally:
        async with self._store.reading() as tx:
            found = await tx.tally(chat_id, user_id)
        return found or Tally(chat_id, user_id, "", 0, 0, 0)

    async def leaderboard(self, chat_id: int, limit: int = 10) -> list[Tally]:
        """Best first: the lowest share of losses, then the most games played."""
        async with self._store.reading() as tx:
            return await tx.leaderboard(chat_id, max(0, limit))

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        async with self._store.reading() as tx:
            return self._settings(chat_id, await tx.chat_settings(chat_id))

    async def set_chat_settings(self, chat_id: int, **changes: Any) -> ChatSettings:
        """Change rule options (RULES.md names), ``turn_timeout`` (seconds or
        ``None``) or ``language``; an open lobby takes the new rules too."""
        unknown = sorted(set(changes) - _RULE_NAMES - {"turn_timeout", "language"})
        if unknown:
            raise InvalidSetting(f"unknown setting(s): {', '.join(unknown)}")
        async with self._chat_lock(chat_id), self._store.transaction() as tx:
            current, chosen = self._read_settings(chat_id, await tx.chat_settings(chat_id))
            merged = {
                **current.rules.to_dict(),
                **{k: v for k, v in changes.items() if k in _RULE_NAMES},
            }
            try:
                rules = Rules.from_dict(merged)
            except (ValueError, TypeError) as e:
                raise InvalidSetting(str(e)) from None
            timeout = changes.get("turn_timeout", current.turn_timeout)
            language = changes.get("language", current.language)
            _check_timeout(timeout)
            _check_language(language)
            settings = ChatSettings(chat_id, rules, timeout, language)
            # Only what the chat chose is stored: no turn_timeout key means "the
            # default", a null one means "no limit".
            stored: dict[str, Any] = rules.changed()
            for key, value in (("turn_timeout", timeout), ("language", language)):
                if key in changes or key in chosen:
                    stored[key] = value
            now = time.time()
            await tx.set_chat_settings(chat_id, _json(stored), now)
            row = await tx.open_game_in_chat(chat_id)
            if row is not None and row.status == LOBBY:
                seated = len(await tx.seats(row.game_id))
                if seated > rules.max_players:
                    raise InvalidSetting(
                        f"the open lobby seats {seated}; {rules.deck} cards allow"
                        f" {rules.max_players}"
                    )
                await tx.update_lobby(row.game_id, now, rules=_rules_json(rules))
            return settings

    async def user_settings(self, user_id: int) -> UserSettings:
        async with self._store.reading() as tx:
            return UserSettings(user_id, await tx.user_language(user_id))

    async def set_user_language(self, user_id: int, language: str | None) -> UserSettings:
        _check_language(language)
        async with self._store.transaction() as tx:
            await tx.set_user_language(user_id, language, time.time())
        return UserSettings(user_id, language)

    # ---- internals ------------------------------------------------------------------

    def _game_lock(self, game_id: int) -> asyncio.Lock:
        lock = self._game_locks.get(game_id)
        if lock is None:
            lock = self._game_locks[game_id] = asyncio.Lock()
        return lock

    def _chat_lock(self, chat_id: int) -> asyncio.Lock:
        lock = self._chat_locks.get(chat_id)
        if lock is None:
            lock = self._chat_locks[chat_id] = asyncio.Lock()
        return lock

    async def _row(self, tx: Tx, game_id: int) -> GameRow:
        row = await tx.game_row(game_id)
        if row is None:
            raise UnknownGame(f"there is no game {game_id}")
        return row

    async def _refuse_open(self, tx: Tx, chat_id: int, thread_id: int = 0) -> None:
        row = await tx.open_game_in_chat(chat_id, thread_id)
        if row is not None and row.status == RUNNING:
            raise GameRunning(f"chat {chat_id} has a running game ({row.game_id})")
        if row is not None:
            raise LobbyExists(f"chat {chat_id} already has an open lobby ({row.game_id})")

    async def _open_lobby(
        self, tx: Tx, chat_id: int, changing: bool = False, thread_id: int = 0
    ) -> GameRow:
        """The topic's open lobby; with ``changing`` (its seats change) not while its
        players choose their suits (``choosing_suits``)."""
        row = await tx.open_game_in_chat(chat_id, thread_id)
        if row is None:
            raise NoLobby(f"chat {chat_id} has no open lobby")
        if row.status == RUNNING:
            raise GameRunning(f"chat {chat_id} has a running game ({row.game_id})")
        if changing and suits.loads(row.snapshot) is not None:
            raise suits_errors.ChoosingSuits(f"lobby {row.game_id} is choosing suits")
        return row

    async def _info_of(self, game_id: int, chat_id: int) -> GameInfo | None:
        try:
            info = await self.game(game_id)
        except UnknownGame:  # pragma: no cover - games are never deleted
            return None
        return info if info.chat_id == chat_id else None

    async def _info(self, tx: Tx, row: GameRow, live: _Live | None = None) -> GameInfo:
        """Build a :class:`GameInfo` inside a transaction (the game's lock held)."""
        seats = tuple(await tx.seats(row.game_id))
        game: Game | None = None
        version = row.version
        if row.status == RUNNING and row.game_id not in self._damaged:
            live = live or self._live.get(row.game_id) or await self._load(tx, row, seats)
            game, version = live.game, live.version
        elif live is not None:
            game = live.game
        elif row.start is not None and row.game_id not in self._damaged:
            game = await self._ended_game(tx, row, seats)
        info = GameInfo(
            game_id=row.game_id,
            chat_id=row.chat_id,
            status=row.status,
            version=version,
            seats=seats,
            creator_id=row.creator_id,
            rules=_rules(row.rules),
            game=game,
            created_at=row.created_at,
            updated_at=row.updated_at,
            messages=tuple(await tx.messages(row.game_id)),
            ending=row.ending(),
            seed=row.seed,
            previous_game_id=row.previous_game_id,
            suit_choice=suits.loads(row.snapshot) if row.status == LOBBY else None,
            thread_id=row.thread_id,
            cap=row.cap,
        )
        cached = self._live.get(row.game_id)
        if (
            cached is not None
            and cached is live
            and row.status == RUNNING
            and cached.version == row.version
            and row.game_id not in self._repair
        ):
            cached.info = info
        return info

    async def _running(self, game_id: int) -> _Live:
        """The running game in memory, loaded from the store if needed (game lock held)."""
        live = self._live.get(game_id)
        if live is None:
            if game_id in self._damaged:
                raise DatabaseError(f"game {game_id} is damaged: {self._damaged[game_id]}")
            async with self._store.reading() as tx:
                row = await self._row(tx, game_id)
                if row.status == LOBBY:
                    raise NotRunning(f"game {game_id} has not started yet")
                if row.status != RUNNING:
                    raise GameOver(f"game {game_id} is over")
                live = await self._load(tx, row, tuple(await tx.seats(game_id)))
        if game_id in self._repair:
            await self._write_repairs([live])
        return live

    async def _write_repairs(self, lives: list[_Live]) -> None:
        """Write back the log's version and snapshot where the stored ones disagreed."""
        async with self._store.transaction() as tx:
            for live in lives:
                snapshot = _snapshot_text(live.game)
                await tx.repair_snapshot(live.game_id, live.version, snapshot, time.time())
                live.info = None
        for live in lives:
            self._repair.discard(live.game_id)

    async def _load(self, tx: Tx, row: GameRow, seats: tuple[Seat, ...]) -> _Live:
        entries = await tx.log(row.game_id)
        try:
            game, problems = _rebuild(row, seats, entries)
        except _Damaged as e:
            self._damaged[row.game_id] = str(e)
            log.error("game %d cannot be replayed from its log: %s", row.game_id, e)
            raise DatabaseError(f"game {row.game_id} is damaged: {e}") from None
        live = self._live.setdefault(
            row.game_id, _Live(row.game_id, row.chat_id, game, len(entries), seats)
        )
        if problems and live.game is game:
            log.warning(
                "game %d: the stored %s disagrees with its action log; the log wins",
                row.game_id,
                " and ".join(problems),
            )
            self._repair.add(row.game_id)
        return live

    async def _load_running(self) -> None:
        """At open: every running game into memory, checked against its log; where
        the stored snapshot or version disagrees, the log wins and is written back.
        A game whose log cannot be replayed is reported and left out (any use of
        it raises :class:`DatabaseError`; ``cancel`` still ends it)."""
        async with self._store.reading() as tx:
            for game_id in await tx.game_ids(RUNNING):
                row = await self._row(tx, game_id)
                try:
                    await self._load(tx, row, tuple(await tx.seats(game_id)))
                except DatabaseError:
                    continue  # logged and remembered by _load
        if self._repair:
            await self._write_repairs([self._live[g] for g in sorted(self._repair)])
        await self._continue_matches()

    async def _ended_game(self, tx: Tx, row: GameRow, seats: tuple[Seat, ...] | list[Seat]) -> Game:
        """A finished or cancelled game's engine object, rebuilt from its log."""
        game = self._ended.get(row.game_id)
        if game is not None:
            self._ended.move_to_end(row.game_id)
            return game
        try:
            game, _ = _rebuild(row, tuple(seats), await tx.log(row.game_id))
        except _Damaged as e:
            raise DatabaseError(f"game {row.game_id} is damaged: {e}") from None
        self._remember_ended(row.game_id, game)
        return game

    def _remember_ended(self, game_id: int, game: Game) -> None:
        self._ended[game_id] = game
        self._ended.move_to_end(game_id)
        while len(self._ended) > _ENDED_CACHE:
            self._ended.popitem(last=False)

    async def _game_object(self, game_id: int) -> tuple[Game, tuple[Seat, ...]]:
        live = self._live.get(game_id)
        if live is not None:
            return live.game, live.seats
        async with self._game_lock(game_id):
            live = self._live.get(game_id)
            if live is not None:
                return live.game, live.seats
            async with self._store.reading() as tx:
                row = await self._row(tx, game_id)
                if row.status == RUNNING:
                    live = await self._running_in(tx, row)
                    return live.game, live.seats
                if row.start is None:
                    if row.status == LOBBY:
                        raise NotRunning(f"game {game_id} has not started yet")
                    raise GameOver(f"game {game_id} was cancelled before it started")
                seats = tuple(await tx.seats(game_id))
                return await self._ended_game(tx, row, seats), seats

    async def _running_in(self, tx: Tx, row: GameRow) -> _Live:
        if row.game_id in self._damaged:
            raise DatabaseError(f"game {row.game_id} is damaged: {self._damaged[row.game_id]}")
        return await self._load(tx, row, tuple(await tx.seats(row.game_id)))

    def _settings(self, chat_id: int, text: str | None) -> ChatSettings:
        return self._read_settings(chat_id, text)[0]

    def _read_settings(self, chat_id: int, text: str | None) -> tuple[ChatSettings, set[str]]:
        """The stored settings, and which of ``turn_timeout`` and ``language`` the
        chat chose (a missing ``turn_timeout`` is the default, ``None`` is off)."""
        if not text:
            return ChatSettings(chat_id, Rules()), set()
        try:
            data = json.loads(text)
            rules = Rules.from_dict({k: v for k, v in data.items() if k in _RULE_NAMES})
            language = data.get("language")
            _check_language(language)
        except (ValueError, TypeError, AttributeError, ServiceError) as e:
            log.warning("chat %d: stored settings are unreadable (%s); using defaults", chat_id, e)
            return ChatSettings(chat_id, Rules()), set()
        chosen = {k for k in ("turn_timeout", "language") if k in data}
        timeout = data.get("turn_timeout", DEFAULT_TURN_TIMEOUT)
        try:
            _check_timeout(timeout)
        except InvalidSetting:
            log.warning("chat %d: stored turn_timeout %r is out of range", chat_id, timeout)
            timeout = DEFAULT_TURN_TIMEOUT
            chosen.discard("turn_timeout")
        return ChatSettings(chat_id, rules, timeout, language), chosen


# ---- pure helpers ---------------------------------------------------------------------


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _rules(text: str) -> Rules:
    try:
        return Rules.from_dict(json.loads(text))
    except (ValueError, TypeError) as e:
        raise DatabaseError(f"stored rules are unreadable: {e}") from None


def _rules_json(rules: Rules) -> str:
    return _json(rules.to_dict())


def _snapshot_dict(game: Game) -> dict[str, Any]:
    """The snapshot without what the store keeps elsewhere: the start (its own
    column, written once) and the history (the action log).

    ``to_snapshot`` would copy the whole history on every action (O(moves), a
    third of an apply's time), only for it to be dropped here; so it is handed an
    empty history for the duration of the call. Synchronous: nobody can observe it.
    """
    history = game.history
    game.history = []
    try:
        snap = to_snapshot(game)
    finally:
        game.history = history
    del snap["start"], snap["history"]
    return snap


def _snapshot_text(game: Game) -> str:
    return _json(_snapshot_dict(game))


def _record(
    row: GameRow, seats: tuple[Seat, ...] | list[Seat], entries: list[LoggedAction]
) -> dict[str, Any]:
    """A ``durak-record/1`` record straight from the stored rows."""
    names = [s.name for s in seats]
    return {
        "format": "durak-record/1",
        "name": f"game {row.game_id}",
        "rules": json.loads(row.rules),
        "players": names,
        "start": json.loads(row.start or "null"),
        "steps": [{"player": names[e.seat], **json.loads(e.step)} for e in entries],
    }


def _rebuild(
    row: GameRow, seats: tuple[Seat, ...], entries: list[LoggedAction]
) -> tuple[Game, list[str]]:
    """Replay a game from its start and log; also say where the stored version
    and snapshot disagree with that replay. :class:`_Damaged` if it cannot."""
    for k, entry in enumerate(entries, 1):
        if entry.version != k:
            raise _Damaged(f"the log skips from version {k - 1} to {entry.version}")
    try:
        game = replay(_record(row, seats, entries))
    except (MalformedRecord, IllegalAction, ValueError, KeyError, TypeError, IndexError) as e:
        raise _Damaged(f"{type(e).__name__}: {e}") from None
    problems = []
    if row.version != len(entries):
        problems.append(f"version ({row.version}, log has {len(entries)})")
    try:
        stored = json.loads(row.snapshot) if row.snapshot else None
    except ValueError:
        stored = None
    if _comparable(stored) != _comparable(json.loads(_json(_snapshot_dict(game)))):
        problems.append("snapshot")
    return game, problems


def _comparable(snapshot: Any) -> Any:
    """A snapshot with its rules as every option's value: a snapshot stored before
    an option existed lists fewer options and means the same game."""
    if isinstance(snapshot, dict) and isinstance(snapshot.get("rules"), dict):
        try:
            return {**snapshot, "rules": Rules.from_dict(snapshot["rules"]).to_dict()}
        except ValueError:
            return snapshot
    return snapshot


def _as_action(action: Action | Mapping[str, Any]) -> Action:
    if isinstance(action, Mapping):
        try:
            return action_from_step(dict(action))
        except (ValueError, TypeError, AttributeError) as e:
            raise BadAction(f"not a readable action: {e}") from None
    if isinstance(action, Action):
        return action
    raise BadAction(f"not an action: {action!r}")


def _seat_name(name: str, seats: tuple[Seat, ...] | list[Seat], seat: int) -> str:
    """A display name the engine accepts: non-empty and unique in the game."""
    base = " ".join(str(name).split())[:_MAX_NAME] or f"Player {seat + 1}"
    taken = {s.name for s in seats}
    candidate, k = base, 2
    while candidate in taken:
        candidate, k = f"{base} ({k})", k + 1
    return candidate


def _check_may(row: GameRow, user_id: int, is_admin: bool, what: str) -> None:
    if not is_admin and row.creator_id != user_id:
        raise NotAllowed(f"only the lobby's creator or an admin may {what}")


def _check_room(row: GameRow, rules: Rules, seated: int) -> None:
    room = min(row.cap or rules.max_players, rules.max_players)
    if seated >= room:
        raise LobbyFull(f"the lobby seats at most {room} players")


def _check_count(rules: Rules, count: int) -> None:
    if count < 2:
        raise NotEnoughPlayers(f"{count} player(s): a game needs at least 2")
    try:
        rules.check_players(count)
    except ValueError as e:
        raise BadPlayerCount(str(e)) from None


def _check_timeout(value: Any) -> None:
    if value is None:
        return
    if type(value) is not int or not 5 <= value <= _MAX_TIMEOUT:
        raise InvalidSetting(
            f"turn_timeout must be whole seconds from 5 to {_MAX_TIMEOUT}, or none"
        )


def _absent(seat: Seat) -> bool:
    return bool(seat.timeouts or seat.away)


def _check_language(value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not _LANGUAGE.match(value)):
        raise InvalidSetting(f"not a language code: {value!r}")


def _continues(game: Game) -> bool:
    """Whether the next game follows at once, without anyone asking (a sprint match)."""
    return game.over and game.next_game().continues


def _scored_rows(seats: tuple[Seat, ...], game: Game) -> list[tuple[int, int, int]]:
    """The tally rows of a game that ended: what it scores (VARIANTS.md 2.6: a sprint
    match counts its losses, not each deal's), nothing while its match scores nothing."""
    scored = game.scored
    if scored is None:
        return []
    return _tally_rows(seats, Ending(PLAYED, scored.losers, scored.draw))


def _tally_rows(seats: tuple[Seat, ...], ending: Ending) -> list[tuple[int, int, int]]:
    """``(user_id, losses, draws)`` for every human seat of a finished game."""
    return [
        (s.user_id, int(s.seat in ending.losers), int(ending.draw))
        for s in seats
        if s.kind == HUMAN
    ]


def _ended(row: GameRow) -> Ending:
    """The ending of a game that may have a next one; refused for a lobby, a running
    game and a cancelled one."""
    if row.status == LOBBY:
        raise NotRunning(f"game {row.game_id} has not started")
    if row.status == RUNNING:
        raise GameRunning(f"game {row.game_id} is still running")
    ending = row.ending()
    if row.status == CANCELLED or ending is None or row.start is None:
        raise NotAllowed(f"game {row.game_id} was cancelled: it has no next game")
    return ending
