"""Reads: lobbies and games by id, chat, topic or player; what a player (or the
group) may see; a game's record; tallies. Nothing here writes."""

from __future__ import annotations

import json
from typing import Any

from ..errors import IllegalAction, MalformedRecord
from ..records import MAX_DEALS, export_record, match_document, replay
from ..view import GameView
from .codec import record_of
from .core import Core
from .errors import DatabaseError, NotInGame, NotRunning, UnknownGame
from .types import CANCELLED, FINISHED, LOBBY, RUNNING, SURRENDER, GameInfo, Tally


class Reads:
    """Every question a front end asks of the games."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def game(self, game_id: int) -> GameInfo:
        """A lobby or game by id; :class:`UnknownGame` if there is none."""
        return await self._core.game(game_id)

    async def active_game(self, chat_id: int, thread_id: int = 0) -> GameInfo | None:
        """The open lobby or running game of the chat's topic (0: no topic)."""
        async with self._core.store.reading() as tx:
            row = await tx.open_game_in_chat(chat_id, thread_id)
        if row is None:
            return None
        try:
            info = await self._core.game(row.game_id)
        except UnknownGame:  # pragma: no cover - games are never deleted
            return None
        return info if info.chat_id == row.chat_id else None

    async def open_topics(self, chat_id: int) -> list[int]:
        """The forum topics of the chat (0: none) that have an open lobby or game."""
        async with self._core.store.reading() as tx:
            return await tx.open_threads(chat_id)

    async def lobby(self, chat_id: int, thread_id: int = 0) -> GameInfo | None:
        info = await self.active_game(chat_id, thread_id)
        return info if info is not None and info.status == LOBBY else None

    async def open_lobbies(self) -> list[GameInfo]:
        """Every open lobby, e.g. to re-arm their expiry after a restart."""
        async with self._core.store.reading() as tx:
            ids = await tx.game_ids(LOBBY)
        infos = [await self._core.game(game_id) for game_id in ids]
        return [info for info in infos if info.status == LOBBY]

    async def suit_choices(self) -> list[GameInfo]:
        """Every lobby choosing suits, e.g. to re-arm their clocks after a restart."""
        return [info for info in await self.open_lobbies() if info.suit_choice is not None]

    async def recent_games(self, chat_id: int, limit: int = 10) -> list[GameInfo]:
        """The chat's finished and cancelled games, the last to end first."""
        async with self._core.store.reading() as tx:
            ids = await tx.ended_game_ids(chat_id, max(0, limit))
        return [await self._core.game(game_id) for game_id in ids]

    async def running_games(self) -> list[GameInfo]:
        """Every running game, e.g. to re-arm timers and messages after a restart."""
        return [await self._core.game(game_id) for game_id in sorted(self._core.live)]

    async def games_of_user(self, user_id: int, include_ended: bool = False) -> list[GameInfo]:
        """The lobbies and running games the user sits in (with ended ones if asked)."""
        statuses = (LOBBY, RUNNING, FINISHED, CANCELLED) if include_ended else (LOBBY, RUNNING)
        async with self._core.store.reading() as tx:
            ids = await tx.game_ids_of_user(user_id, statuses)
        found = []
        for game_id in ids:
            try:
                found.append(await self._core.game(game_id))
            except UnknownGame:  # pragma: no cover - games are never deleted
                continue
        return found

    async def view(self, game_id: int, user_id: int) -> GameView:
        """What this player may see: his hand and legal actions, counts of the others."""
        game, live_seats = await self._core.game_object(game_id)
        for s in live_seats:
            if s.user_id == user_id:
                return game.view(s.seat)
        raise NotInGame(f"user {user_id} has no seat in game {game_id}")

    async def public_view(self, game_id: int) -> GameView:
        """What everyone may see (for a group message): no hand."""
        game, _ = await self._core.game_object(game_id)
        return game.view(None)

    async def export_record(self, game_id: int) -> dict[str, Any]:
        """The game as a ``durak-record/1`` record, replayed from the stored log
        (not from memory), so it shows exactly what is durable."""
        async with self._core.store.reading() as tx:
            row = await self._core.row(tx, game_id)
            if row.start is None:
                raise NotRunning(f"game {game_id} has not started")
            seats = await tx.seats(game_id)
            entries = await tx.log(game_id)
        try:
            game = replay(record_of(row, seats, entries))
        except (MalformedRecord, IllegalAction, ValueError, KeyError, TypeError) as e:
            raise DatabaseError(f"game {game_id} cannot be replayed from its log: {e}") from e
        name = f"game {game_id} in chat {row.chat_id}"
        ending = row.ending()
        if ending is not None and ending.reason == SURRENDER:
            name += f", {seats[ending.losers[0]].name} surrendered"
        elif ending is not None and ending.reason == CANCELLED:
            name += ", cancelled"
        return export_record(game, name=name)

    async def export_match(self, game_id: int) -> dict[str, Any]:
        """The sprint match (or knock-out) ``game_id`` is a deal of, up to that deal,
        as one ``durak-match/1`` document: every deal's record, first to last. The
        deals before it are found through ``previous_game_id`` while a deal's start
        says deals were played before it in its match."""
        chain = [game_id]
        async with self._core.store.reading() as tx:
            row = await self._core.row(tx, game_id)
            while len(chain) < MAX_DEALS and _played_before(row.start) and row.previous_game_id:
                row = await self._core.row(tx, row.previous_game_id)
                chain.append(row.game_id)
        records = [await self.export_record(g) for g in reversed(chain)]
        name = f"match of {len(records)} deals ending with game {game_id}"
        return match_document(records, name=name)

    # ---- tallies ------------------------------------------------------------------

    async def tally(self, chat_id: int, user_id: int) -> Tally:
        async with self._core.store.reading() as tx:
            found = await tx.tally(chat_id, user_id)
        return found or Tally(chat_id, user_id, "", 0, 0, 0)

    async def leaderboard(self, chat_id: int, limit: int = 10) -> list[Tally]:
        """Best first: the lowest share of losses, then the most games played."""
        async with self._core.store.reading() as tx:
            return await tx.leaderboard(chat_id, max(0, limit))


def _played_before(start: str | None) -> bool:
    """Whether a deal's stored start says deals of its match were played before it
    (an unreadable start says nothing: its game's record refuses it)."""
    try:
        found = json.loads(start) if start else None
    except ValueError:
        return False
    match = found.get("match") if isinstance(found, dict) else None
    return isinstance(match, dict) and bool(match.get("played"))
