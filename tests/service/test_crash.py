"""Crash test: SIGKILL a child applying actions at random moments, many times.

After every kill the database must pass ``integrity_check``, every game must
equal the replay of its log, every acknowledged change must be there, and no
action may be in the log more often than it was applied (at most one
unacknowledged action per kill: the one whose commit raced the kill). The next
child reopens the same file, so every round also tests a restart.

It runs on both stores: ``DURAK_CRASH_ROUNDS`` sets the number of kills (default 30 on
SQLite, 200 on PostgreSQL, where the server outlives the kills and the fence is the
version check in one statement).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from durak.service import GameService
from tests.dbaccess import Db, db_rows, is_pg

from .crash_check import Acks, check_database
from .helpers import run, started, user, with_service

ROOT = Path(__file__).resolve().parents[2]


class Forker:
    """The crash child's ``--fork`` server: a fresh child for each round in milliseconds."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.service.crash_child", "--fork"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def start(self, db: Db, seed: int, acks: Path) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{db} {seed} {acks}\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def reap(self) -> int:
        """The signal that ended the last child (-1: it exited by itself)."""
        assert self.proc.stdout is not None
        word, number = self.proc.stdout.readline().split()
        assert word == "dead"
        return int(number)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


def _wait_ready(acks: Path, limit: float = 60) -> None:
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if acks.exists() and acks.read_text().startswith("ready\n"):
            return
        time.sleep(0.002)
    raise AssertionError(f"the child never got ready:\n{_err(acks)}")


def _wait_sessions_gone(db: Db, limit: float = 30) -> None:
    """Wait until the server has ended the killed child's sessions: a commit it sent
    just before the kill may still land, and the check must see it in its own round."""
    others = (
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()"
    )
    end = time.monotonic() + limit
    while db_rows(db, others)[0][0]:
        if time.monotonic() > end:
            raise AssertionError("the killed child's sessions are still open on the server")
        time.sleep(0.005)


def _err(acks: Path) -> str:
    err = Path(f"{acks}.err")
    return err.read_text() if err.exists() else ""


@pytest.mark.long
def test_sigkill_at_random_moments(db: Db, tmp_path: Path) -> None:
    """Kill a child playing three games at a random moment, over and over (30 times on
    SQLite, 200 on PostgreSQL; ``DURAK_CRASH_ROUNDS`` for both): mostly while it plays,
    sometimes while it starts up (opening, migrating, loading)."""
    default = 200 if is_pg(db) else 30
    rounds = int(os.environ.get("DURAK_CRASH_ROUNDS", default))
    rng = random.Random(os.environ.get("DURAK_CRASH_SEED", "20240611"))
    acks = Acks()
    total_acts = started_rounds = 0
    forker = Forker()
    try:
        for k in range(rounds):
            before = acks.logged
            ack_file = tmp_path / f"acks{k}"
            pid = forker.start(db, rng.randrange(1 << 30), ack_file)
            if rng.random() < 0.85:  # while it plays
                _wait_ready(ack_file)
                time.sleep(rng.uniform(0.0, 0.3))
            else:  # while it starts: half of these at once, so that some land before
                # the child is ready even on a loaded machine, where its start-up can win
                time.sleep(rng.uniform(0.0, 0.05) if rng.random() < 0.5 else 0.0)
            with contextlib.suppress(ProcessLookupError):  # it died by itself: said below
                os.kill(pid, signal.SIGKILL)
            assert forker.reap() == signal.SIGKILL, f"the child died by itself:\n{_err(ack_file)}"
            if is_pg(db):
                _wait_sessions_gone(db)
            acts = 0
            text = ack_file.read_text() if ack_file.exists() else ""  # killed at once
            for line in text.splitlines(keepends=True):
                if line.endswith("\n"):  # a line cut by the kill was never acknowledged
                    kind = acks.read(line.rstrip("\n"))
                    acts += kind == "act"
                    started_rounds += kind == "ready"
            total_acts += acts
            problems = check_database(db, acks)
            assert not problems, f"round {k}: " + "\n".join(problems[:10])
            extra = acks.logged - before - acts
            assert extra in (0, 1), f"round {k}: {extra} logged actions were never acknowledged"
    finally:
        forker.close()
    # The test must have done real work: many acknowledged actions, most rounds
    # past the start-up, and some kills that landed before the child was ready.
    assert total_acts > rounds * 20, total_acts
    assert rounds // 2 < started_rounds < rounds
    # And the surviving database still opens as a service with every game loadable.

    async def body(s: GameService) -> None:
        for info in await s.running_games():
            assert info.game is not None and info.game.result is None

    with_service(db, body)


