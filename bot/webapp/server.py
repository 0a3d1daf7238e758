"""The Mini App's HTTP side: the static page (content-hashed, cache headers, a strict
Content-Security-Policy) and the WebSocket at ``<path>/ws``, with its limits.

Served by the bot's own aiohttp server: the webhook's in webhook mode (:meth:`WebApp.install`),
a listener of its own in polling mode (:meth:`WebApp.start`), plain HTTP behind the TLS
proxy. Each connection proves who it is with initData (:mod:`.auth`) in its first message
and gets only its own seat's view; it is closed when it sends too much, too fast, or
nothing for :data:`IDLE` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import mimetypes
import re
from dataclasses import dataclass
from pathlib import Path

from aiohttp import WSMsgType, web

from ..flows.context import display_name
from ..transport.listener import Listener
from ..ui.i18n import pick
from . import protocol
from .auth import AuthError, validate_init_data
from .bridge import Bridge, Target
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
    auth: float = 10.0  # seconds to send initData after connecting
    total: int = 10_000  # open pages of everyone


LIMITS = Limits()

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
    ) -> None:
        self.path = "/" + path.strip("/") if path.strip("/") else ""
        self.token = token
        self.bridge = bridge
        self.registry = registry
        self.max_age = max_age
        self.limits = limits
        self.static = Static(self.path)
        self._listener: Listener | None = None
        self._handlers: set[asyncio.Task[object]] = set()

    def install(self, app: web.Application) -> None:
        """Add the page's routes to an aiohttp application (the webhook's, or our own)."""
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
        self._listener = Listener(server, listen, port, shutdown_timeout=1.0, lingering_time=0)
        await self._listener.start()
        log.info("mini app on %s:%d", listen, port)

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
        ws = web.WebSocketResponse(
            heartbeat=30.0, max_msg_size=self.limits.message * 4, autoping=True
        )
        await ws.prepare(request)
        conn: Conn | None = None
        try:
            conn = await self._hello(ws)
            if conn is not None:
                await self._serve(conn)
        finally:
            if conn is not None:
                if self.registry.remove(conn):  # his last page of the game
                    self.bridge.closed(conn.user_id, conn.game_id)
                self.registry.count_watchers(conn.game_id)
                await conn.stop()
            if not ws.closed:
                await ws.close()
        return ws

    async def _refuse(self, ws: web.WebSocketResponse, code: str, lang: str = "en") -> None:
        with contextlib.suppress(Exception):
            await ws.send_str(protocol.dumps(protocol.error(code, lang)))
            await ws.close(code=4000 + (401 if code == "unauthorized" else 400))

    async def _hello(self, ws: web.WebSocketResponse) -> Conn | None:
        """The first message: initData, checked; the game the page may show."""
        try:
            msg = await ws.receive(timeout=self.limits.auth)
        except TimeoutError:
            await self._refuse(ws, "unauthorized")
            return None
        if msg.type != WSMsgType.TEXT:
            await self._refuse(ws, "unauthorized")
            return None
        try:
            first = protocol.parse(msg.data)
        except protocol.BadMessage:
            first = None
        if not isinstance(first, protocol.Init):
            await self._refuse(ws, "unauthorized")
            return None
        try:
            user = validate_init_data(first.init_data, self.token, self.max_age)
        except AuthError as e:
            log.info("webapp: refused a connection: %s", e)  # never the initData itself
            await self._refuse(ws, "unauthorized")
            return None
        lang = await self.bridge.language(user)
        if lang == "en" and user.language:
            lang = pick(user.language)
        if self.registry.count() >= self.limits.total:
            await self._refuse(ws, "too_many_connections", lang)
            return None
        found = await self.bridge.find(user, first.game)
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
