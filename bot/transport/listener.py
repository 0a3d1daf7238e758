"""The bot's HTTP listeners (the webhook's server, the Mini App's own in polling mode): what
a port that anyone may reach needs against slow and many connections (issue 26 item 6).

1,100 connections that each sent one header byte a second once took the bot to all 1,024 of
its file descriptors: aiohttp waits for a request's head as long as its keep-alive timeout
(an hour), and accepts every connection it is offered. Here:

- a connection must complete each request's head (request line and headers) within
  :data:`HEAD_TIMEOUT` seconds of opening, or of the answer before (so an idle keep-alive
  connection is closed after as long); a handler reads a body within :data:`BODY_TIMEOUT`;
- at most :func:`connection_cap` connections are open at once (from the open-file limit,
  leaving room for the database, the Bot API's pool and the logs): when one more comes, the
  oldest connection that has not sent a request's head is closed for it; failing that, a
  Mini App page that has not signed in (``spare``); failing that, the oldest idle
  keep-alive connection that is not Telegram's (:meth:`Listener.keep`: closed between two
  updates, it would fail Telegram's next delivery, which Telegram sends again only later);
  the new one is refused only when every open one is in a request or Telegram's.
  A real update, sent whole at once, is in its handler within milliseconds, long before as
  many connections as the cap came after it, so a flood of slow connections costs it
  nothing. A connection whose head has come is never closed for room: its handler runs.
- a page's WebSocket stays in its request for its whole life: the Mini App holds at most
  :func:`held_cap` of them (issue 36 item 1), so :data:`KEPT` connections of the cap are
  always Telegram's and the page's files';
- what a client does wrong (a malformed request, a connection gone in the middle of one) is
  a DEBUG line, never an ERROR with a traceback (issue 36 items 3 and 6).

The listen address defaults to 127.0.0.1: a TLS proxy in front is the documented set-up.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestHandler

__all__ = ["BODY_TIMEOUT", "HEAD_TIMEOUT", "KEPT", "Listener", "connection_cap", "held_cap"]

log = logging.getLogger(__name__)

#: Seconds a connection has to send a request's head (after opening, or after an answer).
HEAD_TIMEOUT = 10.0
#: Seconds a handler waits for a request's body.
BODY_TIMEOUT = 10.0
#: Descriptors the connection cap leaves to everything else (database, Bot API pool, logs).
RESERVED_FDS = 256
#: The cap never goes above this (the Mini App's 10,000 pages and Telegram's 100, with room).
MOST_CONNECTIONS = 16_384
#: Connections the kernel completes before the bot accepts them; asyncio accepts up to this
#: many at once, so the descriptors of connections may pass the cap by as many for a moment.
BACKLOG = 128
#: At most one WARNING a minute while connections are closed or refused for the cap.
WARN_EVERY = 60.0
#: Connections of the cap that no page may hold: Telegram's webhook (100 at once, see
#: bot.transport.runner) and the page's own files, with room to spare.
KEPT = 128

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: Closes one connection that may go for room (a page without initData); False if none.
Spare = Callable[[], bool]


def connection_cap() -> int:
    """Connections open at once: the soft open-file limit less :data:`RESERVED_FDS` (768 at
    the usual 1,024), at least 64, at most :data:`MOST_CONNECTIONS`."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = MOST_CONNECTIONS + RESERVED_FDS
    return max(64, min(soft - RESERVED_FDS, MOST_CONNECTIONS))


