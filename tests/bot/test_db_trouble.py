"""The database in trouble (issue 10, item 4): a failed write never stops a game's turn
clock for good, and a database the bot cannot own stops the start with one line."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot import dbguard
from bot.__main__ import main
from bot.config import Config
from bot.seats.timers import TurnTimers
from durak import Rules
from durak.service import ChatSettings, DatabaseError, GameInfo, GameService
from tests.fake_telegram.fixtures import async_test
from tests.service.helpers import started


async def clocked(service: GameService) -> TurnTimers:
    async def settings(chat_id: int) -> ChatSettings:
        return ChatSettings(chat_id, Rules(), turn_timeout=1)

    timers: TurnTimers

    async def changed(info: GameInfo, finished: bool) -> None:
        await timers.arm(info)

    async def show(game_id: int) -> None:
        return None

    timers = TurnTimers(service, changed, show, settings=settings, away_delay=0, time_scale=0.005)
    return timers


async def moves_to(service: GameService, game_id: int, version: int) -> bool:
    """Whether the game reaches ``version`` (the clocks play it) within a generous while."""
    for _ in range(400):
        if (await service.game(game_id)).version >= version:
            return True
        await asyncio.sleep(0.01)
    return False


def failing_once(real: Any) -> Any:
    calls = {"n": 0}

    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise DatabaseError("database failure: database or disk is full")
        return await real(*args, **kwargs)

    return wrapper


@async_test
async def test_a_failed_write_in_the_clock_is_re_armed_by_the_sweep(tmp_path: Path, caplog):
    service = await GameService.open(tmp_path / "db.sqlite3")
    timers = await clocked(service)
    try:
        info = await started(service, 2)
        service.record_timeout = failing_once(service.record_timeout)  # type: ignore[method-assign]
        await timers.arm(info)
        assert await moves_to(service, info.game_id, 1)  # the timeout played; its write failed
        for _ in range(100):
            if not timers.has_clock(await service.game(info.game_id)):
                break
            await asyncio.sleep(0.01)
        now = await service.game(info.game_id)
        assert not timers.has_clock(now)  # the clock died with the write (as before)
        assert await timers.sweep() == 1  # found and re-armed
        assert await moves_to(service, info.game_id, now.version + 1)
        assert await timers.sweep() == 0
    finally:
        await timers.close()
        await service.close()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@async_test
async def test_a_deadline_that_cannot_be_stored_leaves_the_clock_running(tmp_path: Path):
    service = await GameService.open(tmp_path / "db.sqlite3")
    timers = await clocked(service)
    try:
        info = await started(service, 2)
        service.set_deadline = failing_once(service.set_deadline)  # type: ignore[method-assign]
        await timers.arm(info)
        assert await moves_to(service, info.game_id, 2)  # no sweep needed
    finally:
        await timers.close()
        await service.close()


TOKEN = "123456789:" + "A" * 35


def refused(monkeypatch, capsys, db: Path) -> str:
    """``python -m bot``'s main on ``db``: exit code 2 and its one line."""
    monkeypatch.setenv("DURAK_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("DURAK_API_URL", "http://127.0.0.1:9/bot")  # never reached
    monkeypatch.setenv("DURAK_DB", str(db))
    assert main([]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err  # no traceback
    return err[0]


def test_a_second_bot_on_the_same_database_refuses_to_start(monkeypatch, capsys, tmp_path):
    db = tmp_path / "db.sqlite3"
    holder = subprocess.Popen(  # another running bot: it holds the lock file
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\n"
            f"f = open({str(db) + '.lock'!r}, 'ab'); fcntl.flock(f, fcntl.LOCK_EX)\n"
            "print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        assert "another running bot uses" in refused(monkeypatch, capsys, db)
    finally:
        holder.kill()
        holder.wait()
    dbguard.hold(Config(token=TOKEN, db_path=str(db)))  # free again once that bot is gone
    dbguard.release_all()


def test_a_database_another_program_keeps_locked_refuses_the_start(monkeypatch, capsys, tmp_path):
    db = tmp_path / "db.sqlite3"
    monkeypatch.setattr(dbguard, "PROBE_WAIT", 0.05)
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("CREATE TABLE t (x)")
    other.execute("BEGIN EXCLUSIVE")
    try:
        assert "(locked)" in refused(monkeypatch, capsys, db)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert not dbguard._held  # a refused start keeps no lock


def test_a_read_only_database_refuses_the_start(monkeypatch, capsys, tmp_path):
    db = tmp_path / "db.sqlite3"
    sqlite3.connect(db).execute("CREATE TABLE t (x)").connection.close()
    db.chmod(0o444)
    if os.geteuid() != 0:
        assert "not writable" in refused(monkeypatch, capsys, db)
        return
    # root writes read-only files (CI runs as root): python -m bot without the
    # capabilities that override file permissions, as any other user would run it
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root writes read-only files, and no setpriv to run the bot without that")
    caps = "-dac_override,-dac_read_search"
    run = subprocess.run(
        [setpriv, "--bounding-set", caps, "--inh-caps", caps, sys.executable, "-m", "bot"],
        env={
            **os.environ,
            "DURAK_BOT_TOKEN": TOKEN,
            "DURAK_DB": str(db),
            "DURAK_API_URL": "http://127.0.0.1:9/bot",  # never reached
        },
        capture_output=True,
        timeout=60,
    )
    err = run.stderr.decode().strip().splitlines()
    assert run.returncode == 2 and len(err) == 1, (run.returncode, err)  # no traceback
    assert "not writable" in err[0]
