"""The store on its own: PRAGMAs, migrations, the schema's own guarantees."""

from __future__ import annotations

import asyncio
import logging
import random
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from durak.service import DatabaseError, GameService
from durak.store import APPLICATION_ID, SCHEMA_VERSION, Store, Tx
from durak.store import sqlite as store_module

from .helpers import (
    CHAT,
    db_rows,
    lobby,
    play_again_all,
    play_out,
    run,
    started,
    state,
    step,
    stored_replay,
    user,
    with_service,
)


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
                "INSERT INTO seats (game_id, seat, user_id, name, kind, level)"
                " VALUES (424242, 0, 1, 'x', 'human', NULL)"
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


_V1_COLUMNS = {
    "chats": "chat_id, title, settings, updated_at",
    "users": "user_id, name, language, updated_at",
    "games": (
        "game_id, chat_id, status, creator_id, rules, previous_game_id, seed, start, version,"
        " snapshot, end_reason, losers, draw, ended_by, created_at, updated_at, started_at,"
        " finished_at"
    ),
    "seats": "game_id, seat, user_id, name, kind, level",
    "actions": "*",
    "tallies": "*",
    "messages": "*",
}


def _v1_database(path: Path, source: Path) -> None:
    """A schema-1 database (made by migration 1 alone) holding ``source``'s rows,
    with chat settings as version 1 wrote them (every key, on every change)."""

    async def schema_1() -> None:
        store = await Store.open(path)
        await store.close()

    with pytest.MonkeyPatch.context() as m:
        m.setattr(store_module, "MIGRATIONS", store_module.MIGRATIONS[:1])
        m.setattr(store_module, "SCHEMA_VERSION", 1)
        run(schema_1())
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
        saved = triggers.fetchall()
        conn.execute("BEGIN")
        for name, _ in saved:  # the log's guards would refuse a copy of a whole log
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute("ATTACH ? AS src", (str(source),))
        for table, columns in _V1_COLUMNS.items():
            names = "" if columns == "*" else f" ({columns})"
            conn.execute(f"INSERT INTO main.{table}{names} SELECT {columns} FROM src.{table}")
        conn.execute(
            "UPDATE chats SET settings = ? WHERE chat_id = ?",
            ('{"deck":24,"turn_timeout":null,"language":"uk"}', CHAT - 1),
        )
        for _, sql in saved:
            conn.execute(sql)
        conn.execute("COMMIT")
        conn.execute("DETACH src")
    finally:
        conn.close()
    assert db_rows(path, "PRAGMA user_version") == [(1,)]
    assert "timeouts" not in {r[1] for r in db_rows(path, "PRAGMA table_info(seats)")}


