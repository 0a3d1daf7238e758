"""The PostgreSQL store on its own: schema, migrations, the database's own guarantees,
two processes on one database, and a server that drops its connections.

The service's behaviour on PostgreSQL is the parametrised service suite (the
``db`` fixture); this file holds what only PostgreSQL has.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from typing import Any

import asyncpg
import pytest

from durak import to_snapshot
from durak.service import DatabaseError, GameService, StaleVersion
from durak.store import open_store, postgres
from durak.store.postgres import SCHEMA_VERSION, Store, Tx
from tests.dbaccess import db_execute, db_rows
from tests.pgcluster import Cluster, free_port

from .helpers import CHAT, lobby, play_out, run, started, user, with_service


def _error(sql: str, url: str, params: tuple[Any, ...] = ()) -> str:
    with pytest.raises(asyncpg.PostgresError) as e:
        db_execute(url, sql, params)
    return str(e.value)


def _game_with_actions(url: str, actions: int = 3) -> int:
    async def body(s: GameService) -> int:
        info = await started(s, 2, seed=1)
        game = info.game
        assert game is not None
        for v in range(actions):
            seat = game.actors()[0]
            await s.apply(info.game_id, user(seat), game.legal_actions(seat)[0], v)
        return info.game_id

    return with_service(url, body)


def test_a_new_database_gets_the_schema(pg_db: str) -> None:
    with_service(pg_db, lambda s: lobby(s, 2))
    assert db_rows(pg_db, "SELECT version FROM durak_schema") == [(SCHEMA_VERSION,)]
    tables = {
        r[0] for r in db_rows(pg_db, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    }
    assert {
        "chats",
        "users",
        "games",
        "seats",
        "actions",
        "tallies",
        "messages",
        "timers",
    } <= tables


def test_durak_db_url_selects_the_postgres_store(pg_db: str, tmp_path: Any) -> None:
    async def body() -> None:
        store = await open_store(pg_db)
        assert isinstance(store, postgres.Store)
        await store.close()
        store = await open_store(str(tmp_path / "x.sqlite3"))
        assert not isinstance(store, postgres.Store)
        await store.close()

    run(body())


def test_action_log_is_append_only(pg_db: str) -> None:
    game_id = _game_with_actions(pg_db)
    assert "append-only" in _error("UPDATE actions SET step = '{}' WHERE version = 1", pg_db)
    assert "append-only" in _error("DELETE FROM actions WHERE game_id = ?", pg_db, (game_id,))
    assert "append-only" in _error("TRUNCATE actions CASCADE", pg_db)
    # An entry must carry the version its game moved to.
    assert "new version" in _error(
        'INSERT INTO actions VALUES (?, 9, 0, 0, \'{"do":"take"}\', 0)', pg_db, (game_id,)
    )
    # One open lobby or game per chat, even for a writer that skips the service.
    assert "games_one_open_per_topic" in _error(
        "INSERT INTO games (chat_id, status, creator_id, rules, created_at, updated_at)"
        " VALUES (?, 'lobby', 1, '{}', 0, 0)",
        pg_db,
        (CHAT,),
    )
    assert "foreign key" in _error(
        "INSERT INTO seats (game_id, seat, user_id, name) VALUES (424242, 0, 1, 'x')", pg_db
    )
    assert db_rows(pg_db, "SELECT count(*) FROM actions") == [(3,)]


def _open_fails(url: str) -> DatabaseError:
    async def body() -> None:
        service = await GameService.open(url)
        await service.close()

    with pytest.raises(DatabaseError) as e:
        run(body())
    assert e.value.code == "database_error"
    return e.value


def test_a_newer_database_is_refused(pg_db: str) -> None:
    with_service(pg_db, lambda s: lobby(s, 2))
    db_execute(pg_db, "UPDATE durak_schema SET version = 99")
    error = _open_fails(pg_db)
    assert "newer" in str(error) and "99" in str(error)


def test_another_programs_tables_are_refused_and_left_alone(pg_db: str) -> None:
    db_execute(pg_db, "CREATE TABLE games (id integer PRIMARY KEY, title text)")
    db_execute(pg_db, "INSERT INTO games VALUES (1, 'chess')")
    assert "another program" in str(_open_fails(pg_db))
    assert db_rows(pg_db, "SELECT * FROM games") == [(1, "chess")]
    assert db_rows(pg_db, "SELECT to_regclass('durak_schema') IS NULL") == [(True,)]


def test_an_unreachable_server_is_a_clear_error_without_the_password() -> None:
    url = f"postgresql://durak:s3cret@127.0.0.1:{free_port()}/durak"
    error = _open_fails(url)
    assert "cannot open the database" in str(error)
    assert "s3cret" not in str(error) and "***" in str(error)


def test_a_missing_database_is_a_clear_error(pg_cluster: Cluster) -> None:
    error = _open_fails(pg_cluster.url_of("no_such_database"))
    assert "no_such_database" in str(error) and "does not exist" in str(error)


def test_migrations_run_in_one_transaction(pg_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken(tx: Tx) -> None:
        await tx.execute("CREATE TABLE half_done (x integer)")
        raise DatabaseError("migration 2 failed")

    monkeypatch.setattr(postgres, "MIGRATIONS", (*postgres.MIGRATIONS, broken))
    monkeypatch.setattr(postgres, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    with pytest.raises(DatabaseError, match="migration 2 failed"):
        run(Store.open(pg_db))
    assert db_rows(pg_db, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == [(0,)]


def test_migration_upgrades_an_older_database(pg_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with_service(pg_db, lambda s: lobby(s, 3))

    async def add_column(tx: Tx) -> None:
        await tx.execute("ALTER TABLE chats ADD COLUMN note text DEFAULT 'v2'")

    monkeypatch.setattr(postgres, "MIGRATIONS", (*postgres.MIGRATIONS, add_column))
    monkeypatch.setattr(postgres, "SCHEMA_VERSION", SCHEMA_VERSION + 1)

    async def body(s: GameService) -> None:
        info = await s.lobby(CHAT)
        assert info is not None and len(info.seats) == 3  # data kept

    with_service(pg_db, body)
    assert db_rows(pg_db, "SELECT version FROM durak_schema") == [(SCHEMA_VERSION + 1,)]
    assert db_rows(pg_db, "SELECT note FROM chats") == [("v2",)]


def test_two_processes_starting_on_a_new_database_migrate_once(pg_db: str) -> None:
    async def body() -> None:
        stores = await asyncio.gather(*(Store.open(pg_db) for _ in range(4)))
        for store in stores:
            await store.close()

    run(body())
    assert db_rows(pg_db, "SELECT version FROM durak_schema") == [(SCHEMA_VERSION,)]


def test_the_version_check_fences_two_processes(pg_db: str) -> None:
    """Two services (as two bot processes would) apply the same version of one game:
    exactly one action is logged, whichever commits first."""
    game_id = _game_with_actions(pg_db, 0)

    async def body() -> None:
        a, b = await GameService.open(pg_db), await GameService.open(pg_db)
        try:
            for version in range(30):
                info = await a.game(game_id)
                game = info.game
                assert game is not None
                seat = game.actors()[0]
                action = random.Random(version).choice(game.legal_actions(seat))
                results = await asyncio.gather(
                    a.apply(game_id, user(seat), action, version),
                    b.apply(game_id, user(seat), action, version),
                    return_exceptions=True,
                )
                applied = [r for r in results if not isinstance(r, BaseException)]
                stale = [r for r in results if isinstance(r, StaleVersion)]
                assert len(applied) == 1 and len(stale) == 1, results
                if applied[0].finished:
                    break
                # the loser rebuilds from the store; the winner's memory is current
                for s in (a, b):
                    assert (await s.game(game_id)).version == version + 1
        finally:
            await a.close()
            await b.close()

    run(body())
    versions = [r[0] for r in db_rows(pg_db, "SELECT version FROM actions ORDER BY version")]
    assert versions == list(range(1, len(versions) + 1)) and len(versions) >= 2


def _terminate_others(url: str) -> int:
    """Drop every other connection to the database, as a server restart would."""
    rows = db_rows(
        url,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    return len(rows)


def test_dropped_connections_fail_one_write_and_memory_stays_as_stored(pg_db: str) -> None:
    async def body(s: GameService) -> None:
        info = await started(s, 3, seed=6)
        game = info.game
        assert game is not None
        before = to_snapshot(game)
        assert _terminate_others(pg_db) >= 1
        seat = game.actors()[0]
        action = game.legal_actions(seat)[0]
        for _ in range(POOL_TRIES):  # each dead connection of the pool fails once at most
            try:
                result = await s.apply(info.game_id, user(seat), action, 0)
                break
            except DatabaseError:
                with contextlib.suppress(DatabaseError):
                    again = await s.game(info.game_id)
                    assert again.version == 0 and again.game is not None
                    assert to_snapshot(again.game) == before  # memory did not run ahead
        else:
            raise AssertionError("the store did not reconnect")
        assert result.version == 1
        assert db_rows(pg_db, "SELECT count(*) FROM actions") == [(1,)]
        # and the game plays on to its end
        await play_out(s, await s.game(info.game_id), random.Random(6))

    with_service(pg_db, body)


def test_the_store_outlives_a_server_restart(pg_db: str) -> None:
    """Every connection lost at once between two moves (a failover of the server):
    reads and writes work again on the next try."""

    async def body(s: GameService) -> None:
        info = await started(s, 2, seed=5)
        _terminate_others(pg_db)
        ok = False
        for _ in range(POOL_TRIES):
            try:
                await s.set_message(info.game_id, "table", CHAT, 7)
                ok = True
                break
            except DatabaseError:
                continue
        assert ok
        assert [m.message_id for m in await s.messages(info.game_id)] == [7]

    with_service(pg_db, body)


POOL_TRIES = postgres.POOL_MAX + 1


def _a_lobby_at_version(pg_db: str, version: int) -> None:
    """A database at schema ``version`` (the first migrations only) holding one open
    lobby of Ann's, as an older bot left it."""

    async def schema() -> None:
        store = await Store.open(pg_db)
        await store.close()

    with pytest.MonkeyPatch.context() as m:
        m.setattr(postgres, "MIGRATIONS", postgres.MIGRATIONS[:version])
        m.setattr(postgres, "SCHEMA_VERSION", version)
        run(schema())
    db_execute(pg_db, "INSERT INTO chats (chat_id, updated_at) VALUES ($1, 1)", (CHAT,))
    db_execute(
        pg_db,
        "INSERT INTO games (chat_id, status, creator_id, rules, created_at, updated_at)"
        " VALUES ($1, 'lobby', $2, '{}', 1, 1)",
        (CHAT, user(0)),
    )
    db_execute(
        pg_db,
        "INSERT INTO seats (game_id, seat, user_id, name) SELECT game_id, 0, $1, 'Ann' FROM games",
        (user(0),),
    )


