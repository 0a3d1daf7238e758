"""The SQL both stores share: ``$n`` for SQLite, and one migration for both backends."""

from __future__ import annotations

import sqlite3

import pytest

from durak.service import GameService
from durak.store import migrations, postgres
from durak.store import sqlite as sqlite_store
from durak.store.sql import POSTGRES, SQLITE, Dialect, SqlTx, to_sqlite
from tests.dbaccess import Db, db_rows, is_pg

from .helpers import CHAT, lobby, with_service


@pytest.mark.parametrize(
    ("given", "wanted"),
    [
        ("SELECT 1", "SELECT 1"),
        ("SELECT $1, $2", "SELECT ?1, ?2"),
        ("VALUES ($9, $9, $10, $11)", "VALUES (?9, ?9, ?10, ?11)"),
        ("SELECT ? FROM t WHERE a = ?", "SELECT ? FROM t WHERE a = ?"),
        ("SELECT '$1', $1", "SELECT '$1', ?1"),
        ("SELECT 'it''s $2', $2", "SELECT 'it''s $2', ?2"),
        ('SELECT "$3" FROM t WHERE x = $3', 'SELECT "$3" FROM t WHERE x = ?3'),
        ("SELECT $1 -- not $2\n, $2", "SELECT ?1 -- not $2\n, ?2"),
        ("SELECT '{}' || $1", "SELECT '{}' || ?1"),
    ],
)
def test_dollar_parameters_become_sqlite_numbered_ones(given: str, wanted: str) -> None:
    assert to_sqlite(given) == wanted


def test_the_rewritten_parameters_bind_by_number_in_sqlite() -> None:
    conn = sqlite3.connect(":memory:")
    try:
        sql = to_sqlite("SELECT $2, '$1', $1, $2")
        assert conn.execute(sql, ("a", "b")).fetchone() == ("b", "$1", "a", "b")
    finally:
        conn.close()


def test_each_backend_keeps_its_numbering_of_the_same_steps() -> None:
    """SQLite's versions 1-4 are the four steps; PostgreSQL's version 1 is the first
    two (it came when SQLite was at version 2), 2 and 3 one step each."""
    names = [m.__name__ for m in sqlite_store.MIGRATIONS]
    assert names == [f"sqlite: {s.__name__}" for s in migrations.STEPS]
    first, *rest = migrations.STEPS
    assert [m.__name__ for m in postgres.MIGRATIONS] == [
        f"postgres: {first.__name__} + {rest[0].__name__}",
        *(f"postgres: {s.__name__}" for s in rest[1:]),
    ]
    assert sqlite_store.SCHEMA_VERSION == 7 and postgres.SCHEMA_VERSION == 6


def test_one_new_step_is_the_next_version_of_both_backends(
    db: Db, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Registering a step (as the file's next ``@step`` does) migrates a database of
    either backend from its present version to the next, with the dialect's spelling."""
    with_service(db, lambda s: lobby(s, 2))
    seen: list[Dialect] = []

    async def notes(tx: SqlTx, d: Dialect) -> None:
        seen.append(d)
        await tx.execute(f"ALTER TABLE chats ADD COLUMN note {d.text} NOT NULL DEFAULT 'new'")

    steps = [*migrations.STEPS, notes]
    backend = postgres if is_pg(db) else sqlite_store
    dialect = POSTGRES if is_pg(db) else SQLITE
    before = backend.SCHEMA_VERSION
    monkeypatch.setattr(backend, "MIGRATIONS", migrations.versions(dialect, steps))
    monkeypatch.setattr(backend, "SCHEMA_VERSION", before + 1)

    async def body(s: GameService) -> None:
        info = await s.lobby(CHAT)
        assert info is not None and len(info.seats) == 2  # the data kept

    with_service(db, body)
    assert seen == [dialect]  # the new step alone ran, once
    version = "SELECT version FROM durak_schema" if is_pg(db) else "PRAGMA user_version"
    assert db_rows(db, version) == [(before + 1,)]
    assert db_rows(db, "SELECT note FROM chats") == [("new",)]
