"""The bot's HTTP client: python-telegram-bot's ``BaseRequest`` on plain asyncio streams.

PTB's default ``HTTPXRequest`` spends about 1 ms of CPU per Bot API call in httpx, httpcore,
h11 and anyio; a busy bot makes several calls per player action (the button's answer, the
table, every player's panel), so the HTTP client was most of the bot's CPU (BENCHMARKS.md).
This client speaks just the HTTP/1.1 the Bot API needs, over a pool of keep-alive connections
per host: a JSON body, or multipart/form-data when a file is uploaded; a response with a
Content-Length or a chunked body. TLS comes from :mod:`ssl` with the system's certificates.

Errors map onto PTB's: a timeout is :class:`~telegram.error.TimedOut`, anything the network or
the peer did wrong is :class:`~telegram.error.NetworkError`. A request that finds its reused
connection closed by the server before any answer byte is sent again once on a new
connection (the server closed an idle connection, so it never read the request).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import uuid
from collections.abc import Iterator
from typing import IO, Any
from urllib.parse import urlsplit

from telegram._utils.defaultvalue import DefaultValue
from telegram._utils.types import ODVInput
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

__all__ = ["StreamRequest", "UpdatesRequest", "slim_updates"]

_Key = tuple[str, str, int]  # scheme, host, port
_Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]

MAX_HEADER_LINES = 100
MAX_BODY = 64 * 1024 * 1024  # Bot API answers are small; files are downloaded elsewhere


class _PeerError(Exception):
    """The peer broke HTTP or the connection; ``nothing_received`` says that no byte of an
    answer arrived, so that a request on a reused connection may be sent again."""

    def __init__(self, message: str, nothing_received: bool = False) -> None:
        super().__init__(message)
        self.nothing_received = nothing_received


class StreamRequest(BaseRequest):
    """A ``BaseRequest`` with keep-alive connections on asyncio streams.

    ``pool_size`` bounds the connections open at once (per request object: PTB uses one for
    getUpdates and one for everything else); a request waits up to ``pool_timeout`` for a
    free one, then fails with :class:`TimedOut` without having been sent.
    """

    def __init__(
        self,
        pool_size: int = 64,
        read_timeout: float | None = 5.0,
        write_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        pool_timeout: float | None = 1.0,
        media_write_timeout: float | None = 20.0,
    ) -> None:
        if pool_size < 1:
            raise ValueError("pool_size must be positive")
        self._pool_size = pool_size
        self._slots: asyncio.Semaphore | None = None
        self._idle: dict[_Key, list[_Connection]] = {}
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._pool_timeout = pool_timeout
        self._media_write_timeout = media_write_timeout
        self._ssl: ssl.SSLContext | None = None
        self._closed = False

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        self._closed = False
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._pool_size)

    async def shutdown(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for _, writer in connections:
                _close(writer)

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
            raise RuntimeError("this StreamRequest is shut down")
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._pool_size)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise NetworkError(f"unsupported URL scheme or host: {parts.scheme!r}")
        key = (parts.scheme, parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        files = request_data is not None and request_data.contains_files
        content_type, body = _encode(request_data)
        head = (
            f"{method} {target} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"User-Agent: {self.USER_AGENT}\r\nAccept: application/json\r\n"
            f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode("latin-1")
        timeouts = (
            _pick(read_timeout, self._read_timeout),
            _pick(write_timeout, self._media_write_timeout if files else self._write_timeout),
            _pick(connect_timeout, self._connect_timeout),
        )
        try:
            async with asyncio.timeout(_pick(pool_timeout, self._pool_timeout)):
                await self._slots.acquire()
        except TimeoutError:
            raise TimedOut(
                "Pool timeout: all connections are busy; the request was not sent"
            ) from None
        try:
            status, answer = await self._exchange(key, head + body, timeouts)
        finally:
            self._slots.release()
        return status, self._answered(url, status, answer)

    def _answered(self, url: str, status: int, body: bytes) -> bytes:
        """The answer's body as PTB gets it (a subclass may trim it)."""
        return body

    async def _exchange(
        self, key: _Key, request: bytes, timeouts: tuple[float | None, float | None, float | None]
    ) -> tuple[int, bytes]:
        read_timeout, write_timeout, connect_timeout = timeouts
        while True:
            reused, connection = await self._connection(key, connect_timeout)
            reader, writer = connection
            try:
                async with asyncio.timeout(write_timeout):
                    writer.write(request)
                    await writer.drain()
                async with asyncio.timeout(read_timeout):
                    status, body, keep = await _read_response(reader)
            except TimeoutError:
                _close(writer)
                raise TimedOut() from None
            except OSError as exc:  # while writing
                _close(writer)
                if reused:
                    continue  # an idle connection the server had closed: try a new one
                raise NetworkError(f"Bot API connection failed: {exc!r}") from None
            except _PeerError as exc:
                _close(writer)
                if reused and exc.nothing_received:
                    continue
                raise NetworkError(f"Bot API connection failed: {exc}") from None
            except BaseException:  # cancelled mid-exchange: the connection is in an unknown state
                _close(writer)
                raise
            if keep and not self._closed:
                self._idle.setdefault(key, []).append(connection)
            else:
                _close(writer)
            return status, body

    async def _connection(
        self, key: _Key, connect_timeout: float | None
    ) -> tuple[bool, _Connection]:
        idle = self._idle.get(key)
        while idle:
            connection = idle.pop()
            if not connection[0].at_eof() and not connection[1].is_closing():
                return True, connection
            _close(connection[1])
        scheme, host, port = key
        context = None
        if scheme == "https":
            if self._ssl is None:
                self._ssl = ssl.create_default_context()
            context = self._ssl
        try:
            async with asyncio.timeout(connect_timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, ssl=context, limit=1 << 20
                )
        except TimeoutError:
            raise TimedOut("timed out connecting to the Bot API") from None
        except OSError as exc:
            raise NetworkError(f"cannot connect to the Bot API: {exc!r}") from None
        return False, (reader, writer)


