"""A small asyncio HTTP/1.1 server: keep-alive, Content-Length and chunked bodies.

Only what the fake Bot API needs: one request at a time per connection (no pipelining,
which httpx does not use), any number of concurrent connections, and decoding of
query strings, JSON, ``application/x-www-form-urlencoded`` and ``multipart/form-data``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from email.message import Message as _MimeHeader
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, unquote

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024


class HttpError(Exception):
    """A request that cannot be parsed; answered with ``status`` and the connection closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class UploadedFile:
    """One file part of a multipart body."""

    field: str
    filename: str
    content_type: str
    data: bytes


@dataclass
class HttpRequest:
    method: str
    path: str
    query: str
    version: str
    headers: dict[str, str]
    body: bytes

    @property
    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" in connection
        return "close" not in connection


@dataclass
class HttpResponse:
    status: int
    body: bytes
    content_type: str = "application/json"

    @classmethod
    def json(cls, status: int, payload: Any) -> HttpResponse:
        return cls(status, json.dumps(payload, ensure_ascii=False).encode("utf-8"))


Handler = Callable[[HttpRequest], Awaitable[HttpResponse]]


# --------------------------------------------------------------------------- reading


async def read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> HttpRequest | None:
    """Read one request; ``None`` when the client closed the connection between requests."""
    head = await _read_head(reader)
    if head is None:
        return None
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, version = lines[0].split(" ", 2)
    except ValueError as exc:
        raise HttpError(400, f"malformed request line {lines[0]!r}") from exc
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    body = await _read_body(reader, headers)
    path, _, query = target.partition("?")
    return HttpRequest(method.upper(), path, query, version.strip(), headers, body)


async def _read_head(reader: asyncio.StreamReader) -> bytes | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise HttpError(400, "incomplete request head") from exc
        return None
    except asyncio.LimitOverrunError as exc:
        raise HttpError(431, "request head too large") from exc
    head = head.lstrip(b"\r\n")  # tolerate stray CRLFs between requests
    return head[:-4] if head else None


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return await _read_chunked(reader)
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError as exc:
        raise HttpError(400, "bad Content-Length") from exc
    if length < 0 or length > MAX_BODY_BYTES:
        raise HttpError(413, "body too large")
    return await reader.readexactly(length) if length else b""


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        size_line = await reader.readline()
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError as exc:
            raise HttpError(400, "bad chunk size") from exc
        if size == 0:
            while (await reader.readline()).strip():  # trailers
                pass
            return b"".join(chunks)
        total += size
        if total > MAX_BODY_BYTES:
            raise HttpError(413, "body too large")
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)


# --------------------------------------------------------------------------- bodies


def _content_type(value: str) -> tuple[str, _MimeHeader]:
    header = _MimeHeader()
    header["content-type"] = value or "application/octet-stream"
    return header.get_content_type(), header


def decode_params(request: HttpRequest) -> tuple[dict[str, Any], dict[str, UploadedFile]]:
    """Merge query-string and body parameters; files come from multipart parts."""
    params: dict[str, Any] = dict(parse_qsl(request.query, keep_blank_values=True))
    files: dict[str, UploadedFile] = {}
    if not request.body:
        return params, files
    ctype, header = _content_type(request.headers.get("content-type", ""))
    if ctype == "application/json":
        try:
            data = json.loads(request.body)
        except ValueError as exc:
            raise HttpError(400, "can't parse JSON body") from exc
        if not isinstance(data, dict):
            raise HttpError(400, "JSON body must be an object")
        params.update(data)
    elif ctype == "application/x-www-form-urlencoded":
        text = request.body.decode("utf-8", "replace")
        params.update(parse_qsl(text, keep_blank_values=True))
    elif ctype == "multipart/form-data":
        boundary = header.get_param("boundary")
        if not isinstance(boundary, str) or not boundary:
            raise HttpError(400, "multipart body without boundary")
        fields, files = parse_multipart(request.body, boundary)
        params.update(fields)
    else:
        raise HttpError(400, f"unsupported content type {ctype}")
    return params, files


_DISPOSITION_PARAM = re.compile(r';\s*([\w*-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))')


def _disposition_params(value: str) -> dict[str, str]:
    params: dict[str, str] = {}
    for name, quoted, token in _DISPOSITION_PARAM.findall(value):
        raw = quoted if quoted or not token else token.strip()
        raw = re.sub(r"\\(.)", r"\1", raw).replace("%22", '"')
        if name.endswith("*"):  # RFC 5987: charset'lang'percent-encoded
            name = name[:-1]
            charset, _, rest = raw.partition("'")
            raw = unquote(rest.partition("'")[2], encoding=charset or "utf-8")
        params[name.lower()] = raw
    return params


def parse_multipart(body: bytes, boundary: str) -> tuple[dict[str, str], dict[str, UploadedFile]]:
    """Split a ``multipart/form-data`` body into text fields and uploaded files."""
    delimiter = b"\r\n--" + boundary.encode("latin-1")
    fields: dict[str, str] = {}
    files: dict[str, UploadedFile] = {}
    for part in (b"\r\n" + body).split(delimiter)[1:]:
        if part.startswith(b"--"):
            break
        head, sep, content = part.partition(b"\r\n\r\n")
        if not sep:
            raise HttpError(400, "malformed multipart part")
        headers: dict[str, str] = {}
        for line in head.decode("utf-8", "replace").split("\r\n"):
            header, colon, value = line.partition(":")
            if colon:
                headers[header.strip().lower()] = value.strip()
        disposition = _disposition_params(headers.get("content-disposition", ""))
        name = disposition.get("name")
        if name is None:
            continue
        if "filename" in disposition:
            ctype = headers.get("content-type", "application/octet-stream")
            files[name] = UploadedFile(name, disposition["filename"], ctype, content)
        else:
            fields[name] = content.decode("utf-8", "replace")
    return fields, files


# --------------------------------------------------------------------------- server


def encode_response(response: HttpResponse, keep_alive: bool) -> bytes:
    try:
        phrase = HTTPStatus(response.status).phrase
    except ValueError:
        phrase = "Unknown"
    head = (
        f"HTTP/1.1 {response.status} {phrase}\r\n"
        f"Server: fake-telegram\r\n"
        f"Content-Type: {response.content_type}\r\n"
        f"Content-Length: {len(response.body)}\r\n"
        f"Connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n"
    )
    return head.encode("latin-1") + response.body


class HttpServer:
    """Serves ``handler`` on a TCP port; every connection is its own task."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[Any]] = set()
        self.port = 0
        self.connections_accepted = 0
        self.requests_served = 0

    async def start(self, host: str, port: int) -> int:
        self._server = await asyncio.start_server(
            self._serve_connection, host, port, limit=MAX_HEAD_BYTES
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.connections_accepted += 1
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            await self._serve_requests(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve_requests(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        while True:
            try:
                request = await read_request(reader, writer)
            except HttpError as exc:
                payload = {"ok": False, "error_code": exc.status, "description": str(exc)}
                writer.write(encode_response(HttpResponse.json(exc.status, payload), False))
                await writer.drain()
                return
            if request is None:
                return
            response = await self._handler(request)
            self.requests_served += 1
            writer.write(encode_response(response, request.keep_alive))
            await writer.drain()
            if not request.keep_alive:
                return
