"""The service's side of VARIANTS.md: blind's ``play_slot``, a sprint match played
on by the service (and by its start-up sweep after a crash between a deal's end
and the next deal), and the tallies of VARIANTS.md 2.6."""

from __future__ import annotations

import itertools
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from durak.service import ApplyResult, BadAction, GameInfo, GameService, IllegalMove
from tests.dbaccess import db_rows

from .helpers import CHAT, NAMES, play_again_all, started, step, user, with_service

ROOT = Path(__file__).resolve().parents[2]


# ---- blind: play_slot ---------------------------------------------------------------------


def test_play_slot_plays_the_card_of_the_slot_and_refuses_what_it_must(tmp_path: Path) -> None:
    async def body(s: GameService) -> None:
        info = await started(s, 2, seed=5, blind=True)
        game = info.game
        assert game is not None
        seat = game.view(None).attacker
        assert seat is not None
        other = 1 - seat
        expected = game.slot_action(seat, 2)
        view = game.view(seat)
        assert view.slots is not None and not view.hand  # he sees slots, not cards
        # not his turn, a slot he does not have, not a slot at all
        with pytest.raises(IllegalMove) as refused:
            await s.play_slot(info.game_id, user(other), 0)
        assert refused.value.code == "not_your_turn"
        with pytest.raises(BadAction):
            await s.play_slot(info.game_id, user(seat), 6)
        with pytest.raises(BadAction):
            await s.play_slot(info.game_id, user(seat), "2")  # type: ignore[arg-type]
        assert (await s.game(info.game_id)).version == 0
        result = await s.play_slot(info.game_id, user(seat), 2, version=0)
        assert result.version == 1 and result.game.history[-1] == (seat, expected)
        # the defender answers with a slot too: whatever it holds, it is played
        answer = result.game.slot_action(other, 0)
        after = await s.play_slot(info.game_id, user(other), 0, version=1)
        assert after.game.history[-1] == (other, answer)
        # a game without slots refuses a slot as a bad action
        plain = await started(s, 2, seed=5, chat=CHAT - 1, blind=False)
        mover = plain.game.view(None).attacker  # type: ignore[union-attr]
        with pytest.raises(BadAction):
            await s.play_slot(plain.game_id, user(mover), 0)

    with_service(tmp_path / "db.sqlite3", body)


# ---- sprint -----------------------------------------------------------------------------


async def play_deal(s: GameService, info: GameInfo, rng: random.Random) -> ApplyResult:
    """Random legal actions until the deal ``info`` ends."""
    version = info.version
    for _ in range(5000):
        live = await s.game(info.game_id)
        result = await step(s, live, rng, version)
        version = result.version
        if result.finished:
            return result
    raise AssertionError("the deal did not end")


async def play_match(s: GameService, info: GameInfo, rng: random.Random) -> list[ApplyResult]:
    """Every deal of the match ``info`` starts, each through the service's next deal."""
    ends: list[ApplyResult] = []
    while True:
        result = await play_deal(s, info, rng)
        ends.append(result)
        if result.next_game_id is None:
            return ends
        following = await s.game(result.next_game_id)
        assert following.previous_game_id == result.game_id
        assert following.status == "running"
        # asked again (e.g. by the presenter): the same deal, not another one
        assert (await s.next_deal(result.game_id)).game_id == following.game_id  # type: ignore[union-attr]
        info = following


def test_a_sprint_match_of_two_is_dealt_on_by_the_service_and_tallied_once(
    tmp_path: Path,
) -> None:
    async def body(s: GameService) -> None:
        info = await started(s, 2, seed=3, sprint=True)
        ends = await play_match(s, info, random.Random(3))
        match = ends[-1].game.view(None).match
        assert match is not None and match.decided and match.played == len(ends) >= 6
        for k, end in enumerate(ends[:-1]):
            view = end.game.view(None)
            assert view.match is not None and view.match.played == k + 1
            assert not view.match.decided
        assert not await s.running_games()
        # the match's deals alternate the dealer and seat the same two players
        dealers = [(await s.game(e.game_id)).game.view(None).dealer for e in ends]  # type: ignore[union-attr]
        assert all(a != b for a, b in itertools.pairwise(dealers))
        board = {t.name: t for t in await s.leaderboard(CHAT)}
        assert {n: t.played for n, t in board.items()} == {"Ann": 1, "Bob": 1}
        if match.draw:
            assert all(t.draws == 1 and t.losses == 0 for t in board.values())
        else:
            loser = next(n for n in ("Ann", "Bob") if n != match.winner)
            assert {n: t.losses for n, t in board.items()} == {loser: 1, match.winner: 0}
        # Play again after the match: a new match, its first deal
        again = await play_again_all(s, ends[-1].game_id, user(0))
        fresh = again.game.view(None).match  # type: ignore[union-attr]
        assert fresh is not None and fresh.played == 0 and fresh.wins == (("Ann", 0), ("Bob", 0))

    with_service(tmp_path / "db.sqlite3", body)


