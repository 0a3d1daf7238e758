"""The bot's HTTP client: python-telegram-bot's ``BaseRequest`` on aiohttp.

PTB's default ``HTTPXRequest`` spends about 1 ms of CPU per Bot API call in httpx, httpcore,
h11 and anyio; a busy bot makes several calls per player action, so the HTTP client was most
of the bot's CPU (BENCHMARKS.md). The hand-written HTTP/1.1 client that replaced it was fast
but got HTTP wrong in the corners (an interim ``103`` read as the answer, a stale ``408`` on
an idle connection read as the next answer, a body delimited by the close truncated, no proxy,
no second address). aiohttp is as fast (its parser is llhttp, in C) and gets those right;
the session honours ``HTTPS_PROXY``/``HTTP_PROXY``/``NO_PROXY`` (``trust_env``) as PTB's
default client does, and connects with Happy Eyeballs (RFC 8305), so a black-holed first
address (a broken IPv6 route) costs a quarter of a second, not the whole outage.

Errors map onto PTB's: a timeout is :class:`~telegram.error.TimedOut`, anything the network or
the peer did wrong is :class:`~telegram.error.NetworkError`. When the request certainly never
left (no free connection in time, no connection could be made) the error is also a
:class:`NotSent`, which is what lets the outbox send it again: a request that may have reached
the server is never sent twice by this module, except ``getUpdates`` (reading updates twice
is harmless: the offset decides what comes back).

On PostgreSQL only the lease's holder may send: ``fence``, when set, is awaited once a
request has its connection and again as its first bytes are written (aiohttp writes
them in a task of their own, a loop's turn later: a freeze may fall in between); it
may hold the request back (after a gap in the loop's progress, until the lease is sure
again) and refuses by raising (in the bot it ends the process: see bot/standby.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import urllib.request
from collections.abc import Awaitable, Callable
from typing import IO, Any

import aiohttp
import aiohttp.helpers
import telegram
from telegram import TelegramObject, Update
from telegram._utils.defaultvalue import DefaultValue
from telegram._utils.types import ODVInput
from telegram.error import EndPointNotFound, InvalidToken, NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

from . import topics

__all__ = [
    "AiohttpRequest",
    "BotApi",
    "NotSent",
    "NotSentError",
    "NotSentTimeout",
    "UpdatesRequest",
    "dropped",
    "parsable",
    "slim_update",
    "slim_updates",
]

log = logging.getLogger(__name__)

#: PTB's (read, write, connect, pool) timeouts and whether the request uploads a file.
_TimeoutKey = tuple[float | None, float | None, float | None, float | None, bool]

#: Bot API answers are small (files are downloaded elsewhere); a bigger one is a broken peer.
MAX_BODY = 64 * 1024 * 1024
#: RFC 8305's recommended delay before the next address is tried.
HAPPY_EYEBALLS_DELAY = 0.25


class NotSent(Exception):
    """Marks an error raised before any byte of the request left: sending again is safe."""


class NotSentError(NotSent, NetworkError):
    """No connection to the Bot API could be made; the request was not sent."""


class NotSentTimeout(NotSent, TimedOut):
    """No connection was free or could be made in time; the request was not sent."""


class AiohttpRequest(BaseRequest):
    """A ``BaseRequest`` on one :class:`aiohttp.ClientSession` with keep-alive connections.

    ``pool_size`` bounds the connections open at once (per request object: PTB uses one for
    getUpdates and one for everything else); a request waits up to ``pool_timeout`` for a
    free one, then fails with :class:`NotSentTimeout`. ``resolver`` is aiohttp's (tests).
    """

    def __init__(
        self,
        pool_size: int = 64,
        read_timeout: float | None = 5.0,
        write_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 1.0,
        media_write_timeout: float | None = 20.0,
        resolver: aiohttp.abc.AbstractResolver | None = None,
    ) -> None:
        if pool_size < 1:
            raise ValueError("pool_size must be positive")
        self._pool_size = pool_size
        self._timeouts: dict[_TimeoutKey, aiohttp.ClientTimeout] = {}
        self._slots: asyncio.Semaphore | None = None
        self._session: aiohttp.ClientSession | None = None
        self._resolver = resolver
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._media_write_timeout = media_write_timeout
        self._closed = False
        self._proxies: dict[str, aiohttp.helpers.ProxyInfo] = {}
        self._proxy_of: dict[tuple[str, str], aiohttp.helpers.ProxyInfo | None] = {}
        #: Awaited before every request is sent; raises if this process may not send.
        self.fence: Callable[[], Awaitable[None]] | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        self._closed = False
        if self._session is None or self._session.closed:
            # HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY, read once here as PTB's default
            # client (httpx) does; aiohttp's own trust_env looks them and ~/.netrc up in a
            # thread on every request, which cost more CPU than the whole request
            self._proxies = aiohttp.helpers.proxies_from_env()
            self._proxy_of.clear()
            connector = _FencedConnector(
                self,
                limit=self._pool_size,
                happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY,
                resolver=self._resolver,
                ttl_dns_cache=60,
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                request_class=type("FencedRequest", (_FencedRequest,), {"owner": self}),
                cookie_jar=aiohttp.DummyCookieJar(),  # the Bot API sets none
                headers={"User-Agent": self.USER_AGENT, "Accept": "application/json"},
                timeout=aiohttp.ClientTimeout(total=None),
                raise_for_status=False,
            )

    async def shutdown(self) -> None:
        self._closed = True
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if self._closed:
            raise RuntimeError("this request object is shut down")
        if self._session is None:
            await self.initialize()
        if not url.startswith(("http://", "https://")):
            raise NetworkError(f"unsupported URL scheme: {url.split(':', 1)[0]!r}")
        files = request_data is not None and request_data.contains_files
        key = (
            _pick(read_timeout, self._read_timeout),
            _pick(write_timeout, self._media_write_timeout if files else self._write_timeout),
            _pick(connect_timeout, self._connect_timeout),
            _pick(pool_timeout, self._pool_timeout),
            files,
        )
        timeout = self._timeouts.get(key) or self._timeout(key)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._pool_size)
        if self._slots.locked():  # only then a timer: the common case costs nothing
            try:
                async with asyncio.timeout(key[3]):
                    await self._slots.acquire()
            except TimeoutError:
                raise NotSentTimeout(
                    "Pool timeout: all connections are busy; the request was not sent"
                ) from None
        else:
            await self._slots.acquire()
        try:
            return await self._attempts(url, method, request_data, timeout)
        finally:
            self._slots.release()

    async def _attempts(
        self,
        url: str,
        method: str,
        request_data: RequestData | None,
        timeout: aiohttp.ClientTimeout,
    ) -> tuple[int, bytes]:
        attempts = 2 if url.endswith("/getUpdates") else 1
        for attempt in range(attempts):
            try:
                status, body = await self._exchange(url, method, request_data, timeout)
                break
            except (NotSent, TimedOut):
                raise
            except NetworkError:  # e.g. a keep-alive connection the server had closed
                if attempt + 1 == attempts:
                    raise
        return status, self._answered(url, status, body)

    async def _exchange(
        self,
        url: str,
        method: str,
        request_data: RequestData | None,
        timeout: aiohttp.ClientTimeout,
    ) -> tuple[int, bytes]:
        assert self._session is not None
        data, headers = _encode(request_data)
        proxy = self._proxy(url)
        try:
            async with self._session.request(
                method,
                url,
                data=data,
                headers=headers,
                timeout=timeout,
                allow_redirects=False,
                proxy=None if proxy is None else proxy.proxy,
                proxy_auth=None if proxy is None else proxy.proxy_auth,
            ) as response:
                return response.status, await _body(response)
        except aiohttp.ConnectionTimeoutError:
            raise NotSentTimeout("timed out connecting to the Bot API; not sent") from None
        except aiohttp.ClientConnectorError as exc:
            raise NotSentError(f"cannot connect to the Bot API: {_describe(exc)}") from None
        except (aiohttp.ServerTimeoutError, TimeoutError):
            raise TimedOut() from None
        except aiohttp.ClientError as exc:
            raise NetworkError(f"Bot API connection failed: {_describe(exc)}") from None

    def _timeout(self, key: _TimeoutKey) -> aiohttp.ClientTimeout:
        """aiohttp's timeouts for PTB's (read, write, connect, pool), made once per kind.

        The pool's wait is ours (a semaphore, timed only when it is full). aiohttp has no
        write timeout: an upload's whole
        exchange is bounded by the three instead; a JSON body is far smaller than the
        socket's buffer, so its write never waits."""
        read, write, connect, _pool, files = key
        bound = None
        if files and None not in (read, write, connect):
            bound = (read or 0.0) + (write or 0.0) + (connect or 0.0)
        timeout = aiohttp.ClientTimeout(total=bound, sock_connect=connect, sock_read=read)
        self._timeouts[key] = timeout
        return timeout

    def _proxy(self, url: str) -> aiohttp.helpers.ProxyInfo | None:
        """The environment's proxy for the URL's scheme and host (NO_PROXY honoured)."""
        if not self._proxies:
            return None
        scheme, _, rest = url.partition("://")
        host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
        key = (scheme, host)
        if key not in self._proxy_of:
            name = host.rsplit(":", 1)[0].strip("[]") if not host.endswith("]") else host[1:-1]
            bypass = urllib.request.proxy_bypass(name)
            self._proxy_of[key] = None if bypass else self._proxies.get(scheme)
        return self._proxy_of[key]

    def _answered(self, url: str, status: int, body: bytes) -> bytes:
        """The answer's body as PTB gets it (a subclass may trim it)."""
        return body


