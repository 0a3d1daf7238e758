"""Lobbies: open one, sit down, seat an AI, leave, cap, start, choose the own
trumps' suits, cancel, and the lobbies nobody uses any more."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from ..rules import Rules
from . import suits
from .codec import rules_json, rules_of, settings_of
from .core import Core, Write
from .errors import (
    AlreadyJoined,
    BadPlayerCount,
    ChoosingSuits,
    GameOver,
    GameRunning,
    LobbyExists,
    LobbyFull,
    NoLobby,
    NotAllowed,
    NotInGame,
    NotYourChoice,
    SuitTaken,
)
from .play import Play
from .starting import begin, check_count, start_if_full, suit_step
from .types import AI, CANCELLED, LOBBY, RUNNING, Ending, GameInfo, LeaveResult, Seat, SuitChoice

if TYPE_CHECKING:
    from ..store.base import GameRow, Tx

_MAX_NAME = 64


class Lobbies:
    """A lobby's life, from ``/newgame`` to its deal or its end."""

    def __init__(self, core: Core, play: Play) -> None:
        self._core = core
        self._play = play  # leaving a running game surrenders it

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
        async with self._core.write(chat=chat_id) as w:
            await self._core.refuse_open(w.tx, chat_id, thread_id)
            now = time.time()
            await w.tx.upsert_chat(chat_id, chat_title, now)
            settings = settings_of(chat_id, await w.tx.chat_settings(chat_id))
            await w.tx.upsert_user(user_id, name, now)
            chosen = rules if rules is not None else settings.rules
            game_id = await w.tx.insert_game(
                chat_id, user_id, rules_json(chosen), now, thread_id=thread_id
            )
            if game_id is None:
                raise LobbyExists(f"chat {chat_id} already has an open lobby or game")
            await w.tx.add_seat(game_id, Seat(0, user_id, seat_name(name, (), 0)))
            return await self._core.info_now(w.tx, game_id)

    async def join(
        self, chat_id: int, user_id: int, name: str, thread_id: int = 0, app: bool = False
    ) -> GameInfo:
        """Sit down in the topic's lobby (joining confirms: ``ready``); ``app``: from the
        Mini App, by a player the front end cannot write to (``Seat.app``). The lobby
        that is full with him (its cap reached) starts itself: the dealt game is returned."""
        async with self._core.write(chat=chat_id) as w:
            row = await open_lobby(w.tx, chat_id, changing=True, thread_id=thread_id)
            seats = await w.tx.seats(row.game_id)
            if any(s.user_id == user_id for s in seats):
                raise AlreadyJoined(f"user {user_id} already sits in lobby {row.game_id}")
            _check_room(row, rules_of(row.rules), len(seats))
            now = time.time()
            await w.tx.upsert_user(user_id, name, now)
            ready = row.previous_game_id is not None  # joining confirms
            name = seat_name(name, seats, len(seats))
            seat = Seat(len(seats), user_id, name, ready=ready, app=app)
            await w.tx.add_seat(row.game_id, seat)
            await w.tx.update_lobby(row.game_id, now)
            return await start_if_full(self._core, w, row.game_id)

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
        async with self._core.write(chat=chat_id) as w:
            row = await open_lobby(w.tx, chat_id, changing=True, thread_id=thread_id)
            _check_may(row, by_user, is_admin, "add an AI player")
            seats = await w.tx.seats(row.game_id)
            _check_room(row, rules_of(row.rules), len(seats))
            ai_id = min([s.user_id for s in seats if s.is_ai] + [0]) - 1
            name = seat_name(name.format(n=-ai_id, level=level), seats, len(seats))
            await w.tx.add_seat(row.game_id, Seat(len(seats), ai_id, name, AI, level))
            await w.tx.update_lobby(row.game_id, time.time())
            return await start_if_full(self._core, w, row.game_id)

    async def leave(self, chat_id: int, user_id: int, thread_id: int = 0) -> LeaveResult:
        """Leave the chat's lobby, or surrender its running game.

        When the lobby's creator leaves, the next human in it becomes the creator;
        when no human is left, the lobby is cancelled (``outcome == "closed"``).
        """
        async with self._core.chat_lock(chat_id):
            async with self._core.write() as w:
                row = await w.tx.open_game_in_chat(chat_id, thread_id)
                if row is None:
                    raise NoLobby(f"chat {chat_id} has no open lobby or game")
                if row.status == LOBBY:
                    return await self._leave_lobby(w, row, user_id)
            return LeaveResult("surrendered", await self._play.surrender(row.game_id, user_id))

    async def _leave_lobby(self, w: Write, row: GameRow, user_id: int) -> LeaveResult:
        """Without him; a Play-again lobby where everyone left has confirmed starts
        (``info`` is then running)."""
        if suits.loads(row.snapshot) is not None:
            raise ChoosingSuits(f"lobby {row.game_id} is choosing suits")
        seats = await w.tx.seats(row.game_id)
        if not any(s.user_id == user_id for s in seats):
            raise NotInGame(f"user {user_id} is not in lobby {row.game_id}")
        kept: list[Seat] = []
        for s in seats:
            if s.user_id != user_id:
                kept.append(replace(s, seat=len(kept)))  # a confirmation stays
        await w.tx.replace_seats(row.game_id, kept)
        now = time.time()
        humans = [s for s in kept if not s.is_ai]
        ending = Ending(CANCELLED, by_user=user_id)
        if not humans:
            await w.tx.end_game(row.game_id, LOBBY, CANCELLED, ending, now)
            return LeaveResult("closed", await self._core.info_now(w.tx, row.game_id))
        if row.creator_id == user_id:
            await w.tx.update_lobby(row.game_id, now, creator_id=humans[0].user_id)
        else:
            await w.tx.update_lobby(row.game_id, now)
        if row.previous_game_id is not None:
            return LeaveResult("left", await start_if_full(self._core, w, row.game_id))
        return LeaveResult("left", await self._core.info_now(w.tx, row.game_id))

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
        async with self._core.write(chat=chat_id) as w:
            row = await open_lobby(w.tx, chat_id, thread_id=thread_id)
            _check_may(row, user_id, is_admin, "start the game")
            if suits.loads(row.snapshot) is not None:
                raise ChoosingSuits(f"lobby {row.game_id} is choosing suits")
            if row.previous_game_id is not None:  # his Start confirms him too
                await w.tx.set_ready(row.game_id, user_id)
            return await begin(self._core, w, row, seed)

    async def choose_suit(
        self, game_id: int, user_id: int, suit: str | None = None, turn: int | None = None
    ) -> GameInfo:
        """Own trumps: ``user_id`` chooses ``suit`` as his trump for the series. With
        ``suit`` ``None`` (his time ran out) he gets the first free suit; ``turn``
        (how many had chosen when the clock started) makes a late clock do nothing.
        Refusals: ``no_lobby``, ``not_in_game``, ``not_your_choice``, ``suit_taken``."""
        async with self._core.store.reading() as tx:
            chat_id = (await self._core.row(tx, game_id)).chat_id
        async with self._core.write(chat=chat_id) as w:
            row = await self._core.row(w.tx, game_id)
            choice = suits.loads(row.snapshot) if row.status == LOBBY else None
            if choice is None or row.seed is None:
                raise NoLobby(f"game {game_id} is not choosing suits")
            seats = await w.tx.seats(game_id)
            seat = next((s.seat for s in seats if s.user_id == user_id), None)
            if seat is None:
                raise NotInGame(f"user {user_id} is not in lobby {game_id}")
            if seat != choice.seat or (turn is not None and turn != len(choice.chosen)):
                raise NotYourChoice(f"seat {choice.seat} chooses now")
            letter = suits.first_free(choice) if suit is None else suit
            if letter not in choice.free:
                raise SuitTaken(f"{letter!r} is not a free suit")
            choice = SuitChoice(choice.order, (*choice.chosen, letter))
            choice = suits.with_ai_choices(choice, seats)
            rules = rules_of(row.rules)
            return await suit_step(self._core, w, row, seats, rules, row.seed, choice)

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
        async with self._core.write(chat=chat_id) as w:
            row = await open_lobby(w.tx, chat_id, changing=True, thread_id=thread_id)
            _check_may(row, user_id, is_admin, "cap the lobby")
            seats = await w.tx.seats(row.game_id)
            if cap is not None:
                if type(cap) is not int or cap < max(2, len(seats)):
                    raise BadPlayerCount(f"a cap of {cap!r} with {len(seats)} seated")
                check_count(rules_of(row.rules), cap)
            await w.tx.set_cap(row.game_id, cap, time.time())
            return await start_if_full(self._core, w, row.game_id)

    # ---- ending a lobby or game without a loser -----------------------------------

    async def cancel(
        self, chat_id: int, user_id: int, is_admin: bool = False, thread_id: int = 0
    ) -> GameInfo:
        """End the topic's lobby or running game without a loser (the creator or an
        admin only). No tally changes."""
        async with self._core.chat_lock(chat_id):
            async with self._core.store.reading() as tx:
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
        async with self._core.chat_lock(chat_id):
            async with self._core.store.reading() as tx:
                row = await tx.open_game_in_chat(chat_id, thread_id)
            return None if row is None else await self._cancel(row, None)

    async def expire_lobbies(self, idle_seconds: float, now: float | None = None) -> list[GameInfo]:
        """Cancel every lobby unchanged for ``idle_seconds`` (``by_user`` ``None``)
        and return them. ``now`` (a Unix time) only moves the cut-off, for tests."""
        if not idle_seconds >= 0:
            raise ValueError(f"idle_seconds must be 0 or more, not {idle_seconds!r}")
        cutoff = (time.time() if now is None else now) - idle_seconds
        async with self._core.store.reading() as tx:
            rows = await tx.idle_lobbies(cutoff)
        expired = []
        for row in rows:
            async with self._core.chat_lock(row.chat_id):
                info = await self._cancel(row, None, idle_before=cutoff)
            if info is not None:
                expired.append(info)
        return expired

    async def _cancel(
        self, row: GameRow, by_user: int | None, idle_before: float | None = None
    ) -> GameInfo | None:
        """Cancel an open game (the chat's lock held); ``None`` if it ended
        meanwhile or, with ``idle_before``, is no longer a lobby idle since then."""
        async with self._core.locked(games=[row.game_id]), self._core.write() as w:
            if idle_before is not None:
                current = await self._core.row(w.tx, row.game_id)
                if current.status != LOBBY or current.updated_at >= idle_before:
                    return None
            ending = Ending(CANCELLED, by_user=by_user)
            if not await w.tx.end_game(row.game_id, row.status, CANCELLED, ending, time.time()):
                return None
            live = self._core.live.get(row.game_id)
            w.after(lambda: self._core.forget(row.game_id))
            return await self._core.info_now(w.tx, row.game_id, live)


async def open_lobby(tx: Tx, chat_id: int, changing: bool = False, thread_id: int = 0) -> GameRow:
    """The topic's open lobby; with ``changing`` (its seats change) not while its
    players choose their suits (``choosing_suits``)."""
    row = await tx.open_game_in_chat(chat_id, thread_id)
    if row is None:
        raise NoLobby(f"chat {chat_id} has no open lobby")
    if row.status == RUNNING:
        raise GameRunning(f"chat {chat_id} has a running game ({row.game_id})")
    if changing and suits.loads(row.snapshot) is not None:
        raise ChoosingSuits(f"lobby {row.game_id} is choosing suits")
    return row


def seat_name(name: str, seats: tuple[Seat, ...] | list[Seat], seat: int) -> str:
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
