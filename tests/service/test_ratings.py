"""Ratings (issue 28): the model's updates against the Weng-Lin paper's formulas,
worked out here without the package; who is rated and where; the store's rows."""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from durak import Game, Rules
from durak.selfplay import play_match, play_random, random_step
from durak.service import series
from durak.service.rated import rated_game
from durak.service.ratings import (
    AI,
    CHAIN,
    FIRST_WIN,
    HARD_AI,
    SIX,
    STREAK_5,
    Entrant,
    RatedGame,
    Standing,
    places,
    public,
    rate,
    settle,
)
from durak.service.summary import summarize
from durak.service.types import Ending, Seat
from tests.dbaccess import Db, db_execute, db_rows

from .helpers import (
    CHAT,
    NAMES,
    find_seed,
    lobby,
    play_again_all,
    play_out,
    started,
    step,
    user,
    with_service,
)

MU, SIGMA, BETA, KAPPA, TAU = 25.0, 25.0 / 3, 25.0 / 6, 0.0001, 25.0 / 300


def paper(
    teams: Sequence[Sequence[tuple[float, float]]], ranks: Sequence[int]
) -> list[list[tuple[float, float]]]:
    """Weng and Lin (JMLR 12, 2011), Algorithm 4 (Plackett-Luce), written from the
    paper: sigma first widened by the dynamics tau; gamma = sigma_i / c; ties as
    the paper's A_q. (openskill's code means tied teams to share the mean of their
    mu changes, but it compares each player with himself, updated in place, so the
    mean changes nothing: the paper's values are what it gives.)"""
    teams = [[(mu, math.sqrt(s * s + TAU * TAU)) for mu, s in team] for team in teams]
    mus = [sum(mu for mu, _ in t) for t in teams]
    s2 = [sum(s * s for _, s in t) for t in teams]
    k = len(teams)
    c = math.sqrt(sum(v + BETA * BETA for v in s2))
    e = [math.exp(m / c) for m in mus]
    sum_q = [sum(e[s] for s in range(k) if ranks[s] >= ranks[q]) for q in range(k)]
    a = [sum(1 for s in range(k) if ranks[s] == ranks[q]) for q in range(k)]
    out = []
    for i in range(k):
        omega = delta = 0.0
        for q in range(k):
            if ranks[q] <= ranks[i]:
                p = e[i] / sum_q[q]
                omega += ((1.0 if q == i else 0.0) - p) / a[q]
                delta += p * (1 - p) / a[q]
        omega *= s2[i] / c
        delta *= (s2[i] / c**2) * (math.sqrt(s2[i]) / c)
        out.append(
            [
                (
                    mu + s * s / s2[i] * omega,
                    s * math.sqrt(max(1 - s * s / s2[i] * delta, KAPPA)),
                )
                for mu, s in teams[i]
            ]
        )
    return out


def close(
    got: Sequence[Sequence[tuple[float, float]]], want: Sequence[Sequence[tuple[float, float]]]
) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        for (gm, gs), (wm, ws) in zip(g, w, strict=True):
            assert gm == pytest.approx(wm, abs=1e-9) and gs == pytest.approx(ws, abs=1e-9)


def test_two_players_against_the_paper() -> None:
    teams = [[(MU, SIGMA)], [(MU, SIGMA)]]
    got = rate(teams, [0, 1])
    close(got, paper(teams, [0, 1]))
    # by hand: c = sqrt(2 (sigma'^2 + beta^2)), winner +sigma'^2/c * 1/2
    s2 = SIGMA**2 + TAU**2
    c = math.sqrt(2 * (s2 + BETA**2))
    assert got[0][0][0] == pytest.approx(MU + s2 / c / 2)
    assert got[1][0][0] == pytest.approx(MU - s2 / c / 2)


def test_three_players_with_history_against_the_paper() -> None:
    teams = [[(28.0, 5.0)], [(25.0, 8.0)], [(20.0, 3.0)]]
    close(rate(teams, [1, 0, 2]), paper(teams, [1, 0, 2]))


