"""PILE-GAMES.md's public vectors, check counting (RULES-NOTES 14), and the
command line with the pile games (selfplay records pass check-record)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from durak import check_record

ROOT = Path(__file__).resolve().parents[2]
VECTORS = sorted((ROOT / "tests" / "vectors-pile").glob("*.json"))
SHARED = Path("/work/shared/rules/vectors-pile")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "durak", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_pile_vectors_are_all_here():
    assert len(VECTORS) == 7
    if SHARED.is_dir():
        assert {p.name for p in VECTORS} == {p.name for p in SHARED.glob("*.json")}


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_pile_vector(path):
    record = json.loads(path.read_text())
    report = check_record(record, path.name)
    assert not report.failures, "\n".join(report.failures)
    # One check per action step and per expectation key; comment-only steps none.
    want = 0
    for step in record["steps"]:
        if "expect" in step:
            want += len(step["expect"])
        elif any(k != "comment" for k in step):
            want += 1
    assert report.passed == want


def test_comment_only_steps_are_no_checks():
    record = json.loads(VECTORS[0].read_text())
    plain = check_record(record).passed
    record["steps"].insert(3, {"comment": "just a note"})
    record["comment"] = "a record comment"
    report = check_record(record)
    assert not report.failures and report.passed == plain


def test_a_wrong_pile_expectation_is_one_failed_check():
    record = json.loads(
        (ROOT / "tests" / "vectors-pile" / "road_5p_deal_first_trick.json").read_text()
    )
    record["steps"].append({"expect": {"pile": ["6S"], "discard": 6, "turn": "B"}})
    report = check_record(record)
    assert len(report.failures) == 2  # pile and discard; turn is right
    assert "pile" in report.failures[0] and "discard" in report.failures[1]


@pytest.mark.parametrize(
    "expect",
    [{"trump": "S"}, {"attacker": "A"}, {"table": []}, {"limit": 6}, {"match": {}}],
    ids=lambda e: next(iter(e)),
)
def test_keys_a_pile_game_does_not_take_are_malformed(expect):
    record = json.loads(
        (ROOT / "tests" / "vectors-pile" / "own_trumps_deal_swap_and_beats.json").read_text()
    )
    record["steps"] = [{"expect": expect}]
    report = check_record(record)
    assert len(report.failures) == 1 and "malformed" in report.failures[0]


def test_trumps_is_malformed_outside_own_trumps():
    record = json.loads(
        (ROOT / "tests" / "vectors-pile" / "piled_deal_refill_take.json").read_text()
    )
    record["steps"] = [{"expect": {"trumps": {"A": "D"}}}]
    assert "malformed" in check_record(record).failures[0]


def test_check_record_command_passes_the_pile_vectors():
    out = run("check-record", *map(str, VECTORS))
    assert out.returncode == 0, out.stdout
    assert out.stdout.strip().splitlines()[-1] == "469 passed, 0 failed"


@pytest.mark.parametrize(
    "rules",
    [
        '{"game": "road"}',
        '{"game": "piled"}',
        '{"game": "own_trumps"}',
        '{"game": "own_trumps", "own_trumps_take": "pile"}',
    ],
)
def test_selfplay_records_of_pile_games_pass_the_checker(tmp_path, rules):
    players = "3-4" if "own_trumps" in rules else "3-5"
    out = run(
        "selfplay", "--games", "6", "--players", players, "--rules", rules, "--out", str(tmp_path)
    )
    assert out.returncode == 0, out.stderr
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 6
    for f in files:
        record = json.loads(f.read_text())
        # a record names no_progress_draw, on for a new game (RECORDS.md)
        assert record["rules"] == {**json.loads(rules), "no_progress_draw": True}
        assert "result" in record["steps"][-1]["expect"]
        assert record["steps"][-1]["expect"]["result"] is not None
    checked = run("check-record", *map(str, files))
    assert checked.returncode == 0, checked.stdout[-2000:]


def test_selfplay_refuses_a_player_count_the_game_does_not_take(tmp_path):
    out = run("selfplay", "--players", "2", "--rules", '{"game": "road"}', "--out", str(tmp_path))
    assert out.returncode == 2 and "2 players" in out.stderr


def test_bench_runs_a_pile_game():
    out = run("bench", "--games", "5", "--rules", '{"game": "piled"}')
    assert out.returncode == 0 and "games/s:" in out.stdout and "piled" in out.stdout