class _FencedConnector(aiohttp.TCPConnector):
    """Awaits its request object's ``fence`` once a request has its connection: after that
    aiohttp writes the request without waiting again (a new connection's handshake may
    take a while: a process frozen in it must still not send when it thaws)."""

    def __init__(self, owner: AiohttpRequest, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._owner = owner

    async def connect(
        self, req: aiohttp.ClientRequest, traces: list[Any], timeout: aiohttp.ClientTimeout
    ) -> aiohttp.connector.Connection:
        conn = await super().connect(req, traces, timeout)
        fence = self._owner.fence
        if fence is not None:
            try:
                await fence()
            except BaseException:
                conn.release()
                raise
        return conn


class _FencedRequest(aiohttp.ClientRequest):
    """aiohttp's request, with its owner's ``fence`` awaited as its bytes start out."""

    owner: AiohttpRequest

    async def write_bytes(self, writer: Any, conn: Any, *args: Any, **kwargs: Any) -> None:
        fence = self.owner.fence
        if fence is not None:
            try:
                await fence()
            except BaseException:
                conn.close()  # nothing of it leaves: the answer's wait ends at once
                raise
        await super().write_bytes(writer, conn, *args, **kwargs)


class _Encoded(RequestData):  # type: ignore[misc]  # PTB marks it final; see the docstring
    """A request's JSON body, encoded once by :class:`BotApi` (no ``RequestParameter``s).

    PTB marks ``RequestData`` final (not for users to make); it is still one, for PTB's
    ``BaseRequest.post`` that hands it to our ``do_request``, which reads only
    ``contains_files`` (False) and ``json_payload``."""

    __slots__ = ("_body",)

    def __init__(self, body: bytes) -> None:
        super().__init__()
        self._body = body

    @property
    def json_payload(self) -> bytes:
        return self._body


#: The outbox's and the answers' methods as ``Bot.do_api_request`` names them (the path
#: through PTB, for a bot whose request is not an :class:`AiohttpRequest`).
_PTB_NAMES = {
    "sendMessage": "send_message",
    "editMessageText": "edit_message_text",
    "deleteMessage": "delete_message",
    "answerCallbackQuery": "answer_callback_query",
}


class BotApi:
    """The hot path's Bot API calls (the outbox's sends, edits and deletes, the answers to
    pressed buttons) without PTB's objects: the parameters (Bot API JSON already: the
    keyboards are dicts) are encoded once, posted by the bot's :class:`AiohttpRequest`,
    and the answer's ``result`` is handed back as JSON.

    PTB's ``Bot`` turned every parameter into a ``RequestParameter`` and JSON-encoded each
    on its own, then the whole again: two to four calls per request, about 7 % of a busy
    bot's CPU. The answer still goes through PTB's ``BaseRequest.post``, so every error is
    PTB's own (``RetryAfter``, ``ChatMigrated``, ``BadRequest``, ``Forbidden``,
    ``InvalidToken``, ``NetworkError``, ``TimedOut``, :class:`NotSent`), with its message;
    a 404 is ``EndPointNotFound``, as ``Bot.do_api_request`` said (``named``: not, as
    PTB's named methods say). A bot on another request class (the tests' in-memory and
    httpx bots) is called through ``Bot.do_api_request`` as before."""

    def __init__(self, bot: telegram.Bot) -> None:
        self._bot = bot
        request = getattr(bot, "request", None)  # a stand-in bot of a test may have none
        self._direct = request if isinstance(request, AiohttpRequest) else None
        self._urls: dict[str, str] = {}

    @property
    def direct(self) -> bool:
        """Whether the calls bypass PTB's ``Bot`` (its request is an AiohttpRequest)."""
        return self._direct is not None

    async def call(self, method: str, params: dict[str, Any], *, named: bool = False) -> Any:
        """The Bot API's ``result`` of ``method`` (its camelCase name); ``None`` values are
        left out, as PTB leaves them out."""
        params = {k: v for k, v in params.items() if v is not None}
        if self._direct is None:
            return await self._bot.do_api_request(_PTB_NAMES.get(method, method), api_kwargs=params)
        url = self._urls.get(method)
        if url is None:
            url = self._urls[method] = f"{self._bot.base_url}/{method}"
        body = json.dumps(params, ensure_ascii=False, separators=(",", ":"), default=_plain)
        try:
            return await self._direct.post(url, _Encoded(body.encode()))
        except InvalidToken as exc:
            if named:
                raise
            raise EndPointNotFound(f"Endpoint '{method}' not found in Bot API") from exc

    async def answer(self, query_id: str, answer: dict[str, Any]) -> None:
        """Answer a callback query (``text``, ``show_alert``, ``url``, ``cache_time``), as
        ``CallbackQuery.answer`` would."""
        params = {"callback_query_id": query_id, **answer}
        await self.call("answerCallbackQuery", params, named=True)


def _plain(value: object) -> Any:
    """JSON for what ``json`` cannot encode itself: a PTB object (a keyboard made with
    PTB's classes) as the Bot API's dict, as PTB's ``RequestParameter`` would."""
    if isinstance(value, TelegramObject):
        return value.to_dict()
    raise TypeError(f"cannot send a {type(value).__name__} to the Bot API")


class UpdatesRequest(AiohttpRequest):
    """The request object for getUpdates: it hands PTB each update without the parts of
    a pressed button's message that the bot never reads (see :func:`slim_updates`), and
    it logs an outage once: a WARNING when getUpdates first fails, an INFO when it works
    again (PTB's polling loop would log a traceback per failed call, every second)."""

    _outage_since: float | None = None

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        try:
            answer = await super().do_request(
                url,
                method,
                request_data,
                read_timeout,
                write_timeout,
                connect_timeout,
                pool_timeout,
            )
        except NetworkError as exc:
            if self._outage_since is None and url.endswith("/getUpdates"):
                self._outage_since = time.monotonic()
                log.warning("cannot reach the Bot API: %s; retrying until it answers", exc.message)
            raise
        if self._outage_since is not None and answer[0] < 500:
            log.info(
                "the Bot API answers again, after %.0f s", time.monotonic() - self._outage_since
            )
            self._outage_since = None
        return answer

    def _answered(self, url: str, status: int, body: bytes) -> bytes:
        if status == 200 and url.endswith("/getUpdates"):
            return slim_updates(body)
        return body


def slim_updates(body: bytes) -> bytes:
    """A getUpdates answer with each callback query's message replaced by the little the
    bot reads of it (:func:`slim_update`), and each update PTB cannot parse replaced by its
    bare ``update_id`` (:func:`parsable`): PTB parses a batch as a whole, and one bad update
    failed it every time it was fetched again, for good (issue 26 item 5). Anything
    unexpected is passed on untouched, for PTB to judge."""
    try:
        answer = json.loads(body)
        updates = answer["result"]
        if not isinstance(updates, list):
            return body
        for update in updates:
            slim_update(update)
        answer["result"] = [u for u in map(parsable, updates) if u is not None]
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return body
    return json.dumps(answer, ensure_ascii=False).encode()


def parsable(update: object) -> object | None:
    """``update`` if PTB makes an ``Update`` of it; else one WARNING (its update_id and
    why, never its content) and the bare update_id, an empty ``Update`` that no handler
    takes but that moves the offset past it (None without an update_id). PTB parses the
    update again (its parse is a few dozen microseconds an update)."""
    try:
        Update.de_json(update, None)  # type: ignore[arg-type]
        return update
    except Exception as exc:  # whatever PTB raises on input it did not expect
        update_id = update.get("update_id") if isinstance(update, dict) else None
        if type(update_id) is not int:
            log.warning("getUpdates: an update without an update_id dropped: %s", _why(exc))
            return None
        dropped(update_id, exc)
        return {"update_id": update_id}


def dropped(update_id: int, exc: BaseException) -> None:
    """One WARNING for an update PTB cannot parse: its update_id and why, never its content."""
    log.warning("update %d dropped: PTB cannot parse it (%s)", update_id, _why(exc))


def _why(exc: BaseException) -> str:
    """Why an update failed to parse, without its content: the exception's type, and
    for the kinds that name a field (a missing argument, a missing key) its message."""
    if isinstance(exc, TypeError | KeyError | AttributeError):
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return type(exc).__name__


def slim_update(update: object) -> None:
    """Cut a callback query's message (in a decoded update, in place) down to its chat,
    id and topic, kept where PTB builds no objects of it (:func:`bot.topics.slim_query`).

    Telegram sends the whole message under a pressed button, keyboard included (a panel
    has a dozen buttons), and PTB builds every part of it into objects: first a quarter of
    a busy bot's CPU; even cut down to id, date and chat, PTB's ``Message`` cost three times
    the rest of the update (it looks up some 50 absent fields and sets 220 attributes)."""
    query = update.get("callback_query") if isinstance(update, dict) else None
    if isinstance(query, dict):
        topics.slim_query(query)


async def _body(response: aiohttp.ClientResponse) -> bytes:
    """The whole body (up to its Content-Length, its last chunk or the close), capped."""
    length = response.content_length
    if length is not None:
        if length > MAX_BODY:
            raise NetworkError("Bot API answer too large")
        return await response.read()
    body = bytearray()
    async for chunk in response.content.iter_any():
        body += chunk
        if len(body) > MAX_BODY:
            raise NetworkError("Bot API answer too large")
    return bytes(body)


def _pick(value: ODVInput[float], default: float | None) -> float | None:
    return default if isinstance(value, DefaultValue) else value


def _describe(exc: BaseException) -> str:
    """An aiohttp error without its URL: the URL holds the bot token."""
    if isinstance(exc, aiohttp.ClientConnectorError):
        return f"{type(exc).__name__}: {exc.os_error.strerror or type(exc.os_error).__name__}"
    if isinstance(exc, aiohttp.ClientResponseError):
        return f"{type(exc).__name__}: {exc.status} {exc.message}"
    return type(exc).__name__


_JSON = {"Content-Type": "application/json"}


def _encode(request_data: RequestData | None) -> tuple[Any, dict[str, str] | None]:
    """(body, headers): JSON, or multipart/form-data when the request uploads files."""
    if request_data is None:
        return b"{}", _JSON
    if not request_data.contains_files:
        return request_data.json_payload, _JSON
    form = aiohttp.FormData(quote_fields=False)
    for name, value in request_data.json_parameters.items():
        form.add_field(name, value)
    for name, field in request_data.multipart_data.items():
        filename, content, mimetype = _file_parts(field)
        form.add_field(name, content, filename=filename, content_type=mimetype)
    return form, None


def _file_parts(field: Any) -> tuple[str, bytes, str]:
    if isinstance(field, tuple) and len(field) >= 2:
        filename = str(field[0] or "file")
        content = field[1]
        mimetype = str(field[2]) if len(field) > 2 and field[2] else "application/octet-stream"
    else:
        filename, content, mimetype = "file", field, "application/octet-stream"
    if not isinstance(content, bytes | bytearray):
        content = _read_all(content)
    return filename, bytes(content), mimetype


def _read_all(stream: IO[bytes] | Any) -> bytes:
    data = stream.read()
    return data.encode() if isinstance(data, str) else bytes(data)
