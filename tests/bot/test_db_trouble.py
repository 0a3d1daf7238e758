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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot import dbguard
from bot.__main__ import main
from bot.config import Config
from bot.dbguard import Trouble
from bot.seats.timers import TurnTimers
from durak import Rules
from durak.service import ChatSettings, DatabaseError, GameInfo, GameService
from durak.store import sqlite as sqlite_store
from tests.dbaccess import db_rows
from tests.fake_telegram.fixtures import async_test
from tests.service.crash_check import Acks, check_database
from tests.service.helpers import started, step

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


@async_test
async def test_a_sweep_while_a_clock_is_being_set_leaves_it_alone(tmp_path: Path, caplog):
    """arm() drops the old clock, reads the chat's settings, then starts the new one: a
    sweep in between neither warns nor sets a second clock (seen once in a soak: "game N
    had no turn clock: re-armed" for a game whose clock was being set)."""
    service = await GameService.open(tmp_path / "db.sqlite3")
    reading, read_again, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def slow_settings(chat_id: int) -> ChatSettings:
        (read_again if reading.is_set() else reading).set()
        await release.wait()
        return ChatSettings(chat_id, Rules(), turn_timeout=60)

    async def nothing(*_args: Any) -> None:
        return None

    timers = TurnTimers(service, nothing, nothing, settings=slow_settings, away_delay=0)
    try:
        info = await started(service, 2)
        arming = asyncio.create_task(timers.arm(info))
        await reading.wait()
        with caplog.at_level(logging.WARNING):  # (a sweep that re-arms reads the
            sweeping = asyncio.create_task(timers.sweep())  # settings again, and waits)
            again = asyncio.create_task(read_again.wait())
            await asyncio.wait((sweeping, again), return_when=asyncio.FIRST_COMPLETED)
            again.cancel()
            assert sweeping.done() and sweeping.result() == 0
        release.set()
        await arming
        assert timers.has_clock(info) and timers.left(info.game_id, info.version) == 60
        assert await timers.sweep() == 0
    finally:
        await timers.close()
        await service.close()
    assert not [r for r in caplog.records if "no turn clock" in r.getMessage()]


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
        assert dbguard.trouble() == Trouble(f"{db} was replaced by another file", True)
        os.unlink(db)
        assert dbguard.trouble() == Trouble(f"{db} was deleted", True)
        os.replace(tmp_path / "moved", db)
        assert dbguard.trouble() is None
        os.unlink(dbguard.lock_path(str(db)))
        assert dbguard.trouble() == Trouble(f"{db}.lock was deleted", False)
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


async def game_under_way(
    server, db: Path, started: Callable[[], None] | None = None
) -> tuple[Table, asyncio.subprocess.Process]:
    """``python -m bot`` on ``db`` with a game of two players a few moves in, no press
    under way; ``started`` is called once the bot polls, before the game."""
    users = [server.add_user(f"P{i}", started=True) for i in range(2)]
    group = server.add_group("Friends", users, admins=[users[0]])
    table = Table(server, group, users, random.Random(1))
    bot = await run_bot(server, db)
    try:
        if started is not None:
            await server.wait_for(lambda: server.request_count("getUpdates") > 0, GUARD)
            started()
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


@pytest.mark.long
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


@pytest.mark.long
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


async def played_database(db: Path, games: int = 6, moves: int = 200) -> None:
    """A bot's database with games started and played a while (then closed)."""
    service = await GameService.open(db)
    try:
        rng = random.Random(36)
        infos = [await started(service, 3, seed=k, chat=-100 - k) for k in range(games)]
        for _ in range(moves):
            k = rng.randrange(len(infos))
            info = infos[k]
            if info.game is None or info.game.result is not None:
                continue
            await step(service, info, rng, info.version)
            infos[k] = await service.game(info.game_id)
    finally:
        await service.close()


PAGE = 4096


def damage(db: Path, kind: str) -> None:
    """Damage a closed database file as a disk, a copy or a person might."""
    rng = random.Random(kind)
    size = db.stat().st_size
    if kind == "garbage":  # not SQLite at all
        db.write_bytes(rng.randbytes(size))
    elif kind == "truncated":  # its last pages gone
        os.truncate(db, size - 3 * PAGE)
    elif kind == "broken pages":  # the header and the schema fine, the last pages not
        with open(db, "r+b") as f:
            f.seek(size - 3 * PAGE)
            f.write(rng.randbytes(3 * PAGE))


@pytest.mark.parametrize("kind", ["garbage", "truncated", "broken pages"])
@async_test
async def test_a_damaged_database_at_start_is_one_line(make_fake_telegram, tmp_path, kind):
    """Issue 36 item 5: ``python -m bot`` on a damaged database file says so in one
    line and exits 2, whatever the damage; never a traceback, never a start."""
    server = await make_fake_telegram()
    db = tmp_path / "db.sqlite3"
    await played_database(db)
    damage(db, kind)
    code, lines = await ended(await run_bot(server, db))
    assert code == 2 and len(lines) == 1, "\n".join(lines[-40:])  # no traceback
    said = lines[0].removeprefix(f"durak-bot: DURAK_DB: {db} ")
    assert said.startswith("is damaged (") and "README: backups" in said, lines
    assert server.request_count("getMe") == 0  # refused before any network call


