"""The bot's HTTP client (bot/transport/request.py) against small scripted HTTP servers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from telegram import Bot, InputFile, Update
from telegram.error import NetworkError, TimedOut
from telegram.request import RequestData
from telegram.request._requestparameter import RequestParameter

from bot.transport import topics
from bot.transport.request import AiohttpRequest, NotSent, UpdatesRequest, slim_updates
from tests.fake_telegram.fixtures import async_test

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@contextlib.asynccontextmanager
async def serve(handler: Handler) -> AsyncIterator[tuple[str, list[int]]]:
    """A loopback server; yields its base URL and a list that counts connections."""
    connections: list[int] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            await handler(reader, writer)
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", connections
    finally:
        server.close()


async def read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes]:
    request_line = (await reader.readline()).decode()
    headers = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return request_line, headers, body


def answer(body: bytes, extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def params(**values: object) -> RequestData:
    return RequestData([RequestParameter.from_input(k, v) for k, v in values.items()])


async def keep_alive_echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while True:
        request_line, headers, body = await read_request(reader)
        if not request_line:
            return
        echo = {
            "line": request_line.strip(),
            "type": headers["content-type"],
            "body": body.decode("latin-1"),
        }
        writer.write(answer(json.dumps({"ok": True, "result": echo}).encode()))
        await writer.drain()


@async_test
async def test_json_requests_reuse_one_connection() -> None:
    async with serve(keep_alive_echo) as (url, connections):
        request = AiohttpRequest()
        await request.initialize()
        for n in range(5):
            status, body = await request.do_request(
                f"{url}/botTOKEN/sendMessage", "POST", params(chat_id=n, text="hi")
            )
            assert status == 200
            echo = json.loads(body)["result"]
            assert echo["line"] == "POST /botTOKEN/sendMessage HTTP/1.1"
            assert echo["type"] == "application/json"
            assert json.loads(echo["body"]) == {"chat_id": str(n), "text": "hi"}
        assert len(connections) == 1
        await request.shutdown()


@async_test
async def test_uploads_are_multipart() -> None:
    async with serve(keep_alive_echo) as (url, _):
        request = AiohttpRequest()
        await request.initialize()
        data = params(chat_id=7, document=InputFile(b"\x00record\xff", filename='a"b.json'))
        _, body = await request.do_request(f"{url}/botT/sendDocument", "POST", data)
        echo = json.loads(body)["result"]
        assert echo["type"].startswith("multipart/form-data; boundary=")
        boundary = echo["type"].split("boundary=")[1]
        text = echo["body"]
        assert text.endswith(f"--{boundary}--\r\n")
        assert 'name="chat_id"\r\n\r\n7\r\n' in text
        assert 'filename="a\\"b.json"' in text
        assert "\r\n\r\n\x00record\xff\r\n" in text  # the bytes as they were
        await request.shutdown()


@async_test
async def test_chunked_answer_and_connection_close() -> None:
    async def chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            b'5\r\n{"ok"\r\n9;ext=1\r\n: true}\r\n\r\n0\r\n\r\n'
        )
        await writer.drain()

    async with serve(chunked) as (url, connections):
        request = AiohttpRequest()
        await request.initialize()
        for _ in range(2):
            status, body = await request.do_request(f"{url}/botT/getMe", "POST")
            assert (status, json.loads(body)) == (200, {"ok": True})
        assert len(connections) == 2  # "Connection: close" is honoured
        await request.shutdown()


@async_test
async def test_an_idle_connection_closed_by_the_server_is_replaced() -> None:
    async def one_per_connection(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await read_request(reader)
        writer.write(answer(b'{"ok": true}'))  # says keep-alive, then closes anyway
        await writer.drain()

    async with serve(one_per_connection) as (url, connections):
        request = AiohttpRequest()
        await request.initialize()
        for _ in range(3):
            await asyncio.sleep(0.05)  # the close reaches the client's idle connection
            assert (await request.do_request(f"{url}/botT/getMe", "POST"))[0] == 200
        assert len(connections) == 3
        await request.shutdown()


@async_test
async def test_a_post_that_may_have_reached_the_server_is_never_sent_again() -> None:
    """A reused connection hung up after reading the request: the server may have acted on
    it (a message sent), so it is a NetworkError that is not NotSent, and one request."""
    requests: list[str] = []

    async def answer_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        requests.append((await read_request(reader))[0])
        writer.write(answer(b'{"ok": true}'))
        await writer.drain()
        requests.append((await read_request(reader))[0])  # the next: hang up unanswered

    async with serve(answer_once) as (url, _):
        request = AiohttpRequest()
        await request.initialize()
        assert (await request.do_request(f"{url}/botT/sendMessage", "POST"))[0] == 200
        with pytest.raises(NetworkError) as caught:
            await request.do_request(f"{url}/botT/sendMessage", "POST")
        assert not isinstance(caught.value, NotSent)
        assert len(requests) == 2  # the second was not sent again
        await request.shutdown()


@async_test
async def test_get_updates_is_sent_again_once_after_a_hang_up() -> None:
    async def answer_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(answer(b'{"ok": true, "result": []}'))
        await writer.drain()
        await read_request(reader)

    async with serve(answer_once) as (url, connections):
        request = UpdatesRequest()
        await request.initialize()
        for _ in range(3):
            assert (await request.do_request(f"{url}/botT/getUpdates", "POST"))[0] == 200
        assert len(connections) == 3  # requests 2 and 3 each went out again on a new one
        await request.shutdown()


@async_test
async def test_a_connection_lost_after_the_request_is_a_network_error_when_fresh() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)

    async with serve(hang_up) as (url, connections):
        request = AiohttpRequest()
        await request.initialize()
        with pytest.raises(NetworkError, match="Disconnected"):
            await request.do_request(f"{url}/botT/getMe", "POST")
        assert len(connections) == 1  # a fresh connection is not retried
        await request.shutdown()


@async_test
async def test_an_interim_103_is_not_the_answer() -> None:
    """Each request gets its own answer: the 103 Early Hints before it is skipped."""

    async def hints_first(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        n = 0
        while (await read_request(reader))[0]:
            n += 1
            writer.write(b"HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n")
            writer.write(answer(json.dumps({"ok": True, "result": n}).encode()))
            await writer.drain()

    async with serve(hints_first) as (url, _):
        request = AiohttpRequest()
        await request.initialize()
        for n in (1, 2, 3):
            status, body = await request.do_request(f"{url}/botT/getMe", "POST")
            assert (status, json.loads(body)["result"]) == (200, n)
        await request.shutdown()


@async_test
async def test_a_stale_408_on_an_idle_connection_is_no_answer() -> None:
    """A server that times an idle keep-alive connection out with an unsolicited 408 and
    closes it: the next request is sent on a new connection and gets its own answer."""

    async def time_out_idle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(answer(b'{"ok": true, "result": "first"}'))
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()

    async with serve(time_out_idle) as (url, connections):
        request = AiohttpRequest()
        await request.initialize()
        assert json.loads((await request.do_request(f"{url}/botT/getMe", "POST"))[1]) == {
            "ok": True,
            "result": "first",
        }
        await asyncio.sleep(0.2)  # the 408 and the close reach the idle connection
        status, body = await request.do_request(f"{url}/botT/getMe", "POST")
        assert (status, json.loads(body)["result"]) == (200, "first")
        assert len(connections) == 2
        await request.shutdown()


@async_test
async def test_a_body_delimited_by_the_close_is_read_whole() -> None:
    big = json.dumps({"ok": True, "result": "x" * 300_000}).encode()

    async def close_delimited(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
        for i in range(0, len(big), 50_000):
            writer.write(big[i : i + 50_000])
            await writer.drain()
            await asyncio.sleep(0.01)

    async with serve(close_delimited) as (url, _):
        request = AiohttpRequest()
        await request.initialize()
        status, body = await request.do_request(f"{url}/botT/getMe", "POST")
        assert (status, body) == (200, big)
        await request.shutdown()


@async_test
async def test_proxies_from_the_environment_are_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP_PROXY is honoured (as PTB's default client does): the proxy gets the request in
    absolute form, for a host this machine cannot even resolve."""
    seen: list[str] = []

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line, _, _ = await read_request(reader)
        seen.append(line.strip())
        writer.write(answer(b'{"ok": true, "result": "via proxy"}', "Connection: close\r\n"))
        await writer.drain()

    async with serve(proxy) as (proxy_url, _):
        for name in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "http_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy_url)
        request = AiohttpRequest()
        await request.initialize()
        status, body = await request.do_request("http://api.telegram.invalid/botT/getMe", "POST")
        await request.shutdown()
    assert (status, json.loads(body)["result"]) == (200, "via proxy")
    assert seen == ["POST http://api.telegram.invalid/botT/getMe HTTP/1.1"]


