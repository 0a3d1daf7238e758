"""Many concurrent applies on one game: exactly one winner per version, a consistent log."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter

import pytest

from durak import Game, Rules, to_snapshot
from durak.service import ApplyResult, GameOver, GameService, IllegalMove, StaleVersion
from tests.dbaccess import Db, is_pg

from .helpers import db_rows, started, stored_replay, user, with_service


def _outcomes(results: list[object]) -> Counter[str]:
    kinds: Counter[str] = Counter()
    for r in results:
        if isinstance(r, ApplyResult):
            kinds["won"] += 1
        elif isinstance(r, StaleVersion):
            kinds["stale"] += 1
        elif isinstance(r, IllegalMove):
            kinds["illegal"] += 1
        else:
            raise AssertionError(f"unexpected outcome {r!r}")
    return kinds


def test_the_same_click_twice(db: Db) -> None:
    path = db

    async def body(s: GameService) -> None:
        info = await started(s, 3, seed=3)
        game = info.game
        assert game is not None
        seat = game.actors()[0]
        action = game.legal_actions(seat)[0]
        clicks = [s.apply(info.game_id, user(seat), action, 0) for _ in range(8)]
        results = await asyncio.gather(*clicks, return_exceptions=True)
        assert _outcomes(results) == Counter(won=1, stale=7)
        assert db_rows(path, "SELECT version, seat FROM actions") == [(1, seat)]

    with_service(path, body)


def _two_actors(seed: int) -> tuple[Game, list[tuple[int, object]]]:
    """Play a 3-player game until two different seats may act at once."""
    rng = random.Random(seed)
    game = Game.from_seed(Rules(throw_in="all"), ["Ann", "Bob", "Cid"], "1")
    steps: list[tuple[int, object]] = []
    while len(game.actors()) < 2:
        seat = rng.choice(game.actors())
        action = rng.choice(game.legal_actions(seat))
        game.apply(seat, action)
        steps.append((seat, action))
    return game, steps


def test_two_players_at_once(db: Db) -> None:
    path = db
    reference, steps = _two_actors(seed=2)

    async def body(s: GameService) -> None:
        info = await started(s, 3, seed=1, throw_in="all")
        for v, (seat, action) in enumerate(steps):
            await s.apply(info.game_id, user(seat), action, v)  # type: ignore[arg-type]
        game = info.game
        assert game is not None and to_snapshot(game) == to_snapshot(reference)
        version = len(steps)
        first, second = reference.actors()[:2]
        calls = [
            s.apply(info.game_id, user(first), reference.legal_actions(first)[0], version),
            s.apply(info.game_id, user(second), reference.legal_actions(second)[0], version),
        ]
        results = await asyncio.gather(*calls, return_exceptions=True)
        assert _outcomes(results) == Counter(won=1, stale=1)
        winner = next(r for r in results if isinstance(r, ApplyResult))
        assert winner.version == version + 1

    with_service(path, body)
    assert db_rows(path, "SELECT max(version), count(*) FROM actions") == [
        (len(steps) + 1, len(steps) + 1)
    ]


def test_many_players_racing_over_many_versions(db: Db) -> None:
    """Workers keep reading the game and sending a random legal action against the
    version they saw; every version must be won exactly once and the log must be
    exactly the winners' actions, replaying to the live game."""
    path = db

    async def body(s: GameService) -> None:
        games = [await started(s, 4, seed=k, chat=-k - 1, throw_in="all") for k in range(3)]
        wins: dict[int, list[tuple[int, int, str]]] = {g.game_id: [] for g in games}
        outcomes: Counter[str] = Counter()

        async def worker(game_id: int, rng: random.Random) -> None:
            for _ in range(400):
                info = await s.game(game_id)
                game = info.game
                if info.status != "running" or game is None:
                    return
                seat = rng.choice(game.actors())
                action = rng.choice(game.legal_actions(seat))
                await asyncio.sleep(0)  # let the others read the same version
                try:
                    result = await s.apply(game_id, user(seat), action, info.version)
                except StaleVersion:
                    outcomes["stale"] += 1
                    continue
                except GameOver:  # someone else's action ended it meanwhile
                    outcomes["over"] += 1
                    return
                outcomes["won"] += 1
                wins[game_id].append((result.version, seat, json.dumps(action.step())))

        rng = random.Random(99)
        await asyncio.gather(
            *(
                worker(g.game_id, random.Random(rng.random()))
                for g in games
                for _ in range(6)  # six concurrent clients per game
            )
        )
        assert outcomes["stale"] > 50, outcomes  # the race really happened
        for g in games:
            won = sorted(wins[g.game_id])
            versions = [v for v, _, _ in won]
            assert versions == list(range(1, len(won) + 1)), "one winner per version"
            logged = db_rows(
                path,
                "SELECT version, seat, step FROM actions WHERE game_id = ? ORDER BY version",
                (g.game_id,),
            )
            assert [(v, seat, json.loads(step)) for v, seat, step in logged] == [
                (v, seat, json.loads(step)) for v, seat, step in won
            ]
            info = await s.game(g.game_id)
            assert info.version == len(won) and info.game is not None
            assert to_snapshot(stored_replay(path, g.game_id)) == to_snapshot(info.game)

    with_service(path, body)