def test_a_sprint_match_scores_nothing_until_it_is_decided(tmp_path: Path) -> None:
    async def body(s: GameService) -> None:
        info = await started(s, 2, seed=4, sprint=True)
        first = await play_deal(s, info, random.Random(4))
        assert first.next_game_id is not None
        assert await s.leaderboard(CHAT) == []  # one deal of ten: nobody has a game yet

    with_service(tmp_path / "db.sqlite3", body)


@pytest.mark.parametrize("players", [3, 4])
def test_a_knock_out_gives_each_player_knocked_out_one_loss(tmp_path: Path, players) -> None:
    async def body(s: GameService) -> None:
        info = await started(s, players, seed=6, sprint=True)
        ends = await play_match(s, info, random.Random(players))
        match = ends[-1].game.view(None).match
        assert match is not None and match.deals is None and match.winner is not None
        assert len(match.eliminated) == players - 1
        seats = [len((await s.game(e.game_id)).seats) for e in ends]
        assert seats[0] == players and seats[-1] == 2 and seats == sorted(seats, reverse=True)
        board = {t.name: t for t in await s.leaderboard(CHAT, limit=10)}
        names = NAMES[:players]
        assert {n: board[n].losses for n in names} == {n: int(n in match.eliminated) for n in names}
        assert all(board[n].draws == 0 for n in names)

    with_service(tmp_path / "db.sqlite3", body)


# ---- a crash between a deal's end and the next deal ---------------------------------------

CHILD = """
import asyncio, os, random, signal, sys
from durak.service import GameService
from durak.service.series import NextGames
from tests.service.helpers import play_again_all, started, step

async def main(path):
    s = await GameService.open(path)
    info = await started(s, {players}, seed=8, sprint=True)

    async def killed(self, game_id):  # the ending is committed; the next deal never starts
        print("ended", game_id, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    NextGames.next_deal = killed
    rng, version = random.Random(8), 0
    while True:
        result = await step(s, await s.game(info.game_id), rng, version)
        version = result.version

asyncio.run(main(sys.argv[1]))
"""


@pytest.mark.parametrize("players", [2, 3])
def test_the_start_up_sweep_deals_on_a_match_cut_by_a_crash(tmp_path: Path, players) -> None:
    path = tmp_path / "db.sqlite3"
    child = subprocess.run(
        [sys.executable, "-c", CHILD.format(players=players), str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    ended = int(child.stdout.split()[1])
    # the crash left the deal finished and no next deal
    assert db_rows(path, "SELECT status FROM games WHERE game_id = ?", (ended,)) == [("finished",)]
    assert db_rows(path, "SELECT game_id FROM games WHERE previous_game_id = ?", (ended,)) == []

    async def before(s: GameService) -> None:  # the store as the crash left it
        info = await s.game(ended)
        assert info.status == "finished"

    async def after(s: GameService) -> GameInfo:
        running = await s.running_games()
        assert [i.previous_game_id for i in running] == [ended]
        following = running[0]
        match = following.game.view(None).match  # type: ignore[union-attr]
        assert match is not None and match.played == 1 and not match.decided
        return following

    # Opening the service runs the sweep.
    following = with_service(path, after)
    # a second start-up finds the deal there and starts nothing more
    again = with_service(path, lambda s: s.running_games())
    assert [i.game_id for i in again] == [following.game_id]
    assert len({s.name for s in following.seats}) == len(following.seats)
    with_service(path, before)  # the deal that ended stays finished
