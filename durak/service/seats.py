"""Seats and the clock: a running game's turn deadline (the front end keeps the
timers, the service stores them), timed-out decisions, the AI taking an absent
player's seat, and his return.

``record_timeout`` counts a seat's timed-out decisions in a row; from
``AWAY_AFTER`` (2) on the seat is ``away``. ``mark_present`` clears both. Running
games keep their seats' state in memory (written after COMMIT, like the version),
so ``mark_present`` for a present player costs no SQL."""

from __future__ import annotations

import math
from dataclasses import replace

from .core import Core
from .errors import NotInGame, NotRunning, UnknownGame
from .types import AWAY_AFTER, LOBBY, RUNNING, Deadline, Seat


class Seats:
    """Who is at the table, and the clock each of them plays against."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def set_deadline(self, game_id: int, version: int, deadline: float | None) -> bool:
        """Store the running game's turn deadline (a Unix time) for ``version``, or
        with ``None`` drop it, so timers survive a restart. ``False`` (nothing
        stored) when the game is no longer running at ``version``: a deadline for
        a state that is gone is never kept. An ending drops it by itself."""
        if deadline is not None and not math.isfinite(deadline):
            raise ValueError(f"a deadline must be a finite Unix time, not {deadline!r}")
        stored = await self._core.store.put_deadline(game_id, version, deadline)
        if stored is None:
            raise UnknownGame(f"no game {game_id}")
        return stored

    async def deadlines(self) -> list[Deadline]:
        """The stored deadlines of running games, the soonest first."""
        async with self._core.store.reading() as tx:
            return await tx.deadlines()

    async def record_timeout(self, game_id: int, seat: int) -> Seat:
        """The player at ``seat`` let his time run out once more: count it, and
        from :data:`AWAY_AFTER` in a row on mark him away. The updated seat.

        Also accepted for a game that has just ended (the timed-out action may
        have ended it); a lobby is refused with :class:`NotRunning`."""
        async with self._core.locked(games=[game_id]):
            live = self._core.live.get(game_id)
            if live is not None and not 0 <= seat < len(live.seats):
                raise NotInGame(f"game {game_id} has no seat {seat}")
            async with self._core.write(repair=[game_id]) as w:
                if live is None and (await self._core.row(w.tx, game_id)).status == LOBBY:
                    raise NotRunning(f"game {game_id} has not started yet")
                updated = await w.tx.record_timeout(game_id, seat, AWAY_AFTER)
                if updated is None:
                    raise NotInGame(f"game {game_id} has no seat {seat}")
            if live is not None:
                live.set_seat(updated)
            return updated

    async def hand_to_ai(self, game_id: int, seat: int) -> Seat:
        """The group voted (``/skip``): the AI plays ``seat`` at once, as after his
        timeouts (the seat is away until he presses a button). The updated seat."""
        async with self._core.locked(games=[game_id]):
            live = self._core.live.get(game_id)
            if live is not None and not 0 <= seat < len(live.seats):
                raise NotInGame(f"game {game_id} has no seat {seat}")
            async with self._core.write(repair=[game_id]) as w:
                if (await self._core.row(w.tx, game_id)).status != RUNNING:
                    raise NotRunning(f"game {game_id} is not running")
                # away from the next timeout on, i.e. now; his count goes on as one
                updated = await w.tx.record_timeout(game_id, seat, 0)
                if updated is None:
                    raise NotInGame(f"game {game_id} has no seat {seat}")
            if live is not None:
                live.set_seat(updated)
            return updated

    async def set_app(self, game_id: int, user_id: int) -> bool:
        """His seat in the lobby or running game is the Mini App's only (``Seat.app``):
        the front end found it cannot write to him. ``True`` if that changed it."""
        async with self._core.locked(games=[game_id]):
            async with self._core.write(repair=[game_id]) as w:
                updated = await w.tx.set_app(game_id, user_id)
            live = self._core.live.get(game_id)
            if live is not None and updated is not None:
                live.set_seat(updated)
            return updated is not None

    async def mark_present(self, game_id: int, user_id: int) -> bool:
        """The player acted (pressed a button): clear his timeouts and away flag.
        ``True`` if that changed something. Called on every press, so a present
        player of a running game costs neither a lock nor SQL: memory knows."""
        live = self._core.live.get(game_id)
        if live is not None and not _absent(live.seats[live.seat_of(user_id)]):
            return False
        if live is not None and live.seats[live.seat_of(user_id)].left:
            return False  # he left: the AI keeps his seat
        async with self._core.locked(games=[game_id]):
            live = self._core.live.get(game_id)
            if live is not None:
                seat = live.seats[live.seat_of(user_id)]
                if not _absent(seat):
                    return False
            async with self._core.write(repair=[game_id]) as w:
                changed = await w.tx.mark_present(game_id, user_id)
                if not changed and live is None:
                    await self._core.row(w.tx, game_id)  # UnknownGame
                    if not any(s.user_id == user_id for s in await w.tx.seats(game_id)):
                        raise NotInGame(f"user {user_id} has no seat in game {game_id}")
            if live is not None:
                live.set_seat(replace(seat, timeouts=0, away=False))
            return changed


def _absent(seat: Seat) -> bool:
    return bool(seat.timeouts or seat.away)
