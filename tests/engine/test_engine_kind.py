"""Which engine the tests run: ``.ci/run`` runs tests/engine once more against the
mypyc-compiled engine, on two workers, with ``DURAK_TEST_ENGINE=compiled`` set; each
worker then checks that it imported the compiled build, not the source beside it."""

from __future__ import annotations

import os

import pytest

from durak.selfplay import engine_kind


def test_the_engine_is_the_one_asked_for() -> None:
    wanted = os.environ.get("DURAK_TEST_ENGINE")
    if wanted is None:
        pytest.skip("DURAK_TEST_ENGINE is not set (only .ci/run's compiled run sets it)")
    kind = engine_kind()
    assert (kind != "pure Python") == (wanted == "compiled"), f"asked for {wanted}, ran {kind}"
