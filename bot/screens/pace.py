"""The group's table at a spectator's pace (issue 35 item 5).

While every person seated at a game has the Mini App open, nobody at the table reads the
group's table message: the players see the game on their pages, and a member who only
watches can open it there too. The message is then edited when a bout ends and at most
once every :data:`EVERY` seconds (a bout that ends sooner is shown once the 15 s are up),
but always for the game's start, its end and a player going out; the edits it saves are
what limits how many games one bot token carries (Telegram's ~30 sends+edits a second).

Time comes from a :class:`Clock` the tests control (``DurakBot.pace_clock``): the verdicts of
the tests never depend on how busy the machine is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..clock import MONOTONIC, Clock

__all__ = ["EVERY", "TablePace"]

log = logging.getLogger(__name__)

#: The fewest seconds between two edits of a paced table (bar start, end, going out).
EVERY = 15.0


@dataclass
class _Shown:
    """A game's table as last edited: when, in which bout, how many were out; whether a
    change since was left unshown (``behind``), and the edit waiting for its time."""

    at: float
    bout: int
    out: int
    later: asyncio.Task[None] | None = None
    behind: bool = False


class TablePace:
    """Decides, each time a game is shown, whether its group table is edited now.
    ``again`` is called (with the game's id) when a bout that ended too soon after the
    last edit may be shown: the presenter shows the game then, and is asked again."""

    def __init__(
        self,
        again: Callable[[int], Awaitable[None]],
        clock: Clock = MONOTONIC,
        every: float = EVERY,
    ) -> None:
        self._again = again
        self._clock = clock
        self.every = every
        self._shown: dict[int, _Shown] = {}

    def edit(self, game_id: int, bout: int, out: int, paced: bool) -> bool:
        """Whether the table of ``game_id`` (now in bout number ``bout``, ``out`` players
        gone out) is edited now. Unpaced (someone at the table has no page open) it
        always is, as before; paced, as the module says."""
        now = self._clock.now()
        last = self._shown.get(game_id)
        if not paced or last is None or out != last.out:
            self._note(game_id, now, bout, out)
            return True
        last.behind = True
        if bout == last.bout:
            return False
        if now - last.at >= self.every:
            self._note(game_id, now, bout, out)
            return True
        if last.later is None:  # the bout ended too soon: shown once the time is up
            last.later = asyncio.create_task(self._later(game_id, last.at + self.every))
        return False

    def _note(self, game_id: int, now: float, bout: int, out: int) -> None:
        last = self._shown.get(game_id)
        later = last.later if last is not None else None
        self._shown[game_id] = _Shown(now, bout, out, later)

    async def _later(self, game_id: int, due: float) -> None:
        try:
            await self._clock.sleep(due - self._clock.now())
        finally:
            shown = self._shown.get(game_id)
            if shown is not None and shown.later is asyncio.current_task():
                shown.later = None
        try:
            await self._again(game_id)
        except Exception:  # e.g. the database down for a moment: the next move shows it
            log.warning("game %s: its paced table could not be shown", game_id, exc_info=True)

    def behind(self, game_id: int) -> bool:
        """Whether the group's table shows less than the game: a change was left for
        the pace (when a player's page closes, the table is shown at once)."""
        last = self._shown.get(game_id)
        return last is not None and last.behind

    def forget(self, game_id: int) -> None:
        """The game is over (or handed on): its memory and its waiting edit go."""
        shown = self._shown.pop(game_id, None)
        if shown is not None and shown.later is not None:
            shown.later.cancel()

    async def close(self) -> None:
        tasks = [s.later for s in self._shown.values() if s.later is not None]
        self._shown.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
