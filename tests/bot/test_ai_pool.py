"""The hard AI's worker pool (issue 10, item 9): replaced when a worker dies, a bound on
each group's hard decisions in flight, and normal plays a decision that waits too long."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from dataclasses import replace
from pathlib import Path

from bot.seats.ai_pool import AiPool
from durak.ai import decide, observation_for
from durak.service import GameInfo, GameService
from tests.fake_telegram.fixtures import async_test
from tests.service.helpers import started


async def hard_table(tmp_path: Path, chat: int = -100) -> tuple[GameService, GameInfo, int]:
    """A started game whose seats are hard AIs, and the seat that must act."""
    service = await GameService.open(tmp_path / f"db{-chat}.sqlite3")
    info = await started(service, 2, chat=chat)
    seats = tuple(replace(s, kind="ai", level="hard") for s in info.seats)
    info = replace(info, seats=seats)
    assert info.game is not None
    return service, info, info.game.actors()[0]


@async_test
async def test_a_dead_worker_is_replaced_and_the_hard_ai_plays_on(tmp_path, caplog):
    service, info, seat = await hard_table(tmp_path)
    ai = AiPool(20, workers=1)
    try:
        with caplog.at_level(logging.INFO, logger="bot.seats.ai_pool"):
            first = await ai.decide(info, seat)
            pool = ai._pool
            assert pool is not None
            for pid in list(pool._processes):  # type: ignore[attr-defined]
                os.kill(pid, signal.SIGKILL)
            await asyncio.sleep(0.2)
            again = [await ai.decide(info, seat) for _ in range(2)]
        assert info.game is not None
        assert first in info.game.legal_actions(seat)
        assert all(a in info.game.legal_actions(seat) for a in again)
        assert ai.replaced == 1 and ai._pool is not pool
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]  # no fallback
    finally:
        ai.close()
        await service.close()


@async_test
async def test_one_group_has_a_bounded_number_of_hard_decisions_in_flight(tmp_path):
    service, info, seat = await hard_table(tmp_path)
    ai = AiPool(20, workers=2, per_group=1, wait_limit=60)
    try:
        actions = await asyncio.gather(*(ai.decide(info, seat) for _ in range(4)))
        assert info.game is not None
        assert all(a in info.game.legal_actions(seat) for a in actions)
        assert ai.peak_per_group == 1 and ai.by_normal == 0
        assert not ai._groups  # nothing kept per group once its decisions are done
        wider = AiPool(20, workers=1, per_group=2, wait_limit=60)
        try:
            await asyncio.gather(*(wider.decide(info, seat) for _ in range(3)))
            assert wider.peak_per_group == 2  # the count sees concurrency where allowed
        finally:
            wider.close()
    finally:
        ai.close()
        await service.close()


@async_test
async def test_a_hard_decision_that_waits_too_long_is_played_by_normal(tmp_path):
    service, info, seat = await hard_table(tmp_path)
    ai = AiPool(20, workers=1, wait_limit=0)
    try:
        action = await ai.decide(info, seat)
        assert info.game is not None
        seed = hash((info.game_id, info.version, seat)) & 0x7FFF_FFFF
        assert action == decide("normal", observation_for(info.game, seat), seed)
        assert ai.by_normal == 1
    finally:
        ai.close()
        await service.close()
