"""The service benchmark still runs: at its tiny size, through play again."""

from __future__ import annotations

import asyncio
from pathlib import Path

from durak.service import bench


def test_the_tiny_benchmark_runs_and_plays_again(tmp_path: Path, capsys) -> None:
    assert bench.main(["--tiny", "--db", str(tmp_path / "bench.sqlite3")]) == 0
    assert "durable actions: 400" in capsys.readouterr().out


def test_the_benchmark_starts_the_next_game_after_play_again(tmp_path: Path) -> None:
    figures = asyncio.run(bench.run(2, 3, 400, tmp_path / "bench.sqlite3", seed=0))
    assert figures["actions"] == 400
    assert figures["games_finished"] >= 2  # each one followed by the next, started