def fake_header(counter: int, pages: int, size: int, page_size: int = PAGE) -> bytes:
    """A file of ``size`` bytes that starts with an SQLite header saying so much."""
    head = bytearray(b"SQLite format 3\0" + bytes(84))
    head[16:18] = page_size.to_bytes(2, "big")
    head[24:28] = counter.to_bytes(4, "big")
    head[28:32] = pages.to_bytes(4, "big")
    head[92:96] = counter.to_bytes(4, "big")  # the page count is valid
    return bytes(head) + bytes(size - len(head))


@pytest.mark.parametrize(
    ("now", "why"),
    [
        (fake_header(9, 5, 5 * PAGE), "its change counter went back from 10 to 9 (an older copy)"),
        (fake_header(12, 4, 4 * PAGE), "it shrank from 20,480 to 16,384 bytes"),
        (b"", "it shrank from 20,480 to 0 bytes"),
        (bytes(5 * PAGE), "it is no SQLite database any more"),
        (fake_header(11, 5, 5 * PAGE, page_size=1024), "its page size changed"),
    ],
    ids=["an older copy", "a smaller copy", "truncated", "zeroed", "another page size"],
)
def test_a_database_overwritten_in_place_is_noticed_at_the_next_check(tmp_path, now, why):
    """Issue 36 item 5: the same file (device and inode) with other bytes. Its header,
    read through the descriptor held, may only move on: a change counter gone back, a
    file shorter than it was or than its header said, no SQLite header any more."""
    db = tmp_path / "db.sqlite3"
    db.write_bytes(fake_header(10, 5, 5 * PAGE))
    try:
        dbguard.hold(Config(token=TOKEN, db_path=str(db)))
        assert dbguard.trouble() is None
        with open(db, "r+b") as f:  # as cp does: truncate, then write, same inode
            f.truncate(0)
            f.write(now)
        assert dbguard.trouble() == Trouble(f"{db} was overwritten in place: {why}", True, True)
    finally:
        dbguard.release_all()


def test_the_bot_s_own_writes_are_never_taken_for_an_overwrite(tmp_path):
    """What the bot's checkpoints do to the file: the counter and the size only grow,
    and a checkpoint caught half-way (its header already promising pages not yet
    written) is judged by what it promised only at the check after."""
    db = tmp_path / "db.sqlite3"
    db.write_bytes(fake_header(10, 5, 5 * PAGE))
    try:
        dbguard.hold(Config(token=TOKEN, db_path=str(db)))
        assert dbguard.trouble() is None
        with open(db, "r+b") as f:
            f.write(fake_header(11, 8, PAGE))  # page 1 written, the file not grown yet
            f.flush()
            assert dbguard.trouble() is None
            f.seek(5 * PAGE)
            f.write(bytes(3 * PAGE))  # the rest of that checkpoint
            f.flush()
            assert dbguard.trouble() is None
            f.truncate(7 * PAGE)  # below the 8 pages its header said: not the bot's doing
        found = dbguard.trouble()
        assert found is not None and found.reason.endswith("shrank from 32,768 to 28,672 bytes")
    finally:
        dbguard.release_all()


@async_test
async def test_a_running_store_s_checkpoints_never_look_like_an_overwrite(tmp_path, monkeypatch):
    """The same on a real store: games played with a checkpoint after every write (and
    the WAL started over), the file checked after each, and at its close."""
    monkeypatch.setattr(sqlite_store, "CHECKPOINT_EVERY", 0.0)
    monkeypatch.setattr(sqlite_store, "WAL_RESTART_FRAMES", 50)
    db = tmp_path / "db.sqlite3"
    dbguard.hold(Config(token=TOKEN, db_path=str(db)))
    try:
        service = await GameService.open(db)
        try:
            rng = random.Random(5)
            infos = [await started(service, 3, seed=k, chat=-100 - k) for k in range(4)]
            assert dbguard.trouble() is None
            for _ in range(300):
                k = rng.randrange(len(infos))
                info = infos[k]
                if info.game is None or info.game.result is not None:
                    continue
                await step(service, info, rng, info.version)
                infos[k] = await service.game(info.game_id)
                await asyncio.sleep(0)  # the checkpoint's task runs
                assert dbguard.trouble() is None
        finally:
            await service.close()
        assert dbguard.trouble() is None
        seen, most = dbguard._seen[str(db)]
        assert seen.sqlite and seen.counter > 1 and most > 20 * PAGE  # it was watched
    finally:
        dbguard.release_all()


def file_header(db: Path) -> tuple[int, int]:
    """The file's change counter and size (read here, not by the code under test)."""
    data = db.read_bytes()
    return int.from_bytes(data[24:28], "big"), len(data)