def black_hole() -> tuple[socket.socket, list[socket.socket], int]:
    """A loopback port that drops connection attempts: a listener with a full backlog."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        s = socket.socket()
        s.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            s.connect(("127.0.0.1", port))
        fillers.append(s)
    time.sleep(0.1)
    return listener, fillers, port


@async_test
async def test_a_black_holed_first_address_falls_back_to_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Happy Eyeballs: the name has two addresses, the first drops every SYN (as a broken
    IPv6 route does); the second is tried a moment later and answers."""
    listener, fillers, dead = black_hole()
    real = socket.getaddrinfo

    async with serve(keep_alive_echo) as (url, _):
        live = int(url.rsplit(":", 1)[1])

        def two_addresses(host, port, *args, **kwargs):
            if host != "api.two.test":
                return real(host, port, *args, **kwargs)
            tcp = (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "")
            return [(*tcp, ("127.0.0.1", dead)), (*tcp, ("127.0.0.1", live))]

        monkeypatch.setattr(socket, "getaddrinfo", two_addresses)
        request = AiohttpRequest(connect_timeout=3.0)
        await request.initialize()
        try:
            status, _ = await request.do_request("http://api.two.test/botT/getMe", "POST")
        finally:
            await request.shutdown()
            for s in [listener, *fillers]:
                s.close()
    assert status == 200


