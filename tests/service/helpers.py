"""Helpers for the service tests: an event loop per test, lobbies, random play.

pytest-asyncio is not installed; each test runs its coroutine with ``run``.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from durak import Game, Rules, replay, to_snapshot
from durak.selfplay import play_random, random_step
from durak.service import ApplyResult, GameInfo, GameService
from tests.dbaccess import Db, db_rows, is_pg

T = TypeVar("T")

CHAT = -100
NAMES = ("Ann", "Bob", "Cid", "Dan", "Eve", "Fay", "Gus", "Hal")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def with_service(db: Db, body: Callable[[GameService], Awaitable[T]], **kwargs: Any) -> T:
    """Open a service on ``db`` (a SQLite file or a PostgreSQL URL), run ``body`` with it,
    always close it."""

    async def main() -> T:
        service = await GameService.open(db, **kwargs)
        try:
            return await body(service)
        finally:
            await service.close()

    return run(main())


def user(k: int) -> int:
    return 1000 + k


async def lobby(service: GameService, players: int, chat: int = CHAT, **settings: Any) -> GameInfo:
    """A lobby in ``chat`` created by ``user(0)`` with ``players`` seated."""
    if settings:
        await service.set_chat_settings(chat, **settings)
    info = await service.create_lobby(chat, user(0), NAMES[0], "Test chat")
    for k in range(1, players):
        info = await service.join(chat, user(k), NAMES[k])
    return info


async def started(
    service: GameService, players: int, seed: int | str = 1, chat: int = CHAT, **settings: Any
) -> GameInfo:
    await lobby(service, players, chat, **settings)
    return await service.start(chat, user(0), seed=seed)


async def step(
    service: GameService, info: GameInfo, rng: random.Random, version: int
) -> ApplyResult:
    """Apply one random legal action through the service."""
    game = info.game
    assert game is not None
    seat, action = random_step(game, rng)
    return await service.apply(info.game_id, info.seats[seat].user_id, action, version)


async def play_out(
    service: GameService, info: GameInfo, rng: random.Random, limit: int = 10_000
) -> ApplyResult:
    """Play random legal actions until the game ends; the last result."""
    version = info.version
    for _ in range(limit):
        result = await step(service, info, rng, version)
        version = result.version
        if result.finished:
            return result
    raise AssertionError("the game did not end")


def find_seed(rules: Rules, players: int, wanted: Callable[[Game], bool], tries: int = 3000) -> int:
    """A seed whose deal, played by ``random.Random(seed)``, ends as ``wanted``
    says (the service plays the same game from the same seed and rng)."""
    for seed in range(tries):
        game = Game.from_seed(rules, NAMES[:players], str(seed))
        play_random(game, random.Random(seed))
        if wanted(game):
            return seed
    raise AssertionError("no seed found")


def stored_replay(db: Db, game_id: int) -> Game:
    """Replay a game from the stored rows, with no service code involved."""
    rules, start = db_rows(db, "SELECT rules, start FROM games WHERE game_id = ?", (game_id,))[0]
    names = [
        r[0]
        for r in db_rows(db, "SELECT name FROM seats WHERE game_id = ? ORDER BY seat", (game_id,))
    ]
    steps = [
        {"player": names[seat], **json.loads(text)}
        for seat, text in db_rows(
            db, "SELECT seat, step FROM actions WHERE game_id = ? ORDER BY version", (game_id,)
        )
    ]
    return replay(
        {
            "format": "durak-record/1",
            "rules": json.loads(rules),
            "players": names,
            "start": json.loads(start),
            "steps": steps,
        }
    )


def state(game: Game) -> dict[str, Any]:
    return to_snapshot(game)


def tx_class(db: Db) -> Any:
    """The store's transaction class for ``db``'s kind (to patch one of its methods)."""
    if is_pg(db):
        from durak.store import postgres

        return postgres.Tx
    from durak.store import sqlite

    return sqlite.Tx


async def poison(db: Db, tx: Any) -> None:
    """Make the transaction ``tx`` fail after its statements ran: on SQLite at COMMIT
    (a foreign key checked only then), on PostgreSQL at a last statement."""
    if is_pg(db):
        await tx.execute("SELECT 1 / 0")
        return
    await tx.execute("PRAGMA defer_foreign_keys = ON")
    await tx.execute(
        "INSERT INTO seats (game_id, seat, user_id, name) VALUES (987654, 0, 1, 'ghost')"
    )


async def play_again_all(service: GameService, game_id: int, first: int) -> GameInfo:
    """Play again after ``game_id``: ``first`` opens the lobby, then every other human
    of it confirms; the game it started (or the lobby, if it could not start)."""
    info = await service.play_again(game_id, first)
    for seat in info.seats:
        if info.status != "lobby":
            break
        if not seat.is_ai and not seat.ready:
            info = await service.confirm(info.game_id, seat.user_id)
    return info
