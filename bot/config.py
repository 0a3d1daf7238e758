"""The environment: the process's configuration from DURAK_* variables (and ``--help``
that explains them). Not a chat's options (the service's ChatSettings) nor /settings."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

TOKEN = re.compile(r"^\d{3,20}:[A-Za-z0-9_-]{20,64}$")
SECRET = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
HEADER = re.compile(r"^[A-Za-z0-9-]{1,64}$")

HELP = """\
Run the durak bot (long polling).

Environment:
  DURAK_BOT_TOKEN   the bot token from @BotFather (required), e.g. 123456:AA...
  DURAK_DB          SQLite database file (default: durak.sqlite3 in the working folder),
                    or postgresql://user:password@host:port/db (active and standby bots)
  DURAK_API_URL     Bot API base URL, for a self-hosted Bot API server or tests
                    (default: Telegram's), e.g. http://127.0.0.1:8081/bot
  DURAK_LOG_LEVEL   DEBUG, INFO (default), WARNING or ERROR
  DURAK_LEASE_TIMEOUT  PostgreSQL: seconds the active bot's heartbeat (one a
                    second) may be late before a standby ends its session and
                    takes over (default 5, from 2 to 60; the same in every process);
                    the active bot sends nothing once its own heartbeat is this
                    late, less a second

