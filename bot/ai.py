"""AI seats in the bot: they decide off the event loop, after a natural pause.

Easy and normal decide in a few milliseconds, in this process; the hard search
runs in a worker process, so a game's search never stalls anyone else's game.
Whatever goes wrong, the seat still acts: with the turn timer's fallback.
Under ``blind`` the AI answers with the slot it plays (it cannot see its own
cards); :func:`durak.ai.to_action` turns that into the action with
``game.slot_action``.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from concurrent.futures import Executor, ProcessPoolExecutor

from durak.actions import Action
from durak.ai import decide, observation_for, to_action
from durak.ai.agents import BUDGET_MS
from durak.service_types import GameInfo

from .timers import fallback_action

log = logging.getLogger(__name__)

LEVELS = ("easy", "normal", "hard")
#: Who plays for a player the turn timer marked away.
AWAY_LEVEL = "normal"
#: The hard search's time per decision: the budget the arena measured.
HARD_BUDGET_MS = BUDGET_MS


class AiPlayers:
    def __init__(self, hard_budget_ms: int = HARD_BUDGET_MS) -> None:
        self._budget = hard_budget_ms
        self._pool: Executor | None = None

    def _executor(self) -> Executor:
        if self._pool is None:
            # spawn: a fresh interpreter, not a fork of a process with threads and a loop
            self._pool = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn")
            )
        return self._pool

    async def decide(self, info: GameInfo, seat: int) -> Action:
        game = info.game
        assert game is not None
        player = info.seats[seat]
        level = player.level if player.is_ai and player.level in LEVELS else AWAY_LEVEL
        seed = hash((info.game_id, info.version, seat)) & 0x7FFF_FFFF
        try:
            observation = observation_for(game, seat)
            if level == "hard":
                loop = asyncio.get_running_loop()
                choice = await loop.run_in_executor(
                    self._executor(), decide, level, observation, seed, self._budget
                )
            else:
                choice = decide(level, observation, seed)
            return to_action(game, seat, choice)
        except Exception:
            log.exception("the %s AI failed in game %s; it plays the fallback", level, info.game_id)
            return fallback_action(game, seat)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
