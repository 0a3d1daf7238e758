"""BotApi, the hot path's calls without PTB's Bot: the body it posts, and that every answer
Telegram may give maps to the very exception (class and message) PTB's own path raised."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Conflict,
    EndPointNotFound,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)

from bot.transport.outbox import retry_after_seconds
from bot.transport.request import AiohttpRequest, BotApi, NotSentError
from tests.fake_telegram.fixtures import async_test

from .test_request import read_request, serve

ME = {"id": 1, "is_bot": True, "first_name": "Durak", "username": "durak_bot"}


def http(status: int, body: bytes) -> bytes:
    return (
        f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def error(status: int, description: str, **parameters: Any) -> tuple[int, bytes]:
    payload: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if parameters:
        payload["parameters"] = parameters
    return status, json.dumps(payload).encode()


@asynccontextmanager
async def bot_on(
    answers: list[tuple[int, bytes]], times: int = 2
) -> AsyncIterator[tuple[Bot, list[bytes]]]:
    """An initialized bot on AiohttpRequest whose server answers getMe, then ``answers`` in
    turn, each ``times`` times (the direct call's, PTB's); yields it and the bodies posted."""
    bodies: list[bytes] = []
    queue = [a for a in answers for _ in range(times)]

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            line, _, body = await read_request(reader)
            if not line:
                return
            if "/getMe " in line:
                writer.write(http(200, json.dumps({"ok": True, "result": ME}).encode()))
            else:
                bodies.append(body)
                writer.write(http(*queue.pop(0)))
            await writer.drain()

    async with serve(handler) as (url, _):
        bot = Bot("1:T", base_url=f"{url}/bot", request=AiohttpRequest(read_timeout=0.5))
        async with bot:
            yield bot, bodies


ANSWERS = [
    error(429, "Too Many Requests: retry after 7", retry_after=7),
    error(400, "Bad Request: group chat was upgraded", migrate_to_chat_id=-1002),
    error(400, "Bad Request: message is not modified: specified new message content"),
    error(400, "Bad Request: message to edit not found"),
    error(403, "Forbidden: bot was blocked by the user"),
    error(401, "Unauthorized"),
    error(409, "Conflict: terminated by other getUpdates request"),
    error(502, "Bad Gateway"),
    error(500, "Internal Server Error"),
    error(400, "Bad Request: odd", foo=1),  # unknown parameters are quoted
    (500, b"<html>no JSON</html>"),
    (400, b"{}"),  # no description
    (200, b"not JSON at all"),
]


@pytest.mark.parametrize("reply", ANSWERS, ids=lambda a: f"{a[0]}:{a[1][:40]!r}")
@async_test
async def test_every_error_is_ptbs_own(reply: tuple[int, bytes]) -> None:
    async with bot_on([reply]) as (bot, _):
        api = BotApi(bot)
        assert api.direct
        with pytest.raises(TelegramError) as direct:
            await api.call("editMessageText", {"chat_id": 5, "message_id": 1, "text": "x"})
        with pytest.raises(TelegramError) as ptb:
            await bot.do_api_request(
                "edit_message_text", api_kwargs={"chat_id": 5, "message_id": 1, "text": "x"}
            )
    assert type(direct.value) is type(ptb.value)
    assert str(direct.value) == str(ptb.value)
    if isinstance(direct.value, RetryAfter):
        assert isinstance(ptb.value, RetryAfter)
        assert retry_after_seconds(direct.value) == retry_after_seconds(ptb.value) == 7
    if isinstance(direct.value, ChatMigrated):
        assert isinstance(ptb.value, ChatMigrated)
        assert direct.value.new_chat_id == ptb.value.new_chat_id == -1002


def test_the_error_classes_the_outbox_tells_apart_are_among_them() -> None:
    """The parametrized cases above cover each class the outbox and the handlers act on."""
    kinds = {429: RetryAfter, 403: Forbidden, 401: InvalidToken, 409: Conflict}
    assert {status for status, _ in ANSWERS} >= set(kinds) | {400, 500, 502, 200}
    assert issubclass(BadRequest, NetworkError)  # why the outbox checks BadRequest first


@async_test
async def test_a_404_is_endpoint_not_found_as_do_api_request_said_and_an_answer_invalid_token():
    reply = error(404, "Not Found")
    async with bot_on([reply, reply]) as (bot, _):
        api = BotApi(bot)
        with pytest.raises(EndPointNotFound) as direct:
            await api.call("sendMessage", {"chat_id": 5, "text": "x"})
        with pytest.raises(EndPointNotFound) as ptb:
            await bot.do_api_request("send_message", api_kwargs={"chat_id": 5, "text": "x"})
        assert str(direct.value) == str(ptb.value)
        with pytest.raises(InvalidToken) as answered:
            await api.answer("q1", {"text": "hi"})
        with pytest.raises(InvalidToken) as named:
            await bot.answer_callback_query("q1", text="hi")
        assert type(answered.value) is type(named.value) is InvalidToken
        assert str(answered.value) == str(named.value)


@async_test
async def test_a_timeout_and_a_refused_connection_are_ptbs_and_ours() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            line, _, _ = await read_request(reader)
            if not line:
                return
            if "/getMe " in line:
                writer.write(http(200, json.dumps({"ok": True, "result": ME}).encode()))
                await writer.drain()  # and nothing more: every other request times out

    async with serve(silent) as (url, _):
        bot = Bot("1:T", base_url=f"{url}/bot", request=AiohttpRequest(read_timeout=0.2))
        async with bot:
            with pytest.raises(TimedOut) as direct:
                await BotApi(bot).call("sendMessage", {"chat_id": 5, "text": "x"})
            with pytest.raises(TimedOut) as ptb:
                await bot.do_api_request("send_message", api_kwargs={"chat_id": 5, "text": "x"})
            assert type(direct.value) is type(ptb.value) and str(direct.value) == str(ptb.value)
            port = url.rsplit(":", 1)[1]
    # the server is gone: nothing listens on its port now
    closed = Bot("1:T", base_url=f"http://127.0.0.1:{port}/bot", request=AiohttpRequest())
    with pytest.raises(NotSentError) as refused:
        await BotApi(closed).call("sendMessage", {"chat_id": 5, "text": "x"})
    with pytest.raises(NotSentError) as ptb_refused:
        await closed.do_api_request("send_message", api_kwargs={"chat_id": 5, "text": "x"})
    assert str(refused.value) == str(ptb_refused.value)
    await closed.request.shutdown()


@async_test
async def test_the_body_is_the_bot_apis_json_and_the_result_comes_back_as_json() -> None:
    sent = {"message_id": 7, "date": 1, "chat": {"id": 5, "type": "private"}, "text": "hé ♠"}
    ok = (200, json.dumps({"ok": True, "result": sent}).encode())
    keyboard = InlineKeyboardMarkup([[InlineKeyboardButton("6♠", callback_data="1g.1.1.c1")]])
    async with bot_on([ok, (200, b'{"ok": true, "result": true}')], times=1) as (bot, bodies):
        api = BotApi(bot)
        result = await api.call(
            "sendMessage",
            {"chat_id": 5, "text": "hé ♠", "reply_markup": keyboard, "message_thread_id": None},
        )
        assert result == sent  # JSON, no Message made of it
        assert await api.answer("q1", {"text": "Dealt!", "show_alert": None}) is None
    posted = json.loads(bodies[0])
    assert posted == {  # native JSON; None left out as PTB leaves it out
        "chat_id": 5,
        "text": "hé ♠",
        "reply_markup": {"inline_keyboard": [[{"text": "6♠", "callback_data": "1g.1.1.c1"}]]},
    }
    assert json.loads(bodies[1]) == {"callback_query_id": "q1", "text": "Dealt!"}


def test_a_bot_on_another_request_class_goes_through_ptb() -> None:
    assert not BotApi(Bot("1:T")).direct  # PTB's default httpx request
    assert BotApi(Bot("1:T", request=AiohttpRequest())).direct