def held_cap() -> int:
    """Connections that may stay in a request for long (the Mini App's pages): the cap less
    :data:`KEPT` (640 at the usual 1,024 descriptors), at least half of it."""
    cap = connection_cap()
    return max(cap - KEPT, cap // 2)


class _Refused(asyncio.Protocol):
    """A connection over the cap while every open one is busy: closed at once."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()  # (nothing was written: closed now)


class Listener:
    """An aiohttp application served on ``listen:port`` with the limits above."""

    def __init__(
        self,
        app: web.Application,
        listen: str,
        port: int,
        spare: Spare | None = None,
        **runner: Any,
    ) -> None:
        self._app = app
        self._listen = listen
        self._port = port
        self._spare = spare
        self._runner_args = runner
        self._runner: web.AppRunner | None = None
        self._server: asyncio.AbstractServer | None = None
        self._busy: set[RequestHandler] = set()  # connections inside a request (a page's socket)
        self._kept: set[RequestHandler] = set()  # Telegram's webhook connections (see keep)
        self._new: list[tuple[float, RequestHandler]] = []  # made, not yet connected
        self.cap = 0
        self.closed = 0  # connections closed for the cap (slow or idle ones)
        self.refused = 0  # connections refused: every open one was busy
        self._warned = -WARN_EVERY
        app.middlewares.append(self._in_request)

    async def start(self) -> None:
        self.cap = connection_cap()
        args = {
            "access_log": None,
            "keepalive_timeout": HEAD_TIMEOUT,
            "logger": ClientErrors(log),
            **self._runner_args,
        }
        self._runner = web.AppRunner(self._app, **args)
        await self._runner.setup()
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            self._connection, self._listen, self._port, backlog=BACKLOG
        )

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    @property
    def open_connections(self) -> int:
        server = self._runner.server if self._runner is not None else None
        return 0 if server is None else len(server.connections)

    def _connection(self) -> asyncio.Protocol:
        """The protocol of a new connection: aiohttp's, after making room for it."""
        assert self._runner is not None and self._runner.server is not None
        server = self._runner.server
        # a burst of accepts makes protocols before any is connected (asyncio connects
        # each on the next turn of the loop): those count as well
        now = time.monotonic()
        self._new = [(at, h) for at, h in self._new if h.transport is None and now - at < 1.0]
        live = [h for h in server.connections if _live(h)]
        if len(live) + len(self._new) >= self.cap and not self._make_room(live):
            self.refused += 1
            self._warn()
            return _Refused()
        handler = server()
        self._new.append((now, handler))
        return handler

    def keep(self, request: web.Request) -> None:
        """The request came from Telegram (the webhook's secret was right): its connection
        is never closed for room while it is idle between two updates. (A connection new
        to the set drops the closed ones from it: it stays as small as Telegram's pool.)"""
        protocol = request.protocol
        if protocol not in self._kept:
            self._kept = {h for h in self._kept if _live(h)}
            self._kept.add(protocol)

    def _make_room(self, live: list[RequestHandler]) -> bool:
        """Close one connection for a new one: the oldest that never sent a request's head
        (a slow one), else a page without initData, else the oldest idle keep-alive
        connection that is not Telegram's (its client connects again when it has something
        to send)."""
        idle = [h for h in live if h not in self._busy and h not in self._kept and not _started(h)]
        victim = next((h for h in idle if not _served(h)), None)
        if victim is None and self._spare is not None and self._spare():
            self.closed += 1
            self._warn()
            return True
        victim = victim or next(iter(idle), None)
        if victim is None:
            return False
        self.closed += 1
        self._warn()
        victim.force_close()
        if victim.transport is not None:
            victim.transport.abort()
        return True

    def _warn(self) -> None:
        now = time.monotonic()
        if now - self._warned >= WARN_EVERY:
            self._warned = now
            log.warning(
                "%d connections open on %s:%d (the cap): %d slow, idle or not signed-in ones"
                " closed, %d refused so far",
                self.cap,
                self._listen,
                self._port,
                self.closed,
                self.refused,
            )

    @web.middleware
    async def _in_request(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        protocol = request.protocol
        self._busy.add(protocol)
        try:
            return await handler(request)
        finally:
            self._busy.discard(protocol)


def _live(handler: RequestHandler) -> bool:
    transport = handler.transport
    return transport is not None and not transport.is_closing()


# aiohttp says of a connection only whether it is open; these two read its request queue
# and count (RequestHandler's slots in aiohttp 3, which pyproject keeps below 4; a test
# checks they are there): our middleware sees a request only a turn or two of the loop
# after its head came, and the connection must not be closed for room in between.
def _started(handler: RequestHandler) -> bool:
    """A request's head has come: it waits for its handler, or is in it."""
    return bool(getattr(handler, "_messages", ())) or bool(
        getattr(handler, "_request_in_progress", False)
    )


def _served(handler: RequestHandler) -> bool:
    """It has sent a request's head before: an idle keep-alive connection."""
    return bool(getattr(handler, "_request_count", 0))


class ClientErrors(logging.LoggerAdapter):  # type: ignore[type-arg]
    """aiohttp's server log: a malformed request or a connection lost in the middle of one
    is the client's doing and anyone may do it, so it is one DEBUG line; only an error
    of the bot's own handlers keeps its ERROR and traceback."""

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info")
        if isinstance(exc, HttpProcessingError | ConnectionError) and level > logging.DEBUG:
            kwargs["exc_info"] = None
            msg = f"{msg} ({type(exc).__name__})"
            level = logging.DEBUG
        super().log(level, msg, *args, **kwargs)
