"""pytest fixtures for the fake Telegram server, without pytest-asyncio.

A test gets an ``asyncio.Runner`` (fixture ``aio``) whose event loop also runs the fake
server, and drives async code with ``aio.run(coro)`` or the :func:`async_test` decorator::

    from tests.fake_telegram.fixtures import async_test

    @async_test
    async def test_something(fake_telegram):
        alice = fake_telegram.add_user("Alice")
        ...

Register the fixtures by importing ``aio``, ``fake_telegram`` and ``make_fake_telegram``
in a conftest.py (as ``tests/fake_telegram/conftest.py`` does), or with
``pytest_plugins = ["tests.fake_telegram.fixtures"]`` in the rootdir's conftest.py (pytest
rejects ``pytest_plugins`` in non-root conftest files).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any

import pytest

from .server import FakeTelegram

FakeTelegramFactory = Callable[..., Awaitable[FakeTelegram]]


@pytest.fixture
def aio() -> Iterator[asyncio.Runner]:
    """One event loop for the whole test (fixtures and test body share it)."""
    with asyncio.Runner() as runner:
        yield runner


@pytest.fixture
def make_fake_telegram(aio: asyncio.Runner) -> Iterator[FakeTelegramFactory]:
    """``server = await make_fake_telegram(**FakeTelegram kwargs)``; stopped at teardown."""
    servers: list[FakeTelegram] = []

    async def make(**kwargs: Any) -> FakeTelegram:
        server = await FakeTelegram(**kwargs).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        aio.run(server.stop())


@pytest.fixture
def fake_telegram(aio: asyncio.Runner) -> Iterator[FakeTelegram]:
    """A started server with default settings (real Telegram limits and timeouts)."""
    server = aio.run(FakeTelegram().start())
    yield server
    aio.run(server.stop())


def async_test(
    fn: Callable[..., Coroutine[Any, Any, None]],
) -> Callable[..., None]:
    """Run an ``async def`` test on the ``aio`` fixture's loop (requested automatically)."""
    signature = inspect.signature(fn)
    wants_runner = "aio" in signature.parameters

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        runner: asyncio.Runner = kwargs["aio"] if wants_runner else kwargs.pop("aio")
        runner.run(fn(*args, **kwargs))

    if not wants_runner:
        parameters = [
            *signature.parameters.values(),
            inspect.Parameter("aio", inspect.Parameter.KEYWORD_ONLY),
        ]
        signature = signature.replace(parameters=parameters)
    wrapper.__signature__ = signature  # type: ignore[attr-defined]
    return wrapper
