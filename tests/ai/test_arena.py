"""The arena: seeded, reproducible, rotating seats, honest intervals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from durak import Rules
from durak.ai import arena

ROOT = Path(__file__).resolve().parents[2]


def test_wilson_interval():
    assert arena.wilson(0, 0) == (0.0, 1.0)
    lo, hi = arena.wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-3) and hi == pytest.approx(0.5962, abs=1e-3)
    lo, hi = arena.wilson(0, 40)
    assert lo == 0.0 and 0.08 < hi < 0.09


def test_parse_agents():
    assert arena.parse_agents("hard,greedy*3") == ["hard", "greedy", "greedy", "greedy"]
    for bad in ("hard,nobody", "greedy*0", "greedy*x"):
        with pytest.raises(ValueError):
            arena.parse_agents(bad)


def test_a_fixed_seed_gives_the_same_games_and_seats_rotate():
    first = arena.run(["normal", "greedy", "random"], 12, 5, Rules())
    again = arena.run(["normal", "greedy", "random"], 12, 5, Rules())
    assert [(r.seats, r.losers, r.draw, r.moves) for r in first] == [
        (r.seats, r.losers, r.draw, r.moves) for r in again
    ]
    assert {r.seats for r in first[:3]} == {
        ("normal", "greedy", "random"),
        ("greedy", "random", "normal"),
        ("random", "normal", "greedy"),
    }
    tally = arena.tally(first)
    assert {name: t.seat_games for name, t in tally.items()} == {
        "normal": 12,
        "greedy": 12,
        "random": 12,
    }


def test_better_players_lose_less():
    """A smoke test of strength that cannot pass by luck: 300 seeded games."""
    tally = arena.tally(arena.run(["normal", "random"], 300, 1, Rules()))
    normal, random_ = tally["normal"], tally["random"]
    assert normal.losses / normal.seat_games < 0.3 < random_.losses / random_.seat_games


def test_worker_processes_give_the_same_results():
    rules = Rules(transfer=True, trump_exchange=True)
    alone = arena.run(["easy", "greedy"], 6, 2, rules)
    pooled = arena.run(["easy", "greedy"], 6, 2, rules, jobs=2)
    assert [(r.index, r.losers, r.moves) for r in alone] == [
        (r.index, r.losers, r.moves) for r in pooled
    ]


def test_the_arena_command():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "durak",
            "arena",
            "--agents",
            "hard,greedy",
            "--games",
            "2",
            "--seed",
            "1",
            "--iterations",
            "20",
            "--rules",
            '{"deck": 24}',
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "arena: 2 games  players: 2  agents: hard,greedy  seed: 1" in text
    assert "hard" in text and "greedy" in text and "95% CI" in text and "draws:" in text
    bad = subprocess.run(
        [sys.executable, "-m", "durak", "arena", "--agents", "hard,greedy", "--players", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "one per seat" in bad.stderr
