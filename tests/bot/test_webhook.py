"""Webhook mode: updates posted to the bot's own HTTP endpoint, secret checked."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import ClassVar

import httpx
import pytest

from bot.app import build_application
from bot.config import Config, ConfigError, from_env
from bot.transport import topics, webhook
from bot.transport.outbox import SendLimits
from bot.transport.request import slim_update
from bot.transport.runner import serve
from bot.transport.webhook import MAX_BODY
from bot.ui import callbacks as cb
from bot.ui import render
from tests.fake_telegram import RateLimits
from tests.fake_telegram.fixtures import async_test

from .harness import SCALE, free_port

TOKEN = "123456789:" + "A" * 35


def test_webhook_settings_are_checked():
    base = {"DURAK_BOT_TOKEN": TOKEN}
    assert from_env(base).webhook_url is None
    with pytest.raises(ConfigError, match="SECRET"):
        from_env({**base, "DURAK_WEBHOOK_URL": "https://example.org/hook"})
    with pytest.raises(ConfigError, match="https"):
        from_env(
            {**base, "DURAK_WEBHOOK_URL": "http://example.org/hook", "DURAK_WEBHOOK_SECRET": "s"}
        )
    with pytest.raises(ConfigError, match="SECRET"):
        from_env(
            {**base, "DURAK_WEBHOOK_URL": "https://x.org/h", "DURAK_WEBHOOK_SECRET": "no spaces"}
        )
    config = from_env(
        {
            **base,
            "DURAK_WEBHOOK_URL": "https://x.org/durak/hook",
            "DURAK_WEBHOOK_SECRET": "s3cret_-",
            "DURAK_WEBHOOK_PORT": "8443",
        }
    )
    assert config.webhook_path == "durak/hook" and config.webhook_port == 8443


def update(update_id: int, chat, user, text: str) -> dict:
    return {
        "update_id": update_id,
        "message": {
            "message_id": 1000 + update_id,
            "date": int(time.time()),
            "chat": {"id": chat.id, "type": chat.type, "title": chat.title},
            "from": {"id": user.id, "is_bot": False, "first_name": user.first_name},
            "text": text,
            "entities": [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}],
        },
    }


@contextlib.asynccontextmanager
async def webhook_bot(make_fake_telegram, tmp_path):
    """The bot in webhook mode as ``python -m bot`` runs it (bot.runner.serve)."""
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    user = server.add_user("Ann", started=True)
    group = server.add_group("Friends", [user])
    port = free_port()
    config = Config(
        token=server.token,
        db_path=str(tmp_path / "db.sqlite3"),
        api_url=server.base_url,
        webhook_url="https://durak.example.org/hook",
        webhook_secret="s3cret",
        webhook_listen="127.0.0.1",
        webhook_port=port,
    )
    app = build_application(config, SendLimits().scaled(SCALE))
    stop = asyncio.Event()
    running = asyncio.create_task(serve(app, config, stop))
    await server.wait_for(lambda: server.request_count("setWebhook") == 1, 20, what="setWebhook")
    try:
        yield server, group, user, f"http://127.0.0.1:{port}/hook", port
    finally:
        stop.set()
        await running


@async_test
async def test_the_bot_serves_a_webhook_and_checks_its_secret(make_fake_telegram, tmp_path):
    async with webhook_bot(make_fake_telegram, tmp_path) as (server, group, user, hook, _):
        body = json.dumps(update(1, group, user, "/help"))
        headers = {"Content-Type": "application/json"}
        async with httpx.AsyncClient() as client:
            wrong = await client.post(
                hook, content=body, headers={**headers, "X-Telegram-Bot-Api-Secret-Token": "nope"}
            )
            missing = await client.post(hook, content=body, headers=headers)
            assert wrong.status_code == 403 and missing.status_code == 403
            right = await client.post(
                hook, content=body, headers={**headers, "X-Telegram-Bot-Api-Secret-Token": "s3cret"}
            )
            assert right.status_code == 200
        reply = await server.wait_for_bot_message(group, after=0, contains="/newgame")
        assert reply is not None
        # only the one update with the right secret was handled
        assert sum("/newgame" in (m.plain_text or "") for m in server.messages(group)) == 1
        assert server.request_count("setWebhook") == 1


async def raw_post(port: int, secret: str | None, length: int, sent: int) -> bytes:
    """POST claiming ``length`` body bytes, send ``sent`` of them, then read the answer."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = f"POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n"
    if secret is not None:
        head += f"X-Telegram-Bot-Api-Secret-Token: {secret}\r\n"
    writer.write((head + "Content-Type: application/json\r\n\r\n").encode())
    writer.write(b"x" * sent)
    await writer.drain()
    try:
        async with asyncio.timeout(10):  # a hang, not a speed: the body is never completed
            return await reader.readline()
    finally:
        writer.close()


