"""The database in trouble (issue 10, item 4): a failed write never stops a game's turn
clock for good, and a database the bot cannot own stops the start with one line."""

from __future__ import annotations

import asyncio
import logging
import os
import random
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
from tests.dbaccess import db_rows
from tests.fake_telegram.fixtures import async_test
from tests.service.crash_check import Acks, check_database
from tests.service.helpers import started

from .harness import Table

ROOT = Path(__file__).resolve().parents[2]


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


def test_a_lock_file_deleted_or_replaced_lets_no_second_bot_in(monkeypatch, capsys, tmp_path):
    """The first bot also holds the database file's own lock: a second bot is refused
    even when the ``.lock`` it would wait on is gone or another file."""
    db = tmp_path / "db.sqlite3"
    lock = Path(dbguard.lock_path(str(db)))
    holder = subprocess.Popen(  # a running bot, as far as its locks go
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from bot import dbguard\n"
            "from bot.config import Config\n"
            f"dbguard.hold(Config(token={TOKEN!r}, db_path={str(db)!r}))\n"
            "print('held', flush=True); time.sleep(60)",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        lock.unlink()
        assert "another running bot uses" in refused(monkeypatch, capsys, db)
        lock.write_bytes(b"")  # another file at the lock's path
        assert "another running bot uses" in refused(monkeypatch, capsys, db)
    finally:
        holder.kill()
        holder.wait()
    assert not dbguard._held


def test_trouble_names_the_file_that_went(tmp_path):
    db = tmp_path / "db.sqlite3"
    config = Config(token=TOKEN, db_path=str(db))
    try:
        dbguard.hold(config)
        assert dbguard.trouble() is None
        os.replace(tmp_path / "db.sqlite3", tmp_path / "moved")
        db.write_bytes(b"")
        assert dbguard.trouble() == (f"{db} was replaced by another file", True)
        os.unlink(db)
        assert dbguard.trouble() == (f"{db} was deleted", True)
        os.replace(tmp_path / "moved", db)
        assert dbguard.trouble() is None
        os.unlink(dbguard.lock_path(str(db)))
        assert dbguard.trouble() == (f"{db}.lock was deleted", False)
    finally:
        dbguard.release_all()


async def run_bot(server, db: Path) -> asyncio.subprocess.Process:
    env = {
        **os.environ,
        "DURAK_BOT_TOKEN": server.token,
        "DURAK_API_URL": server.base_url,
        "DURAK_DB": str(db),
        "DURAK_LOG_LEVEL": "INFO",
    }
    return await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bot"),
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )


async def ended(bot: asyncio.subprocess.Process) -> tuple[int, list[str]]:
    """Its exit code and log lines (killed if it does not end in time)."""
    try:
        async with asyncio.timeout(GUARD):
            _, err = await bot.communicate()
    finally:
        if bot.returncode is None:
            bot.kill()
            await bot.wait()
    return bot.returncode, err.decode().splitlines()


#: A hang guard, not a speed: the bot checks its files every 2 s and stops in a few.
GUARD = 30.0


async def game_under_way(server, db: Path) -> tuple[Table, asyncio.subprocess.Process]:
    """``python -m bot`` on ``db`` with a game of two players a few moves in, no press
    under way."""
    users = [server.add_user(f"P{i}", started=True) for i in range(2)]
    group = server.add_group("Friends", users, admins=[users[0]])
    table = Table(server, group, users, random.Random(1))
    bot = await run_bot(server, db)
    try:
        await table.open_lobby()
        await table.join_all()
        await table.start()
        stop = asyncio.Event()
        players = [asyncio.create_task(table.play(u, stop)) for u in users]
        moves = "SELECT coalesce(max(version), 0) FROM games"
        await server.wait_for(lambda: db_rows(db, moves)[0][0] >= 3, GUARD, what="moves")
        stop.set()
        await asyncio.gather(*players)
    except BaseException:
        bot.kill()
        await bot.wait()
        raise
    return table, bot


GAMES = "SELECT game_id, status, version FROM games"


@async_test
async def test_a_database_deleted_under_the_bot_is_saved_and_its_games_go_on(
    make_fake_telegram, tmp_path
):
    """Issue 26 item 4: the file deleted under a running bot with a game on. The bot
    takes no more presses, saves every game from its open connection back at the path,
    says so in one ERROR line and exits 2; started again, it resumes the game."""
    server = await make_fake_telegram()
    db = tmp_path / "db.sqlite3"
    table, bot = await game_under_way(server, db)
    users = table.users
    games = db_rows(db, GAMES)
    os.unlink(db)
    code, lines = await ended(bot)
    errors = [line for line in lines if " ERROR " in line]
    assert code == 2, "\n".join(lines[-30:])
    assert len(errors) == 1 and f"{db} was deleted" in errors[0], "\n".join(lines[-30:])
    assert f"every game is saved, back in {db}" in errors[0]
    assert "Traceback" not in "\n".join(lines)
    assert check_database(db, Acks()) == []  # every snapshot is the replay of its log
    assert db_rows(db, GAMES) == games  # every move

    again = await run_bot(server, db)  # the supervisor starts it again
    try:
        panel = await server.wait_for(lambda: table.panel(users[0]), GUARD, what="a panel")
        refresh = next(d for d in panel.callback_data if d.endswith(".f"))
        answer = await table.press(users[0], panel, refresh)
        assert "no longer exists" not in answer
        again.terminate()
        code, lines = await ended(again)
    finally:
        if again.returncode is None:
            again.kill()
            await again.wait()
    assert code == 0 and "resumed 1 running games" in "\n".join(lines)


@async_test
async def test_a_database_replaced_under_the_bot_is_saved_beside_it(make_fake_telegram, tmp_path):
    """Another file moved to the database's path (a backup put back while the bot runs):
    the bot stops as above, saves what it had beside that file, and leaves it alone."""
    server = await make_fake_telegram()
    db = tmp_path / "db.sqlite3"
    _table, bot = await game_under_way(server, db)
    games = db_rows(db, GAMES)
    other = tmp_path / "backup.sqlite3"
    sqlite3.connect(other).execute("CREATE TABLE backup (x)").connection.close()
    os.replace(other, db)
    code, lines = await ended(bot)
    errors = [line for line in lines if " ERROR " in line]
    assert code == 2 and len(errors) == 1, "\n".join(lines[-30:])
    assert f"{db} was replaced by another file" in errors[0]
    rescued = list(tmp_path.glob("db.sqlite3.rescued-*"))
    assert len(rescued) == 1 and f"every game is saved in {rescued[0]}" in errors[0]
    assert db_rows(db, "SELECT name FROM sqlite_master") == [("backup",)]  # left alone
    assert not os.path.exists(f"{db}-wal")  # the old file's WAL would damage it
    assert check_database(rescued[0], Acks()) == []
    assert db_rows(rescued[0], GAMES) == games


@async_test
async def test_a_lock_file_deleted_under_the_bot_stops_it(make_fake_telegram, tmp_path):
    server = await make_fake_telegram()
    db = tmp_path / "db.sqlite3"
    bot = await run_bot(server, db)
    try:
        await server.wait_for(lambda: server.request_count("setMyCommands") > 0, GUARD)
        os.unlink(dbguard.lock_path(str(db)))
        code, lines = await ended(bot)
    finally:
        if bot.returncode is None:
            bot.kill()
            await bot.wait()
    errors = [line for line in lines if " ERROR " in line]
    assert code == 2 and len(errors) == 1, "\n".join(lines[-30:])
    assert f"{db}.lock was deleted" in errors[0] and "the database is untouched" in errors[0]
    assert os.path.exists(db)
