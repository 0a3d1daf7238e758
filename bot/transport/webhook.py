"""The webhook's HTTP server, on aiohttp (python-telegram-bot's custom-webhook pattern).

PTB's own webhook server (tornado) reads a request's whole body before its handler looks at
the secret, and compares the secret with ``!=``: anyone who can reach the port could make the
bot hold a 90 MiB body in memory per request, and time the comparison. Here the secret header
is checked first, in constant time (:func:`hmac.compare_digest`), and a request without it is
answered 403 before a byte of its body is read; a body over :data:`MAX_BODY` (Telegram's
updates are a few KiB) is answered 413, at once when its Content-Length says so, and one not
sent within :data:`~.listener.BODY_TIMEOUT` 408; slow and surplus connections are
:class:`~.listener.Listener`'s. A good update is put on the application's update queue, as
PTB's ``Updater`` would.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from typing import Protocol

from aiohttp import web
from telegram import Update
from telegram.ext import Application

from .listener import BODY_TIMEOUT, Listener
from .request import dropped, slim_update


class Mounted(Protocol):
    """Routes served beside the webhook (the Mini App), whose connections that may go
    for room (``spare``: its pages without initData) go first."""

    def install(self, app: web.Application) -> None: ...

    def spare(self) -> bool: ...


__all__ = ["MAX_BODY", "SECRET_HEADER", "WebhookServer"]

log = logging.getLogger(__name__)

#: The largest update body accepted (Telegram's are a few KiB; a message is at most 4 KiB).
MAX_BODY = 1024 * 1024
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


class WebhookServer:
    """Serves ``POST /<path>`` on ``listen:port`` and feeds ``app``'s update queue."""

    def __init__(
        self,
        app: Application,  # type: ignore[type-arg]
        path: str,
        secret: str,
        listen: str = "127.0.0.1",
        port: int = 8080,
        also: Mounted | None = None,
    ) -> None:
        self._app = app
        self._path = "/" + path.lstrip("/")
        self._secret = secret.encode()
        self._listen = listen
        self._port = port
        self.listener: Listener | None = None
        self._also = also

    async def start(self) -> None:
        server = web.Application(client_max_size=MAX_BODY)
        server.router.add_post(self._path, self._handle)
        if self._also is not None:  # the Mini App, on the same server
            self._also.install(server)
        # lingering_time=0: a refused request's unread body is not read to its end
        spare = self._also.spare if self._also is not None else None
        self.listener = Listener(server, self._listen, self._port, spare, lingering_time=0)
        await self.listener.start()

    async def stop(self) -> None:
        listener, self.listener = self.listener, None
        if listener is not None:
            await listener.stop()

    async def _handle(self, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, self._secret):
            return _refuse(403)
        if self.listener is not None:  # Telegram's connection: never closed for room
            self.listener.keep(request)
        if request.content_length is not None and request.content_length > MAX_BODY:
            return _refuse(413)
        try:
            async with asyncio.timeout(BODY_TIMEOUT):  # (a body sent a byte at a time)
                body = await request.read()  # aiohttp stops at client_max_size
        except web.HTTPRequestEntityTooLarge:
            return _refuse(413)
        except TimeoutError:
            return _refuse(408)
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:  # (a deeply nested body: RecursionError)
            log.warning("webhook: a request with the right secret but no JSON (%s)", _name(exc))
            return web.Response(status=400)
        if not isinstance(data, dict) or type(data.get("update_id")) is not int:
            log.warning("webhook: a request with the right secret but no update in it")
            return web.Response(status=400)
        slim_update(data)  # a pressed button's message as getUpdates hands it on
        try:
            update = Update.de_json(data, self._app.bot)
        except Exception as exc:  # whatever PTB raises on input it did not expect: one
            dropped(data["update_id"], exc)  # line, and 200, so that Telegram does not
            return web.Response()  # send it again and again (issue 26 item 5)
        await self._app.update_queue.put(update)
        return web.Response()


def _name(exc: BaseException) -> str:
    return type(exc).__name__


def _refuse(status: int) -> web.Response:
    """Answer now and close: the rest of the body is never read."""
    return web.Response(status=status, headers={"Connection": "close"})
