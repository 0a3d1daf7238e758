"""The migrations over a stored history. The one that brought ratings in rates a
stored history in order (issue 28): 1,000 finished games of an older database, on
both stores, come out rated exactly as the live code rates them one by one. The one
after it (issue 33 item 1) makes every stored game name ``no_progress_draw`` as it
was played: a game stored before the option existed, in which a timed-out table
took 114 times in a row, is rated as it was played, and reads whole."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

import pytest

from durak import Rules
from durak.actions import TAKE
from durak.records import check_record, export_record, replay
from durak.service import GameService
from durak.service.codec import rules_as_played
from durak.service.ratings import RatedGame, Standing, public, settle
from durak.store import postgres
from durak.store import sqlite as sqlite_store
from tests.dbaccess import Db, db_rows, is_pg

from .bench_ratings import (
    TAKES,
    before_ratings,
    history_before_the_option,
    old_database,
    old_game,
    seats_of,
    timed_open,
    timed_out,
)
from .helpers import CHAT, run, user

GAMES = 1000
DAN = user(3)


def expected_standings(
    rated: Sequence[RatedGame | None],
) -> tuple[dict[tuple[int, int, str], Standing], int]:
    """Every player's standing after the games rated one by one in order, as the
    live code rates them; and the number of rating changes written."""
    expected: dict[tuple[int, int, str], Standing] = {}
    changes = 0
    for game in rated:
        assert game is not None
        current = {k[1:]: s for k, s in expected.items() if k[0] == game.chat_id}
        done = settle(game, current)
        for key, standing in done.standings:
            expected[(game.chat_id, *key)] = standing
        changes += len(done.changes)
    return expected, changes


def assert_rated_as(db: Db, rated: Sequence[RatedGame | None]) -> None:
    expected, changes = expected_standings(rated)
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


@pytest.mark.long
def test_the_migration_rates_1000_stored_games_in_order(db: Db) -> None:
    stored = run(old_database(db, GAMES, seed=3))
    assert db_rows(db, "SELECT count(*) FROM games WHERE status = 'finished'") == [(GAMES,)]
    run(timed_open(db))
    assert_rated_as(db, [one.rated for one in stored])
    assert db_rows(db, "SELECT count(DISTINCT game_id) FROM rating_changes") == [(GAMES,)]


# ---- a game stored before no_progress_draw (issue 33 item 1) ---------------------------


def test_the_long_game_is_one_the_option_would_have_cut_short() -> None:
    game = old_game(seats_of(0, 1, 3), 2, TAKES)
    assert game.result is not None
    record = export_record(game)
    assert record["rules"] == {"no_progress_draw": False}
    record["rules"] = {}  # as stored before the option: without it, RECORDS.md says
    assert replay(record).result == game.result
    record["rules"] = {"no_progress_draw": True}  # the new default would end it at take 100
    assert "game_over" in "\n".join(check_record(record).failures)


def test_a_history_from_before_the_option_migrates_rated_as_it_was_played(db: Db) -> None:
    stored = run(history_before_the_option(db))
    rated = [s.rated for s in stored[:3]]
    assert stored[3].rated is None  # running
    run(timed_open(db))
    assert_rated_as(db, rated)
    dan = db_rows(
        db,
        "SELECT game_id, before, after FROM rating_changes WHERE user_id = ? ORDER BY game_id",
        (DAN,),
    )
    assert [g for g, _, _ in dan] == [s.game_id for s in stored[:3]]  # the long game too
    assert dan[0][1] == 1000
    for (_, _, after), (_, before, _) in itertools.pairwise(dan):
        assert before == after  # each game from where the one before left him
    # every stored game now says how it was played; the option's own default is kept
    for rules, snapshot in db_rows(db, "SELECT rules, snapshot FROM games ORDER BY game_id"):
        assert json.loads(rules)["no_progress_draw"] is False
        assert json.loads(snapshot)["rules"]["no_progress_draw"] is False

    async def read(s: GameService) -> dict[str, Any]:
        long_game = await s.game(stored[1].game_id)
        running = await s.game(stored[3].game_id)
        game, version = running.game, running.version
        assert game is not None
        while game.stall == TAKES:  # to the next take: the 115th, as it always did
            seat = game.actors()[0]
            user_id = running.seats[seat].user_id
            played = await s.apply(running.game_id, user_id, timed_out(game, seat), version)
            game, version = played.game, played.version
        return {
            "long": long_game,
            "history": await s.recent_games(CHAT),
            "rated": await s.game_ratings([x.game_id for x in stored]),
            "record": await s.export_record(stored[1].game_id),
            "played": played,
        }

    got = run(_with(db, read))
    assert got["long"].status == "finished" and got["long"].game.result.losers
    assert [g.game_id for g in got["history"]] == [s.game_id for s in reversed(stored[:3])]
    assert set(got["rated"]) == {s.game_id for s in stored[:3]}
    changes = {c.user_id: c for c in got["rated"][stored[2].game_id].changes}
    assert changes[DAN].before == dan[1][2] and changes[DAN].after == dan[2][2]
    assert got["record"]["rules"] == {"no_progress_draw": False}
    assert not check_record(got["record"]).failures
    assert not got["played"].finished and got["played"].game.stall == TAKES + 1
    assert got["played"].action == TAKE


def test_ratings_the_option_read_wrongly_are_worked_out_again(
    db: Db, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The code that brought the option read a stored game that does not name it as
    played with it: its ratings migration left the long game unrated and rated Dan's
    next game from the wrong rating. The migration after it rates the history again."""
    stored = run(history_before_the_option(db))
    backend = postgres if is_pg(db) else sqlite_store
    version = before_ratings(backend) + 1
    with monkeypatch.context() as m:  # that code's reading, and its schema
        m.setattr(Rules, "from_record", classmethod(lambda cls, data: cls.from_dict(data)))
        m.setattr(backend, "MIGRATIONS", backend.MIGRATIONS[:version])
        m.setattr(backend, "SCHEMA_VERSION", version)
        run(timed_open(db))
    unrated = db_rows(db, "SELECT count(*) FROM rating_changes WHERE game_id = ?", (2,))
    assert unrated == [(0,)]  # what it left behind
    run(timed_open(db))
    assert_rated_as(db, [s.rated for s in stored[:3]])
    mu, sigma = db_rows(db, "SELECT mu, sigma FROM ratings WHERE user_id = ?", (DAN,))[0]
    dan = db_rows(db, "SELECT after FROM rating_changes WHERE user_id = ? ORDER BY game_id", (DAN,))
    assert public(mu, sigma) == dan[-1][0] and len(dan) == 3