def _small_history(path: Path) -> Acks:
    """A few acknowledged actions in a fresh database, recorded as the child would."""
    acks = Acks()

    async def body(s: GameService) -> None:
        info = await started(s, 3, seed=2)
        game = info.game
        assert game is not None
        rng = random.Random(2)
        for v in range(6):
            seat = rng.choice(game.actors())
            action = rng.choice(game.legal_actions(seat))
            result = await s.apply(info.game_id, user(seat), action, v)
            acks.read(f"act {info.game_id} {result.version} {seat} {json.dumps(action.step())}")

    with_service(path, body)
    return acks


def test_the_checker_finds_what_it_must(tmp_path: Path) -> None:
    """The checker is what makes the crash test able to fail: show it fails."""
    path = tmp_path / "db.sqlite3"
    acks = _small_history(path)
    assert check_database(path, acks) == []

    # An acknowledged action that is not in the log.
    missing = Acks(acts={**acks.acts, (1, 7): (0, {"do": "take"})})
    assert any("missing" in p for p in check_database(path, missing))
    # An acknowledged action that differs from the logged one.
    (key, (seat, _)), *_ = acks.acts.items()
    different = Acks(acts={**acks.acts, key: (seat, {"do": "pass"})})
    assert any("acknowledged" in p for p in check_database(path, different))
    # An acknowledged surrender that did not happen.
    assert any("surrender" in p for p in check_database(path, Acks(surrenders={1: 0})))

    conn = sqlite3.connect(path, isolation_level=None)
    # A snapshot that is not the replay of the log.
    good = conn.execute("SELECT snapshot FROM games").fetchone()[0]
    conn.execute("UPDATE games SET snapshot = ?", (good.replace('"discard":0', '"discard":3'),))
    assert any("snapshot" in p for p in check_database(path, acks))
    conn.execute("UPDATE games SET snapshot = ?", (good,))
    # A tally nobody earned.
    conn.execute("INSERT INTO tallies VALUES (-100, 1000, 1, 1, 0)")
    assert any("tallies" in p for p in check_database(path, acks))
    conn.execute("DROP TRIGGER actions_no_delete")
    conn.execute("DELETE FROM tallies")
    # An action applied twice: the last one logged again under the next version.
    v, seat, step = conn.execute(
        "SELECT version, seat, step FROM actions ORDER BY version DESC LIMIT 1"
    ).fetchone()
    conn.execute("UPDATE games SET version = version + 1")
    conn.execute(
        "INSERT INTO actions VALUES (1, ?, ?, 0, ?, 0)",
        (v + 1, seat, step),
    )
    assert check_database(path, acks) != []
    conn.close()


def test_the_checker_sees_a_damaged_file(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"

    async def fill(s: GameService) -> None:
        for chat in range(20):
            info = await started(s, 4, seed=chat, chat=chat)
            game = info.game
            assert game is not None
            rng = random.Random(chat)
            for v in range(40):
                seat = rng.choice(game.actors())
                await s.apply(info.game_id, user(seat), rng.choice(game.legal_actions(seat)), v)

    run(_opened(path, fill))
    data = bytearray(path.read_bytes())
    for offset in range(8192, len(data), 4096):  # scribble over every page but the first two
        data[offset + 100 : offset + 300] = bytes(200)
    path.write_bytes(bytes(data))
    problems = _check_or_error(path)
    assert problems


async def _opened(path: Path, body) -> None:  # type: ignore[no-untyped-def]
    service = await GameService.open(path)
    try:
        await body(service)
    finally:
        await service.close()


def _check_or_error(path: Path) -> list[str]:
    try:
        return check_database(path, Acks())
    except sqlite3.DatabaseError as e:
        return [str(e)]
