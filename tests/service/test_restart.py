"""Restart safety: close and reopen mid-game, and a store that disagrees with its log."""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path

import pytest

from durak import Game, Rules, Take, to_snapshot
from durak.service import DatabaseError, GameService
from tests.dbaccess import Db, db_execute

from .helpers import CHAT, NAMES, db_rows, started, stored_replay, user, with_service


def _advance(s_game: Game, reference: Game, rng: random.Random) -> tuple[int, object]:
    seat = rng.choice(reference.actors())
    action = rng.choice(reference.legal_actions(seat))
    reference.apply(seat, action)
    return seat, action


def test_close_and_reopen_mid_game_continues_identically(db: Db) -> None:
    path = db
    reference = Game.from_seed(Rules(), NAMES[:4], "21")
    rng = random.Random(21)

    async def first(s: GameService) -> int:
        info = await started(s, 4, seed=21)
        await started(s, 2, seed=3, chat=CHAT - 1)  # a second running game, untouched
        for v in range(30):
            seat, action = _advance(info.game, reference, rng)  # type: ignore[arg-type]
            await s.apply(info.game_id, user(seat), action, v)  # type: ignore[arg-type]
        return info.game_id

    game_id = with_service(path, first)

    async def second(s: GameService) -> None:
        running = await s.running_games()
        assert sorted(g.chat_id for g in running) == [CHAT - 1, CHAT]
        info = await s.game(game_id)
        assert info.status == "running" and info.version == 30
        assert info.game is not None and to_snapshot(info.game) == to_snapshot(reference)
        version = 30
        while reference.result is None:
            seat, action = _advance(info.game, reference, rng)
            result = await s.apply(game_id, user(seat), action, version)  # type: ignore[arg-type]
            version = result.version
        assert to_snapshot(info.game) == to_snapshot(reference)
        assert (await s.game(game_id)).status == "finished"

    with_service(path, second)
    assert to_snapshot(stored_replay(path, game_id)) == to_snapshot(reference)


def test_reopen_after_every_action(db: Db) -> None:
    """Many short sessions in a row (what a bot that restarts a lot looks like)."""
    path = db
    reference = Game.from_seed(Rules(), NAMES[:3], "5")
    rng = random.Random(5)

    async def setup(s: GameService) -> int:
        return (await started(s, 3, seed=5)).game_id

    game_id = with_service(path, setup)
    version = 0
    while reference.result is None and version < 40:

        async def one(s: GameService, version: int = version) -> None:
            info = await s.game(game_id)
            assert info.game is not None and to_snapshot(info.game) == to_snapshot(reference)
            seat, action = _advance(info.game, reference, rng)
            await s.apply(game_id, user(seat), action, version)  # type: ignore[arg-type]

        with_service(path, one)
        version += 1
    assert db_rows(path, "SELECT version FROM games WHERE game_id = ?", (game_id,)) == [(version,)]


def _with_actions(path: Path, steps: int = 10) -> int:
    async def body(s: GameService) -> int:
        info = await started(s, 3, seed=17)
        rng = random.Random(17)
        game = info.game
        assert game is not None
        for v in range(steps):
            seat = rng.choice(game.actors())
            await s.apply(info.game_id, user(seat), rng.choice(game.legal_actions(seat)), v)
        return info.game_id

    return with_service(path, body)


def _tamper(db: Db, sql: str, params: tuple[object, ...] = ()) -> None:
    db_execute(db, sql, params)


def test_a_wrong_snapshot_is_replaced_by_the_log(db: Db, caplog: pytest.LogCaptureFixture) -> None:
    path = db
    game_id = _with_actions(path)
    (good,) = db_rows(path, "SELECT snapshot FROM games WHERE game_id = ?", (game_id,))[0]
    bad = json.loads(good)
    bad["hands"][0], bad["hands"][1] = bad["hands"][1], bad["hands"][0]
    _tamper(path, "UPDATE games SET snapshot = ? WHERE game_id = ?", (json.dumps(bad), game_id))

    async def body(s: GameService) -> None:
        info = await s.game(game_id)
        assert info.game is not None
        assert to_snapshot(info.game) == to_snapshot(stored_replay(path, game_id))

    with caplog.at_level(logging.WARNING, logger="durak.service"):
        with_service(path, body)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any("disagrees with its action log" in r.getMessage() for r in warnings)
    # No hand in the log line.
    assert not any(card in r.getMessage() for r in warnings for card in bad["hands"][0])
    assert db_rows(path, "SELECT snapshot FROM games WHERE game_id = ?", (game_id,)) == [(good,)]


def test_a_wrong_version_is_replaced_by_the_log(db: Db) -> None:
    path = db
    game_id = _with_actions(path, 10)
    _tamper(path, "UPDATE games SET version = 4 WHERE game_id = ?", (game_id,))

    async def body(s: GameService) -> None:
        info = await s.game(game_id)
        assert info.version == 10
        game = info.game
        assert game is not None
        seat = game.actors()[0]
        result = await s.apply(game_id, user(seat), game.legal_actions(seat)[0], 10)
        assert result.version == 11

    with_service(path, body)
    assert db_rows(path, "SELECT version FROM games WHERE game_id = ?", (game_id,)) == [(11,)]


def test_a_log_that_cannot_be_replayed_is_reported_and_can_be_cancelled(
    db: Db, caplog: pytest.LogCaptureFixture
) -> None:
    path = db
    game_id = _with_actions(path, 3)

    async def other_game(s: GameService) -> int:
        return (await started(s, 2, seed=2, chat=CHAT - 1)).game_id

    other_id = with_service(path, other_game)
    # An impossible action smuggled into the log: the dealer's hand cannot hold every card.
    _tamper(path, "UPDATE games SET version = 4 WHERE game_id = ?", (game_id,))
    _tamper(
        path,
        "INSERT INTO actions (game_id, version, seat, user_id, step, created_at)"
        ' VALUES (?, 4, 0, ?, \'{"do":"attack","cards":["AS","AH","AD","AC"]}\', 0)',
        (game_id, user(0)),
    )

    async def body(s: GameService) -> None:
        with pytest.raises(DatabaseError) as e:
            await s.apply(game_id, user(0), Take())
        assert e.value.code == "database_error" and f"game {game_id}" in str(e.value)
        with pytest.raises(DatabaseError):
            await s.view(game_id, user(0))
        info = await s.game(game_id)  # the row itself is still readable
        assert info.status == "running" and info.game is None
        assert [g.game_id for g in await s.running_games()] == [other_id]  # others load fine
        ended = await s.cancel(CHAT, user(0))  # and the chat can be freed
        assert ended.status == "cancelled"
        assert await s.active_game(CHAT) is None

    with caplog.at_level(logging.ERROR, logger="durak.service"):
        with_service(path, body)
    assert any("cannot be replayed" in r.getMessage() for r in caplog.records)