async def _with(db: Db, body: Any) -> Any:
    service = await GameService.open(db)
    try:
        return await body(service)
    finally:
        await service.close()


@pytest.mark.parametrize(
    ("status", "rules", "snapshot", "want"),
    [
        # stored before the option: played without it
        ("finished", {"transfer": True}, {"rules": {"transfer": True}}, False),
        ("cancelled", {}, None, False),
        # a row the option's code copied (Play again, a sprint's next deal) and played
        # with the option on: its snapshot says so
        ("finished", {}, {"rules": {"no_progress_draw": True}}, True),
        ("running", {}, {"rules": {"no_progress_draw": True}, "stall": 7}, True),
        # an open lobby is not played yet: a new game's default, as that code read it
        ("lobby", {"deck": 52}, None, True),
        ("lobby", {}, {"suits": {}}, True),
    ],
)
def test_which_games_are_played_with_the_option(
    status: str, rules: dict[str, Any], snapshot: dict[str, Any] | None, want: bool
) -> None:
    found = rules_as_played(status, json.dumps(rules), snapshot and json.dumps(snapshot))
    assert found is not None
    new_rules, new_snapshot = found
    assert json.loads(new_rules) == {**rules, "no_progress_draw": want}
    if snapshot is not None and "rules" in snapshot:
        assert json.loads(new_snapshot or "")["rules"]["no_progress_draw"] is want
    else:
        assert new_snapshot == (snapshot and json.dumps(snapshot))


@pytest.mark.parametrize(
    ("rules", "snapshot"),
    [
        ('{"no_progress_draw": false}', '{"rules": {"no_progress_draw": false}}'),
        ('{"no_progress_draw": true}', None),
        ("not json", None),
        ("[1]", None),
        ("{}", "{damaged"),
    ],
)
def test_games_that_name_it_or_cannot_be_read_are_left_alone(
    rules: str, snapshot: str | None
) -> None:
    assert rules_as_played("finished", rules, snapshot) is None
