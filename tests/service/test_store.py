"""The store on its own: PRAGMAs, migrations, the schema's own guarantees."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from durak import store as store_module
from durak.service import GameService
from durak.service_errors import DatabaseError
from durak.store import APPLICATION_ID, SCHEMA_VERSION, Store, Tx

from .helpers import CHAT, db_rows, lobby, run, started, user, with_service


def test_fresh_database_is_stamped(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    with_service(path, lambda s: lobby(s, 2))
    assert db_rows(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert db_rows(path, "PRAGMA application_id") == [(APPLICATION_ID,)]
    assert db_rows(path, "PRAGMA journal_mode") == [("wal",)]  # persistent in the file
    tables = {r[0] for r in db_rows(path, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"chats", "users", "games", "seats", "actions", "tallies", "messages"} <= tables


def test_connection_pragmas(tmp_path: Path) -> None:
    async def body(s: GameService) -> None:
        async with s.store.reading() as tx:
            assert await tx.scalar("PRAGMA journal_mode") == "wal"
            assert await tx.scalar("PRAGMA synchronous") == 1  # NORMAL
            assert await tx.scalar("PRAGMA foreign_keys") == 1
            assert await tx.scalar("PRAGMA busy_timeout") == store_module.BUSY_TIMEOUT_MS
        assert await s.store.check(full=True) == []

    with_service(tmp_path / "db.sqlite3", body)


def _game_with_actions(path: Path) -> int:
    async def body(s: GameService) -> int:
        info = await started(s, 2, seed=1)
        game = info.game
        assert game is not None
        for v in range(3):
            seat = game.actors()[0]
            await s.apply(info.game_id, user(seat), game.legal_actions(seat)[0], v)
        return info.game_id

    return with_service(path, body)


def test_action_log_is_append_only(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    game_id = _game_with_actions(path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    try:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute('UPDATE actions SET step = \'{"do":"take"}\' WHERE version = 1')
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("DELETE FROM actions WHERE game_id = ?", (game_id,))
        # An entry must carry the version its game moved to.
        with pytest.raises(sqlite3.IntegrityError, match="new version"):
            conn.execute(
                'INSERT INTO actions VALUES (?, 9, 0, 0, \'{"do":"take"}\', 0)', (game_id,)
            )
        # One open lobby or game per chat, even for a writer that skips the service.
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(
                "INSERT INTO games (chat_id, status, creator_id, rules, created_at, updated_at)"
                " VALUES (?, 'lobby', 1, '{}', 0, 0)",
                (CHAT,),
            )
        # Foreign keys hold (the store turns them on for its connection; here too).
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(
                "INSERT INTO seats (game_id, seat, user_id, name, kind, level) VALUES (424242, 0, 1, 'x', 'human', NULL)"
            )
    finally:
        conn.close()
    assert db_rows(path, "SELECT count(*) FROM actions") == [(3,)]


def test_migrations_run_in_one_transaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(tx: Tx) -> None:
        await tx.execute("CREATE TABLE half_done (x INTEGER)")
        raise sqlite3.OperationalError("migration 2 failed")

    monkeypatch.setattr(store_module, "MIGRATIONS", (*store_module.MIGRATIONS, broken))
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    path = tmp_path / "db.sqlite3"

    async def body() -> None:
        await Store.open(path)

    with pytest.raises(DatabaseError, match="migration 2 failed"):
        run(body())
    # Nothing of migration 1 or 2 stayed: the file is as new.
    assert db_rows(path, "PRAGMA user_version") == [(0,)]
    assert db_rows(path, "SELECT name FROM sqlite_master") == []


def test_migration_upgrades_an_older_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "db.sqlite3"
    with_service(path, lambda s: lobby(s, 3))

    async def add_column(tx: Tx) -> None:
        await tx.execute("ALTER TABLE chats ADD COLUMN note TEXT DEFAULT 'v2'")

    monkeypatch.setattr(store_module, "MIGRATIONS", (*store_module.MIGRATIONS, add_column))
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", SCHEMA_VERSION + 1)

    async def body(s: GameService) -> None:
        info = await s.lobby(CHAT)
        assert info is not None and len(info.seats) == 3  # data kept

    with_service(path, body)
    assert db_rows(path, "PRAGMA user_version") == [(SCHEMA_VERSION + 1,)]
    assert db_rows(path, "SELECT note FROM chats") == [("v2",)]


def test_transaction_rolls_back_on_error(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"

    async def body() -> None:
        store = await Store.open(path)
        try:
            with pytest.raises(RuntimeError):
                async with store.transaction() as tx:
                    await tx.upsert_user(1, "Ann", 0.0)
                    raise RuntimeError("changed my mind")
            async with store.reading() as tx:
                assert await tx.scalar("SELECT count(*) FROM users") == 0
            async with store.transaction() as tx:
                await tx.upsert_user(1, "Ann", 0.0)
            async with store.reading() as tx:
                assert await tx.scalar("SELECT name FROM users") == "Ann"
        finally:
            await store.close()
        with pytest.raises(DatabaseError, match="closed"):
            async with store.reading():
                pass

    run(body())