def test_cancelled_applies_leave_memory_as_on_disk(db: Db) -> None:
    """An apply cancelled at any point (a shutdown mid-click) may or may not have
    committed, but memory must always equal the disk afterwards."""
    path = db
    # "A moment later": up to about two commits' time, so that both outcomes occur
    # often (a PostgreSQL commit is a round trip to the server, slower than SQLite's).
    later = 0.012 if is_pg(path) else 0.004

    async def body(s: GameService) -> None:
        rng = random.Random(5)
        outcomes: Counter[str] = Counter()
        games = 0
        while sum(outcomes.values()) < 300:
            games += 1
            info = await started(s, 4, seed=4 + games, chat=-100 - games)
            while sum(outcomes.values()) < 300:
                current = await s.game(info.game_id)
                if current.status != "running" or current.game is None:
                    break
                seat = rng.choice(current.game.actors())
                action = rng.choice(current.game.legal_actions(seat))
                task = asyncio.create_task(
                    s.apply(info.game_id, user(seat), action, current.version)
                )
                if rng.random() < 0.5:  # cancelled a few loop turns in: before, at or in the commit
                    for _ in range(rng.randrange(12)):
                        await asyncio.sleep(0)
                else:  # or a moment later: the commit may be done
                    await asyncio.sleep(rng.random() * later)
                task.cancel()
                try:
                    await task
                    outcomes["done"] += 1
                except asyncio.CancelledError:
                    outcomes["cancelled"] += 1
                after = await s.game(info.game_id)
                (version,) = db_rows(
                    path, "SELECT version FROM games WHERE game_id = ?", (info.game_id,)
                )[0]
                assert after.version == version
                assert after.game is not None
                assert to_snapshot(after.game) == to_snapshot(stored_replay(path, info.game_id))
        assert outcomes["cancelled"] > 20 and outcomes["done"] > 20, outcomes
        committed = db_rows(path, "SELECT count(*) FROM actions")[0][0]
        assert committed >= outcomes["done"]

    with_service(path, body)


def test_two_services_on_one_file_cannot_both_win_a_version(db: Db) -> None:
    """One writer is the design, but if a second service (a bot started twice)
    opens the same file, the database itself still lets only one action per
    version through, and the loser catches up from the log."""
    path = db

    async def main() -> None:
        first = await GameService.open(path)
        try:
            info = await started(first, 3, seed=12)
            second = await GameService.open(path)
            try:
                mine = info.game
                theirs = (await second.game(info.game_id)).game
                assert mine is not None and theirs is not None and mine is not theirs
                seat = mine.actors()[0]
                actions = mine.legal_actions(seat)
                await first.apply(info.game_id, user(seat), actions[0], 0)
                with pytest.raises(StaleVersion) as e:
                    await second.apply(info.game_id, user(seat), actions[-1], 0)
                assert e.value.current == -1
                caught_up = await second.game(info.game_id)
                assert caught_up.version == 1 and caught_up.game is not None
                assert to_snapshot(caught_up.game) == to_snapshot(mine)
                assert db_rows(path, "SELECT version FROM actions") == [(1,)]
            finally:
                await second.close()
        finally:
            await first.close()

    asyncio.run(main())
