"""Bad input: damaged and foreign files, failing writes. Typed errors, nothing half-written."""

from __future__ import annotations

import os
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from durak import Take, to_snapshot
from durak.service import DatabaseError, GameService, LobbyFull, NotRunning
from durak.store import APPLICATION_ID, ActionWrite, Tx
from durak.store import sqlite as store_module
from tests.dbaccess import Db

from .helpers import (
    CHAT,
    db_rows,
    lobby,
    play_again_all,
    play_out,
    run,
    started,
    user,
    with_service,
)


def _open_fails(path: Path) -> DatabaseError:
    async def body() -> None:
        service = await GameService.open(path)
        await service.close()

    with pytest.raises(DatabaseError) as e:
        run(body())
    assert e.value.code == "database_error"
    return e.value


def test_random_bytes(tmp_path: Path) -> None:
    path = tmp_path / "noise.sqlite3"
    data = random.Random(1).randbytes(20_000)
    path.write_bytes(data)
    error = _open_fails(path)
    assert str(path) in str(error) and "not a database" in str(error)
    assert path.read_bytes() == data  # untouched


def test_text_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("durak is a card game\n" * 100)
    _open_fails(path)


def test_truncated_database(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"

    async def fill(s: GameService) -> None:
        for chat in range(30):
            info = await started(s, 4, seed=chat, chat=chat)
            await play_out(s, info, random.Random(chat))

    with_service(path, fill)
    assert not os.path.exists(f"{path}-wal") or os.path.getsize(f"{path}-wal") == 0
    size = path.stat().st_size
    assert size > 100_000
    with path.open("r+b") as f:
        f.truncate(size // 2)
    error = _open_fails(path)
    assert "damaged" in str(error) or "malformed" in str(error)


def test_foreign_sqlite_database(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices VALUES (1, 9.5)")
    conn.commit()
    conn.close()
    error = _open_fails(path)
    assert "another program" in str(error)
    assert db_rows(path, "SELECT * FROM invoices") == [(1, 9.5)]  # left alone
    assert db_rows(path, "PRAGMA user_version") == [(0,)]


def test_foreign_application_id(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 1234")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    assert "another program" in str(_open_fails(path))


def test_newer_database(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    with_service(path, lambda s: lobby(s, 2))
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    error = _open_fails(path)
    assert "newer" in str(error) and "99" in str(error)


def test_unreachable_path(tmp_path: Path) -> None:
    _open_fails(tmp_path / "no" / "such" / "folder" / "db.sqlite3")
    _open_fails(tmp_path)  # a directory


def test_empty_file_is_a_new_database(tmp_path: Path) -> None:
    path = tmp_path / "empty.sqlite3"
    path.write_bytes(b"")
    with_service(path, lambda s: lobby(s, 2))
    assert db_rows(path, "PRAGMA application_id") == [(APPLICATION_ID,)]


def test_failed_write_leaves_memory_as_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "db.sqlite3"
    real = store_module._action_statements

    def fail_after_writing(conn: sqlite3.Connection, write: ActionWrite) -> bool:
        real(conn, write)  # every statement ran, then the disk fails before COMMIT
        raise sqlite3.OperationalError("disk I/O error")

    async def body(s: GameService) -> None:
        info = await started(s, 3, seed=6)
        game = info.game
        assert game is not None
        before = to_snapshot(game)
        seat = game.actors()[0]
        action = game.legal_actions(seat)[0]
        monkeypatch.setattr(store_module, "_action_statements", fail_after_writing)
        with pytest.raises(DatabaseError) as e:
            await s.apply(info.game_id, user(seat), action, 0)
        assert "disk I/O error" in str(e.value)
        monkeypatch.setattr(store_module, "_action_statements", real)
        assert db_rows(path, "SELECT count(*) FROM actions") == [(0,)]
        assert db_rows(path, "SELECT version FROM games") == [(0,)]
        again = await s.game(info.game_id)
        assert again.version == 0 and again.game is not None
        assert to_snapshot(again.game) == before  # memory did not run ahead of the disk
        view = await s.view(info.game_id, user(seat))
        assert view.hand == again.game.hand(seat)
        result = await s.apply(info.game_id, user(seat), action, 0)  # the retry works
        assert result.version == 1

    with_service(path, body)


def test_failed_finish_writes_neither_ending_nor_tallies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "db.sqlite3"

    def broken(*args: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    async def body(s: GameService) -> None:
        info = await started(s, 2, seed=4)
        game = info.game
        assert game is not None
        rng = random.Random(4)
        version = 0
        monkeypatch.setattr(store_module, "_tally_statements", broken)
        while True:
            seat, action = _random_step(game, rng)
            try:
                result = await s.apply(info.game_id, user(seat), action, version)
            except DatabaseError:
                break  # the finishing action: its tally write failed
            version = result.version
            assert not result.finished
        assert db_rows(path, "SELECT status, version FROM games") == [("running", version)]
        assert db_rows(path, "SELECT count(*) FROM actions") == [(version,)]
        assert db_rows(path, "SELECT count(*) FROM tallies") == [(0,)]
        monkeypatch.undo()
        again = await s.game(info.game_id)
        assert again.status == "running" and again.version == version
        assert again.game is not None and again.game.result is None
        result = await s.apply(info.game_id, user(seat), action, version)
        assert result.finished
        assert db_rows(path, "SELECT sum(played) FROM tallies") == [(2,)]

    with_service(path, body)


def _random_step(game, rng):  # type: ignore[no-untyped-def]
    from durak.selfplay import random_step

    return random_step(game, rng)


def test_refused_join_writes_nothing(db: Db) -> None:
    path = db

    async def body(s: GameService) -> None:
        await lobby(s, 4, deck=24)
        with pytest.raises(LobbyFull):
            await s.join(CHAT, user(50), "Late")

    with_service(path, body)
    assert db_rows(path, "SELECT count(*) FROM users WHERE user_id = ?", (user(50),)) == [(0,)]
    assert db_rows(path, "SELECT count(*) FROM seats") == [(4,)]


async def _poison_commit(tx: Tx) -> None:
    """Make this transaction's COMMIT fail: a foreign key checked only at COMMIT."""
    await tx.execute("PRAGMA defer_foreign_keys = ON")
    await tx.execute(
        "INSERT INTO seats (game_id, seat, user_id, name, kind, level)"
        " VALUES (987654, 0, 1, 'ghost', 'human', NULL)"
    )


def test_failed_commit_of_start_leaves_the_lobby(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Tx.start_game

    async def start_then_poison(self: Tx, *args: Any) -> bool:
        done = await real(self, *args)
        await _poison_commit(self)
        return done

    async def body(s: GameService) -> None:
        info = await lobby(s, 2)
        monkeypatch.setattr(Tx, "start_game", start_then_poison)
        with pytest.raises(DatabaseError, match="FOREIGN KEY"):
            await s.start(CHAT, user(0), seed=1)
        monkeypatch.undo()
        again = await s.game(info.game_id)
        assert again.status == "lobby" and again.game is None
        with pytest.raises(NotRunning):  # nothing of the failed start stayed in memory
            await s.apply(info.game_id, user(0), Take())
        assert [g.game_id for g in await s.running_games()] == []
        started_now = await s.start(CHAT, user(0), seed=1)
        assert started_now.status == "running"

    with_service(tmp_path / "db.sqlite3", body)


def test_failed_commit_of_play_again_starts_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Tx.replace_seats

    async def seat_then_poison(self: Tx, *args: Any) -> None:
        await real(self, *args)
        await _poison_commit(self)

    async def body(s: GameService) -> None:
        info = await started(s, 2, seed=3)
        await s.surrender(info.game_id, user(1))
        monkeypatch.setattr(Tx, "replace_seats", seat_then_poison)
        with pytest.raises(DatabaseError):
            await s.play_again(info.game_id, user(0))
        monkeypatch.undo()
        assert await s.active_game(CHAT) is None
        assert await s.running_games() == []
        nxt = await play_again_all(s, info.game_id, user(0))
        assert nxt.status == "running" and nxt.game is not None and nxt.game.dealer == 1

    with_service(tmp_path / "db.sqlite3", body)


def test_failed_commit_of_an_action(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "db.sqlite3"
    real = store_module._action_statements

    def act_then_poison(conn: sqlite3.Connection, write: ActionWrite) -> bool:
        done = real(conn, write)
        conn.execute("PRAGMA defer_foreign_keys = ON")
        conn.execute(
            "INSERT INTO seats (game_id, seat, user_id, name, kind, level)"
            " VALUES (987654, 0, 1, 'ghost', 'human', NULL)"
        )
        return done

    async def body(s: GameService) -> None:
        info = await started(s, 2, seed=8)
        game = info.game
        assert game is not None
        before = to_snapshot(game)
        seat = game.actors()[0]
        action = game.legal_actions(seat)[0]
        monkeypatch.setattr(store_module, "_action_statements", act_then_poison)
        with pytest.raises(DatabaseError, match="FOREIGN KEY"):
            await s.apply(info.game_id, user(seat), action, 0)
        monkeypatch.undo()
        assert db_rows(path, "SELECT count(*) FROM actions") == [(0,)]
        again = await s.game(info.game_id)
        assert again.version == 0 and again.game is not None
        assert to_snapshot(again.game) == before
        assert (await s.apply(info.game_id, user(seat), action, 0)).version == 1

    with_service(path, body)
