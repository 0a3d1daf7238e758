"""The ratings migration over a stored history: a database at the schema before
ratings holding ``--games`` finished games (random 2-6 player games of the engine,
in a few chats), then the time the store takes to open it, rating every game.

    python -m tests.service.bench_ratings [--games 1000] [--db postgresql://...]

Without ``--db`` a SQLite file in a temporary folder. The tests of the migrations
(tests/service/test_ratings_migration.py) build their databases with
:func:`old_database` and :func:`write_game`: the games as the code of that schema
wrote them, before ``no_progress_draw`` existed (their rules and snapshots do not
name it, and they were played without it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from durak import Game, Rules
from durak.actions import TAKE, Action, Attack, Pass
from durak.selfplay import play_random
from durak.service import rated as rated_games
from durak.service.codec import json_text, rules_json, snapshot_text, tally_rows
from durak.service.ratings import RatedGame
from durak.service.types import AI, FINISHED, HUMAN, PLAYED, RUNNING, Ending, Seat
from durak.store import postgres
from durak.store import sqlite as sqlite_store
from durak.store.sql import seat_params
from tests.dbaccess import Db, is_pg
from tests.service.helpers import CHAT, user

#: The service tests' names (helpers.NAMES), and two more.
NAMES = ("Ann", "Bob", "Cid", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jon")
LEVELS = ("easy", "normal", "hard")


@dataclass(frozen=True, slots=True)
class Stored:
    """One game written: what the live code would have rated it as."""

    game_id: int
    rated: RatedGame | None


def _backend(db: str | Path) -> Any:
    return postgres if str(db).startswith("postgres") else sqlite_store


def random_game(k: int, rng: random.Random) -> tuple[int, list[Seat], Game]:
    """The k-th game: a chat of three, 2-6 players from ten people, sometimes an AI."""
    chat = -100 - k % 3
    n = rng.randint(2, 6)
    people = rng.sample(range(len(NAMES)), n)
    seats = []
    for s, p in enumerate(people):
        if rng.random() < 0.1:
            seats.append(Seat(s, -1 - s, f"AI {s + 1}", AI, rng.choice(LEVELS)))
        else:
            left = rng.random() < 0.05
            seats.append(Seat(s, 1000 + p, NAMES[p], HUMAN, None, 0, left, False, left))
    rules = Rules(transfer=rng.random() < 0.3, no_progress_draw=False)
    game = Game.from_seed(rules, [s.name for s in seats], rng.randrange(2**32))
    play_random(game, rng)
    return chat, seats, game


def before_ratings(backend: Any) -> int:
    """The backend's schema version before the ratings came (SQLite's 4, PostgreSQL's
    3): the last one whose code did not know ``no_progress_draw`` either."""
    return next(k for k, m in enumerate(backend.MIGRATIONS) if m.__name__.endswith(": ratings"))


async def old_store(db: str | Path) -> Any:
    """The store opened on a new database at the schema before ratings."""
    backend = _backend(db)
    before = before_ratings(backend)
    saved = backend.MIGRATIONS, backend.SCHEMA_VERSION
    backend.MIGRATIONS, backend.SCHEMA_VERSION = saved[0][:before], before
    try:
        return await backend.Store.open(db)
    finally:
        backend.MIGRATIONS, backend.SCHEMA_VERSION = saved


async def old_database(db: str | Path, games: int, seed: int = 1) -> list[Stored]:
    """A new database at the schema before ratings, with ``games`` finished games
    written as the service then wrote them (the action log's guard set aside while
    they are written, for speed, and put back)."""
    backend = _backend(db)
    store = await old_store(db)
    rng = random.Random(seed)
    stored: list[Stored] = []
    try:
        async with store.transaction() as tx:
            guard = await set_guard_aside(tx, backend is sqlite_store)
            for k in range(games):
                chat, seats, game = random_game(k, rng)
                stored.append(await write_game(tx, chat, seats, game, 1_000_000.0 + k))
            await put_guard_back(tx, backend is sqlite_store, guard)
    finally:
        await store.close()
    return stored


def before_the_option(text: str) -> str:
    """Stored rules, or a snapshot, as the code before ``no_progress_draw`` wrote them:
    the option not named, no count of takes."""
    data = json.loads(text)
    if "rules" in data:  # a snapshot
        data["rules"].pop("no_progress_draw")
        data.pop("stall", None)
    else:
        data.pop("no_progress_draw")
    return json_text(data)


async def write_game(
    tx: Any,
    chat: int,
    seats: list[Seat],
    game: Game,
    now: float,
    previous: int | None = None,
) -> Stored:
    """A game played without ``no_progress_draw``, written as the service wrote it
    before that option (finished if it is over, else running); what it is rated as."""
    assert not game.rules.no_progress_draw
    await tx.upsert_chat(chat, "bench", now)
    for s in seats:
        if s.kind == HUMAN:
            await tx.upsert_user(s.user_id, s.name, now)
    game_id = await tx.insert_game(
        chat,
        seats[0].user_id,
        before_the_option(rules_json(game.rules)),
        now,
        previous_game_id=previous,
        seed="1",
        start=json_text(game.start),
        snapshot=before_the_option(snapshot_text(game)),
    )
    await tx.executemany(  # the seats' columns of that schema (not today's app_only)
        "INSERT INTO seats (game_id, seat, user_id, name, kind, level, timeouts, away, ready,"
        " has_left) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        [seat_params(game_id, s)[:10] for s in seats],
    )
    await tx.executemany(
        "INSERT INTO actions (game_id, version, seat, user_id, step, created_at)"
        " VALUES ($1, $2, $3, $4, $5, $6)",
        [
            (game_id, v, s, seats[s].user_id, json_text(a.step()), now)
            for v, (s, a) in enumerate(game.history, 1)
        ],
    )
    await tx.execute(
        "UPDATE games SET version = $1 WHERE game_id = $2", (len(game.history), game_id)
    )
    if game.result is None:  # still running
        return Stored(game_id, None)
    ending = Ending(PLAYED, game.result.losers, game.result.draw)
    assert await tx.end_game(game_id, RUNNING, FINISHED, ending, now)
    await tx.add_tallies(chat, tally_rows(tuple(seats), ending))
    return Stored(game_id, rated_games.rated_game(game_id, chat, now, seats, game, ending))


# ---- a group's history from before no_progress_draw (issue 33 item 1) -----------------

TAKES = 114  # a timed-out table's takes in a row: the clock then always took


def timed_out(game: Game, seat: int) -> Action:
    """What the turn clock played before it learned to cover: the defender takes,
    a thrower passes, the attacker opens with his lowest card."""
    legal = game.legal_actions(seat)
    if TAKE in legal:
        return TAKE
    if Pass() in legal:
        return Pass()
    opens = [a for a in legal if isinstance(a, Attack) and len(a.cards) == 1]
    return min(opens, key=lambda a: (a.cards[0].rank, a.cards[0].suit))


def seats_of(*k: int, people: Sequence[tuple[int, str]] | None = None) -> list[Seat]:
    """Seats of the people ``k`` (by default the tests' ``user(k)``, ``NAMES[k]``)."""
    who = people or [(user(p), NAMES[p]) for p in range(len(NAMES))]
    return [Seat(s, *who[p], HUMAN) for s, p in enumerate(k)]


def old_game(seats: list[Seat], seed: int, takes: int = 0, end: bool = True) -> Game:
    """A game played without ``no_progress_draw`` (every game was): random moves, or
    with ``takes`` a table that timed out until it had taken that many times in a row
    without progress, then (``end``) played on by random moves to its end."""
    game = Game.from_seed(Rules(no_progress_draw=False), [s.name for s in seats], seed)
    rng = random.Random(seed)
    while game.result is None and game.stall < takes:
        seat = game.actors()[0]
        game.apply(seat, timed_out(game, seat))
    assert game.stall == takes
    if end:
        play_random(game, rng)
    return game


async def history_before_the_option(
    db: Db,
    chat: int = CHAT,
    people: Sequence[tuple[int, str]] | None = None,
    running: bool = True,
) -> list[Stored]:
    """A group's games as the code before ``no_progress_draw`` (the schema before
    ratings) stored them: Ann, Bob and Dan play one game, then one in which the
    table took 114 times in a row, then Dan, Cid and Ann play one more; a fourth,
    the same timed-out table, is still running (if ``running``). ``people``: the
    four ``(user id, name)`` to seat instead of the tests' own."""
    store = await old_store(db)
    three, other = seats_of(0, 1, 3, people=people), seats_of(3, 2, 0, people=people)
    games = [
        (three, old_game(three, 1)),
        (three, old_game(three, 2, TAKES)),
        (other, old_game(other, 3)),
    ]
    if running:
        games.append((three, old_game(three, 4, TAKES, end=False)))
    stored = []
    try:
        async with store.transaction() as tx:
            guard = await set_guard_aside(tx, not is_pg(db))
            for k, (seats, game) in enumerate(games):
                previous = stored[-1].game_id if stored else None
                stored.append(await write_game(tx, chat, seats, game, 2e9 + 60 * k, previous))
            await put_guard_back(tx, not is_pg(db), guard)
    finally:
        await store.close()
    return stored


async def set_guard_aside(tx: Any, sqlite: bool) -> str:
    if sqlite:
        found = await tx.scalar(
            "SELECT sql FROM sqlite_master WHERE name = 'actions_follow_version'"
        )
        await tx.execute("DROP TRIGGER actions_follow_version")
        return str(found)
    await tx.execute("ALTER TABLE actions DISABLE TRIGGER actions_follow_version")
    return ""


async def put_guard_back(tx: Any, sqlite: bool, guard: str) -> None:
    if sqlite:
        await tx.execute(guard)
    else:
        await tx.execute("ALTER TABLE actions ENABLE TRIGGER actions_follow_version")


async def timed_open(db: str | Path) -> float:
    """Seconds to open the database with the migration that rates its history."""
    started = time.perf_counter()
    store = await _backend(db).Store.open(db)
    took = time.perf_counter() - started
    await store.close()
    return took


async def main(games: int, db: str | None) -> None:
    with tempfile.TemporaryDirectory() as folder:
        where: str | Path = db or Path(folder) / "ratings.sqlite3"
        started = time.perf_counter()
        await old_database(where, games)
        built = time.perf_counter() - started
        took = await timed_open(where)
    kind = "PostgreSQL" if db else "SQLite"
    print(f"{games} stored games on {kind}: written in {built:.2f} s")
    print(
        f"  the ratings migration (open): {took:.2f} s, {1000 * took / max(games, 1):.2f} ms a game"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--db", default=None, help="a PostgreSQL URL (default: a SQLite file)")
    args = parser.parse_args()
    asyncio.run(main(args.games, args.db))