def test_six_players_in_the_order_they_went_out() -> None:
    rng = random.Random(6)
    teams = [[(rng.uniform(15, 35), rng.uniform(1, 8))] for _ in range(6)]
    ranks = [3, 0, 5, 1, 2, 4]
    got = rate(teams, ranks)
    close(got, paper(teams, ranks))
    assert got[2][0][0] < teams[2][0][0]  # the durak loses, the first out gains
    assert got[1][0][0] > teams[1][0][0]


def test_a_draw_ties_everyone() -> None:
    even = [[(MU, SIGMA)] for _ in range(3)]
    got = rate(even, [0, 0, 0])
    close(got, paper(even, [0, 0, 0]))
    assert all(p[0][0] == pytest.approx(MU) for p in got)
    uneven = [[(30.0, 4.0)], [(22.0, 6.0)], [(25.0, 8.0)]]
    close(rate(uneven, [0, 0, 0]), paper(uneven, [0, 0, 0]))


def test_teams_are_rated_as_teams() -> None:
    teams = [[(27.0, 6.0), (24.0, 7.0)], [(25.0, 8.0), (22.0, 3.0)]]
    close(rate(teams, [1, 0]), paper(teams, [1, 0]))
    game = RatedGame(
        1,
        CHAT,
        0.0,
        tuple(Entrant(user(s), "", int(s % 2 == 0), s % 2 == 0, team=s % 2) for s in range(4)),
    )
    done = settle(game, {})
    by_key = dict(done.standings)
    want = paper([[(MU, SIGMA)] * 2, [(MU, SIGMA)] * 2], [1, 0])
    assert by_key[(user(0), "")].mu == pytest.approx(want[0][0][0])
    assert by_key[(user(1), "")].mu == pytest.approx(want[1][0][0])


def test_a_knock_out_match_is_rated_once_as_its_result() -> None:
    rules = Rules(sprint=True)
    names = list(NAMES[:4])
    deals = play_match(Game.from_seed(rules, names, 5), random.Random(5))
    assert len(deals) > 1
    seats = [Seat(k, user(k), n) for k, n in enumerate(names)]
    by_name = {s.name: s for s in seats}
    for deal in deals[:-1]:
        ending = Ending("played", deal.result.losers, deal.result.draw)
        assert rated_game(1, CHAT, 0.0, seats, deal, ending, by_name) is None
    final = deals[-1]
    match = final.view().match
    assert match is not None and match.winner is not None
    final_seats = [replace_seat(by_name[n], k) for k, n in enumerate(final.players)]
    ending = Ending("played", final.result.losers, final.result.draw)
    rated = rated_game(1, CHAT, 0.0, final_seats, final, ending, by_name)
    assert rated is not None
    order = [match.winner, *reversed(match.eliminated)]
    assert [e.user_id for e in sorted(rated.entrants, key=lambda e: e.place)] == [
        by_name[n].user_id for n in order
    ]
    assert [e.place for e in sorted(rated.entrants, key=lambda e: e.place)] == [0, 1, 2, 3]
    got = [s for _, s in settle(rated, {}).standings]
    by_user = {e.user_id: e.place for e in rated.entrants}
    want = paper([[(MU, SIGMA)]] * 4, [by_user[s.user_id] for s in seats])
    mus = {k[0]: s.mu for k, s in settle(rated, {}).standings}
    for s, w in zip(seats, want, strict=True):
        assert mus[s.user_id] == pytest.approx(w[0][0])
    assert len(got) == 4


def replace_seat(seat: Seat, k: int) -> Seat:
    return Seat(k, seat.user_id, seat.name, seat.kind, seat.level)


def test_places_follow_the_order_out_and_the_durak_last() -> None:
    assert places([(2,), (0, 3)], 4, (1,), False) == [1, 2, 0, 1]
    assert places([(0,)], 3, (2,), True) == [0, 0, 0]
    assert places([(1,)], 3, (0,), False) == [1, 0, 0]  # seat 2 never went out: ties