Telegram's budget (every minute the bot logs at INFO what it spent):
  DURAK_GLOBAL_PER_SECOND  sends+edits a second for the whole bot (default 28,
                           under Telegram's documented 30)
  DURAK_GLOBAL_MODE        adaptive (default): start there, raise the cap by 1/s a
                           busy minute without a bot-wide 429, halve it on one;
                           fixed: keep it
  DURAK_GLOBAL_CEILING     adaptive never goes above this (default 100)
  DURAK_MAX_IN_FLIGHT      Bot API requests the outbox keeps in flight (default 64;
                           at Telegram's ~50 ms a request, 64 carry ~1,000 a second)

Webhook mode instead of long polling, when DURAK_WEBHOOK_URL is set:
  DURAK_WEBHOOK_URL     the public https URL Telegram posts updates to,
                        e.g. https://bot.example.org/durak (its path is served)
  DURAK_WEBHOOK_SECRET  required with a webhook: 1-256 of A-Z a-z 0-9 _ -;
                        Telegram sends it with every update, others are refused
  DURAK_WEBHOOK_LISTEN  address to listen on (default 127.0.0.1: the TLS proxy in
                        front; 0.0.0.0 in a container)
  DURAK_WEBHOOK_PORT    port to listen on (default 8080)

The table as a Telegram Mini App, when DURAK_WEBAPP_URL is set:
  DURAK_WEBAPP_URL         the public https URL of the page, e.g.
                           https://bot.example.org/durak/app (its path is served;
                           the WebSocket is <path>/ws); on the webhook's server in
                           webhook mode, else on a listener of its own:
  DURAK_WEBAPP_LISTEN      address to listen on in polling mode (default 127.0.0.1:
                           the TLS proxy in front; 0.0.0.0 in a container)
  DURAK_WEBAPP_PORT        port to listen on in polling mode (default 8081)
  DURAK_WEBAPP_MAX_AGE     seconds a page's initData stays valid (default 86400)
  DURAK_WEBAPP_SHORT_NAME  the Mini App's short name in @BotFather (/newapp): the
                           group's table links to t.me/<bot>/<name>?startapp=<game>
                           (without it, to the bot's main Mini App if it has one)
  DURAK_WEBAPP_FORWARDED_HEADER  the header your TLS proxy sets to the client's
                           address, X-Real-IP or X-Forwarded-For (its last address is
                           taken): pages that have not signed in yet are limited per
                           address. Set it only if the proxy sets (or overwrites) it;
                           unset, the peer's address counts (behind a proxy: the proxy's)
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
    webhook_listen: str = "127.0.0.1"
    webhook_port: int = 8080
    global_per_second: float = 28.0
    global_mode: str = "adaptive"
    global_ceiling: float = 100.0
    max_in_flight: int = 64
    webapp_url: str | None = None
    webapp_listen: str = "127.0.0.1"
    webapp_port: int = 8081
    webapp_max_age: float = 86400.0
    webapp_short_name: str | None = None
    webapp_forwarded_header: str | None = None
    lease_timeout: float = 5.0

    @property
    def webapp_path(self) -> str:
        """The path part of the Mini App's public URL, without a trailing slash."""
        if self.webapp_url is None:
            return ""
        rest = self.webapp_url.split("://", 1)[1].split("?", 1)[0].split("#", 1)[0]
        return "/" + rest.partition("/")[2].strip("/")

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
    listen = env.get("DURAK_WEBHOOK_LISTEN", "").strip() or "127.0.0.1"
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
    per_second = _number(env, "DURAK_GLOBAL_PER_SECOND", 28.0, 1.0, 1000.0)
    mode = env.get("DURAK_GLOBAL_MODE", "").strip().lower() or "adaptive"
    if mode not in ("fixed", "adaptive"):
        raise ConfigError("DURAK_GLOBAL_MODE must be fixed or adaptive")
    ceiling = _number(env, "DURAK_GLOBAL_CEILING", max(100.0, per_second), per_second, 1000.0)
    in_flight = int(_number(env, "DURAK_MAX_IN_FLIGHT", 64, 1, 1024, whole=True))
    app_url = env.get("DURAK_WEBAPP_URL", "").strip() or None
    if app_url is not None and not re.match(r"^https://[^\s/?#]+(/[^\s?#]*)?$", app_url):
        raise ConfigError(
            "DURAK_WEBAPP_URL must be an https URL without query (Telegram requires TLS)"
        )
    app_listen = env.get("DURAK_WEBAPP_LISTEN", "").strip() or "127.0.0.1"
    app_port = int(_number(env, "DURAK_WEBAPP_PORT", 8081, 1, 65535, whole=True))
    max_age = _number(env, "DURAK_WEBAPP_MAX_AGE", 86400.0, 10.0, 30 * 86400.0)
    short = env.get("DURAK_WEBAPP_SHORT_NAME", "").strip() or None
    if short is not None and not re.match(r"^[A-Za-z0-9_]{3,30}$", short):
        raise ConfigError(
            "DURAK_WEBAPP_SHORT_NAME must be the app's short name (3-30 of A-Z a-z 0-9 _)"
        )
    forwarded = env.get("DURAK_WEBAPP_FORWARDED_HEADER", "").strip() or None
    if forwarded is not None and not HEADER.match(forwarded):
        raise ConfigError(
            "DURAK_WEBAPP_FORWARDED_HEADER must be a header's name, e.g. X-Real-IP or"
            " X-Forwarded-For"
        )
    lease_timeout = _number(env, "DURAK_LEASE_TIMEOUT", 5.0, 2.0, 60.0)
    return Config(
        token=token,
        db_path=db,
        api_url=api,
        log_level=level,
        webhook_url=hook,
        webhook_secret=secret,
        webhook_listen=listen,
        webhook_port=int(port_text),
        global_per_second=per_second,
        global_mode=mode,
        global_ceiling=ceiling,
        max_in_flight=in_flight,
        webapp_url=app_url,
        webapp_listen=app_listen,
        webapp_port=app_port,
        webapp_max_age=max_age,
        webapp_short_name=short,
        webapp_forwarded_header=forwarded,
        lease_timeout=lease_timeout,
    )


def check_database(config: Config) -> None:
    """The database's folder exists and can be written (before any network call): else a
    start fails minutes later, on the first write, or after a restart loop."""
    if "://" in config.db_path:  # a PostgreSQL URL: its server decides
        return
    path = os.path.abspath(config.db_path)
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        raise ConfigError(f"DURAK_DB: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(f"DURAK_DB: the folder {folder} is not writable")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise ConfigError(f"DURAK_DB: the file {path} is not writable")


def _number(
    env: Mapping[str, str], name: str, default: float, low: float, high: float, whole: bool = False
) -> float:
    """A number setting within [low, high]; empty means the default."""
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text) if whole else float(text)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:  # also refuses nan
        kind = "a whole number" if whole else "a number"
        raise ConfigError(f"{name} must be {kind} from {low:g} to {high:g}")
    return value


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bot",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser.parse_args(argv)
