"""Webhook delivery: once setWebhook names a URL, pending updates are POSTed to the bot.

As Telegram does: each update is one POST of its JSON with the secret token in the
``X-Telegram-Bot-Api-Secret-Token`` header, at most ``max_connections`` (setWebhook's
parameter, 40 by default, 1-100) in flight at once, taken in order; an update whose POST
fails or is not answered 2xx goes back to the front of the queue and is sent again after a
pause (Telegram retries too, for a while). The server's ``call_delay`` holds each POST that
long before it is sent, as a real network's latency would.

The URL that setWebhook was given must be ``https`` (the bot's settings insist), and nobody
serves TLS on the test's loopback: set :attr:`FakeTelegram.webhook_target` to the address the
bot listens on, as a reverse proxy in front of the bot would forward it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import TYPE_CHECKING

import aiohttp

from .updates import PendingUpdate

if TYPE_CHECKING:
    from .server import FakeTelegram

__all__ = ["DEFAULT_MAX_CONNECTIONS", "WebhookDelivery"]

_LOGGER = logging.getLogger(__name__)

DEFAULT_MAX_CONNECTIONS = 40
#: After a failed delivery, the pause before the update is offered again.
RETRY_PAUSE = 0.1
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


class WebhookDelivery:
    """One webhook's delivery loop; :meth:`start` it, :meth:`stop` it (deleteWebhook)."""

    def __init__(self, server: FakeTelegram, url: str, secret: str, max_connections: int) -> None:
        self._server = server
        self.url = url
        self._secret = secret
        self._slots = asyncio.Semaphore(max_connections)
        self._task: asyncio.Task[None] | None = None
        self._posts: set[asyncio.Task[None]] = set()
        self.delivered = 0
        self.failed = 0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="webhook delivery")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        updates = self._server.updates
        headers = {SECRET_HEADER: self._secret, "Content-Type": "application/json"}
        connector = aiohttp.TCPConnector(limit=0)  # the semaphore bounds the connections
        async with aiohttp.ClientSession(connector=connector, headers=headers) as session:
            try:
                while True:
                    await self._slots.acquire()  # first: a failed update goes back in front
                    update = updates.pop()
                    while update is None:
                        await updates.wait_pushed()
                        update = updates.pop()
                    post = asyncio.get_running_loop().create_task(self._post(session, update))
                    self._posts.add(post)
                    post.add_done_callback(self._posted)
            finally:
                for post in self._posts:
                    post.cancel()
                await asyncio.gather(*self._posts, return_exceptions=True)

    def _posted(self, post: asyncio.Task[None]) -> None:
        self._posts.discard(post)
        self._slots.release()

    async def _post(self, session: aiohttp.ClientSession, update: PendingUpdate) -> None:
        server = self._server
        try:
            if server.call_delay > 0:
                await asyncio.sleep(server.call_delay)
            async with session.post(self.url, data=json.dumps(update.payload)) as answer:
                await answer.read()
                ok = 200 <= answer.status < 300
        except (aiohttp.ClientError, OSError) as exc:
            _LOGGER.info("webhook delivery of update %d failed: %s", update.update_id, exc)
            ok = False
        except asyncio.CancelledError:  # deleteWebhook or the server's stop: not delivered
            server.updates.put_back(update)
            raise
        if ok:
            self.delivered += 1
            server.updates.confirmed += 1
        else:
            self.failed += 1
            await asyncio.sleep(RETRY_PAUSE)
            server.updates.put_back(update)
        server._notify()  # a test may wait for the delivery (FakeTelegram.wait_for)
