"""The shared rule vectors (the golden tests) and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from durak import check_record
from durak.records import check_document

ROOT = Path(__file__).resolve().parents[2]
VECTORS = sorted((ROOT / "tests" / "vectors").glob("*.json"))
#: Every folder of vectors beside RECORDS.md, copied into tests/ (a match document's
#: folder too: ``check-record`` reads either format).
FOLDERS = ("vectors", "vectors-variants", "vectors-pile", "vectors-match")
EVERY = sorted(p for folder in FOLDERS for p in (ROOT / "tests" / folder).glob("*.json"))
SHARED = ROOT.parent / "shared" / "rules"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "durak", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_vectors_are_all_here():
    assert len(VECTORS) >= 8


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_vector(path):
    report = check_record(json.loads(path.read_text()), path.name)
    assert not report.failures, "\n".join(report.failures)
    assert report.passed > 0


def test_check_record_command_passes_the_vectors():
    out = run("check-record", *map(str, VECTORS))
    assert out.returncode == 0, out.stdout + out.stderr
    last = out.stdout.strip().splitlines()[-1]
    assert last.endswith("passed, 0 failed")


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_shared_vector_is_copied_here(folder):
    here = {p.name: p.read_text() for p in (ROOT / "tests" / folder).glob("*.json")}
    assert here, folder
    if not (SHARED / folder).is_dir():
        pytest.skip(f"no {SHARED / folder} beside this checkout")
    assert here == {p.name: p.read_text() for p in (SHARED / folder).glob("*.json")}


@pytest.mark.parametrize("path", EVERY, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_vector_document_passes(path):
    report = check_document(json.loads(path.read_text()), path.name)
    assert not report.failures, "\n".join(report.failures)
    assert report.passed > 0


def test_check_record_command_passes_every_vector_folder():
    out = run("check-record", *map(str, EVERY))
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1].endswith(" passed, 0 failed")


def test_check_record_command_reports_each_failed_check(tmp_path):
    record = json.loads(VECTORS[0].read_text())
    record["steps"].append({"expect": {"stock": 999, "discard": 999}})
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    out = run("check-record", str(bad))
    assert out.returncode != 0
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 3
    assert "stock" in lines[0] and "bad.json" in lines[0] and "step" in lines[0]
    assert "discard" in lines[1]
    assert lines[-1].endswith("passed, 2 failed")


def test_check_record_command_survives_garbage(tmp_path):
    (tmp_path / "a.json").write_text("{not json")
    (tmp_path / "b.json").write_text(json.dumps({"format": "durak-record/1", "players": 5}))
    (tmp_path / "c.json").write_text(
        json.dumps(
            {
                "format": "durak-record/1",
                "players": ["A", "B"],
                "start": {"trump": "S", "hands": {"A": ["6S"], "B": ["7S"]}, "attacker": "A"},
                "steps": [{"player": "A", "do": "attack", "cards": []}],
            }
        )
    )
    out = run("check-record", *(str(tmp_path / f) for f in ("a.json", "b.json", "c.json")))
    assert out.returncode == 1
    assert out.stdout.strip().splitlines()[-1] == "0 passed, 3 failed"
    assert "malformed" in out.stdout


def test_expected_refusal_that_applies_is_a_failure():
    record = json.loads((ROOT / "tests" / "vectors" / "loser.json").read_text())
    record["steps"][0]["error"] = "limit"  # A attack 7H is legal
    report = check_record(record)
    assert report.failures and "expected limit" in report.failures[0]


def test_selfplay_records_pass_the_checker(tmp_path):
    out = run(
        "selfplay",
        "--games",
        "12",
        "--players",
        "2-6",
        "--seed",
        "3",
        "--rules",
        '{"transfer": true, "trump_exchange": true}',
        "--out",
        str(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 12
    for f in files:
        record = json.loads(f.read_text())
        assert "result" in record["steps"][-1]["expect"]
        want = {"transfer": True, "trump_exchange": True, "no_progress_draw": True}
        assert record["rules"] == want  # a record names no_progress_draw (RECORDS.md)
    checked = run("check-record", *map(str, files))
    assert checked.returncode == 0, checked.stdout
    assert len({len(json.loads(f.read_text())["players"]) for f in files}) > 1


def test_selfplay_refuses_impossible_player_counts(tmp_path):
    out = run("selfplay", "--players", "7", "--out", str(tmp_path))
    assert out.returncode == 2 and "7 players" in out.stderr


def test_bench_prints_numbers():
    out = run("bench", "--games", "20", "--players", "4")
    assert out.returncode == 0
    assert "games/s:" in out.stdout
