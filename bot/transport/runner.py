"""Runs the application: start, long polling or the webhook, and stopping.

PTB's ``run_polling`` / ``run_webhook`` are replaced by :func:`serve` so that the webhook is
served by :mod:`bot.transport.webhook` (PTB's custom-webhook pattern: updates go on the
application's queue), and so that the bot's own start and stop can be what issue 10 asks of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable

from telegram.error import InvalidToken, NetworkError, TelegramError
from telegram.ext import Application

from ..config import Config
from .webhook import WebhookServer

__all__ = ["ALLOWED_UPDATES", "StartError", "serve"]

log = logging.getLogger(__name__)

ALLOWED_UPDATES = ["message", "callback_query", "my_chat_member"]
#: Telegram's most connections delivering updates to a webhook at once (its default is
#: 40): each carries one update per round trip, so at 80 ms a round trip 40 bound the bot
#: near 500 updates a second (measured with the fake Bot API, BENCHMARKS.md), 100 near 1,250.
WEBHOOK_CONNECTIONS = 100


async def serve(
    app: Application,  # type: ignore[type-arg]
    config: Config,
    stop: asyncio.Event,
    *,
    poll_timeout: int = 10,
) -> None:
    """Start ``app``, take updates until ``stop`` is set, then stop it cleanly."""
    started = False
    try:
        started = await _initialize(app, stop)
    finally:
        if not started:  # PTB's shutdown does nothing for a bot that never got through
            for http in app.bot_data["durak"].http:
                await http.shutdown()
    if not started:
        return
    webhook: WebhookServer | None = None
    try:
        if app.post_init is not None:
            await app.post_init(app)  # a standby waits here until it holds the lease
        if stop.is_set():  # stopped while starting (a standby that never took over)
            return
        await app.start()
        if config.webhook_url:
            assert config.webhook_secret is not None  # from_env requires it
            webhook = WebhookServer(
                app,
                config.webhook_path,
                config.webhook_secret,
                config.webhook_listen,
                config.webhook_port,
                also=app.bot_data["durak"].webapp,
            )
            await webhook.start()
            await app.bot.set_webhook(
                config.webhook_url,
                secret_token=config.webhook_secret,
                allowed_updates=ALLOWED_UPDATES,
                max_connections=WEBHOOK_CONNECTIONS,
            )
            log.info("webhook on %s:%d", config.webhook_listen, config.webhook_port)
        else:
            assert app.updater is not None
            await app.updater.start_polling(
                allowed_updates=ALLOWED_UPDATES,
                timeout=poll_timeout,
                poll_interval=0,
                # an outage is logged by UpdatesRequest (one WARNING, one INFO), not here
                # with a traceback per failed getUpdates
                error_callback=_quiet,
            )
        await stop.wait()
    finally:
        # each step is bounded, so the outbox's drain and the database's close always come
        if webhook is not None:
            await _bounded(webhook.stop(), "the webhook server")
        if app.updater is not None and app.updater.running:
            await _bounded(app.updater.stop(), "polling")
        if app.running:
            await _bounded(app.stop(), "the handlers")
        if app.post_shutdown is not None:
            await app.post_shutdown(app)
        await _bounded(app.shutdown(), "the HTTP clients")


class StartError(Exception):
    """The bot cannot start (e.g. the token is refused): one line for the operator."""


#: Waits between start attempts while the Bot API cannot be reached, then the last one on.
BACKOFF = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)


async def _initialize(app: Application, stop: asyncio.Event) -> bool:  # type: ignore[type-arg]
    """``app.initialize()`` (getMe) until it works, one WARNING per failed attempt; False
    if ``stop`` came first. A refused token is a :class:`StartError`, not retried."""
    attempt = 0
    while not stop.is_set():
        try:
            await app.initialize()
            return True
        except InvalidToken:
            raise StartError("the Bot API refused DURAK_BOT_TOKEN: check the token") from None
        except NetworkError as exc:  # TimedOut included
            wait = BACKOFF[min(attempt, len(BACKOFF) - 1)]
            attempt += 1
            log.warning(
                "cannot reach the Bot API: %s (attempt %d; next in %g s)",
                exc.message or type(exc).__name__,
                attempt,
                wait,
            )
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await stop.wait()
    return False


def _quiet(exc: TelegramError) -> None:
    """PTB's polling error callback: nothing (see UpdatesRequest's outage log)."""


async def _bounded(step: Awaitable[object], what: str, seconds: float = 2.0) -> None:
    try:
        async with asyncio.timeout(seconds):
            await step
    except TimeoutError:
        log.info("stopping: %s did not stop within %g s", what, seconds)
    except Exception as exc:  # stopping goes on: the database must still be closed
        log.info("stopping: %s failed: %s", what, type(exc).__name__)
