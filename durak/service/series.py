"""A series: Play again (a lobby of the same players, each confirms), and a sprint
match's next deal, which follows at once (and after a crash, at the next open)."""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from ..games import AFTER_LOSS, Game, Series
from . import suits
from .codec import continues, json_text, rules_of, snapshot_text
from .core import Core, Live, Write
from .errors import (
    ChoosingSuits,
    DatabaseError,
    GameOver,
    GameRunning,
    LobbyExists,
    NotAllowed,
    NotInGame,
    NotRunning,
    ServiceError,
)
from .messages import Messages
from .starting import series_seats, start_if_full
from .types import CANCELLED, FINISHED, LOBBY, PLAYED, RUNNING, SURRENDER, Ending, GameInfo, Seat

if TYPE_CHECKING:
    from ..store.base import GameRow

log = logging.getLogger(__name__)


class NextGames:
    """What follows a game of a series."""

    def __init__(self, core: Core, messages: Messages) -> None:
        self._core = core
        self._messages = messages  # a match keeps one table message

    async def play_again(self, game_id: int, user_id: int) -> GameInfo:
        """Open the Play-again lobby after game ``game_id``: the same players (who did
        not ``/leave`` it) and rules, its AI seats too, in the series' seat order; the
        presser has confirmed. Once it exists, a press confirms him in it
        (:meth:`confirm`); when every human has, it starts (the series' dealer deals)."""
        async with self._core.store.reading() as tx:
            row = await self._core.row(tx, game_id)
        async with self._core.write(chat=row.chat_id) as w:
            following = await w.tx.next_game_of(game_id)
            if following is None:
                return await self._again_lobby(w, game_id, user_id)
            return await self._confirm(w, await self._core.row(w.tx, following), user_id)

    async def confirm(self, lobby_id: int, user_id: int) -> GameInfo:
        """The player confirms he plays the Play-again lobby's game; when every human
        in it has, it starts (returned running). Confirming twice changes nothing."""
        async with self._core.store.reading() as tx:
            row = await self._core.row(tx, lobby_id)
        async with self._core.write(chat=row.chat_id) as w:
            return await self._confirm(w, await self._core.row(w.tx, lobby_id), user_id)

    async def _confirm(self, w: Write, row: GameRow, user_id: int) -> GameInfo:
        if row.status != LOBBY:
            seats = await w.tx.seats(row.game_id)
            if row.status == RUNNING and any(s.user_id == user_id for s in seats):
                return await self._core.info(w.tx, row)  # it started: he plays it
            raise GameOver(f"game {row.game_id} is no longer a lobby")
        if row.previous_game_id is None:
            raise NotAllowed(f"lobby {row.game_id} is not a Play-again lobby")
        if suits.loads(row.snapshot) is not None:
            raise ChoosingSuits(f"lobby {row.game_id} is choosing suits")
        if not any(s.user_id == user_id for s in await w.tx.seats(row.game_id)):
            raise NotInGame(f"user {user_id} has no seat in lobby {row.game_id}")
        if await w.tx.set_ready(row.game_id, user_id):
            await w.tx.update_lobby(row.game_id, time.time())
        return await start_if_full(self._core, w, row.game_id)

    async def _again_lobby(self, w: Write, game_id: int, user_id: int) -> GameInfo:
        row = await self._core.row(w.tx, game_id)
        ending = _ended(row)
        seats = list(await w.tx.seats(game_id))
        mine = next((s for s in seats if s.user_id == user_id), None)
        if mine is None:
            raise NotInGame(f"user {user_id} did not play game {game_id}")
        if mine.left:
            raise NotAllowed(f"user {user_id} left game {game_id}")
        await self._core.refuse_open(w.tx, row.chat_id, row.thread_id)
        if ending.reason != SURRENDER:
            series = (await self._core.ended_game(w.tx, row, seats)).next_game()
            if series.players is not None:
                seats = await series_seats(self._core, w, row, seats, series.players)
        kept = [s for s in seats if not s.left]
        seats = [
            Seat(k, s.user_id, s.name, s.kind, s.level, ready=s.user_id == user_id, app=s.app)
            for k, s in enumerate(kept)
        ]
        creator = row.creator_id if any(s.user_id == row.creator_id for s in seats) else user_id
        new_id = await w.tx.insert_game(
            row.chat_id,
            creator,
            row.rules,
            time.time(),
            previous_game_id=game_id,
            thread_id=row.thread_id,  # the series plays on in its topic
        )
        if new_id is None:
            raise LobbyExists(f"chat {row.chat_id} already has an open lobby or game")
        await w.tx.replace_seats(new_id, seats)
        return await self._core.info_now(w.tx, new_id)

    async def next_deal(self, game_id: int) -> GameInfo | None:
        """A sprint match's next deal after deal ``game_id``, started if it was not
        yet (the service does so itself after the ending action; the start-up sweep
        after a crash in between). ``None`` if the match does not go on."""
        async with self._core.store.reading() as tx:
            row = await self._core.row(tx, game_id)
        async with self._core.write(chat=row.chat_id) as w:
            following = await w.tx.next_game_of(game_id)
            if following is not None:
                return await self._core.info_now(w.tx, following)
            row = await self._core.row(w.tx, game_id)
            if row.status != FINISHED or row.start is None:
                return None
            ending = row.ending()
            if ending is None or ending.reason != PLAYED:
                return None
            seats = await w.tx.seats(game_id)
            if not continues(await self._core.ended_game(w.tx, row, seats)):
                return None
            info = await self._next_game(w, row)
        # The match keeps one table message: the next deal edits the same one.
        if not any(m.kind == "table" for m in info.messages):
            for m in await self._messages.messages(game_id):
                if m.kind == "table" and m.chat_id == row.chat_id:
                    await self._messages.set_message(info.game_id, "table", m.chat_id, m.message_id)
                    info = await self._core.game(info.game_id)
        return info

    async def continue_matches(self, recent: int = 200) -> None:
        """At open: a sprint deal that ended just before a crash, its match not
        decided, gets its next deal now. Only the ``recent`` last finished games are
        looked at: a crash leaves at most the games that ended right before it."""
        async with self._core.store.reading() as tx:
            ids = sorted(await tx.game_ids(FINISHED))[-recent:]
            candidates = []
            for game_id in ids:
                row = await self._core.row(tx, game_id)
                try:
                    sprint = rules_of(row.rules).sprint
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

    async def _next_game(self, w: Write, row: GameRow) -> GameInfo:
        """The match's next deal after ``row`` (it has none yet), dealt at once with
        the players its series names; it enters memory after the commit."""
        game_id = row.game_id
        ending = _ended(row)
        seats = list(await w.tx.seats(game_id))
        await self._core.refuse_open(w.tx, row.chat_id, row.thread_id)
        if ending.reason == SURRENDER:
            loser = seats[ending.losers[0]].name
            series = Series(AFTER_LOSS, dealer=loser, previous_loser=loser)
        else:
            series = (await self._core.ended_game(w.tx, row, seats)).next_game()
        if series.players is not None:
            seats = await series_seats(self._core, w, row, seats, series.players)
        # The next game starts with everyone present.
        seats = [replace(s, timeouts=0, away=False) for s in seats]
        seed = str(secrets.randbits(63))
        game = Game.from_seed(rules_of(row.rules), [s.name for s in seats], seed, series)
        new_id = await w.tx.insert_game(
            row.chat_id,
            row.creator_id,
            row.rules,
            time.time(),
            previous_game_id=game_id,
            seed=seed,
            start=json_text(game.start),
            snapshot=snapshot_text(game),
            thread_id=row.thread_id,  # the series plays on in its topic
        )
        if new_id is None:
            raise LobbyExists(f"chat {row.chat_id} already has an open lobby or game")
        await w.tx.replace_seats(new_id, seats)
        live = Live(new_id, row.chat_id, game, 0, tuple(seats))
        w.enter(live)
        return await self._core.info_now(w.tx, new_id, live)


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