@pytest.mark.parametrize(
    "garbage",
    [
        b"SMTP ready\r\n\r\n",
        b"HTTP/1.1 abc OK\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
    ],
)
@async_test
async def test_broken_answers_are_network_errors(garbage: bytes) -> None:
    async def broken(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(garbage)
        await writer.drain()

    async with serve(broken) as (url, _):
        request = AiohttpRequest()
        await request.initialize()
        with pytest.raises(NetworkError):
            await request.do_request(f"{url}/botT/getMe", "POST")
        await request.shutdown()


@async_test
async def test_timeouts() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await asyncio.sleep(5)

    async with serve(silent) as (url, _):
        request = AiohttpRequest(pool_size=1, read_timeout=0.1, pool_timeout=0.05)
        await request.initialize()
        with pytest.raises(TimedOut):
            await request.do_request(f"{url}/botT/getMe", "POST")
        # an explicit read timeout wins over the default
        slow = asyncio.create_task(request.do_request(f"{url}/botT/getMe", "POST", read_timeout=1))
        await asyncio.sleep(0.05)
        with pytest.raises(TimedOut, match="not sent"):  # the only connection is busy
            await request.do_request(f"{url}/botT/getMe", "POST")
        with pytest.raises(TimedOut):
            await slow
        await request.shutdown()


@async_test
async def test_nothing_listening_is_a_network_error() -> None:
    async with serve(keep_alive_echo) as (url, _):
        pass  # closed: the port is free again
    request = AiohttpRequest()
    await request.initialize()
    with pytest.raises(NetworkError, match="cannot connect"):
        await request.do_request(f"{url}/botT/getMe", "POST")
    with pytest.raises(NetworkError, match="scheme"):
        await request.do_request("ftp://example.org/x", "POST")
    await request.shutdown()
    with pytest.raises(RuntimeError):
        await request.do_request(f"{url}/botT/getMe", "POST")


@async_test
async def test_a_ptb_bot_talks_through_it() -> None:
    async def get_me(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (await read_request(reader))[0]:
            me = {"id": 1, "is_bot": True, "first_name": "Durak", "username": "durak_bot"}
            writer.write(answer(json.dumps({"ok": True, "result": me}).encode()))
            await writer.drain()

    async with serve(get_me) as (url, _):
        bot = Bot("1:T", base_url=f"{url}/bot", request=AiohttpRequest())
        async with bot:
            assert bot.username == "durak_bot"


def test_slim_updates_keeps_what_the_bot_reads_of_a_pressed_message() -> None:
    panel = {
        "message_id": 7,
        "date": 1,
        "chat": {"id": 5, "type": "private"},
        "from": {"id": 1, "is_bot": True, "first_name": "Durak"},
        "text": "your hand: 6♠ 7♥",
        "reply_markup": {"inline_keyboard": [[{"text": "6♠", "callback_data": "1g.1.1.c1"}]]},
    }
    ann = {"id": 5, "is_bot": False, "first_name": "Ann"}
    press = {"id": "q1", "from": ann, "chat_instance": "i", "data": "1g.1.1.c1"}
    answer = {
        "ok": True,
        "result": [
            {"update_id": 1, "callback_query": {**press, "message": panel}},
            {"update_id": 2, "message": panel},  # other updates are left alone
            {"update_id": 3, "callback_query": press},  # a button under an inline message
        ],
    }
    slim = json.loads(slim_updates(json.dumps(answer).encode()))
    assert slim["result"][0]["callback_query"] == {
        **press,
        topics.PRESSED: {
            "chat_id": 5,
            "chat_type": "private",
            "title": None,
            "message_id": 7,
            "thread": 0,
            "on_keyboard": True,
        },
    }
    assert slim["result"][1:] == answer["result"][1:]
    for odd in (b"not json", b'{"ok": false}', b'{"ok": true, "result": 5}', b"[1]"):
        assert slim_updates(odd) == odd
    # PTB makes an Update of it without a Message; the handlers read it through topics
    update = Update.de_json(slim["result"][0], Bot("1:T"))
    assert update.callback_query is not None and update.callback_query.message is None
    where = topics.pressed(update.callback_query)
    assert where is not None and (where.chat.id, where.chat.type) == (5, "private")
    assert (where.message_id, where.thread) == (7, 0)
    inline = Update.de_json(slim["result"][2], Bot("1:T"))
    assert inline.callback_query is not None and topics.pressed(inline.callback_query) is None


def test_a_slim_press_tells_whether_its_button_is_still_on_the_message() -> None:
    """Telegram hands over the pressed message as it is now: a press made before an edit
    that took its button away is told apart (the handlers answer "the table changed")."""
    chat = {"id": 5, "type": "private"}
    ann = {"id": 5, "is_bot": False, "first_name": "Ann"}
    keyboard = {"inline_keyboard": [[{"text": "Take", "callback_data": "1g.1.t"}]]}
    other = {"inline_keyboard": [[{"text": "Refresh", "callback_data": "1g.1.r"}], []]}
    messages = [
        {"message_id": 7, "date": 1, "chat": chat, "reply_markup": keyboard},
        {"message_id": 7, "date": 1, "chat": chat, "reply_markup": other},
        {"message_id": 7, "date": 1, "chat": chat},  # its keyboard edited away
        {"message_id": 7, "date": 0, "chat": chat},  # inaccessible: nothing to tell by
        {"message_id": 7, "date": 1, "chat": chat, "reply_markup": {"inline_keyboard": 3}},
    ]
    answer = {
        "ok": True,
        "result": [
            {
                "update_id": n,
                "callback_query": {
                    "id": f"q{n}",
                    "from": ann,
                    "chat_instance": "i",
                    "data": "1g.1.t",
                    "message": message,
                },
            }
            for n, message in enumerate(messages)
        ],
    }
    slim = json.loads(slim_updates(json.dumps(answer).encode()))["result"]
    bot = Bot("1:T")
    seen = []
    for update in slim:
        query = Update.de_json(update, bot).callback_query
        assert query is not None
        where = topics.pressed(query)
        assert where is not None
        seen.append(where.on_keyboard)
    assert seen == [True, False, False, None, None]
    # a Message PTB built (not slimmed) is read the same way
    for message, expected in zip(messages[:3], (True, False, False), strict=True):
        query = Update.de_json(
            {
                "update_id": 1,
                "callback_query": {**answer["result"][0]["callback_query"], "message": message},
            },
            bot,
        ).callback_query
        assert query is not None
        where = topics.pressed(query)
        assert where is not None and where.on_keyboard is expected


def test_a_slim_press_in_a_forum_topic_keeps_its_topic_and_chat() -> None:
    """The topic counts only with is_topic_message (a reply's thread id is no topic), and
    the group's title and type stay for the handlers (the title cache, the private check);
    a message of an unexpected shape is left for PTB to judge."""
    group = {"id": -1005, "type": "supergroup", "title": "Durak club", "is_forum": True}
    lobby = {"message_id": 9, "date": 1, "chat": group, "text": "lobby"}
    ann = {"id": 5, "is_bot": False, "first_name": "Ann"}
    press = {"id": "q1", "from": ann, "chat_instance": "i", "data": "1j.3"}
    in_topic = {**lobby, "message_thread_id": 42, "is_topic_message": True}
    a_reply = {**lobby, "message_thread_id": 8}  # in General, a reply to message 8
    odd = {"message_id": "9", "date": 1, "chat": group}
    answer = {
        "ok": True,
        "result": [
            {"update_id": n, "callback_query": {**press, "message": message}}
            for n, message in enumerate((in_topic, a_reply, odd))
        ],
    }
    slim = json.loads(slim_updates(json.dumps(answer).encode()))["result"]
    bot = Bot("1:T")
    found = []
    for update in slim[:2]:
        query = Update.de_json(update, bot).callback_query
        assert query is not None
        where = topics.pressed(query)
        assert where is not None
        found.append((where.chat.id, where.chat.type, where.chat.title, where.message_id))
        found.append(where.thread)
        assert topics.of_update(Update.de_json(update, bot)) == where.thread
    assert found == [
        (-1005, "supergroup", "Durak club", 9),
        42,
        (-1005, "supergroup", "Durak club", 9),
        0,
    ]
    assert slim[2]["callback_query"]["message"] == odd


@async_test
async def test_updates_request_trims_get_updates_answers_only() -> None:
    panel = {"message_id": 7, "date": 1, "chat": {"id": 5, "type": "private"}, "text": "hand"}
    ann = {"id": 5, "is_bot": False, "first_name": "Ann"}  # (PTB parses it: it is kept)
    query = {"id": "q", "from": ann, "chat_instance": "i", "message": panel}
    payload = {"ok": True, "result": [{"update_id": 1, "callback_query": query}]}
    answer_body = json.dumps(payload).encode()

    async def updates(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (await read_request(reader))[0]:
            writer.write(answer(answer_body))
            await writer.drain()

    async with serve(updates) as (url, _):
        request = UpdatesRequest()
        await request.initialize()
        _, trimmed = await request.do_request(f"{url}/botT/getUpdates", "POST")
        _, other = await request.do_request(f"{url}/botT/getMe", "POST")
        await request.shutdown()
    query = json.loads(trimmed)["result"][0]["callback_query"]
    assert "message" not in query
    assert query[topics.PRESSED] == {
        "chat_id": 5,
        "chat_type": "private",
        "title": None,
        "message_id": 7,
        "thread": 0,
        "on_keyboard": None,  # a query without data
    }
    assert other == answer_body  # other methods' answers pass untouched


class Refused(Exception):
    pass


@async_test
async def test_the_fence_stops_every_request_before_a_byte_leaves() -> None:
    """On PostgreSQL only the lease's holder sends: once its fence refuses, no request
    reaches the server, neither on a kept-alive connection nor on a new one."""
    seen: list[str] = []

    async def recording(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            request_line, _headers, _body = await read_request(reader)
            if not request_line:
                return
            seen.append(request_line.split()[1])
            writer.write(answer(b'{"ok": true, "result": true}'))
            await writer.drain()

    sure = True

    async def fence() -> None:
        if not sure:
            raise Refused

    async with serve(recording) as (url, _):
        for request in (AiohttpRequest(), UpdatesRequest()):
            request.fence = fence
            await request.initialize()
            try:
                sure = True
                await request.do_request(f"{url}/sendMessage", "POST", params(text="a"))
                sure = False
                with pytest.raises(Refused):  # the kept-alive connection
                    await request.do_request(f"{url}/sendMessage", "POST", params(text="b"))
                with pytest.raises(Refused):  # a connection of its own
                    await asyncio.gather(
                        *(
                            request.do_request(f"{url}/getUpdates", "POST", params(offset=1))
                            for _ in range(3)
                        )
                    )
            finally:
                await request.shutdown()
    assert seen == ["/sendMessage", "/sendMessage"]


@async_test
async def test_the_fence_is_asked_again_as_the_bytes_go_out() -> None:
    """aiohttp writes a request in a task of its own, a loop's turn after it has its
    connection: a process frozen in between must not send the request when it thaws."""
    seen: list[str] = []

    async def recording(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request_line, _headers, _body = await read_request(reader)
        seen.append(request_line)

    calls = 0

    async def fence() -> None:  # sure when the connection is taken, not a moment later
        nonlocal calls
        calls += 1
        if calls > 1:
            raise Refused

    async with serve(recording) as (url, _):
        request = AiohttpRequest()
        request.fence = fence
        await request.initialize()
        try:
            with pytest.raises((Refused, NetworkError)):
                await request.do_request(f"{url}/sendMessage", "POST", params(text="a"))
        finally:
            await request.shutdown()
        await asyncio.sleep(0.1)
    assert calls == 2 and seen in ([], [""])  # the connection closed with nothing sent


@async_test
async def test_a_fence_that_waits_holds_the_request_back() -> None:
    """After a gap in the loop's progress the lease's fence waits for a fresh heartbeat:
    until it returns, not a byte of the request leaves; then the request goes as usual."""
    seen: list[str] = []

    async def recording(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            request_line, _headers, _body = await read_request(reader)
            if not request_line:
                return
            seen.append(request_line.split()[1])
            writer.write(answer(b'{"ok": true, "result": true}'))
            await writer.drain()

    waiting, sure = asyncio.Event(), asyncio.Event()

    async def fence() -> None:
        if not sure.is_set():
            waiting.set()
            await sure.wait()

    async with serve(recording) as (url, _):
        request = AiohttpRequest()
        request.fence = fence
        await request.initialize()
        try:
            sending = asyncio.create_task(
                request.do_request(f"{url}/sendMessage", "POST", params(text="a"))
            )
            await asyncio.wait_for(waiting.wait(), 30)  # a hang guard
            assert seen == [] and not sending.done()
            sure.set()
            assert (await sending)[0] == 200
        finally:
            await request.shutdown()
    assert seen == ["/sendMessage"]
