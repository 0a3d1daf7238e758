"""Which games are rated, and how: a finished game's seats, play and ending turned
into a :class:`~durak.service.ratings.RatedGame` (pure), and the chat's history
rated in order (:func:`rate_history`, the migration that brought ratings in).

Rated: a game played to its end (or surrendered: the surrenderer is the durak, the
others tie). Not rated: a cancelled game, a sprint deal while its match goes on. A
seat handed to the AI (/leave, /kick, /skip, timeouts) is rated as its result for
its player, marked flaky, and not at all for the AI that played it; AI seats of the
lobby are rated per level."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..games import Game
from .codec import Damaged, continues, rebuild
from .ratings import AI, CHAIN, FIRST_WIN, Entrant, RatedGame, places
from .summary import summarize
from .types import CANCELLED, FINISHED, SURRENDER, Ending, Seat

if TYPE_CHECKING:
    from ..store.base import Tx
    from ..store.sql import SqlTx


log = logging.getLogger(__name__)


def rated_game(
    game_id: int,
    chat_id: int,
    at: float,
    seats: Sequence[Seat],
    game: Game | None,
    ending: Ending | None,
    earlier: Mapping[str, Seat] | None = None,
) -> RatedGame | None:
    """The game as rated, or ``None`` if it is not. ``earlier`` names the seats of a
    knock-out's players who were knocked out in its earlier deals."""
    if game is None or ending is None or ending.reason == CANCELLED or len(seats) < 2:
        return None
    if ending.reason == SURRENDER:  # he left: the durak, and it counts against him
        gone = set(ending.losers)
        placed = [
            (replace(s, left=s.left or s.seat in gone), int(s.seat in gone), s.seat in gone)
            for s in seats
        ]
        return _rated(game_id, chat_id, at, placed, None, _surrender_feats(seats, game), False)
    if game.rules.sprint:
        return _match(game_id, chat_id, at, seats, game, earlier or {})
    result = game.result
    if result is None:
        return None
    summary = summarize(game)
    if game.rules.teams:
        place = [0 if result.draw else int(s in result.losers) for s in range(game.n)]
    else:
        place = places(summary.out, game.n, result.losers, result.draw)
    by_seat = {s.seat: s for s in seats}
    placed = [(by_seat[k], place[k], k in result.losers) for k in range(game.n) if k in by_seat]
    teams = game.rules.teams
    feats = tuple((by_seat[k].user_id, feat) for k, feat in summary.feats if k in by_seat)
    return _rated(game_id, chat_id, at, placed, teams, feats)


def _match(
    game_id: int,
    chat_id: int,
    at: float,
    seats: Sequence[Seat],
    game: Game,
    earlier: Mapping[str, Seat],
) -> RatedGame | None:
    """A sprint match, rated once when decided: a two-player match as its result, a
    knock-out as the winner, then those knocked out, the last to go first."""
    if continues(game):
        return None
    match = getattr(game.view(), "match", None)
    if match is None or not match.decided:
        return None
    by_name = {**earlier, **{s.name: s for s in seats}}
    if match.draw:
        order: list[list[str]] = [list(match.remaining) + list(match.eliminated)]
    elif match.deals is None:
        order = [[match.winner or ""], *([n] for n in reversed(match.eliminated))]
    else:
        order = [[match.winner or ""], [n for n in game.players if n != match.winner]]
    placed = []
    for k, names in enumerate(order):
        for name in names:
            seat = by_name.get(name)
            if seat is None:
                return None  # a player we cannot name: better unrated than wrong
            placed.append((seat, k, k == len(order) - 1 and len(order) > 1))
    return _rated(game_id, chat_id, at, placed, None, ())


def _surrender_feats(seats: Sequence[Seat], game: Game) -> tuple[tuple[int, str], ...]:
    """What the play before a surrender earned (RULES-NOTES.md 82): a defence against
    six cards, and going out first for whoever did go out first before it. No chain
    of transfers: the play named no durak."""
    summary = summarize(game)
    by_seat = {s.seat: s for s in seats}
    first = summary.out[0] if summary.out else ()
    feats = [(k, FIRST_WIN) for k in first if not game.rules.teams]
    feats += [(k, feat) for k, feat in summary.feats if feat != CHAIN]
    return tuple((by_seat[k].user_id, feat) for k, feat in feats if k in by_seat)


def _rated(
    game_id: int,
    chat_id: int,
    at: float,
    placed: Sequence[tuple[Seat, int, bool]],
    teams: bool | None,
    feats: tuple[tuple[int, str], ...],
    by_play: bool = True,
) -> RatedGame:
    entrants = []
    for seat, place, durak in placed:
        user_id, level = rating_key(seat)
        entrants.append(
            Entrant(
                user_id=user_id,
                level=level,
                place=place,
                durak=durak,
                flaky=not seat.is_ai and (seat.left or seat.away),
                team=seat.seat % 2 if teams else None,
            )
        )
    return RatedGame(game_id, chat_id, at, tuple(entrants), feats, by_play)


def rating_key(seat: Seat) -> tuple[int, str]:
    """Whose rating a seat plays for: its player's, or its AI level's (:data:`AI`)."""
    return (AI, seat.level or "normal") if seat.is_ai else (seat.user_id, "")


async def earlier_seats(tx: Tx, game_id: int) -> dict[str, Seat]:
    """The seats of a sprint match's earlier deals by name (the first deal a name
    appears in, walking back): a knock-out's final deal no longer seats its losers."""
    found: dict[str, Seat] = {}
    row = await tx.game_row(game_id)
    while row is not None and row.previous_game_id is not None:
        row = await tx.game_row(row.previous_game_id)
        if row is None or not rules_sprint(row.rules):
            break
        for s in await tx.seats(row.game_id, app=False):  # (also in the ratings' step)
            found.setdefault(s.name, s)
    return found


async def rate_history(tx: SqlTx) -> int:
    """Rate every finished game in the order they ended (the migration that brought
    ratings in); a game whose log cannot be replayed is left unrated. The games rated."""
    rows = await tx.rows(
        "SELECT game_id FROM games WHERE status = $1 AND start IS NOT NULL"
        " ORDER BY finished_at NULLS FIRST, game_id",
        (FINISHED,),
    )
    rated = 0
    for (game_id,) in rows:
        row = await tx.game_row(int(game_id))
        if row is None:
            continue
        seats = tuple(await tx.seats(row.game_id, app=False))  # the step's schema: no app_only
        try:
            game, _ = rebuild(row, seats, await tx.log(row.game_id))
            earlier = await earlier_seats(tx, row.game_id) if game.rules.sprint else {}
            at = float(row.updated_at)
            found = rated_game(row.game_id, row.chat_id, at, seats, game, row.ending(), earlier)
        except (Damaged, ValueError, KeyError, TypeError, IndexError) as e:
            log.warning("game %d is left unrated: %s", row.game_id, e)
            continue
        if found is not None:
            await tx.rate_game(found)
            rated += 1
    return rated


def rules_sprint(text: str) -> bool:
    """Whether stored rules name a sprint game."""
    try:
        return bool(json.loads(text).get("sprint"))
    except (ValueError, AttributeError):
        return False