def test_a_version_1_database_upgrades_in_place(tmp_path: Path) -> None:
    source = tmp_path / "source.sqlite3"

    async def fill(s: GameService) -> tuple[int, int]:
        done = await started(s, 3, seed=31)
        await play_out(s, done, random.Random(31))
        await s.set_message(done.game_id, "table", CHAT, 41)
        nxt = await play_again_all(s, done.game_id, user(0))
        for k in range(5):
            await step(s, nxt, random.Random(k), k)
        await s.set_chat_settings(CHAT - 1, deck=24, turn_timeout=None, language="uk")
        await lobby(s, 2, chat=CHAT - 1)
        await s.set_user_language(user(1), "pl")
        return done.game_id, nxt.game_id

    done_id, running_id = with_service(source, fill)
    path = tmp_path / "v1.sqlite3"
    _v1_database(path, source)
    before = {t: db_rows(path, f"SELECT * FROM {t} ORDER BY 1, 2") for t in _V1_COLUMNS}
    assert before["tallies"] and before["actions"] and before["messages"]

    async def upgraded(s: GameService) -> None:
        assert await s.store.check(full=True) == []
        assert (await s.tally(CHAT, user(0))).played == 1
        running = await s.game(running_id)
        assert running.status == "running" and running.version == 5
        assert [(x.timeouts, x.away) for x in running.seats] == [(0, False)] * 3
        assert state(running.game) == state(stored_replay(path, running_id))  # type: ignore[arg-type]
        assert (await s.game(done_id)).ending is not None
        # Version 1 stored "turn_timeout": null with every change: it stays "no limit".
        assert (await s.chat_settings(CHAT - 1)).turn_timeout is None
        assert (await s.chat_settings(CHAT - 1)).language == "uk"
        assert (await s.chat_settings(CHAT)).turn_timeout == 60  # never saved any
        assert (await s.user_settings(user(1))).language == "pl"
        assert await s.deadlines() == []
        # The new columns and table work on the old rows.
        assert (await s.record_timeout(running_id, 2)).timeouts == 1
        assert await s.set_deadline(running_id, 5, 123.0)
        await s.join(CHAT - 1, user(5), "Fay")
        await step(s, running, random.Random(9), 5)

    with_service(path, upgraded)
    assert db_rows(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)] == [(7,)]
    assert db_rows(path, "PRAGMA application_id") == [(APPLICATION_ID,)]
    columns = {r[1]: r for r in db_rows(path, "PRAGMA table_info(seats)")}
    assert columns["timeouts"][2:5] == ("INTEGER", 1, "0")  # type, not null, default
    assert columns["away"][2:5] == ("INTEGER", 1, "0")
    assert [r[1] for r in db_rows(path, "PRAGMA table_info(timers)")] == [
        "game_id",
        "version",
        "deadline",
    ]
    # Every old row is still there, unchanged (rows written after the upgrade aside).
    after = {
        t: db_rows(path, f"SELECT {_V1_COLUMNS[t]} FROM {t} ORDER BY 1, 2") for t in _V1_COLUMNS
    }
    for table, rows in before.items():
        if table == "games":  # the running game and the lobby moved on
            continue
        assert set(rows) <= set(after[table]), table
    games = {r[0]: r for r in after["games"]}
    assert games[done_id] == {r[0]: r for r in before["games"]}[done_id]
    assert db_rows(
        path, "SELECT seat, timeouts, away FROM seats WHERE game_id = ?", (running_id,)
    ) == [
        (0, 0, 0),
        (1, 0, 0),
        (2, 1, 0),
    ]


def test_hot_writes_commit_together_and_fail_alone(tmp_path: Path) -> None:
    """Actions, deadlines and messages waiting at the same moment share one transaction
    (group commit); each caller still gets its own answer, and an SQLite error in one
    write undoes that write alone."""
    path = tmp_path / "db.sqlite3"

    async def body(s: GameService) -> None:
        infos = [await started(s, 2, seed=k, chat=CHAT - k) for k in range(8)]
        store = s.store
        trips: list[int] = []  # writes per group commit
        real = store._run_batch

        def counted(jobs: list[Any]) -> Any:
            trips.append(len(jobs))
            return real(jobs)

        store._run_batch = counted  # type: ignore[method-assign]
        rng = random.Random(3)
        # one action in each game, a deadline and a message for each, all at once
        results = await asyncio.gather(
            *(step(s, info, rng, 0) for info in infos),
            *(s.set_deadline(info.game_id, 0, 1e9) for info in infos),  # 0 is stale by then
            *(s.set_message(info.game_id, "table", info.chat_id, 77) for info in infos),
        )
        assert [r.version for r in results[:8]] == [1] * 8
        assert results[8:16] == [False] * 8  # written after the actions moved the games on
        assert max(trips) > 1 and sum(trips) == 24 and len(trips) < 24  # batched
        for info in infos:
            assert (await s.game(info.game_id)).message("table") == 77
            stored = db_rows(path, "SELECT version FROM games WHERE game_id = ?", (info.game_id,))
            assert stored == [(1,)]

        # An SQLite error fails its own write; the others of the batch commit.
        def broken(conn: sqlite3.Connection) -> None:
            conn.execute("INSERT INTO no_such_table VALUES (1)")

        bad, good = await asyncio.gather(
            store._write(broken),
            s.set_message(infos[0].game_id, "table", infos[0].chat_id, 78),
            return_exceptions=True,
        )
        assert isinstance(bad, DatabaseError) and good is None
        assert (await s.game(infos[0].game_id)).message("table") == 78

        # A caller cancelled before its batch starts writes nothing.
        async with store._lock:  # a batch cannot start now
            pending = asyncio.create_task(
                s.set_message(infos[1].game_id, "table", infos[1].chat_id, 99)
            )
            await asyncio.sleep(0.01)
            pending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await pending
        await s.set_message(infos[2].game_id, "table", infos[2].chat_id, 5)  # the queue moves on
        assert db_rows(
            path, "SELECT message_id FROM messages WHERE game_id = ?", (infos[1].game_id,)
        ) == [(77,)]

    with_service(path, body)

    async def closed() -> None:
        store = await Store.open(path)
        await store.close()
        with pytest.raises(DatabaseError, match="closed"):
            await store.put_deadline(1, 0, None)

    run(closed())