class UpdatesRequest(StreamRequest):
    """The ``StreamRequest`` for getUpdates: it hands PTB each update without the parts of
    a pressed button's message that the bot never reads (see :func:`slim_updates`)."""

    def _answered(self, url: str, status: int, body: bytes) -> bytes:
        if status == 200 and url.endswith("/getUpdates"):
            return slim_updates(body)
        return body


#: What the bot reads of the message under a pressed button (handlers.py: its chat and id).
_KEPT_OF_PRESSED = ("message_id", "date", "chat")


def slim_updates(body: bytes) -> bytes:
    """A getUpdates answer with each callback query's message cut down to its id, date
    and chat. Telegram sends the whole message, keyboard included (a panel has a dozen
    buttons), and PTB builds every part of it into objects: that was a quarter of a busy
    bot's CPU. Anything unexpected is passed on untouched, for PTB to judge."""
    try:
        answer = json.loads(body)
        updates = answer["result"]
        if not isinstance(updates, list):
            return body
        for update in updates:
            query = update.get("callback_query") if isinstance(update, dict) else None
            if isinstance(query, dict) and isinstance(query.get("message"), dict):
                message = query["message"]
                query["message"] = {k: message[k] for k in _KEPT_OF_PRESSED if k in message}
    except (ValueError, TypeError, KeyError, AttributeError):
        return body
    return json.dumps(answer, ensure_ascii=False).encode()


def _pick(value: ODVInput[float], default: float | None) -> float | None:
    return default if isinstance(value, DefaultValue) else value


