"""No game without an end (issue 27 item 6): the turn clock's action makes
progress, so a table the clock plays ends; every family ends with the AI levels
and the clock at one table; and ``no_progress_draw`` (RULES-NOTES.md 77, on by
default) ends as a draw a game whose takes have changed nothing 100 times in a
row, which the rules alone would let go on for ever."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from durak.actions import TAKE, Action, Attack, Lead, Pass, Take
from durak.ai.endings import FAMILIES, play, players_for
from durak.games import Game, PileGame, Podkidnoy, restore
from durak.records import check_record, export_record, replay
from durak.rules import NO_PROGRESS, NO_PROGRESS_TAKES, Rules


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_table_the_clock_plays_ends(family):
    rules = Rules.from_dict(FAMILIES[family])
    n = players_for(rules, 3)
    for seed in range(4):
        ending = play(rules, "timeout", n, seed, cap=3000, iterations=1)
        assert ending.over and not ending.no_progress, (family, seed, ending)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_ai_and_the_clock_at_one_table_end(family):
    rules = Rules.from_dict(FAMILIES[family])
    n = players_for(rules, 4)
    for table in ("easy", "normal", "normal+timeout"):
        for seed in range(3):
            ending = play(rules, table, n, seed, cap=5000, iterations=1)
            assert ending.over, (family, table, seed, ending)


def idle(game: Game, seat: int) -> Action:
    """A player who never beats a card: he leads (or opens with) his lowest card,
    passes, and takes whenever he must answer; at a table of them the cards go
    round for ever once nothing is left to draw."""
    legal = game.legal_actions(seat)
    if TAKE in legal or Take() in legal:
        return TAKE
    if Pass() in legal:
        return Pass()
    plays = [a for a in legal if isinstance(a, Attack | Lead)]
    if isinstance(game, Podkidnoy):
        plays = [a for a in plays if isinstance(a, Attack) and len(a.cards) == 1] or plays
    return min(plays, key=lambda a: str(a))


def play_idle(rules: Rules, n: int, seed: int, cap: int) -> Game:
    game = Game.from_seed(rules, [f"P{s}" for s in range(n)], seed)
    rng = random.Random(seed)
    while game.result is None and len(game.history) < cap:
        seat = rng.choice(game.actors())
        game.apply(seat, idle(game, seat))
    return game


@pytest.mark.parametrize(
    "options", [{}, {"transfer": True}, {"game": "own_trumps"}, {"game": "piled"}]
)
def test_takes_that_change_nothing_end_the_game_as_a_draw(options):
    rules = Rules.from_dict(options)
    n = players_for(rules, 3)
    off = play_idle(Rules.from_dict({**options, "no_progress_draw": False}), n, 1, 20_000)
    assert off.result is None  # without the rule the cards go round and round
    game = play_idle(rules, n, 1, 20_000)
    assert game.result is not None and game.result.draw and game.result.losers == ()
    view = game.view(None)
    assert view.end_reason == NO_PROGRESS
    assert any(s.cards for s in view.seats)  # cards still held: not rule 6's draw
    takes = [a for _, a in game.history if a == TAKE]
    assert len(takes) >= NO_PROGRESS_TAKES
    # the draw replays from its record, and survives a snapshot
    report = check_record(export_record(game))
    assert not report.failures
    again = restore(game.snapshot())
    assert again.snapshot() == game.snapshot() and again.view(None).end_reason == NO_PROGRESS


def test_the_count_survives_a_snapshot_and_a_copy():
    for rules in (Rules(game="piled"), Rules()):
        game = Game.from_seed(rules, ["A", "B", "C"], 2)
        assert isinstance(game, PileGame | Podkidnoy)
        while game.stall < 10:
            seat = game.actors()[0]
            game.apply(seat, idle(game, seat))
        assert game.result is None
        again = restore(game.snapshot())
        assert isinstance(again, PileGame | Podkidnoy) and again.stall == game.stall
        assert game.clone().stall == game.stall


def test_a_damaged_count_is_refused():
    game = Game.from_seed(Rules(), ["A", "B", "C"], 2)
    data = game.snapshot()
    for bad in (-1, "3", 1.5, None):
        data["stall"] = bad
        with pytest.raises(ValueError):
            restore(data)


# ---- a record names the option (RECORDS.md; issue 33 item 1) ---------------------------

VECTORS = Path(__file__).resolve().parents[2] / "tests" / "vectors-variants"
VECTOR = VECTORS / "no_progress_draw_100_takes.json"


def vector() -> dict:
    return json.loads(VECTOR.read_text())


def test_a_record_without_the_option_was_played_without_it():
    """The shared vector names ``"no_progress_draw": true`` and ends at take 100; the
    same steps under rules that leave it out are a game without it: still running."""
    record = vector()
    assert record["rules"] == {"no_progress_draw": True}
    game = replay(record)
    assert game.result is not None and game.result.draw
    del record["rules"]["no_progress_draw"]
    game = replay(record)
    assert not game.rules.no_progress_draw
    assert game.result is None and game.stall == NO_PROGRESS_TAKES
    assert "result: expected" in "\n".join(check_record(record).failures)


@pytest.mark.parametrize("on", [True, False])
def test_an_exported_record_names_the_option_either_way(on):
    game = Game.from_seed(Rules(transfer=True, no_progress_draw=on), ["A", "B", "C"], 3)
    record = export_record(game)
    assert record["rules"] == {"transfer": True, "no_progress_draw": on}
    assert Rules.from_record(record["rules"]) == game.rules
    assert Rules.from_record({}) == Rules(no_progress_draw=False)
    assert Rules.from_dict({}) == Rules()  # a new game's rules: on by default


def test_a_snapshot_without_the_option_restores_a_game_without_it():
    """A snapshot stored before the option existed names no such key: that game
    was played without it, and restores so."""
    game = play_idle(Rules(no_progress_draw=False), 3, 1, 400)
    assert game.result is None and game.stall > NO_PROGRESS_TAKES
    data = game.snapshot()
    del data["rules"]["no_progress_draw"], data["stall"]
    again = restore(data)
    assert not again.rules.no_progress_draw
    seat = again.actors()[0]
    again.apply(seat, idle(again, seat))  # and plays on past take 100
    assert again.result is None
