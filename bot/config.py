"""Settings from the environment (and ``--help`` that explains them)."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

TOKEN = re.compile(r"^\d{3,20}:[A-Za-z0-9_-]{20,64}$")
SECRET = re.compile(r"^[A-Za-z0-9_-]{1,256}$")

HELP = """\
Run the durak bot (long polling).

Environment:
  DURAK_BOT_TOKEN   the bot token from @BotFather (required), e.g. 123456:AA...
  DURAK_DB          SQLite database file (default: durak.sqlite3 in the working folder)
  DURAK_API_URL     Bot API base URL, for a self-hosted Bot API server or tests
                    (default: Telegram's), e.g. http://127.0.0.1:8081/bot
  DURAK_LOG_LEVEL   DEBUG, INFO (default), WARNING or ERROR

Webhook mode instead of long polling, when DURAK_WEBHOOK_URL is set:
  DURAK_WEBHOOK_URL     the public https URL Telegram posts updates to,
                        e.g. https://bot.example.org/durak (its path is served)
  DURAK_WEBHOOK_SECRET  required with a webhook: 1-256 of A-Z a-z 0-9 _ -;
                        Telegram sends it with every update, others are refused
  DURAK_WEBHOOK_LISTEN  address to listen on (default 0.0.0.0)
  DURAK_WEBHOOK_PORT    port to listen on (default 8080)
"""


class ConfigError(ValueError):
    """A setting is missing or malformed; the message says which and how to fix it."""


@dataclass(frozen=True, slots=True)
class Config:
    token: str
    db_path: str = "durak.sqlite3"
    api_url: str | None = None
    log_level: str = "INFO"
    webhook_url: str | None = None
    webhook_secret: str | None = None
    webhook_listen: str = "0.0.0.0"
    webhook_port: int = 8080

    @property
    def webhook_path(self) -> str:
        """The path part of the public URL: what the local server answers on."""
        if self.webhook_url is None:
            return ""
        rest = self.webhook_url.split("://", 1)[1]
        return rest.partition("/")[2]

    @property
    def file_url(self) -> str | None:
        if self.api_url is None:
            return None
        base = self.api_url.rstrip("/")
        return base[: -len("/bot")] + "/file/bot" if base.endswith("/bot") else base + "/file"


def from_env(env: Mapping[str, str] | None = None) -> Config:
    env = os.environ if env is None else env
    token = env.get("DURAK_BOT_TOKEN", "").strip()
    if not token:
        raise ConfigError("DURAK_BOT_TOKEN is not set: put the token from @BotFather in it")
    if not TOKEN.match(token):
        raise ConfigError("DURAK_BOT_TOKEN does not look like a bot token (digits:letters)")
    level = env.get("DURAK_LOG_LEVEL", "INFO").strip().upper() or "INFO"
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise ConfigError("DURAK_LOG_LEVEL must be DEBUG, INFO, WARNING or ERROR")
    api = env.get("DURAK_API_URL", "").strip() or None
    if api is not None and not re.match(r"^https?://[^\s/]+(/\S*)?$", api):
        raise ConfigError("DURAK_API_URL must be an http(s) URL")
    db = env.get("DURAK_DB", "").strip() or "durak.sqlite3"
    hook = env.get("DURAK_WEBHOOK_URL", "").strip() or None
    secret = env.get("DURAK_WEBHOOK_SECRET", "").strip() or None
    listen = env.get("DURAK_WEBHOOK_LISTEN", "").strip() or "0.0.0.0"
    port_text = env.get("DURAK_WEBHOOK_PORT", "").strip() or "8080"
    if hook is not None:
        if not re.match(r"^https://[^\s/]+(/\S*)?$", hook):
            raise ConfigError("DURAK_WEBHOOK_URL must be an https URL (Telegram requires TLS)")
        if secret is None or not SECRET.match(secret):
            raise ConfigError(
                "DURAK_WEBHOOK_SECRET must be set with a webhook: 1-256 of A-Z a-z 0-9 _ -"
            )
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ConfigError("DURAK_WEBHOOK_PORT must be a port number")
    return Config(
        token=token,
        db_path=db,
        api_url=api,
        log_level=level,
        webhook_url=hook,
        webhook_secret=secret,
        webhook_listen=listen,
        webhook_port=int(port_text),
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bot",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser.parse_args(argv)