def test_public_number_and_ai_levels() -> None:
    assert public(MU, SIGMA) == 1000
    game = RatedGame(
        7,
        CHAT,
        0.0,
        (
            Entrant(user(1), "", 0, False),
            Entrant(AI, "hard", 1, False),
            Entrant(AI, "hard", 2, True),
        ),
    )
    done = settle(game, {(user(1), ""): Standing(streak=4)})
    keys = [k for k, _ in done.standings]
    assert keys == [(user(1), ""), (AI, "hard")]  # one rating for the level
    assert dict(done.standings)[(AI, "hard")].games == 1
    assert set(done.feats) == {(user(1), FIRST_WIN), (user(1), STREAK_5), (user(1), HARD_AI)}
    again = settle(game, dict(done.standings), done.feats)
    assert again.feats == ()  # each achievement once


def test_the_service_rates_a_finished_game_on_both_stores(db: Db) -> None:
    async def body(s):  # type: ignore[no-untyped-def]
        info = await started(s, 3, seed=4)
        result = await play_out(s, info, random.Random(4))
        return info, result

    info, result = with_service(db, body)
    rows = db_rows(
        db,
        "SELECT user_id, level, place, durak, before, after FROM rating_changes"
        " WHERE game_id = ? ORDER BY place",
        (info.game_id,),
    )
    assert len(rows) == 3 and all(r[4] == 1000 for r in rows)
    durak = result.ending.losers[0]
    assert bool(rows[-1][3]) and rows[-1][0] == info.seats[durak].user_id
    assert rows[0][5] > rows[-1][5]
    standings = db_rows(db, "SELECT user_id, games FROM ratings WHERE chat_id = ?", (CHAT,))
    assert sorted(standings) == [(user(k), 1) for k in range(3)]


def test_a_cancelled_game_is_not_rated_and_a_leaver_is(db: Db) -> None:
    async def body(s):  # type: ignore[no-untyped-def]
        info = await started(s, 2, seed=1)
        await s.cancel(CHAT, user(0))
        await lobby(s, 2)
        await s.add_ai(CHAT, "hard", user(0))
        info = await s.start(CHAT, user(0), seed=3)
        await s.hand_over(info.game_id, user(1))
        await play_out(s, await s.game(info.game_id), random.Random(3))
        return info

    info = with_service(db, body)
    rows = db_rows(db, "SELECT user_id, level FROM rating_changes ORDER BY user_id, level", ())
    ai = [s for s in info.seats if s.is_ai]
    assert sorted(rows) == sorted([(AI, ai[0].level), (user(0), ""), (user(1), "")])
    flaky = db_rows(db, "SELECT user_id, flaky FROM ratings WHERE level = '' ORDER BY 1", ())
    assert flaky == [(user(0), 0), (user(1), 1)]


def test_surrender_is_rated_with_the_leaver_last(db: Db) -> None:
    async def body(s):  # type: ignore[no-untyped-def]
        info = await started(s, 3, seed=2)
        await s.surrender(info.game_id, user(1))
        return info

    with_service(db, body)
    rows = db_rows(db, "SELECT user_id, place, durak FROM rating_changes ORDER BY user_id", ())
    assert [(r[0], r[1], bool(r[2])) for r in rows] == [
        (user(0), 0, False),
        (user(1), 1, True),
        (user(2), 0, False),
    ]
    flaky = db_rows(db, "SELECT user_id, flaky FROM ratings ORDER BY user_id")
    assert flaky == [(user(0), 0), (user(1), 1), (user(2), 0)]


