"""Every benchmark command of BENCHMARKS.md's table has its tiny run in tests.benchmarks."""

from __future__ import annotations

import re
from pathlib import Path

from tests import benchmarks

ROOT = Path(__file__).resolve().parent.parent


def _named(text: str) -> set[tuple[str, ...]]:
    """(module,) or ("durak", subcommand) for every `python -m ...` of a text."""
    found: set[tuple[str, ...]] = set()
    for module, rest in re.findall(r"python -m ([\w.]+)((?: [\w-]+)?)", text):
        found.add((module, rest.split()[0]) if module == "durak" else (module,))
    return found


def test_every_command_of_the_table_runs_at_a_tiny_size() -> None:
    table = (ROOT / "BENCHMARKS.md").read_text().split("\n| figure |", 1)[1]
    named = _named(table) - {("pytest",)}
    run = _named(
        " ".join(["python " + " ".join(c) for c in benchmarks.commands("postgresql://x/")])
    )
    assert named, "no command found in BENCHMARKS.md's table"
    assert named <= run, f"in BENCHMARKS.md but not run by tests.benchmarks: {named - run}"


def test_the_postgresql_runs_are_there_with_a_server() -> None:
    assert any("--db" in c for c in benchmarks.commands("postgresql://x/"))
    assert not any("--db" in c for c in benchmarks.commands(None))
