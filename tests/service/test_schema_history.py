"""Each schema version a backend has shipped stays what it was.

A database deployed at version k holds the schema that version k's migrations
made; the migrations after k assume it. So a fresh database migrated to version k
must still get exactly that schema, on SQLite and on PostgreSQL: it is kept, one
file a version, in ``tests/service/schemas/``. A new migration adds a version and
its file (written by ``python -m tests.service.test_schema_history``, which writes
only the files missing and never changes a shipped one).
"""

from __future__ import annotations

import re
import sqlite3
import sys
from pathlib import Path

import pytest

from durak.store import postgres
from durak.store import sqlite as sqlite_store
from tests.dbaccess import db_rows

from .helpers import run

SCHEMAS = Path(__file__).parent / "schemas"

_PG_CATALOG = (
    "SELECT table_name, column_name, data_type, is_nullable, column_default"
    " FROM information_schema.columns WHERE table_schema = current_schema()"
    " ORDER BY table_name, ordinal_position",
    "SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname",
    "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint"
    " WHERE connamespace = current_schema()::regnamespace ORDER BY 1, 2",
    "SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1",
    "SELECT proname, prosrc FROM pg_proc WHERE pronamespace = current_schema()::regnamespace"
    " ORDER BY 1",
    "SELECT version FROM durak_schema",
)


def _sql_text(sql: str | None) -> str:
    """A statement as SQLite keeps it, without comments and runs of blanks."""
    return re.sub(r"\s+", " ", re.sub(r"--[^\n]*", "", sql or "")).strip()


def sqlite_schema(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        lines = []
        found = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        for kind, name, table, sql in conn.execute(found).fetchall():
            lines.append(f"{kind} {name} on {table}: {_sql_text(sql)}")
            if kind == "table":
                lines += [f"  column {r}" for r in conn.execute(f"PRAGMA table_xinfo({name})")]
        for pragma in ("user_version", "application_id"):
            lines.append(f"{pragma} {conn.execute(f'PRAGMA {pragma}').fetchone()[0]}")
    finally:
        conn.close()
    return "\n".join(lines) + "\n"


def postgres_schema(url: str) -> str:
    return "".join(
        "".join(f"{tuple(r)}\n" for r in db_rows(url, query)) + "\n" for query in _PG_CATALOG
    )


def _at_version(backend: object, version: int, where: str | Path) -> None:
    """A new database at ``where`` migrated to ``version`` of ``backend`` only."""

    async def opened() -> None:
        store = await backend.Store.open(where)  # type: ignore[attr-defined]
        await store.close()

    with pytest.MonkeyPatch.context() as m:
        m.setattr(backend, "MIGRATIONS", backend.MIGRATIONS[:version])  # type: ignore[attr-defined]
        m.setattr(backend, "SCHEMA_VERSION", version)
        run(opened())


@pytest.mark.parametrize("version", range(1, sqlite_store.SCHEMA_VERSION + 1))
def test_a_sqlite_version_keeps_its_schema(tmp_path: Path, version: int) -> None:
    path = tmp_path / "db.sqlite3"
    _at_version(sqlite_store, version, path)
    assert sqlite_schema(path) == (SCHEMAS / f"sqlite-{version}.txt").read_text()


@pytest.mark.parametrize("version", range(1, postgres.SCHEMA_VERSION + 1))
def test_a_postgres_version_keeps_its_schema(pg_db: str, version: int) -> None:
    _at_version(postgres, version, pg_db)
    assert postgres_schema(pg_db) == (SCHEMAS / f"postgres-{version}.txt").read_text()


def main() -> int:
    """Write the schema file of each version that has none yet (both backends)."""
    import tempfile

    from tests.dbaccess import create_database
    from tests.pgcluster import Cluster

    SCHEMAS.mkdir(exist_ok=True)
    for version in range(1, sqlite_store.SCHEMA_VERSION + 1):
        target = SCHEMAS / f"sqlite-{version}.txt"
        if not target.exists():
            with tempfile.TemporaryDirectory() as folder:
                _at_version(sqlite_store, version, Path(folder) / "db.sqlite3")
                target.write_text(sqlite_schema(Path(folder) / "db.sqlite3"))
            print("wrote", target)
    missing = [
        v
        for v in range(1, postgres.SCHEMA_VERSION + 1)
        if not (SCHEMAS / f"postgres-{v}.txt").exists()
    ]
    if missing:
        with Cluster() as cluster:
            for version in missing:
                url = create_database(cluster.url)
                _at_version(postgres, version, url)
                target = SCHEMAS / f"postgres-{version}.txt"
                target.write_text(postgres_schema(url))
                print("wrote", target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
