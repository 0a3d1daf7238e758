"""AI seats in the bot: they decide off the event loop, after a natural pause.

Easy and normal decide in a few milliseconds, in this process; the hard search
runs in a pool of worker processes, so a game's search never stalls anyone else's
game. Three guards keep the hard AI from holding a game up:

- the pool is supervised: a worker that dies breaks a ``ProcessPoolExecutor`` for
  good, so a broken pool is replaced by a fresh one and the decision retried once;
- one group may have only ``per_group`` hard decisions in flight: a group with many
  hard seats (or many games) waits its turn instead of filling the pool's queue for
  everyone else;
- a decision that waits longer than ``wait_limit`` (queued behind others, or a slow
  machine) is played by ``normal``: the table moves on.

Whatever else goes wrong, the seat still acts: with the turn timer's fallback.
Under ``blind`` the AI answers with the slot it plays (it cannot see its own
cards); :func:`durak.ai.to_action` turns that into the action with
``game.slot_action``.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from durak.actions import Action
from durak.ai import PileObservation, decide, observation_for, to_action
from durak.ai.agents import BUDGET_MS, Choice
from durak.ai.observation import Observation
from durak.service import GameInfo

from .timers import fallback_action

log = logging.getLogger(__name__)

LEVELS = ("easy", "normal", "hard")
#: Who plays for a player the turn timer marked away, and for a hard seat kept waiting.
AWAY_LEVEL = "normal"
#: The hard search's time per decision: the budget the arena measured.
HARD_BUDGET_MS = BUDGET_MS
#: Hard decisions one group may have in flight at once.
PER_GROUP = 2


def default_workers() -> int:
    """One core is left to the event loop and the database thread."""
    return max(1, min(4, (os.cpu_count() or 2) - 1))


class AiPool:
    """The bot's AI seats' deciders: easy and normal in-process, hard in a supervised
    pool of worker processes (the players themselves are :mod:`durak.ai`)."""

    def __init__(
        self,
        hard_budget_ms: int = HARD_BUDGET_MS,
        *,
        workers: int | None = None,
        per_group: int = PER_GROUP,
        wait_limit: float | None = None,
    ) -> None:
        self._budget = hard_budget_ms
        self._workers = workers or default_workers()
        self._per_group = per_group
        # a search takes its budget; waiting for a few others' is fair, more is not
        self._wait_limit = (
            wait_limit if wait_limit is not None else max(2.0, 6 * hard_budget_ms / 1000)
        )
        self._pool: Executor | None = None
        self._groups: dict[int, tuple[asyncio.Semaphore, list[int]]] = {}
        self.replaced = 0  # pools replaced after a worker died
        self.by_normal = 0  # hard decisions that waited too long
        self.peak_per_group = 0  # most hard decisions one group had in flight

    def _executor(self) -> Executor:
        if self._pool is None:
            # spawn: a fresh interpreter, not a fork of a process with threads and a loop
            self._pool = ProcessPoolExecutor(
                max_workers=self._workers, mp_context=multiprocessing.get_context("spawn")
            )
        return self._pool

    def _replace(self, broken: Executor) -> None:
        if self._pool is broken:
            broken.shutdown(wait=False, cancel_futures=True)
            self._pool = None
            self.replaced += 1
            log.warning("an AI worker process died: its pool is replaced")

    async def decide(self, info: GameInfo, seat: int) -> Action:
        game = info.game
        assert game is not None
        player = info.seats[seat]
        level = player.level if player.is_ai and player.level in LEVELS else AWAY_LEVEL
        seed = hash((info.game_id, info.version, seat)) & 0x7FFF_FFFF
        try:
            observation = observation_for(game, seat)
            if level == "hard":
                choice = await self._hard(info.chat_id, observation, seed, info.game_id)
            else:
                choice = decide(level, observation, seed)
            return to_action(game, seat, choice)
        except Exception:
            log.exception("the %s AI failed in game %s; it plays the fallback", level, info.game_id)
            return fallback_action(game, seat)

    async def _hard(
        self, chat_id: int, observation: Observation | PileObservation, seed: int, game_id: int
    ) -> Choice:
        """The hard search, within the group's bound and the wait limit; else normal."""
        semaphore, users = self._groups.setdefault(
            chat_id, (asyncio.Semaphore(self._per_group), [0, 0])
        )
        users[0] += 1
        try:
            async with asyncio.timeout(self._wait_limit):
                async with semaphore:
                    users[1] += 1
                    self.peak_per_group = max(self.peak_per_group, users[1])
                    try:
                        return await self._in_pool(observation, seed)
                    finally:
                        users[1] -= 1
        except TimeoutError:
            self.by_normal += 1
            log.info("a hard AI decision of game %s waited too long: normal plays", game_id)
            return decide(AWAY_LEVEL, observation, seed)
        finally:
            users[0] -= 1
            if not users[0]:
                self._groups.pop(chat_id, None)

    async def _in_pool(self, observation: Observation | PileObservation, seed: int) -> Choice:
        loop = asyncio.get_running_loop()
        for attempt in range(2):
            pool = self._executor()
            try:
                return await loop.run_in_executor(
                    pool, decide, "hard", observation, seed, self._budget
                )
            except BrokenProcessPool:
                self._replace(pool)
                if attempt:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
