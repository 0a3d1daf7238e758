"""The migration that brought ratings in rates a stored history in order (issue 28):
1,000 finished games of an older database, on both stores, come out rated exactly as
the live code rates them one by one."""

from __future__ import annotations

import pytest

from durak.service.ratings import Standing, settle
from tests.dbaccess import Db, db_rows

from .bench_ratings import old_database, timed_open
from .helpers import run

GAMES = 1000


def test_the_migration_rates_1000_stored_games_in_order(db: Db) -> None:
    stored = run(old_database(db, GAMES, seed=3))
    assert db_rows(db, "SELECT count(*) FROM games WHERE status = 'finished'") == [(GAMES,)]
    run(timed_open(db))
    expected: dict[tuple[int, int, str], Standing] = {}
    changes = 0
    for one in stored:
        game = one.rated
        assert game is not None
        current = {k[1:]: s for k, s in expected.items() if k[0] == game.chat_id}
        done = settle(game, current)
        for key, standing in done.standings:
            expected[(game.chat_id, *key)] = standing
        changes += len(done.changes)
    rows = db_rows(
        db, "SELECT chat_id, user_id, level, mu, sigma, games, flaky, streak, best FROM ratings"
    )
    assert len(rows) == len(expected)
    for chat, user_id, level, mu, sigma, games, flaky, streak, best in rows:
        want = expected[(chat, user_id, level)]
        assert (games, flaky, streak, best) == (want.games, want.flaky, want.streak, want.best)
        assert mu == pytest.approx(want.mu, abs=1e-9)
        assert sigma == pytest.approx(want.sigma, abs=1e-9)
    assert db_rows(db, "SELECT count(*) FROM rating_changes") == [(changes,)]
    assert db_rows(db, "SELECT count(DISTINCT game_id) FROM rating_changes") == [(GAMES,)]