def test_hot_writes_run_on_the_loops_thread_and_never_wait_on_it(tmp_path: Path) -> None:
    """A group commit runs on the event loop's thread (no handoff to aiosqlite's); when
    another program holds the write lock it goes to aiosqlite's thread, which waits for
    the lock while the loop runs on, and commits once the lock is free."""
    path = tmp_path / "db.sqlite3"

    async def body(s: GameService) -> None:
        info = await started(s, 2)
        threads: list[int] = []

        def where(conn: sqlite3.Connection) -> None:
            threads.append(threading.get_ident())

        await s.store._write(where)
        assert threads == [threading.get_ident()]
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            waiting = asyncio.gather(
                s.store._write(where), s.set_message(info.game_id, "table", info.chat_id, 41)
            )
            loop = asyncio.get_running_loop()
            gaps, last = [], loop.time()
            for _ in range(30):  # the loop turns freely while the write waits for the lock
                await asyncio.sleep(0.01)
                gaps.append(loop.time() - last)
                last = loop.time()
            assert not waiting.done()
            assert max(gaps) < 0.2, max(gaps)
        finally:
            other.execute("COMMIT")
            other.close()
        await asyncio.wait_for(waiting, 10)
        assert len(threads) == 2 and threads[1] != threading.get_ident()
        assert (await s.game(info.game_id)).message("table") == 41
        await s.store._write(where)  # and the next one is back on the loop's thread
        assert threads[2] == threading.get_ident()

    with_service(path, body)

    async def in_memory() -> None:  # no second connection to it: every write goes the old way
        store = await Store.open(":memory:")
        try:
            assert store._hot is None
            assert await store.put_deadline(1, 0, None) is True
        finally:
            await store.close()

    run(in_memory())


def test_hot_writes_leave_the_checkpoints_to_their_own_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hot writes' connection never checkpoints (a checkpoint's fsync would stall the
    loop); the checkpointer's does, off the loop, and starts the WAL file over once it
    has grown, so a steady stream of writes does not grow it for ever."""
    path = tmp_path / "db.sqlite3"
    monkeypatch.setattr(store_module, "CHECKPOINT_EVERY", 0.0)
    monkeypatch.setattr(store_module, "WAL_RESTART_FRAMES", 100)

    async def body(s: GameService) -> None:
        info = await started(s, 2)
        assert s.store._hot is not None
        assert s.store._hot.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
        checkpointer = s.store._checkpointer
        assert checkpointer is not None  # a checkpoint that must wait gives up soon: closing
        assert list(await checkpointer.execute_fetchall("PRAGMA busy_timeout")) == [(1000,)]
        for n in range(4000):
            await s.set_message(info.game_id, "table", info.chat_id, n)
        if s.store._checkpointing is not None:
            await s.store._checkpointing
        wal = Path(str(path) + "-wal").stat().st_size
        # 17 MB with no restart; 0.4 MB between restarts, 8.2 MB seen once on a fast CI
        # machine (the writes outran the checkpointer for a while)
        assert wal < 12_000_000, wal

    with_service(path, body)
    assert db_rows(path, "SELECT max(message_id) FROM messages") == [(3999,)]


def test_a_reader_in_the_way_of_a_wal_restart_does_not_hold_up_the_hot_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program's long read (a backup, a report) keeps a WAL restart from finishing;
    a restart waits for the writer lock meanwhile, so after one gives up none is tried for
    a while and the hot writes stay on the loop's thread."""
    path = tmp_path / "db.sqlite3"
    monkeypatch.setattr(store_module, "CHECKPOINT_EVERY", 0.0)
    monkeypatch.setattr(store_module, "WAL_RESTART_FRAMES", 10)

    async def body(s: GameService) -> int:
        info = await started(s, 2)
        fallbacks = 0
        real = s.store._conn._execute

        def counted(fn: Any, *args: Any) -> Any:
            nonlocal fallbacks
            fallbacks += fn is store_module._batch_transaction
            return real(fn, *args)

        s.store._conn._execute = counted  # type: ignore[method-assign]
        reader = sqlite3.connect(path)
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM games").fetchone() == (1,)
        try:

            async def writes() -> None:
                for n in range(300):
                    await s.set_message(info.game_id, "table", info.chat_id, n)
                    await asyncio.sleep(0.005)  # checkpoints get their turns

            await asyncio.wait_for(writes(), 60)
        finally:
            reader.rollback()
            reader.close()
        assert (await s.game(info.game_id)).message("table") == 299
        return fallbacks

    fallbacks = with_service(path, body)
    assert fallbacks <= 3, fallbacks  # without the backoff: one a second, nearly every write


