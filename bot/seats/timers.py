"""Turn timers: the game never waits forever.

Each running game has at most one deadline, for its current version: whoever the
game waits for acts by then, or the bot acts for them (a thrower passes, the
defender covers with his cheapest card that beats and takes only when he cannot,
an opener plays his lowest card: ``Game.timeout_action``). Deadlines are stored, so they
survive a restart. A player who timed out two decisions in a row is away: the
bot plays for him at once until he presses a button again. AI seats are played
the same way, by their own decision function.

The last timeouts are kept (in memory) for the table's line "Clara ran out of
time: passed" (bot/screens/presenter.py shows it for the rest of that bout and the next).

A clock must never die with a failed write (a full disk for two seconds): storing a
deadline is best effort (the clock runs in memory anyway), and a sweep re-arms every
running game found without a live clock.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from durak import Game
from durak.actions import Action
from durak.service import RUNNING, ChatSettings, GameInfo, GameService, ServiceError, StaleVersion

from ..clock import WALL, Clock

log = logging.getLogger(__name__)

#: Re-render the table when this many seconds are left, so the shown time stays honest.
TICKS = (30, 10)

Changed = Callable[[GameInfo, bool], Awaitable[None]]  # (info, finished): show it, re-arm
Show = Callable[[int], Awaitable[None]]  # re-render a game (the time left changed)
Settings = Callable[[int], Awaitable[ChatSettings]]  # a chat's settings (cached by the caller)
Decide = Callable[[GameInfo, int], Awaitable[Action]]


def fallback_action(game: Game, seat: int) -> Action:
    """What the bot does for a player who ran out of time (the game decides)."""
    return game.timeout_action(seat)


class TurnTimers:
    def __init__(
        self,
        service: GameService,
        changed: Changed,
        show: Show,
        *,
        settings: Settings | None = None,
        decide: Decide | None = None,
        away_delay: float = 1.0,
        ai_pause: float = 1.2,
        time_scale: float = 1.0,
        clock: Clock = WALL,
    ) -> None:
        self._service = service
        self._changed = changed
        self._show = show
        self._settings = settings or service.chat_settings
        self._decide = decide
        self._away_delay = away_delay
        self._ai_pause = ai_pause  # an AI "thinks" a moment: people can follow the table
        self._scale = time_scale  # tests run Telegram's clock faster
        self._clock = clock
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._deadlines: dict[int, tuple[int, float]] = {}  # game -> (version, deadline)
        self._armed: dict[int, int] = {}  # game -> the newest version a clock was set for
        #: game -> the version arm() is setting a clock for right now (between dropping
        #: the old clock and starting the new one it reads the game and the chat's settings)
        self._arming: dict[int, int] = {}
        self._unclocked: dict[int, int] = {}  # game -> version that needs no clock (no limit)
        self._since: dict[int, tuple[int, float]] = {}  # game -> (version, its wait began)
        #: game -> (the version they led to, ((seat, what the bot did), ...)): the last timeouts
        self._timeouts: dict[int, tuple[int, tuple[tuple[int, str], ...]]] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self._closed = False

    def left(self, game_id: int, version: int) -> int | None:
        """Whole seconds left for this version of the game, if a deadline runs."""
        found = self._deadlines.get(game_id)
        if found is None or found[0] != version:
            return None
        return max(0, math.ceil((found[1] - self._clock.now()) / self._scale))

    def waited(self, game_id: int, version: int) -> float | None:
        """Seconds (the players' own) this version of the game has waited on its people
        so far; None unless its clock, or its no-limit wait, is on (/skip asks: a vote
        counts only after a real share of the turn). After a restart, a stored deadline
        counts from a whole turn before it."""
        found = self._since.get(game_id)
        if found is None or found[0] != version:
            return None
        return max(0.0, (self._clock.now() - found[1]) / self._scale)

    def last_timeouts(self, game_id: int) -> tuple[int, tuple[tuple[int, str], ...]] | None:
        """The game's last timeouts: (the version they led to, ((seat, what the bot did
        for him: ``Action.step()``'s ``do``), ...)); the presenter decides how long
        the table shows them."""
        return self._timeouts.get(game_id)

    def cancel(self, game_id: int) -> None:
        task = self._tasks.pop(game_id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        self._deadlines.pop(game_id, None)
        self._unclocked.pop(game_id, None)
        self._since.pop(game_id, None)

    def forget(self, game_id: int) -> None:
        """A game ended: drop everything kept for it (bounded memory)."""
        self.cancel(game_id)
        self._armed.pop(game_id, None)
        self._timeouts.pop(game_id, None)

    def has_clock(self, info: GameInfo) -> bool:
        """Whether the game's current version is looked after: a clock task is alive,
        or this version needs none (no turn limit)."""
        task = self._tasks.get(info.game_id)
        if task is not None and not task.done():
            return True
        if self._arming.get(info.game_id, -1) >= info.version:
            return True  # its clock is being set (a sweep meanwhile would warn for nothing)
        return self._unclocked.get(info.game_id) == info.version

    async def sweep(self) -> int:
        """Re-arm every running game without a live clock; how many were re-armed."""
        rearmed = 0
        for info in await self._service.running_games():
            if self._closed:
                break
            if not self.has_clock(info):
                log.warning("game %s had no turn clock: re-armed", info.game_id)
                self._armed.pop(info.game_id, None)
                await self.arm(info)
                rearmed += 1
        return rearmed

    def start_sweeping(self, every: float) -> None:
        async def loop() -> None:
            while True:
                await asyncio.sleep(every)
                try:
                    await self.sweep()
                except ServiceError as e:
                    log.warning("turn clock sweep failed: %s", e.code)

        self._sweeper = asyncio.create_task(loop(), name="turn-clock-sweeper")

    async def close(self) -> None:
        """Stop every clock (the deadlines stay stored for the next start)."""
        self._closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def arm(self, info: GameInfo, resume_at: float | None = None) -> None:
        """Start the clock for the game's current version (after every change)."""
        if info.version < self._armed.get(info.game_id, -1):
            return  # a slower caller with an older state: the newer clock stands
        self._armed[info.game_id] = info.version
        self._arming[info.game_id] = info.version
        try:
            await self._arm(info, resume_at)
        finally:
            if self._arming.get(info.game_id) == info.version:
                del self._arming[info.game_id]

    async def _arm(self, info: GameInfo, resume_at: float | None) -> None:
        game = info.game
        since = self._since.get(info.game_id)
        self.cancel(info.game_id)
        if self._closed or info.status != RUNNING or game is None or game.result is not None:
            if info.status != RUNNING:
                self._armed.pop(info.game_id, None)
            return
        actors = game.actors()
        seats = info.seats
        try:  # a press's info of this same version can predate a timeout's away mark
            fresh = await self._service.game(info.game_id)
        except ServiceError:
            fresh = info
        if fresh.version == info.version:
            seats = fresh.seats
        stand_in = [s for s in actors if seats[s].away or seats[s].is_ai]
        if stand_in:
            ai = any(info.seats[s].is_ai for s in stand_in)
            pause = self._ai_pause if ai else self._away_delay
            version = info.version
            self._start(info.game_id, lambda: self._act(info.game_id, version, stand_in, pause))
            return
        timeout = (await self._settings(info.chat_id)).turn_timeout
        now = self._clock.now()
        if timeout is None:
            self._unclocked[info.game_id] = info.version
            if since is None or since[0] != info.version:  # (armed again: the wait goes on)
                since = (info.version, now)
            self._since[info.game_id] = since
            await self._store_deadline(info, None)
            return
        deadline = resume_at if resume_at is not None else now + timeout * self._scale
        self._deadlines[info.game_id] = (info.version, deadline)
        self._since[info.game_id] = (info.version, min(now, deadline - timeout * self._scale))
        self._start(info.game_id, lambda: self._wait(info, deadline))
        if resume_at is None:
            await self._store_deadline(info, deadline)

    async def _store_deadline(self, info: GameInfo, deadline: float | None) -> None:
        """Store the deadline for a restart; a failed write leaves the clock running
        (after a restart without it, the game gets a fresh clock)."""
        try:
            await self._service.set_deadline(info.game_id, info.version, deadline)
        except ServiceError as e:
            log.warning("could not store the deadline of game %s: %s", info.game_id, e.code)

    def arm_suits(self, info: GameInfo) -> None:
        """Own trumps in the lobby: the player choosing his suit gets the first free
        one when the stored deadline passes (kept in the lobby, so a restart resumes
        it). The lobby's id is the game's: dealing it replaces this clock."""
        choice = info.suit_choice
        self.cancel(info.game_id)
        if self._closed or choice is None or choice.seat is None or choice.deadline is None:
            return
        turn, user = len(choice.chosen), info.seats[choice.seat].user_id
        deadline = choice.deadline

        async def work() -> None:
            await self._clock.sleep((deadline - self._clock.now()) * self._scale)
            try:
                after = await self._service.choose_suit(info.game_id, user, None, turn)
            except ServiceError as e:  # chosen meanwhile, or the lobby is gone
                log.info("suit clock of lobby %s: %s", info.game_id, e.code)
                return
            self._tasks.pop(info.game_id, None)
            await self._changed(after, False)

        self._start(info.game_id, work)

    async def resume(self, games: list[GameInfo]) -> None:
        """After a restart: stored deadlines run on; other games get a fresh clock."""
        stored = {d.game_id: d for d in await self._service.deadlines()}
        for info in games:
            d = stored.get(info.game_id)
            same = d is not None and d.version == info.version
            await self.arm(info, resume_at=d.deadline if d is not None and same else None)

    def _start(self, game_id: int, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``work()`` as the game's clock task (a factory: a task cancelled before
        it starts must not leave a never-awaited coroutine behind)."""
        if self._closed:  # arm() was still awaiting the store when close() ran
            return
        older = self._tasks.pop(game_id, None)  # two arms raced: only the last one runs
        if older is not None and older is not asyncio.current_task():
            older.cancel()

        async def run() -> None:
            try:
                await work()
            except asyncio.CancelledError:
                raise
            except ServiceError as e:  # the database in trouble: the store logged it
                log.warning("turn clock of game %s stopped (%s); the sweep re-arms it", game_id, e)
            except Exception:
                log.exception("turn timer of game %s failed", game_id)

        self._tasks[game_id] = asyncio.create_task(run(), name=f"turn-timer-{game_id}")

    async def _wait(self, info: GameInfo, deadline: float) -> None:
        for tick in TICKS:
            delay = deadline - tick * self._scale - self._clock.now()
            if delay > 0:
                await self._clock.sleep(delay)
                await self._show(info.game_id)
        await self._clock.sleep(deadline - self._clock.now())
        game = info.game
        assert game is not None
        await self._act(info.game_id, info.version, game.actors(), self._away_delay, timed_out=True)

    async def _act(
        self,
        game_id: int,
        version: int,
        seats: list[int],
        pause: float,
        timed_out: bool = False,
    ) -> None:
        """Act for ``seats`` if the game is still where the clock found it, in the
        order the game says (podkidnoy: throwers pass first, then the defender answers)."""
        if pause:
            await asyncio.sleep(pause)
        info = await self._service.game(game_id)
        game = info.game
        if info.status != RUNNING or info.version != version or game is None:
            return
        seats = [s for s in game.timeout_seats() if s in seats]
        finished = False
        timed: list[tuple[int, str]] = []
        for seat in seats:
            if not game.legal_actions(seat):
                continue
            player = info.seats[seat]
            if not timed_out and not (player.is_ai or player.away):
                continue  # he came back (pressed a button) while the stand-in paused
            action = fallback_action(game, seat)
            if self._decide is not None and (player.is_ai or player.away):
                action = await self._decide(info, seat)
            try:
                result = await self._service.apply(game_id, player.user_id, action, info.version)
            except StaleVersion:
                break  # someone acted meanwhile: the new state has its own clock
            except ServiceError as e:
                log.warning("could not act for seat %s of game %s: %s", seat, game_id, e.code)
                continue
            finished = result.finished
            if timed_out and not player.is_ai and not player.away:
                await self._service.record_timeout(game_id, seat)
                timed.append((seat, str(action.step().get("do", ""))))
            info = await self._service.game(game_id)
            game = info.game
            if timed:
                self._timeouts[game_id] = (info.version, tuple(timed))
            if finished or game is None:
                break
        await self._changed(info, finished)  # re-arms (this task counts as live till then)