def test_a_version_1_database_upgrades_to_topics(pg_db: str) -> None:
    """Migration 2 (forum topics): an existing open lobby is kept, in no topic, and
    the one-open-game rule becomes one per (chat, topic)."""

    _a_lobby_at_version(pg_db, 1)

    async def body(s: GameService) -> None:
        kept = await s.lobby(CHAT)
        assert kept is not None and kept.thread_id == 0 and len(kept.seats) == 1
        other = await s.create_lobby(CHAT, user(1), "Bob", thread_id=7)
        assert other.game_id != kept.game_id and other.thread_id == 7

    with_service(pg_db, body)
    assert db_rows(pg_db, "SELECT version FROM durak_schema") == [(SCHEMA_VERSION,)] == [(6,)]


def test_a_version_2_database_upgrades_to_lobbies(pg_db: str) -> None:
    """Migration 3 (lobbies): an open lobby's seats get ``ready``/``has_left`` false,
    its cap none; the cap, /notify_me and Play again work on the old rows."""

    _a_lobby_at_version(pg_db, 2)

    async def body(s: GameService) -> None:
        kept = await s.lobby(CHAT)
        assert kept is not None and kept.cap is None
        assert [(x.ready, x.left) for x in kept.seats] == [(False, False)]
        capped = await s.set_cap(CHAT, user(0), 3)
        assert capped.cap == 3 and capped.room == 3
        assert await s.toggle_notify(CHAT, user(5)) is True
        assert await s.subscribers(CHAT) == [user(5)]
        await s.join(CHAT, user(1), "Bob")
        done = await s.join(CHAT, user(2), "Cid")  # full: it starts itself
        assert done.status == "running"

    with_service(pg_db, body)
    assert db_rows(pg_db, "SELECT version FROM durak_schema") == [(SCHEMA_VERSION,)] == [(6,)]