@async_test
async def test_a_request_without_the_secret_is_refused_before_its_body(
    make_fake_telegram, tmp_path
):
    """A 90 MiB body announced, 64 KiB of it sent: the 403 comes without waiting for the
    rest (PTB's tornado server read the whole body first)."""
    async with webhook_bot(make_fake_telegram, tmp_path) as (_, _, _, _, port):
        for secret in (None, "nope", "s3cre", "s3cret-"):
            line = await raw_post(port, secret, 90 * 1024 * 1024, 64 * 1024)
            assert line.startswith(b"HTTP/1.1 403"), (secret, line)


@async_test
async def test_a_body_over_a_mebibyte_is_refused(make_fake_telegram, tmp_path):
    async with webhook_bot(make_fake_telegram, tmp_path) as (_, _, _, _hook, port):
        line = await raw_post(port, "s3cret", MAX_BODY + 1, 64 * 1024)
        assert line.startswith(b"HTTP/1.1 413"), line

        # a body without a Content-Length (chunked) is cut at the same size
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /hook HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            b"X-Telegram-Bot-Api-Secret-Token: s3cret\r\n\r\n"
        )
        chunk = b" " * 65536
        for _ in range(MAX_BODY // len(chunk) + 1):
            writer.write(b"10000\r\n" + chunk + b"\r\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        async with asyncio.timeout(10):
            line = await reader.readline()
        writer.close()
        assert line.startswith(b"HTTP/1.1 413"), line


def test_the_secret_is_compared_in_constant_time(monkeypatch):
    import bot.transport.webhook as webhook

    calls = []

    def spy(a, b):
        calls.append((a, b))
        return False

    monkeypatch.setattr(webhook.hmac, "compare_digest", spy)
    server = webhook.WebhookServer(object(), "hook", "s3cret")  # type: ignore[arg-type]

    class Request:
        headers: ClassVar = {"X-Telegram-Bot-Api-Secret-Token": "guess"}

    answer = asyncio.run(server._handle(Request()))  # type: ignore[arg-type]
    assert answer.status == 403 and calls == [(b"guess", b"s3cret")]


@async_test
async def test_a_press_through_the_webhook_is_read_where_it_was_pressed(
    make_fake_telegram, tmp_path, monkeypatch
):
    """The webhook slims a press as getUpdates does, and the handler still reads where it
    was pressed: a lobby button in a group's topic with no lobby is "no lobby" (had the
    pressed message's chat been lost, it would be "bad callback")."""
    slimmed: list[dict] = []

    def slim(update: dict) -> None:
        slim_update(update)
        slimmed.append(update)

    monkeypatch.setattr(webhook, "slim_update", slim)
    async with webhook_bot(make_fake_telegram, tmp_path) as (server, group, user, hook, _):
        message = update(7, group, user, "/newgame")["message"]
        message.update(message_thread_id=5, is_topic_message=True)
        press = {
            "update_id": 8,
            "callback_query": {
                "id": "q-webhook",
                "from": message["from"],
                "chat_instance": "x",
                "data": cb.lobby("j", 1),
                "message": message,
            },
        }
        headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": "s3cret"}
        async with httpx.AsyncClient() as client:
            posted = await client.post(hook, content=json.dumps(press), headers=headers)
        assert posted.status_code == 200
        await server.wait_for(
            lambda: server.request_count("answerCallbackQuery") == 1, 10, what="the answer"
        )
    [seen] = slimmed  # PTB got the press without a message to build
    assert "message" not in seen["callback_query"]
    assert seen["callback_query"][topics.PRESSED]["thread"] == 5
    [answer] = server.requests("answerCallbackQuery")
    assert answer.params["callback_query_id"] == "q-webhook"
    assert answer.params["text"] == render.refusal("no_lobby")
