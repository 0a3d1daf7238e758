"""The Mini App's HTTP side: the static page (content-hashed, cache headers, a strict
Content-Security-Policy) and the WebSocket at ``<path>/ws``, with its limits.

Served by the bot's own aiohttp server: the webhook's in webhook mode (:meth:`WebApp.install`),
a listener of its own in polling mode (:meth:`WebApp.start`), plain HTTP behind the TLS
proxy. Each connection proves who it is with initData (:mod:`.auth`) in its first message
and gets only its own seat's view; it is closed when it sends too much, too fast, or
nothing for :attr:`Limits.idle` seconds. Which pages may be held open at all, and how often
one user may sign in, is :mod:`.gate`'s (issue 36): nothing a page sends produces more
than one log line per address a minute, and none with a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import mimetypes
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aiohttp import WSMsgType, web

from ..flows.context import display_name
from ..transport import listener
from ..ui.i18n import pick
from . import protocol
from .auth import AuthError, WebAppUser, validate_init_data
from .bridge import Bridge, Target
from .gate import Buckets, Gate, Held, Throttle, source_of
from .registry import Bucket, Conn, Registry

__all__ = ["LIMITS", "Limits", "Static", "WebApp"]

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
TELEGRAM_JS = "https://telegram.org/js/telegram-web-app.js"


@dataclass(frozen=True, slots=True)
class Limits:
    """The server's limits (README, "The Mini App")."""

    per_user: int = 3  # open pages of one user at once
    message: int = protocol.MAX_MESSAGE  # bytes of one message from a page
    burst: float = 20.0  # messages at once ...
    rate: float = 5.0  # ... then a second; more closes the connection
    idle: float = 15 * 60.0  # seconds without a message from the page: closed
    auth: float = 3.0  # seconds to send initData after connecting
    per_source: int = 8  # connections without initData yet from one address
    tries: float = 10.0  # initData checks of one user at once ...
    tries_rate: float = 1 / 6  # ... then one every 6 s
    total: int = 10_000  # open pages of everyone (and never more than listener.held_cap)
    close: float = 2.0  # seconds a page has to answer our closing of its connection


LIMITS = Limits()

#: A refused upgrade's status: too many connections without initData from its address,
#: or every page held has signed in (the page connects again by itself a little later).
REFUSED = {"source": 429, "full": 503}
GONE = (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED)
WHY = {
    "source": "too many connections without initData from there",
    "full": "the pages' cap is reached",
}

CSP = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self' https://telegram.org",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'self' https://web.telegram.org https://*.telegram.org",
    ]
)
SAFE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
IMPORT = re.compile(r"""(from\s+|import\s*\(\s*)(["'])\./([A-Za-z0-9_-]+\.js)\2""")


class Static:
    """The page's files, read once: each asset named with its content's hash
    (``app.js?v=1a2b3c4d``; a module's imports of its siblings rewritten to theirs)."""

    def __init__(self, base: str, folder: Path = STATIC) -> None:
        self.base = base
        raw = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
        self.files: dict[str, bytes] = {}
        self.hashes: dict[str, str] = {}
        for name in sorted(raw):
            if name != "index.html":
                self._load(name, raw, ())
        index = raw["index.html"].decode()
        index = re.sub(r"\{\{(\w[\w.-]*)\}\}", lambda m: self.url(m.group(1)), index)
        self.index = index.replace("[[base]]", base).encode()

    def _load(self, name: str, raw: dict[str, bytes], seen: tuple[str, ...]) -> str:
        if name in self.hashes:
            return self.hashes[name]
        if name in seen or name not in raw:
            raise ValueError(f"static: {name} is missing or imports itself")
        data = raw[name]
        if name.endswith(".js"):
            text = data.decode()

            def hashed(m: re.Match[str]) -> str:
                dep, quote = m.group(3), m.group(2)
                version = self._load(dep, raw, (*seen, name))
                return f"{m.group(1)}{quote}./{dep}?v={version}{quote}"

            data = IMPORT.sub(hashed, text).encode()
        self.files[name] = data
        self.hashes[name] = hashlib.sha256(data).hexdigest()[:12]
        return self.hashes[name]

    def url(self, name: str) -> str:
        if name == "telegram-web-app.js":
            return TELEGRAM_JS
        return f"{self.base}/static/{name}?v={self.hashes[name]}"


