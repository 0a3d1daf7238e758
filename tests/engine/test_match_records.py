"""A whole sprint match (or knock-out) as one ``durak-match/1`` document: every
deal's record in order; ``check-record`` replays each deal and checks that each
follows from the one before and that none is missing (issue 27 item 2)."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from durak.games import Game
from durak.records import check_document, export_record, match_document, replay
from durak.rules import Rules
from durak.selfplay import play_match


def match(names: str, seed: int) -> list[dict]:
    first = Game.from_seed(Rules(sprint=True), tuple(names), seed)
    return [export_record(d) for d in play_match(first, random.Random(seed))]


@pytest.mark.parametrize("names", ["AB", "ABC", "ABCD"])
def test_a_whole_match_passes(names):
    for seed in range(5):
        deals = match(names, seed)
        report = check_document(json.loads(json.dumps(match_document(deals))))
        assert not report.failures and report.passed > len(deals)


@pytest.mark.parametrize("names", ["AB", "ABC"])
def test_a_match_with_a_deal_missing_fails(names):
    deals = match(names, 3)
    assert len(deals) >= 2
    for broken in (deals[1:], deals[:-1], [deals[0], *deals[2:]], [*deals, deals[-1]]):
        report = check_document(match_document(broken))
        assert report.failures, [len(d["steps"]) for d in broken]


def test_a_deal_of_other_rules_or_players_fails():
    deals = match("AB", 4)
    other = json.loads(json.dumps(deals))
    other[1]["players"] = ["B", "A"]
    assert check_document(match_document(other)).failures
    plain = export_record(Game.from_seed(Rules(), ("A", "B"), 1))
    assert check_document(match_document([plain])).failures == []  # one game is a match of one
    assert check_document(match_document([plain, plain])).failures


@pytest.mark.parametrize(
    "document",
    [{"format": "durak-match/1"}, {"format": "durak-match/1", "deals": []},
     {"format": "durak-match/1", "deals": [1]}, {"format": "durak-match/1", "deals": "x"}],
)  # fmt: skip
def test_a_malformed_match_is_one_failure(document):
    report = check_document(document)
    assert len(report.failures) == 1 and "malformed" in report.failures[0]


def test_the_check_record_command_reads_a_match(tmp_path):
    good = tmp_path / "match.json"
    good.write_text(json.dumps(match_document(match("ABC", 2))))
    bad = tmp_path / "gap.json"
    bad.write_text(json.dumps(match_document(match("ABC", 2)[1:])))
    run = [sys.executable, "-m", "durak", "check-record"]
    ok = subprocess.run([*run, str(good)], capture_output=True, text=True, check=False)
    assert ok.returncode == 0 and ok.stdout.strip().splitlines()[-1].endswith(" 0 failed")
    failed = subprocess.run([*run, str(bad)], capture_output=True, text=True, check=False)
    assert failed.returncode == 1 and "first deal is missing" in failed.stdout


# ---- the links, read as RECORDS.md says (issue 33 item 4) ------------------------------


def knock_out(seed: int, names: str = "ABCD") -> list[dict]:
    """The records of a whole match (a knock-out, or two players' 10-deal match)."""
    return json.loads(json.dumps(match(names, seed)))


def position_of(record: dict, dealer: bool) -> dict:
    """The record's deal at its start, as a position (with or without its dealer)."""
    game = replay({**record, "steps": []})
    start = {
        "trump": game.expected("trump"),
        "trump_card": None,
        "stock": [],
        "hands": {name: [str(c) for c in game.hand(k)] for k, name in enumerate(game.players)},
        "attacker": game.expected("attacker"),
        "first_bout": True,
        "match": record["start"]["match"],
    }
    if dealer:
        start["dealer"] = record["start"]["dealer"]
    return {**record, "start": start}


def test_a_knock_out_start_with_more_knocked_out_than_played_is_malformed():
    deals = knock_out(1)
    second = deals[1]
    assert len(second["start"]["match"]["eliminated"]) == 1
    assert not check_document(match_document(deals)).failures
    gone = second["start"]["match"]["eliminated"]
    second["start"]["match"]["eliminated"] = [*gone, "X"]  # two out after one deal
    report = check_document(match_document(deals))
    assert report.failures and "malformed" in report.failures[0]
    assert "more players than deals played" in report.failures[0]
    alone = check_document(second)  # the deal's own record, too (VARIANTS 12.3)
    assert alone.failures and "malformed" in alone.failures[0]


def test_a_deal_after_a_drawn_knock_out_deal_is_compared_by_meaning():
    """Seed 68's first deal of three players is drawn: nobody leaves, one deal is
    played. The next deal, given as a position (its ``match`` as written, where a
    deck order's start is the engine's own), may say so in any of 12.3's forms."""
    deals = knock_out(68, "ABC")
    assert replay(deals[0]).result.draw and deals[0]["start"]["match"] == {"knockout": True}
    assert deals[1]["start"]["match"] == {"knockout": True, "played": 1}
    deals[1] = second = position_of(deals[1], dealer=True)
    assert not check_document(match_document(deals)).failures
    for same in (
        {"knockout": True, "played": 1, "eliminated": []},
        {"played": 1, "eliminated": []},  # "knockout" is optional with 3 players or more
        {"played": 1},
    ):
        second["start"]["match"] = same
        report = check_document(match_document(deals))
        assert not report.failures, (same, report.failures)
    for other in ({"knockout": True}, {"knockout": True, "played": 2}):
        second["start"]["match"] = other
        report = check_document(match_document(deals))
        assert any("is not the deal that follows" in f for f in report.failures), other


def test_a_first_deal_given_as_a_position_without_its_dealer_links_to_nothing():
    """RECORDS.md: every deal of a document of several deals names its dealer (a
    position must give ``dealer``); without it the next dealer is unknown, so the
    second deal cannot be shown to follow, even when the first player dealt."""
    deals = next(
        d
        for d in (knock_out(seed, "AB") for seed in range(20))
        if d[0]["start"]["dealer"] == "A"  # as if the first player dealt: no help
    )
    with_dealer = [position_of(deals[0], dealer=True), *deals[1:]]
    assert not check_document(match_document(with_dealer)).failures
    without = [position_of(deals[0], dealer=False), *deals[1:]]
    report = check_document(match_document(without))
    assert [f for f in report.failures if "deal 2" in f] == [
        "record: deal 2: follows a deal whose start names no dealer: the next dealer is unknown"
    ]
    # a document of one deal, still being played, has no link to check: fine
    alone = check_document(match_document([{**without[0], "steps": []}]))
    assert not alone.failures
