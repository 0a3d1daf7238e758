"""Issue 36 item 3: an unauthenticated log flood. A first WebSocket frame of 1,900 nested
brackets (under 4 KiB) raised RecursionError past ``protocol.parse``: an ERROR with a
30-line traceback per connection, 6.4 MiB of log in 5 s from one client. Whatever comes
from outside is one refusal, never a traceback, and one address gets at most one log line
a minute (the minute on a clock the test moves)."""

from __future__ import annotations

import asyncio
import logging

import aiohttp
import pytest

from bot.webapp import protocol, sign_init_data
from bot.webapp.registry import QUEUE, Bucket, Conn
from tests.fake_telegram.fixtures import async_test

from ..harness import WEBAPP_PATH
from .client import a_game, init_data, page

BRACKETS = "[" * 1900 + "]" * 1900  # 3,800 bytes
#: The loggers a page's input can reach.
OURS = ("bot.webapp", "bot.transport", "aiohttp")


class Clock:
    """A monotonic clock that moves only when the test moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_deep_nesting_is_a_bad_message_not_a_recursion_error():
    for text in (BRACKETS, "[" * 1900, '{"move": ' + BRACKETS + ', "version": 1}'):
        with pytest.raises(protocol.BadMessage):
            protocol.parse(text)
    with pytest.raises(protocol.BadMessage):
        protocol.parse("{" * 2000)


async def bad_pages(port: int, token: str) -> None:
    """Every first frame a page could send wrong, one connection each."""
    forged = sign_init_data("999999:" + "Z" * 35, {"id": 5, "first_name": "E"})
    frames: list[tuple[aiohttp.WSMsgType, bytes]] = [
        (aiohttp.WSMsgType.TEXT, BRACKETS.encode()),
        (aiohttp.WSMsgType.TEXT, b'{"init": ' + BRACKETS.encode() + b"}"),
        (aiohttp.WSMsgType.TEXT, b"\xff\xfe not utf-8"),
        (aiohttp.WSMsgType.BINARY, b"\x00\x01"),
        (aiohttp.WSMsgType.TEXT, b"x" * 20_000),  # over the frame limit
        (aiohttp.WSMsgType.TEXT, b'{"init": "' + forged.encode() + b'"}'),
        (aiohttp.WSMsgType.TEXT, b'{"init": 5}'),
    ]
    for opcode, data in frames:
        async with page(port, None) as p:
            await p.ws.send_frame(data, opcode)
            while "closed" not in await p.next(10):
                pass


async def bad_requests(port: int) -> None:
    """Malformed HTTP to the same listener: aiohttp logged each as an ERROR."""
    for raw in (
        b"GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
        b"GET " + WEBAPP_PATH.encode() + b"/ws HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
        b"GET /" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    ):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(raw)
        await writer.drain()
        async with asyncio.timeout(10):  # a hang, not a speed
            await reader.read()
        writer.close()


@async_test
async def test_a_flood_of_bad_first_frames_is_one_log_line_a_minute(
    make_fake_telegram, tmp_path, errors, caplog
):
    caplog.set_level(logging.DEBUG)
    clock = Clock()
    async with a_game(make_fake_telegram, tmp_path, clock=clock) as g:
        start = len(caplog.records)
        for _ in range(5):
            await bad_pages(g.port, g.server.token)
            await bad_requests(g.port)
        flood = caplog.records[start:]
        assert not [r for r in flood if r.exc_info], "a traceback from outside input"
        lines = [r for r in flood if r.levelno >= logging.INFO and r.name.startswith(OURS)]
        assert len(lines) == 1, [r.getMessage() for r in lines]
        assert "refused a connection from 127.0.0.1" in lines[0].getMessage()
        # a minute later, one more line for the same address
        clock.now += 61
        mark = len(caplog.records)
        await bad_pages(g.port, g.server.token)
        again = [
            r
            for r in caplog.records[mark:]
            if r.levelno >= logging.INFO and r.name.startswith(OURS)
        ]
        assert len(again) == 1, [r.getMessage() for r in again]
        # the game goes on: a real page still gets its state
        async with page(g.port, {"init": init_data(g.server, g.users[0])}) as p:
            assert (await p.state())["you"] == 0
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_a_page_that_does_not_read_is_closed_once_without_a_line_at_info(caplog):
    """Every push to a page whose queue is full wrote an INFO line and began another close."""
    caplog.set_level(logging.DEBUG)
    closes = []

    class Socket:
        async def close(self, **kw: object) -> bool:
            closes.append(kw)
            return True

    conn = Conn(Socket(), 7, 1, 0, "en", Bucket(20, 5))  # type: ignore[arg-type]
    for _ in range(QUEUE + 50):  # (its writer never started: nothing is read)
        conn.send("{}")
    await asyncio.sleep(0)
    assert len(closes) == 1
    assert not [r for r in caplog.records if r.levelno >= logging.INFO]