def _type(name: str) -> str:
    if name.endswith(".js"):
        return "text/javascript"
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


class WebApp:
    """The Mini App: its routes under ``path``, the connections, their limits."""

    def __init__(
        self,
        path: str,
        token: str,
        bridge: Bridge,
        registry: Registry,
        max_age: float = 86400.0,
        limits: Limits = LIMITS,
        *,
        forwarded: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``forwarded``: the header the proxy in front sets to the client's address
        (``DURAK_WEBAPP_FORWARDED_HEADER``; unset, the peer's address counts); ``clock``:
        the minute of the log lines and of the sign-in limit (tests give their own)."""
        self.path = "/" + path.strip("/") if path.strip("/") else ""
        self.token = token
        self.bridge = bridge
        self.registry = registry
        self.max_age = max_age
        self.limits = limits
        self.forwarded = forwarded
        self.static = Static(self.path)
        self.gate = Gate(limits.total, limits.per_source)
        self.tries = Buckets(limits.tries, limits.tries_rate, clock)
        self.quiet = Throttle(60.0, clock)
        self._listener: listener.Listener | None = None

    def install(self, app: web.Application) -> None:
        """Add the page's routes to an aiohttp application (the webhook's, or our own)."""
        self.gate.cap = min(self.limits.total, listener.held_cap())
        app.router.add_get(self.path or "/", self._index)
        if self.path:
            app.router.add_get(self.path + "/", self._index)
        app.router.add_get(self.path + "/static/{name}", self._asset)
        app.router.add_get(self.path + "/ws", self._socket)

    async def start(self, listen: str, port: int) -> None:
        """Polling mode: a listener of the Mini App's own."""
        server = web.Application(client_max_size=64 * 1024)
        self.install(server)
        # the webhook's limits on slow and surplus connections (issue 26 item 6)
        self._listener = listener.Listener(
            server, listen, port, self.spare, shutdown_timeout=1.0, lingering_time=0
        )
        await self._listener.start()
        log.info("mini app on %s:%d", listen, port)

    def spare(self) -> bool:
        """The listener needs room: the oldest page without initData is closed."""
        return self.gate.spare()

    async def stop(self) -> None:
        """Close every page (they reconnect: to this process after a restart, or to the
        standby that takes over), then the listener."""
        for conn in self.registry.all():
            with contextlib.suppress(Exception):
                await conn.ws.close(code=1012, message=b"restart")
        listener, self._listener = self._listener, None
        if listener is not None:
            await listener.stop()
        await self.bridge.close()

    # ---- HTTP --------------------------------------------------------------------

    async def _index(self, request: web.Request) -> web.Response:
        return web.Response(
            body=self.static.index,
            content_type="text/html",
            charset="utf-8",
            headers={**SAFE_HEADERS, "Cache-Control": "no-cache"},
        )

    async def _asset(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        data = self.static.files.get(name)
        if data is None:
            return web.Response(status=404, headers=SAFE_HEADERS)
        fresh = request.query.get("v") == self.static.hashes[name]
        cache = "public, max-age=31536000, immutable" if fresh else "no-cache"
        return web.Response(
            body=data,
            headers={**SAFE_HEADERS, "Content-Type": _type(name), "Cache-Control": cache},
        )

    # ---- the WebSocket -------------------------------------------------------------

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        source = source_of(request, self.forwarded)
        held = self.gate.enter(source, request.protocol.force_close)
        if isinstance(held, str):  # refused before the upgrade: it costs nothing held
            self._refused(source if held == "source" else "", WHY[held])
            headers = {"Retry-After": "5", "Connection": "close"}
            return web.Response(status=REFUSED[held], headers=headers)
        ws = web.WebSocketResponse(
            heartbeat=30.0,
            max_msg_size=self.limits.message * 4,
            autoping=True,
            timeout=self.limits.close,
        )
        conn: Conn | None = None
        try:
            try:
                await ws.prepare(request)
            except ConnectionError:  # gone before its upgrade (closed for room, or its own)
                return ws
            conn = await self._hello(ws, held)
            if conn is not None:
                await self._serve(conn)
        finally:
            self.gate.leave(held)
            if conn is not None:
                if self.registry.remove(conn):  # his last page of the game
                    self.bridge.closed(conn.user_id, conn.game_id)
                self.registry.count_watchers(conn.game_id)
                await conn.stop()
            if ws.prepared and not ws.closed:
                await ws.close()
        return ws

    async def _refuse(self, ws: web.WebSocketResponse, code: str, lang: str = "en") -> None:
        with contextlib.suppress(Exception):
            await ws.send_str(protocol.dumps(protocol.error(code, lang)))
            await ws.close(code=4000 + (401 if code == "unauthorized" else 400))

    def _refused(self, source: str, why: str) -> None:
        """One INFO line per address a minute (``""``: per minute, whatever the address),
        never the initData itself."""
        if self.quiet.allow(source):
            log.info(
                "webapp: refused a connection from %s: %s (more within a minute are not logged)",
                source or "anywhere",
                why,
            )

    async def _hello(self, ws: web.WebSocketResponse, held: Held) -> Conn | None:
        """The first message: initData, checked; the game the page may show."""
        signed = await self._signed_in(ws, held)
        if signed is None:
            return None
        user, game = signed
        if not self.tries.take(user.user_id):  # before any question to the database or Telegram
            self._refused(held.source, "too many sign-ins of one user")
            await self._refuse(ws, "too_many_attempts", pick(user.language))
            return None
        lang = await self.bridge.language(user)
        if lang == "en" and user.language:
            lang = pick(user.language)
        found = await self.bridge.find(user, game)
        if not isinstance(found, Target):
            await self._refuse(ws, found, lang)
            return None
        conn = Conn(
            ws,
            user.user_id,
            found.info.game_id,
            found.seat,
            lang,
            Bucket(self.limits.burst, self.limits.rate),
            mode=found.mode,
            name=display_name(user),
        )
        if not self.registry.add(conn):
            await self._refuse(ws, "too_many_connections", lang)
            return None
        conn.start()
        conn.send(protocol.dumps({"texts": {**protocol.texts(lang), **protocol.more_texts(lang)}}))
        await self.bridge.opened(conn, found)
        log.debug("webapp: user %d opened game %d", user.user_id, conn.game_id)
        return conn

    async def _signed_in(
        self, ws: web.WebSocketResponse, held: Held
    ) -> tuple[WebAppUser, int | None] | None:
        """The user the first message's initData proves, within :attr:`Limits.auth`
        seconds, and the game it names; else the connection is refused (one log line per
        address a minute)."""
        try:
            msg = await ws.receive(timeout=self.limits.auth)
        except TimeoutError:
            msg = None
        first = None
        if msg is not None and msg.type == WSMsgType.TEXT:
            with contextlib.suppress(protocol.BadMessage):
                first = protocol.parse(msg.data)
        if not isinstance(first, protocol.Init):
            if msg is None or msg.type not in GONE:  # (dropped for room: not logged)
                self._refused(held.source, "no initData" if msg is None else "not initData")
            await self._refuse(ws, "unauthorized")
            return None
        self.gate.signed(held)
        try:
            return validate_init_data(first.init_data, self.token, self.max_age), first.game
        except AuthError as e:
            self._refused(held.source, str(e))  # never the initData itself
            await self._refuse(ws, "unauthorized")
            return None

    async def _serve(self, conn: Conn) -> None:
        ws = conn.ws
        while not ws.closed:
            try:
                msg = await ws.receive(timeout=self.limits.idle)
            except TimeoutError:
                conn.send(protocol.dumps(protocol.error("idle", conn.lang)))
                await asyncio.sleep(0.05)
                await ws.close(code=1000, message=b"idle")
                return
            if msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED):
                return
            if msg.type == WSMsgType.ERROR:  # e.g. over aiohttp's own size cap: closed
                return
            if not conn.bucket.take():
                await ws.send_str(protocol.dumps(protocol.error("flood", conn.lang)))
                await ws.close(code=1008, message=b"flood")
                return
            if msg.type != WSMsgType.TEXT:
                conn.send(protocol.dumps(protocol.error("bad_message", conn.lang)))
                continue
            try:
                incoming = protocol.parse(msg.data)
            except protocol.BadMessage as e:
                conn.send(protocol.dumps(protocol.error(e.code, conn.lang)))
                continue
            if isinstance(incoming, protocol.Init):
                conn.send(protocol.dumps(protocol.error("bad_message", conn.lang)))
                continue
            try:
                await self.bridge.handle(conn, incoming)
            except Exception:
                log.exception("webapp: a page's message failed")
                conn.send(protocol.dumps(protocol.error("database_error", conn.lang)))
