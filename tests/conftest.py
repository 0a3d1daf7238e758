"""Fixtures every layer may use: a throwaway PostgreSQL cluster and test databases.

``db`` runs a test once on a SQLite file and once on a fresh PostgreSQL
database. Without PostgreSQL here the PostgreSQL half is skipped with the
reason (also printed at the top and bottom of the run); with ``CI=true`` a
missing server fails the run instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dbaccess import Db, create_database, drop_database
from tests.pgcluster import Cluster, unavailable

_REASON = unavailable()
_IN_CI = os.environ.get("CI") == "true"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The ``long`` tests first (a whole game in browsers, a killed or frozen process: tens
    of seconds each), the rest in their order. With ``-n 4`` each worker takes the next
    test when it is free (``--maxschedchunk=1`` in pyproject.toml), so the long ones start
    at once on all workers and the workers end together, instead of one of them starting
    a minute-long test when the others are done. Every worker collects the same order, as
    xdist requires."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def pytest_report_header() -> str:
    if _REASON is None:
        return "postgresql: a throwaway cluster will be started for the PostgreSQL tests"
    return f"postgresql: NOT AVAILABLE, its tests are skipped: {_REASON}"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _REASON is not None:
        terminalreporter.write_line(
            f"PostgreSQL tests were skipped: {_REASON}", yellow=True, bold=True
        )


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """One cluster for the whole run (fsync off: tests kill clients, not the server)."""
    if _REASON is not None:
        if _IN_CI:
            pytest.fail(f"CI must run the PostgreSQL tests: {_REASON}", pytrace=False)
        pytest.skip(f"PostgreSQL is not available: {_REASON}")
    with Cluster() as cluster:
        yield cluster


@pytest.fixture
def pg_db(pg_cluster: Cluster) -> Iterator[str]:
    """A fresh, empty database on the test cluster; its URL. Dropped afterwards."""
    url = create_database(pg_cluster.url)
    yield url
    drop_database(url)


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Db:
    """A fresh, empty database of each kind: a SQLite file path, or a PostgreSQL URL."""
    if request.param == "sqlite":
        return tmp_path / "db.sqlite3"
    url: str = request.getfixturevalue("pg_db")
    return url
