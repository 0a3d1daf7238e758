"""Start-up and outages: settings first, retries with one line each, the token hidden."""

from __future__ import annotations

import asyncio
import logging

import pytest
from telegram.error import InvalidToken, NetworkError

import bot.transport.runner as runner
from bot.__main__ import main
from bot.app import Redact, build_application
from bot.config import Config
from bot.transport.request import UpdatesRequest
from tests.fake_telegram.fixtures import async_test

from .harness import free_port

TOKEN = "123456789:" + "A" * 35


def test_an_unusable_database_folder_stops_the_start_before_any_network_call(
    monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv("DURAK_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("DURAK_API_URL", f"http://127.0.0.1:{free_port()}/bot")
    monkeypatch.setenv("DURAK_DB", str(tmp_path / "missing" / "db.sqlite3"))
    assert main([]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not exist" in err[0]
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("DURAK_DB", str(tmp_path / "file" / "db.sqlite3"))
    assert main([]) == 2


class FlakyApp:
    """An application whose initialize (getMe) fails ``failures`` times."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.calls = 0

    async def initialize(self) -> None:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)


@async_test
async def test_start_retries_with_backoff_and_one_warning_per_attempt(monkeypatch, caplog):
    monkeypatch.setattr(runner, "BACKOFF", (0.01, 0.02))
    app = FlakyApp(NetworkError("connection refused"), NetworkError("connection refused"))
    with caplog.at_level(logging.INFO, logger="bot.transport.runner"):
        assert await runner._initialize(app, asyncio.Event())  # type: ignore[arg-type]
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert app.calls == 3 and len(warnings) == 2
    assert all("cannot reach the Bot API" in r.getMessage() for r in warnings)
    assert all(r.exc_info is None for r in caplog.records)  # no traceback


@async_test
async def test_a_refused_token_is_one_line_without_the_token():
    app = FlakyApp(InvalidToken(f"The token `{TOKEN}` was rejected by the server."))
    with pytest.raises(runner.StartError) as caught:
        await runner._initialize(app, asyncio.Event())  # type: ignore[arg-type]
    assert TOKEN not in str(caught.value) and "\n" not in str(caught.value)


def test_the_token_is_never_logged():
    record = logging.LogRecord(
        "telegram.ext", logging.DEBUG, "x", 1, "POST %s/getMe", (f"https://x/bot{TOKEN}",), None
    )
    try:
        raise InvalidToken(f"The token `{TOKEN}` was rejected by the server.")
    except InvalidToken:
        import sys

        record.exc_info = sys.exc_info()
    Redact((TOKEN,)).filter(record)
    text = logging.Formatter().format(record)
    assert TOKEN not in text and "<token>" in text


@async_test
async def test_an_outage_is_one_warning_and_its_end_one_info(caplog):
    port = free_port()
    url = f"http://127.0.0.1:{port}/botT/getUpdates"
    request = UpdatesRequest(connect_timeout=1)
    await request.initialize()
    with caplog.at_level(logging.INFO, logger="bot.transport.request"):
        for _ in range(3):
            with pytest.raises(NetworkError):
                await request.do_request(url, "POST")

        async def ok(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while await reader.readline() not in (b"\r\n", b""):
                pass
            body = b'{"ok": true, "result": []}'
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(ok, "127.0.0.1", port)
        try:
            for _ in range(2):
                assert (await request.do_request(url, "POST"))[0] == 200
        finally:
            server.close()
            await request.shutdown()
    lines = [
        (r.levelname, r.getMessage()) for r in caplog.records if r.name == "bot.transport.request"
    ]
    assert [level for level, _ in lines] == ["WARNING", "INFO"]
    assert all(r.exc_info is None for r in caplog.records)


@async_test
async def test_a_stop_while_the_start_retries_closes_the_http_clients(monkeypatch, tmp_path):
    """SIGTERM while the Bot API cannot be reached: the clients that tried are closed
    (PTB's shutdown skips a bot whose getMe never worked; asyncio then logged two ERRORs,
    "Unclosed client session", at the exit)."""
    monkeypatch.setattr(runner, "BACKOFF", (0.05,))
    config = Config(
        token=TOKEN,
        db_path=str(tmp_path / "db.sqlite3"),
        api_url=f"http://127.0.0.1:{free_port()}/bot",
    )
    app = build_application(config)
    stop = asyncio.Event()
    serving = asyncio.create_task(runner.serve(app, config, stop))
    http = app.bot_data["durak"].http
    while not any(h._session is not None for h in http):  # the first attempt is on its way
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    stop.set()
    await asyncio.wait_for(serving, 5)
    assert len(http) == 2 and all(h._session is None for h in http)
