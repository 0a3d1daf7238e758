"""The group's memory, read: the rating table, the fools of the week and month,
the longest run without being the durak, a player's record against each other
player and his achievements, a game's rating changes. Nothing here writes."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .core import Core
from .rated import earlier_seats, rating_key
from .ratings import FEATS, RELIABLE_AFTER, Change, public
from .types import Seat

WEEK, MONTH = 7 * 86400.0, 30 * 86400.0


@dataclass(frozen=True, slots=True)
class RatingLine:
    """One player (or AI level: ``level`` set, ``name`` empty) of a group's table."""

    user_id: int
    level: str
    name: str
    rating: int
    games: int
    duraks: int  # times the durak in rated games
    flaky: int  # games he left, was skipped in, or timed out of
    streak: int  # games in a row up to now without being the durak
    best: int

    @property
    def left_share(self) -> float | None:
        """Reliability: the share of his games he left, was skipped in or timed out
        of, once he has enough games to tell (``None`` before)."""
        if self.games < RELIABLE_AFTER or self.level:
            return None
        return self.flaky / self.games


@dataclass(frozen=True, slots=True)
class Fools:
    """The most times the durak in a window: who (ties named together) and how often."""

    who: tuple[RatingLine, ...] = ()
    times: int = 0


@dataclass(frozen=True, slots=True)
class GroupStats:
    """What /stats shows in a group: the table (best first), the fools, the record run."""

    lines: tuple[RatingLine, ...]
    week: Fools
    month: Fools
    longest: Fools  # the longest run without being the durak: who, and how long


@dataclass(frozen=True, slots=True)
class Meeting:
    """A player's games with one other player (or AI level) of the group."""

    other: RatingLine
    games: int
    mine: int  # the player's own times the durak in them
    theirs: int  # the other's


@dataclass(frozen=True, slots=True)
class PlayerRecord:
    """``/stats @name``: his line, his record against each other player, his feats."""

    line: RatingLine
    meetings: tuple[Meeting, ...]
    feats: tuple[str, ...]


#: One player's rating change in one game, as the store reads it back (public numbers).
RatingChange = Change


@dataclass(frozen=True, slots=True)
class GameRatings:
    """A rated game's changes (best place first) and the achievements it earned;
    ``earlier``: the seats, in the earlier deals of a knock-out, of the players it
    rates who no longer sit at its last deal (a recap names them)."""

    changes: tuple[RatingChange, ...]
    feats: tuple[tuple[int, str], ...]
    earlier: tuple[Seat, ...] = ()


def _line(r: Sequence[Any]) -> RatingLine:
    user_id, level, name, mu, sigma, games, flaky, streak, best, duraks = r
    return RatingLine(
        int(user_id),
        str(level),
        str(name),
        public(float(mu), float(sigma)),
        int(games),
        int(duraks),
        int(flaky),
        int(streak),
        int(best),
    )


def _most(lines: Iterable[RatingLine], counts: dict[tuple[int, str], int]) -> Fools:
    ranked = [(counts.get((x.user_id, x.level), 0), x) for x in lines]
    top = max((n for n, _ in ranked), default=0)
    if top <= 0:
        return Fools()
    return Fools(tuple(x for n, x in ranked if n == top), top)


class Standings:
    """The group's ratings and what goes with them."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def group(self, chat_id: int, now: float | None = None) -> GroupStats:
        now = time.time() if now is None else now
        async with self._core.store.reading() as tx:
            lines = [_line(r) for r in await tx.rating_lines(chat_id)]
            week = await tx.fools_since(chat_id, now - WEEK)
            month = await tx.fools_since(chat_id, now - MONTH)
        lines.sort(key=lambda x: (-x.rating, -x.games, x.level, x.user_id))
        humans = [x for x in lines if not x.level]
        return GroupStats(
            tuple(lines),
            _most(lines, {(int(r[0]), str(r[1])): int(r[2]) for r in week}),
            _most(lines, {(int(r[0]), str(r[1])): int(r[2]) for r in month}),
            _most(humans, {(x.user_id, x.level): x.best for x in humans}),
        )

    async def player(self, chat_id: int, user_id: int) -> PlayerRecord | None:
        """The player's record in the group; ``None`` if he has no rated game there."""
        async with self._core.store.reading() as tx:
            lines = {(x.user_id, x.level): x for x in map(_line, await tx.rating_lines(chat_id))}
            met = await tx.head_to_head(chat_id, user_id)
            feats = await tx.feats_of(chat_id, user_id)
        line = lines.get((user_id, ""))
        if line is None:
            return None
        meetings = [
            Meeting(lines[key], int(r[2]), int(r[3]), int(r[4]))
            for r in met
            if (key := (int(r[0]), str(r[1]))) in lines
        ]
        meetings.sort(key=lambda m: (-m.games, m.other.level, m.other.name, m.other.user_id))
        ordered = tuple(sorted(set(feats), key=lambda f: FEATS.index(f) if f in FEATS else 99))
        return PlayerRecord(line, tuple(meetings), ordered)

    async def find(self, chat_id: int, name: str) -> int | None:
        """The rated player of the group of that name (a leading ``@`` and case aside)."""
        wanted = name.lstrip("@").strip().casefold()
        async with self._core.store.reading() as tx:
            rows = await tx.rating_lines(chat_id)
        found = [int(r[0]) for r in rows if not r[1] and str(r[2]).casefold() == wanted]
        return found[0] if len(found) == 1 else None

    async def games(self, game_ids: Sequence[int]) -> dict[int, GameRatings]:
        """The rating changes of each of these games that was rated."""
        found: dict[int, GameRatings] = {}
        async with self._core.store.reading() as tx:
            for game_id in game_ids:
                changes, feats = await tx.game_ratings(game_id)
                if not changes:
                    continue
                rated = tuple(
                    RatingChange(int(r[0]), str(r[1]), int(r[2]), bool(r[3]), int(r[4]), int(r[5]))
                    for r in changes
                )
                seated = {rating_key(s) for s in await tx.seats(game_id)}
                earlier: tuple[Seat, ...] = ()
                if any((c.user_id, c.level) not in seated for c in rated):
                    named = {(c.user_id, c.level) for c in rated} - seated
                    gone = (await earlier_seats(tx, game_id)).values()
                    earlier = tuple(s for s in gone if rating_key(s) in named)
                found[game_id] = GameRatings(
                    rated, tuple((int(r[0]), str(r[1])) for r in feats), earlier
                )
        return found
