"""How a lobby becomes a game: the start when it is full or confirmed, the suit
choice first for own trumps, the series a Play-again lobby's game continues, and
the deal. Each runs inside its caller's write, the chat's lock held."""

from __future__ import annotations

import secrets
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from ..games import AFTER_LOSS, Game, Series
from ..games import FIRST as FIRST_GAME
from ..rules import Rules
from . import suits
from .codec import json_text, rules_of, settings_of, snapshot_text
from .core import Core, Live, Write
from .errors import BadPlayerCount, NoLobby, NotAllowed, NotEnoughPlayers
from .types import SURRENDER, GameInfo, Seat, SuitChoice

if TYPE_CHECKING:
    from ..store.base import GameRow


def check_count(rules: Rules, count: int) -> None:
    if count < 2:
        raise NotEnoughPlayers(f"{count} player(s): a game needs at least 2")
    try:
        rules.check_players(count)
    except ValueError as e:
        raise BadPlayerCount(str(e)) from None


async def start_if_full(core: Core, w: Write, game_id: int) -> GameInfo:
    """A lobby starts itself when it is full (its cap reached) or, a Play-again
    lobby, when every human in it confirmed; else it stays as it is."""
    row = await core.row(w.tx, game_id)
    seats = await w.tx.seats(game_id)
    rules = rules_of(row.rules)
    full = row.cap is not None and len(seats) >= min(row.cap, rules.max_players)
    confirmed = row.previous_game_id is not None and all(s.ready or s.is_ai for s in seats)
    if len(seats) >= 2 and (full or confirmed) and suits.loads(row.snapshot) is None:
        try:
            rules.check_players(len(seats))
        except ValueError:
            pass
        else:
            return await begin(core, w, row)
    return await core.info(w.tx, row)


async def begin(core: Core, w: Write, row: GameRow, seed: int | str | None = None) -> GameInfo:
    """Start the lobby ``row``. A Play-again lobby seats only who confirmed (and its
    AI players), and its game follows the series of the game before it."""
    seats = await w.tx.seats(row.game_id)
    rules = rules_of(row.rules)
    series: Series | None = None
    if row.previous_game_id is not None:
        # who did not confirm stays out; ``ready`` means nothing in a running game
        kept = [s for s in seats if s.ready or s.is_ai]
        seats = [replace(s, seat=k, ready=False) for k, s in enumerate(kept)]
        await w.tx.replace_seats(row.game_id, seats)
    check_count(rules, len(seats))
    if row.previous_game_id is not None:
        series = await lobby_series(core, w, row.previous_game_id, seats)
    seed_text = str(secrets.randbits(63) if seed is None else seed)
    if series is None or series.trumps is None:
        order = suits.choosing_order(rules, [s.name for s in seats], seed_text)
        if order:
            choice = suits.with_ai_choices(SuitChoice(order), seats)
            return await suit_step(core, w, row, seats, rules, seed_text, choice)
    return await deal(core, w, row, seats, rules, seed_text, series)


async def lobby_series(core: Core, w: Write, previous_id: int, seats: list[Seat]) -> Series:
    """The series a Play-again lobby's game continues: who deals follows the rule
    (RULES.md section 2: the loser deals, after a draw the dealer stays). With other
    players than the series names (someone did not confirm, or joined), only the
    dealer carries over, if he plays; else the dealer is drawn as in a first game."""
    row = await core.row(w.tx, previous_id)
    previous = list(await w.tx.seats(previous_id))
    ending = row.ending()
    if ending is not None and ending.reason == SURRENDER:
        loser = previous[ending.losers[0]].name
        series = Series(AFTER_LOSS, dealer=loser, previous_loser=loser)
    else:
        series = (await core.ended_game(w.tx, row, previous)).next_game()
    names = tuple(s.name for s in seats)
    expected = series.players or tuple(s.name for s in previous)
    if names == expected:
        return series
    needed = [n for n in (series.dealer, series.previous_loser) if n is not None]
    if series.kind != FIRST_GAME and needed and all(n in names for n in needed):
        return Series(series.kind, series.dealer, series.previous_loser)
    return Series()


async def deal(
    core: Core,
    w: Write,
    row: GameRow,
    seats: list[Seat],
    rules: Rules,
    seed_text: str,
    series: Series | None,
) -> GameInfo:
    """Deal the lobby ``row``; the game enters memory once the write commits."""
    game = Game.from_seed(rules, [s.name for s in seats], seed_text, series)
    now = time.time()
    ok = await w.tx.start_game(
        row.game_id, seed_text, json_text(game.start), snapshot_text(game), now
    )
    if not ok:
        raise NoLobby(f"lobby {row.game_id} changed while starting; try again")
    live = Live(row.game_id, row.chat_id, game, 0, tuple(seats))
    w.enter(live)
    return await core.info_now(w.tx, row.game_id, live)


async def suit_step(
    core: Core,
    w: Write,
    row: GameRow,
    seats: list[Seat],
    rules: Rules,
    seed_text: str,
    choice: SuitChoice,
) -> GameInfo:
    """Store the suit choice so far, or deal once everyone has chosen."""
    if choice.seat is None:
        series = Series(trumps=suits.trumps_of(choice, seats))
        return await deal(core, w, row, seats, rules, seed_text, series)
    now = time.time()
    timeout = settings_of(row.chat_id, await w.tx.chat_settings(row.chat_id)).turn_timeout
    deadline = None if timeout is None else now + timeout
    choice = SuitChoice(choice.order, choice.chosen, deadline)
    if not await w.tx.set_lobby_state(row.game_id, seed_text, suits.dumps(choice), now):
        raise NoLobby(f"lobby {row.game_id} changed while starting; try again")
    return await core.info_now(w.tx, row.game_id)


async def series_seats(
    core: Core, w: Write, row: GameRow, seats: list[Seat], names: tuple[str, ...]
) -> list[Seat]:
    """The seats of the players ``names`` (in that order), renumbered: a
    knock-out drops players, and the match after it seats them all again, so
    players are looked for in this game and the games of the series before it."""
    known = {s.name: s for s in seats}
    previous = row.previous_game_id
    for _ in range(64):  # a series longer than this has its players in the last games
        if previous is None or all(n in known for n in names):
            break
        for s in await w.tx.seats(previous):
            known.setdefault(s.name, s)
        previous = (await core.row(w.tx, previous)).previous_game_id
    missing = [n for n in names if n not in known]
    if missing:
        raise NotAllowed(f"the next game seats unknown players {missing}")
    return [replace(known[n], seat=k) for k, n in enumerate(names)]