def test_two_games_of_one_group_ending_at_once_rate_one_after_the_other(db: Db) -> None:
    """Two topics' games end in the same moment, each with the group's hard AI: the
    level's rating takes both games, the second from where the first left it."""

    async def to_the_last_move(s, info, rng):  # type: ignore[no-untyped-def]
        version = info.version
        while True:
            game = (await s.game(info.game_id)).game
            seat, action = random_step(game, rng)
            trial = game.clone()
            trial.apply(seat, action)
            if trial.over:
                return info.seats[seat].user_id, action, version
            result = await s.apply(info.game_id, info.seats[seat].user_id, action, version)
            version = result.version

    async def body(s):  # type: ignore[no-untyped-def]
        games = []
        for k, topic in enumerate((11, 22)):
            await s.create_lobby(CHAT, user(2 * k), NAMES[2 * k], thread_id=topic)
            await s.join(CHAT, user(2 * k + 1), NAMES[2 * k + 1], thread_id=topic)
            await s.add_ai(CHAT, "hard", user(2 * k), thread_id=topic)
            games.append(await s.start(CHAT, user(2 * k), seed=k + 1, thread_id=topic))
        last = [await to_the_last_move(s, g, random.Random(g.game_id)) for g in games]
        done = await asyncio.gather(
            *(s.apply(g.game_id, u, a, v) for g, (u, a, v) in zip(games, last, strict=True))
        )
        assert all(r.finished for r in done)
        return games

    games = with_service(db, body)
    ai = db_rows(db, "SELECT games FROM ratings WHERE level = 'hard'")
    assert ai == [(2,)]
    changes = db_rows(db, "SELECT game_id, before, after FROM rating_changes WHERE level = 'hard'")
    assert sorted(g for g, _, _ in changes) == sorted(g.game_id for g in games)
    first, second = sorted(changes, key=lambda c: c[1] == 1000, reverse=True)
    assert first[1] == 1000 and second[1] == first[2]  # no update lost
    mu, sigma = db_rows(db, "SELECT mu, sigma FROM ratings WHERE level = 'hard'")[0]
    assert public(mu, sigma) == second[2]
    humans = db_rows(db, "SELECT user_id, games FROM ratings WHERE level = '' ORDER BY 1")
    assert humans == [(user(k), 1) for k in range(4)]