def test_write_trouble_is_one_error_per_cause_and_one_when_writes_recover(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A full disk (simulated with max_page_count) and a lock another process holds: each
    cause logs ERROR once however many writes fail, naming the cause; writing again logs
    once more. Users only ever saw "Something went wrong", the operator nothing."""
    path = tmp_path / "db.sqlite3"

    async def big_write(s: GameService) -> None:
        async with s.store.transaction() as tx:
            await tx.set_chat_settings(CHAT, '{"x": "' + "x" * 200_000 + '"}', 1.0)

    async def body(s: GameService) -> list[str]:
        await lobby(s, 2)
        async with s.store.reading() as tx:
            pages = await tx.scalar("PRAGMA page_count")
            await tx.scalar(f"PRAGMA max_page_count = {pages}")
            await tx.execute("PRAGMA busy_timeout = 20")
        for _ in range(3):
            with pytest.raises(DatabaseError):
                await big_write(s)
        async with s.store.reading() as tx:
            await tx.scalar("PRAGMA max_page_count = 1000000")
        await big_write(s)
        await big_write(s)
        other = sqlite3.connect(path)
        other.execute("BEGIN EXCLUSIVE")
        try:
            for _ in range(2):
                with pytest.raises(DatabaseError):
                    await big_write(s)
                with pytest.raises(DatabaseError):
                    await s.store.put_deadline(1, 0, 5.0)
        finally:
            other.rollback()
            other.close()
        await s.store.put_deadline(1, 0, 5.0)
        return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]

    with caplog.at_level(logging.ERROR, logger="durak.store"):
        lines = with_service(path, body)
    assert len(lines) == 4, lines
    assert "(disk full)" in lines[0] and "work again" in lines[1]
    assert "(locked)" in lines[2] and "work again after 4 failed" in lines[3]


def test_a_version_3_database_upgrades_to_lobbies(tmp_path: Path) -> None:
    """Migration 4 (lobbies): old seats get ``ready``/``has_left`` 0, old games no cap;
    the cap, /notify_me and a full lobby's start work on the old rows."""
    path = tmp_path / "v3.sqlite3"

    async def schema_3() -> None:
        store = await Store.open(path)
        await store.close()

    with pytest.MonkeyPatch.context() as m:
        m.setattr(store_module, "MIGRATIONS", store_module.MIGRATIONS[:3])
        m.setattr(store_module, "SCHEMA_VERSION", 3)
        run(schema_3())
    assert db_rows(path, "PRAGMA user_version") == [(3,)]
    con = sqlite3.connect(path)
    with con:
        con.execute("INSERT INTO chats (chat_id, updated_at) VALUES (?, 1)", (CHAT,))
        con.execute(
            "INSERT INTO games (chat_id, status, creator_id, rules, created_at, updated_at)"
            " VALUES (?, 'lobby', ?, '{}', 1, 1)",
            (CHAT, user(0)),
        )
        con.execute(
            "INSERT INTO seats (game_id, seat, user_id, name) SELECT game_id, 0, ?, 'Ann'"
            " FROM games",
            (user(0),),
        )
    con.close()

    async def body(s: GameService) -> None:
        kept = await s.lobby(CHAT)
        assert kept is not None and kept.cap is None
        assert [(x.ready, x.left) for x in kept.seats] == [(False, False)]
        capped = await s.set_cap(CHAT, user(0), 3)
        assert capped.cap == 3 and capped.room == 3
        assert await s.toggle_notify(CHAT, user(5)) is True
        assert await s.toggle_notify(CHAT, user(6)) is True
        assert await s.toggle_notify(CHAT, user(5)) is False
        assert await s.subscribers(CHAT) == [user(6)]
        await s.join(CHAT, user(1), "Bob")
        done = await s.join(CHAT, user(2), "Cid")  # full: it starts itself
        assert done.status == "running"
        assert await s.drop_subscriber(user(6)) == 1

    with_service(path, body)
    assert db_rows(path, "PRAGMA user_version") == [(SCHEMA_VERSION,)] == [(7,)]