def _close(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        writer.close()


def _encode(request_data: RequestData | None) -> tuple[str, bytes]:
    """(Content-Type, body): JSON, or multipart/form-data when the request uploads files."""
    if request_data is None:
        return "application/json", b"{}"
    if not request_data.contains_files:
        return "application/json", request_data.json_payload
    boundary = uuid.uuid4().hex
    chunks: list[bytes] = []
    for name, value in request_data.json_parameters.items():
        disposition = f'form-data; name="{_quote(name)}"'
        chunks.append(f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode())
        chunks.append(value.encode())
        chunks.append(b"\r\n")
    for name, field in request_data.multipart_data.items():
        filename, content, mimetype = _file_parts(field)
        chunks.append(
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="{_quote(name)}"; '
                f'filename="{_quote(filename)}"\r\nContent-Type: {mimetype}\r\n\r\n'
            ).encode()
        )
        chunks.append(content)
        chunks.append(b"\r\n")
    chunks.append(f"--{boundary}--\r\n".encode())
    return f"multipart/form-data; boundary={boundary}", b"".join(chunks)


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


def _quote(value: str) -> str:
    """A multipart header parameter: no quotes or line breaks can break out of it."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\r", " ").replace("\n", " ")


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes, bool]:
    """(status, body, keep-alive) of one HTTP/1.1 response."""
    try:
        status_line = await reader.readline()
    except OSError as exc:
        raise _PeerError(repr(exc), nothing_received=True) from None
    except ValueError:
        raise _PeerError("status line too long") from None
    if not status_line:
        raise _PeerError("the server closed the connection", nothing_received=True)
    fields = status_line.split(None, 2)
    if len(fields) < 2 or not fields[0].startswith(b"HTTP/1.") or not fields[1].isdigit():
        raise _PeerError("not an HTTP/1.x status line")
    status = int(fields[1])
    keep = fields[0] == b"HTTP/1.1"
    length: int | None = None
    chunked = False
    for name, value in _headers(await _header_lines(reader)):
        if name == b"content-length":
            if not value.isdigit():
                raise _PeerError("bad Content-Length")
            length = int(value)
        elif name == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif name == b"connection":
            token = value.lower()
            if b"close" in token:
                keep = False
            elif b"keep-alive" in token:
                keep = True
    try:
        if chunked:
            body = await _read_chunked(reader)
        elif length is not None:
            if length > MAX_BODY:
                raise _PeerError("response too large")
            body = await reader.readexactly(length)
        elif status in (204, 304) or 100 <= status < 200:
            body = b""
        else:  # no length: the body runs to the end of the connection
            body = await reader.read(MAX_BODY)
            keep = False
    except (asyncio.IncompleteReadError, OSError):
        raise _PeerError("the connection broke mid-answer") from None
    except (asyncio.LimitOverrunError, ValueError):
        raise _PeerError("malformed chunked body") from None
    return status, body, keep


async def _header_lines(reader: asyncio.StreamReader) -> list[bytes]:
    lines: list[bytes] = []
    while True:
        try:
            line = await reader.readline()
        except (OSError, ValueError):
            raise _PeerError("the connection broke mid-headers") from None
        if not line:
            raise _PeerError("the server closed the connection mid-headers")
        if line in (b"\r\n", b"\n"):
            return lines
        lines.append(line)
        if len(lines) > MAX_HEADER_LINES:
            raise _PeerError("too many header lines")


def _headers(lines: list[bytes]) -> Iterator[tuple[bytes, bytes]]:
    for line in lines:
        name, sep, value = line.partition(b":")
        if not sep:
            raise _PeerError("malformed header line")
        yield name.strip().lower(), value.strip()


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size_line = await reader.readline()
        if not size_line:
            raise asyncio.IncompleteReadError(bytes(body), None)
        size = int(size_line.split(b";", 1)[0].strip(), 16)
        if size == 0:
            await _header_lines(reader)  # trailers, up to the blank line
            return bytes(body)
        if len(body) + size > MAX_BODY:
            raise _PeerError("response too large")
        body += await reader.readexactly(size)
        if await reader.readexactly(2) != b"\r\n":
            raise _PeerError("malformed chunked body")