def test_group_stats_head_to_head_and_a_chat_that_moves(
    db: Db, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(series.secrets, "randbits", random.Random(1).getrandbits)  # no draw

    async def body(s):  # type: ignore[no-untyped-def]
        ended = []
        for k in range(3):
            info = await started(s, 3, seed=10 + k) if k == 0 else None
            if info is None:
                again = await play_again_all(s, ended[-1], user(0))
                info = await s.game(again.game_id)
            result = await play_out(s, info, random.Random(10 + k))
            ended.append(result.game_id)
        stats = await s.group_stats(CHAT)
        record = await s.player_record(CHAT, user(0))
        found = await s.find_player(CHAT, "@" + NAMES[1].upper())
        rated = await s.game_ratings(ended)
        exported = await s.export_record(ended[0])
        await s.migrate_chat(CHAT, CHAT - 1)
        moved = await s.group_stats(CHAT - 1)
        return ended, stats, record, found, rated, exported, moved

    ended, stats, record, found, rated, exported, moved = with_service(db, body)
    assert [x.rating for x in stats.lines] == sorted((x.rating for x in stats.lines), reverse=True)
    assert sum(x.duraks for x in stats.lines) == 3 and all(x.games == 3 for x in stats.lines)
    duraks = {x.user_id: x.duraks for x in stats.lines}
    top = max(duraks.values())
    assert stats.week.times == stats.month.times == top
    assert {x.user_id for x in stats.week.who} == {u for u, n in duraks.items() if n == top}
    assert stats.longest.times == max(x.best for x in stats.lines)
    assert record is not None and record.line.user_id == user(0)
    assert {m.other.user_id: (m.games, m.mine, m.theirs) for m in record.meetings} == {
        user(k): (3, duraks[user(0)], duraks[user(k)]) for k in (1, 2)
    }
    assert found == user(1)
    assert set(rated) == set(ended) and all(len(r.changes) == 3 for r in rated.values())
    assert set(exported) == {"format", "name", "rules", "players", "start", "steps"}
    assert [(x.user_id, x.rating) for x in moved.lines] == [
        (x.user_id, x.rating) for x in stats.lines
    ]


def test_the_play_earns_six_cards_and_a_chain_of_transfers() -> None:
    rules = Rules(transfer=True)
    found: set[str] = set()
    for seed in range(400):
        game = Game.from_seed(rules, list(NAMES[:4]), seed)
        play_random(game, random.Random(seed))
        summary = summarize(game)
        assert sum(summary.taken) >= 0 and len(summary.out) <= 4
        for seat, feat in summary.feats:
            found.add(feat)
            if feat == CHAIN:
                assert summary.decisive is not None and game.result.loser is not None
                assert seat != game.result.loser
        if found == {SIX, CHAIN}:
            break
    assert found == {SIX, CHAIN}


@pytest.mark.parametrize(
    ("players", "draws", "drawn"), [(2, 102, False), (3, 103, False), (2, 2, True)]
)
def test_a_sprint_match_through_the_service_is_rated_once_at_its_end(
    db: Db, players: int, draws: int, drawn: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A two-player match and a knock-out of three: rated once, as the match ended; a
    drawn match ties both. (The next deals' seeds come from a generator seeded with
    ``draws``, so each run plays the same match.)"""
    monkeypatch.setattr(series.secrets, "randbits", random.Random(draws).getrandbits)

    async def body(s):  # type: ignore[no-untyped-def]
        info = await started(s, players, seed=5, sprint=True)
        rng = random.Random(5)
        deals = [info.game_id]
        while True:
            result = await play_out(s, info, rng)
            if result.next_game_id is None:
                match = result.game.view(None).match
                assert match is not None and match.draw == drawn
                return deals
            deals.append(result.next_game_id)
            info = await s.game(result.next_game_id)

    deals = with_service(db, body)
    assert len(deals) >= 2  # a match takes two deals at least
    rows = db_rows(db, "SELECT game_id, user_id, place, durak FROM rating_changes ORDER BY place")
    assert {r[0] for r in rows} == {deals[-1]}  # once, as the match's result
    assert sorted(r[1] for r in rows) == [user(k) for k in range(players)]
    if drawn:
        assert [(r[2], bool(r[3])) for r in rows] == [(0, False)] * players
        return
    assert [r[2] for r in rows] == list(range(players))
    assert [bool(r[3]) for r in rows] == [False] * (players - 1) + [True]
    final = db_rows(db, "SELECT user_id FROM seats WHERE game_id = ?", (deals[-1],))
    assert rows[0][1] in {r[0] for r in final}  # the winner played the last deal


def test_damaged_standings_leave_the_game_unrated_but_finished(tmp_path: Path) -> None:
    """A rating the database cannot give back as a number (SQLite keeps what it is
    given): the game still ends, its tally counts, it is not rated; the next game of
    a sound group is."""
    db = tmp_path / "db.sqlite3"

    async def first(s):  # type: ignore[no-untyped-def]
        await play_out(s, await started(s, 2, seed=1), random.Random(1))

    with_service(db, first)
    db_execute(db, "UPDATE ratings SET mu = 'not a number' WHERE user_id = ?", (user(0),))

    async def second(s):  # type: ignore[no-untyped-def]
        again = await play_again_all(s, 1, user(0))
        result = await play_out(s, await s.game(again.game_id), random.Random(2))
        return result.game_id, await s.game(result.game_id)

    game_id, info = with_service(db, second)
    assert info.status == "finished"
    assert db_rows(db, "SELECT sum(played) FROM tallies") == [(4,)]
    assert db_rows(db, "SELECT count(*) FROM rating_changes WHERE game_id = ?", (game_id,)) == [
        (0,)
    ]


# ---- two AI seats of one level (issue 33 item 2) ---------------------------------------


@pytest.mark.parametrize("durak_seat", [1, 2])
def test_the_level_of_two_ai_seats_is_the_durak_if_either_is(durak_seat: int) -> None:
    game = RatedGame(
        3,
        CHAT,
        0.0,
        (
            Entrant(user(0), "", 0, False),
            Entrant(AI, "normal", 1 if durak_seat == 2 else 2, durak_seat == 1),
            Entrant(AI, "normal", 2 if durak_seat == 2 else 1, durak_seat == 2),
        ),
    )
    done = settle(game, {(AI, "normal"): Standing(streak=1, best=1)})
    (level,) = [c for c in done.changes if c.level == "normal"]
    assert level.durak and level.place == 2  # at the place of its last seat
    standing = dict(done.standings)[(AI, "normal")]
    assert (standing.games, standing.streak, standing.best) == (1, 0, 1)
    mus = [mu for group in rate([[(MU, SIGMA)]] * 3, [0, 1, 2]) for mu, _ in group]
    assert standing.mu == pytest.approx((mus[1] + mus[2]) / 2)  # the copies' mean, as before


@pytest.mark.parametrize("durak_seat", [1, 2])
def test_two_normal_ai_seats_either_the_durak_on_both_stores(db: Db, durak_seat: int) -> None:
    """Ann and two `normal` AI seats play twice: Ann is the durak of the first game,
    the AI seat ``durak_seat`` of the second. The level was the durak once: its
    stored change, /stats's "1× durak", its streak and Ann's head-to-head say so."""

    def durak(seat: int):  # type: ignore[no-untyped-def]
        return lambda g: g.result is not None and g.result.losers == (seat,)

    seeds = [find_seed(Rules(), 3, durak(seat)) for seat in (0, durak_seat)]

    async def body(s):  # type: ignore[no-untyped-def]
        ended = []
        for seed in seeds:
            await lobby(s, 1)
            for _ in range(2):
                await s.add_ai(CHAT, "normal", user(0))
            info = await s.start(CHAT, user(0), seed=seed)
            result = await play_out(s, info, random.Random(seed))
            assert result.ending.losers == ((0,) if not ended else (durak_seat,))
            ended.append(result.game_id)
        return ended, await s.group_stats(CHAT), await s.player_record(CHAT, user(0))

    ended, stats, record = with_service(db, body)
    rows = db_rows(
        db,
        "SELECT game_id, durak FROM rating_changes WHERE level = 'normal' ORDER BY game_id",
    )
    assert [(g, bool(d)) for g, d in rows] == [(ended[0], False), (ended[1], True)]
    (level,) = [x for x in stats.lines if x.level == "normal"]
    assert (level.games, level.duraks, level.streak, level.best) == (2, 1, 0, 1)
    (ann,) = [x for x in stats.lines if x.user_id == user(0)]
    assert (ann.games, ann.duraks, ann.streak) == (2, 1, 1)
    assert record is not None
    (meeting,) = record.meetings
    assert meeting.other.level == "normal"
    assert (meeting.games, meeting.mine, meeting.theirs) == (2, 1, 1)


# ---- a knock-out's rated players by name (issue 33 item 3) -----------------------------


def test_a_knock_outs_ratings_name_the_players_of_earlier_deals(
    db: Db, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last deal of a knock-out of four seats two players; its rating changes
    rate all four, and come with the seats of the two knocked out before it, so its
    recap and /history can name them."""
    monkeypatch.setattr(series.secrets, "randbits", random.Random(104).getrandbits)

    async def body(s):  # type: ignore[no-untyped-def]
        info = await started(s, 4, seed=5, sprint=True)
        rng = random.Random(5)
        while True:
            result = await play_out(s, info, rng)
            if result.next_game_id is None:
                last = await s.game(result.game_id)
                return last, (await s.game_ratings([last.game_id]))[last.game_id]
            info = await s.game(result.next_game_id)

    last, rated = with_service(db, body)
    match = last.game.view(None).match
    assert match.winner is not None and match.eliminated
    assert {c.user_id for c in rated.changes} == {user(k) for k in range(4)}
    here = {s.user_id for s in last.seats}
    gone = {s.user_id: s.name for s in rated.earlier}
    assert set(gone) == {user(k) for k in range(4)} - here
    assert sorted(gone.values()) == sorted(set(match.eliminated) - set(last.game.players))
    assert len(gone) == 2  # the final deal seats two of the four
    assert sorted(gone.values()) == sorted(NAMES[k] for k in range(4) if user(k) not in here)


# ---- achievements after a surrender or a /leave (issue 33 item 5) ----------------------


def test_a_surrender_or_a_left_seat_earns_no_achievement_by_its_places() -> None:
    """RULES-NOTES.md 82: a surrender's places tie the others (nobody went out first
    by them); a seat its player left earns him nothing, though it counts for him."""
    surrender = RatedGame(
        4,
        CHAT,
        0.0,
        (
            Entrant(user(0), "", 0, False),
            Entrant(user(1), "", 1, True, flaky=True),
            Entrant(user(2), "", 0, False),
        ),
        by_play=False,
    )
    assert settle(surrender, {}).feats == ()
    left = RatedGame(
        5,
        CHAT,
        0.0,
        (
            Entrant(user(0), "", 0, False, flaky=True),  # the AI played him out first
            Entrant(AI, "hard", 1, False),
            Entrant(user(2), "", 2, True),
        ),
        ((user(0), SIX), (user(2), CHAIN)),
    )
    done = settle(left, {(user(0), ""): Standing(streak=4)})
    assert done.feats == ((user(2), CHAIN),)  # no first win, hard bot, streak, six for him
    assert dict(done.standings)[(user(0), "")].streak == 5  # his seat's result still counts


def test_a_surrender_before_anyone_went_out_earns_nobody_a_first_win(db: Db) -> None:
    async def body(s):  # type: ignore[no-untyped-def]
        info = await started(s, 3, seed=2)
        await s.surrender(info.game_id, user(1))
        return (await s.game_ratings([info.game_id]))[info.game_id]

    rated = with_service(db, body)
    assert rated.feats == ()
    assert db_rows(db, "SELECT count(*) FROM achievements") == [(0,)]


def test_after_a_surrender_whoever_went_out_first_by_play_has_it(db: Db) -> None:
    """Four play until one of them goes out; then one still holding cards surrenders:
    the one out first has his first win, the others (tied by the surrender) none."""

    async def body(s):  # type: ignore[no-untyped-def]
        info = await started(s, 4, seed=7)
        rng, version = random.Random(7), info.version
        while True:
            view = info.game.view(None)
            out = [k for k, seat in enumerate(view.seats) if seat.out]
            if out:
                break
            version = (await step(s, info, rng, version)).version
        holding = next(k for k, seat in enumerate(view.seats) if not seat.out)
        await s.surrender(info.game_id, info.seats[holding].user_id)
        return out, (await s.game_ratings([info.game_id]))[info.game_id]

    out, rated = with_service(db, body)
    assert rated.feats == tuple((user(k), FIRST_WIN) for k in out)
    assert db_rows(db, "SELECT user_id, feat FROM achievements ORDER BY user_id") == [
        (user(k), FIRST_WIN) for k in out
    ]


def test_a_player_who_left_keeps_his_seats_result_but_not_its_achievements(db: Db) -> None:
    """Bob /leaves at once; the AI (random moves here) plays his seat, which goes out
    first: the result counts for his rating, the first win is nobody's."""
    seed = find_seed(Rules(), 3, lambda g: summarize(g).out[0] == (1,))

    async def body(s):  # type: ignore[no-untyped-def]
        info = await started(s, 3, seed=seed)
        await s.hand_over(info.game_id, user(1))
        result = await play_out(s, await s.game(info.game_id), random.Random(seed))
        return (await s.game_ratings([result.game_id]))[result.game_id]

    rated = with_service(db, body)
    bob = next(c for c in rated.changes if c.user_id == user(1))
    assert bob.place == 0 and not bob.durak and bob.after > bob.before
    assert (user(1), FIRST_WIN) not in rated.feats
    assert db_rows(db, "SELECT count(*) FROM achievements WHERE user_id = ?", (user(1),)) == [(0,)]
    assert db_rows(db, "SELECT flaky FROM ratings WHERE user_id = ?", (user(1),)) == [(1,)]
