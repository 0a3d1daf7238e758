"""Fixtures for the bot's tests: the fake Telegram server, and a log watch."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from tests.fake_telegram.fixtures import aio, fake_telegram, make_fake_telegram

from .harness import ErrorLog

__all__ = ["aio", "errors", "fake_telegram", "make_fake_telegram"]


@pytest.fixture
def errors() -> Iterator[ErrorLog]:
    """Every log record at ERROR or above while the test runs (there must be none)."""
    handler = ErrorLog()
    root = logging.getLogger()
    root.addHandler(handler)
    yield handler
    root.removeHandler(handler)