async def moved_on(server, db: Path, table: Table, since: tuple[int, int]) -> None:
    """More moves (and games), until the bot's checkpoints have moved the file's header
    past ``since`` (an older copy of it is then an older copy); no press under way."""
    while True:
        stop = asyncio.Event()
        players = [asyncio.create_task(table.play(u, stop)) for u in table.users]
        try:
            await server.wait_for(
                lambda: file_header(db) > since or table.ended() is not None, GUARD
            )
        finally:
            stop.set()
            await asyncio.gather(*players)
        ended = table.ended()
        if file_header(db) > since:
            return
        assert ended is not None
        table.since = ended.message_id
        await table.play_again(ended)
        await server.wait_for(
            lambda: all(table.panel(u) is not None for u in table.users), 10, what="panels"
        )


def one_error(code: int, lines: list[str]) -> str:
    """The stopped bot's one ERROR line (exit code 2, no traceback, nothing else)."""
    errors = [line for line in lines if " ERROR " in line]
    assert code == 2 and len(errors) == 1, "\n".join(lines[-30:])
    assert "Traceback" not in "\n".join(lines), "\n".join(lines[-30:])
    return errors[0]


@pytest.mark.long
@pytest.mark.parametrize("how", ["cp", "truncate"])
@async_test
async def test_a_database_overwritten_under_the_bot_stops_it_in_one_line(
    make_fake_telegram, tmp_path, how
):
    """Issue 36 item 5: ``cp backup.sqlite3 durak.sqlite3`` (an older copy, written into
    the same inode) or a truncation to 0 bytes, under the running bot with a game on.
    It notices, takes no more presses, writes nothing more into that file, deletes its
    WAL (a restart would replay it into the file now there), says so in one ERROR line
    and exits 2; started again on that file it plays or refuses in one line, never
    a traceback. Whether a sound copy could be saved depends on how much of the bot's
    data was only in the file (see dbguard._save_in_place); the line must say which."""
    server = await make_fake_telegram()
    db = tmp_path / "db.sqlite3"
    table, bot = await game_under_way(server, db)
    try:
        backup = tmp_path / "backup.sqlite3"
        shutil.copyfile(db, backup)  # an operator's copy of the file alone, taken now
        await moved_on(server, db, table, file_header(backup))
        if how == "cp":
            shutil.copyfile(backup, db)  # cp: opened with O_TRUNC, written over
        else:
            os.truncate(db, 0)
        code, lines = await ended(bot)
    finally:
        if bot.returncode is None:
            bot.kill()
            await bot.wait()
    line = one_error(code, lines)
    assert f"{db} was overwritten in place: " in line, line
    assert not os.path.exists(f"{db}-wal") and not os.path.exists(f"{db}-shm")
    rescued = list(tmp_path.glob("db.sqlite3.rescued-*"))
    if "no sound copy could be saved" in line:
        assert rescued == [] and f"put that backup at {db} again" in line, line
    else:
        assert len(rescued) == 1 and f"is saved in {rescued[0]} and checked sound" in line
        assert check_database(rescued[0], Acks()) == []

    polls = server.request_count("getUpdates")
    again = await run_bot(server, db)  # its supervisor starts it again
    try:
        await server.wait_for(
            lambda: again.returncode is not None or server.request_count("getUpdates") > polls,
            GUARD,
            what="a start or a refusal",
        )
        if again.returncode is None:
            again.terminate()
        code, lines = await ended(again)
    finally:
        if again.returncode is None:
            again.kill()
            await again.wait()
    assert "Traceback" not in "\n".join(lines), "\n".join(lines[-30:])
    if code == 2:  # the file there is damaged: said in one line
        assert len(lines) == 1 and "is damaged" in lines[0], lines
    else:
        assert code == 0, "\n".join(lines[-30:])
    print(f"{how}: {line.split(' under the running bot: ')[1]}; started again: exit {code}")


@pytest.mark.long
@async_test
async def test_a_truncated_database_whose_pages_are_gone_says_it_could_not_be_saved(
    make_fake_telegram, tmp_path
):
    """The same truncation under a bot that resumed an older database: the pages it has
    not written since its start were only in the file, which is gone. No copy is sound;
    the one line says so and what to do, and leaves no WAL to replay."""
    server = await make_fake_telegram()
    db = tmp_path / "db.sqlite3"
    await played_database(db)
    bot = await run_bot(server, db)
    try:
        await server.wait_for(lambda: server.request_count("getUpdates") > 0, GUARD)  # started
        os.truncate(db, 0)
        code, lines = await ended(bot)
    finally:
        if bot.returncode is None:
            bot.kill()
            await bot.wait()
    line = one_error(code, lines)
    assert f"{db} was overwritten in place: it shrank from " in line, line
    assert "no sound copy could be saved" in line and f"put that backup at {db} again" in line
    assert list(tmp_path.glob("db.sqlite3.rescued-*")) == []
    assert not os.path.exists(f"{db}-wal") and not os.path.exists(f"{db}-shm")
