"""Webhook mode: updates posted to the bot's own HTTP endpoint, secret checked."""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest

from bot.app import build_application
from bot.config import Config, ConfigError, from_env
from bot.outbox import SendLimits
from tests.fake_telegram import RateLimits
from tests.fake_telegram.fixtures import async_test

from .harness import SCALE

TOKEN = "123456789:" + "A" * 35


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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


@async_test
async def test_the_bot_serves_a_webhook_and_checks_its_secret(make_fake_telegram, tmp_path):
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
    await app.initialize()
    await app.post_init(app)
    await app.start()
    await app.updater.start_webhook(
        listen=config.webhook_listen,
        port=config.webhook_port,
        url_path=config.webhook_path,
        secret_token=config.webhook_secret,
        webhook_url=config.webhook_url,
    )
    try:
        hook = f"http://127.0.0.1:{port}/hook"
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
    finally:
        await app.updater.stop()
        await app.stop()
        await app.post_shutdown(app)
        await app.shutdown()
