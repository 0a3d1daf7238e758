"""The VARIANTS.md rule vectors (``tests/vectors-variants``, copied from
``shared/rules/vectors-variants``): every file is replayed and must pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from durak import check_record

from .test_vectors_and_cli import run

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "tests" / "vectors-variants"
VECTORS = sorted(FOLDER.glob("*.json"))
OPTIONS = (
    "trump_change_",
    "sprint_",
    "japanese_",
    "bout_limit_",
    "show_last_discard_",
    "blind_",
    "damka_",
    "english_",
    "partial_defence_",
    "return_last_card_",
)


def test_the_variant_vectors_are_here():
    names = {p.stem for p in VECTORS}
    for prefix in OPTIONS:
        assert any(n.startswith(prefix) for n in names), prefix


@pytest.mark.parametrize("path", VECTORS, ids=lambda p: p.stem)
def test_variant_vector(path: Path) -> None:
    report = check_record(json.loads(path.read_text()), path.name)
    assert not report.failures, "\n".join(report.failures)
    assert report.passed > 0


@pytest.mark.parametrize(
    "rules",
    [
        {"trump_change": True, "trump_exchange": True},
        {"sprint": True, "transfer": True},
        {"japanese": "D", "throw_in": "all"},
        {"bout_limit": 5, "transfer": True},
        {"show_last_discard": True},
    ],
    ids=lambda r: next(iter(r)),
)
def test_selfplay_variant_records_pass_the_checker(tmp_path: Path, rules: dict) -> None:
    out = run(
        "selfplay", "--games", "4", "--players", "2-3", "--seed", "5",
        "--rules", json.dumps(rules), "--out", str(tmp_path),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) >= 4 and f"wrote {len(files)} records" in out.stdout
    for f in files:
        record = json.loads(f.read_text())
        assert record["rules"] == {**rules, "no_progress_draw": True}  # named (RECORDS.md)
        assert "result" in record["steps"][-1]["expect"]
    if rules.get("sprint"):  # whole matches: later deals start from the match so far
        assert any(json.loads(f.read_text())["start"]["match"].get("played") for f in files)
    checked = run("check-record", *map(str, files))
    assert checked.returncode == 0, checked.stdout
