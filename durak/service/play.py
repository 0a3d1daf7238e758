"""Playing a running game: an action (or a blind slot), a surrender, a hand-over to
the AI. An action is applied to the game in memory first (the engine refuses
before it changes anything), then written in one store call; if that fails,
memory is dropped and rebuilt from the log."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from .. import store as stores
from ..actions import Action
from ..errors import IllegalAction
from ..games import Game
from .codec import as_action, continues, json_text, scored_rows, snapshot_text, tally_rows
from .core import Core, Live
from .errors import BadAction, GameOver, IllegalMove, NotInGame, ServiceError, StaleVersion
from .rated import earlier_seats, rated_game
from .ratings import RatedGame
from .series import NextGames
from .types import FINISHED, PLAYED, RUNNING, SURRENDER, ApplyResult, Ending, GameInfo, Seat

log = logging.getLogger(__name__)


class Play:
    """The moves of a running game."""

    def __init__(self, core: Core, series: NextGames) -> None:
        self._core = core
        self._series = series  # a sprint deal that ends is followed by the next one

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
        match's next deal (``next_game_id``; see :meth:`NextGames.next_deal`).
        """
        act = as_action(action)
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
        if not result.finished or not continues(result.game):
            return result
        try:
            following = await self._series.next_deal(result.game_id)
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
        async with self._core.locked(games=[game_id]):
            live = await self._core.running(game_id)
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
                self._core.drop(game_id)  # an engine bug: trust only the store now
                raise
            new_version = live.version + 1
            result = game.result
            ending = None if result is None else Ending(PLAYED, result.losers, result.draw)
            now = time.time()
            with self._core.repairing(game_id):  # the move is in memory only until written
                rated = None if ending is None else await self._rated(live, ending, now)
            write = stores.ActionWrite(
                game_id,
                live.chat_id,
                new_version,
                seat,
                user_id,
                json_text(act.step()),
                snapshot_text(game),
                now,
                ending,
                () if ending is None else tuple(scored_rows(live.seats, game)),
                rated,
            )
            with self._core.repairing(game_id):  # memory ran ahead of a failed write
                if not await self._core.store.record_action(write):
                    raise StaleVersion(f"game {game_id} moved on in the store", -1)
            live.version = new_version
            if live.info is not None:
                live.info = replace(live.info, version=new_version, updated_at=write.now)
            if ending is not None:
                self._core.forget(game_id)
            return ApplyResult(
                game_id, live.chat_id, new_version, seat, act, game, ending is not None, ending
            )

    async def _rated(self, live: Live, ending: Ending, now: float) -> RatedGame | None:
        """The game that just ended as rated (``None``: not rated). A failure here
        leaves the game unrated rather than unfinished."""
        try:
            earlier: dict[str, Seat] = {}
            if live.game.rules.sprint and not continues(live.game):
                async with self._core.store.reading() as tx:
                    earlier = await earlier_seats(tx, live.game_id)
            return rated_game(
                live.game_id, live.chat_id, now, live.seats, live.game, ending, earlier
            )
        except Exception:
            log.exception("game %d: its rating could not be worked out", live.game_id)
            return None

    async def surrender(self, game_id: int, user_id: int) -> GameInfo:
        """The player leaves a running game: it ends with him as the loser."""
        async with self._core.locked(games=[game_id]):
            live = await self._core.running(game_id)
            seat = live.seat_of(user_id)
            ending = Ending(SURRENDER, (seat,), False, user_id)
            now = time.time()
            rated = await self._rated(live, ending, now)
            async with self._core.write(repair=[game_id]) as w:
                if not await w.tx.end_game(game_id, RUNNING, FINISHED, ending, now):
                    raise GameOver(f"game {game_id} has already ended")
                await w.tx.add_tallies(live.chat_id, tally_rows(live.seats, ending))
                if rated is not None:
                    await w.tx.rate_game(rated)
                w.after(lambda: self._core.forget(game_id))
                return await self._core.info_now(w.tx, game_id, live)

    async def hand_over(self, game_id: int, user_id: int) -> GameInfo:
        """The player leaves the running game (``/leave``, confirmed): the AI plays his
        seat for the rest of it, and his tally counts what that seat scores (he is the
        durak only if it loses). Unlike :meth:`surrender`, the game goes on."""
        async with self._core.locked(games=[game_id]):
            live = await self._core.running(game_id)
            seat = live.seats[live.seat_of(user_id)]
            if seat.left:
                raise NotInGame(f"user {user_id} already left game {game_id}")
            async with self._core.write(repair=[game_id]) as w:
                updated = await w.tx.hand_to_ai(game_id, user_id)
                if updated is None:
                    raise NotInGame(f"user {user_id} already left game {game_id}")
                w.after(lambda: live.set_seat(updated))
        return await self._core.game(game_id)
