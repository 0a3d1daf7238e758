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
from durak.records import check_document, export_record, match_document
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
