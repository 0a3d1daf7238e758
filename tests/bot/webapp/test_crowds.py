"""Issue 36 item 1: pages cannot starve Telegram's updates. A page's WebSocket is inside a
request for its whole life, and the listener's cap never closes a connection inside one:
800 upgrades that never sent initData (or 768 real spectator pages) left the webhook
refused. Pages have a cap of their own below the listener's, a connection without initData
is the first to go when a page needs room, and one address may hold only a few of those.

The crowds come from another process (tests/bot/webapp/crowd.py), each connection from an
address of its own where it says so; the listener's cap is lowered to ``CAP``."""

from __future__ import annotations

import asyncio
import os
import random
import resource
import signal
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from bot.config import ConfigError, from_env
from bot.transport import listener
from bot.webapp import LIMITS, WebApp
from bot.webapp.gate import Gate, Held, source_of
from tests.dbaccess import db_rows
from tests.fake_telegram import RateLimits
from tests.fake_telegram.fixtures import async_test

from ..harness import (
    SCALE,
    WEBAPP_URL,
    WEBHOOK_PATH,
    WEBHOOK_SECRET,
    WEBHOOK_URL,
    Table,
    durak_of,
    free_port,
)
from .client import Game, a_game, init_data, page
from .crowd import crowd

ROOT = Path(__file__).resolve().parents[3]
CAP = 200  # the listener's connection cap here (768 at the usual 1,024 descriptors)
CROWD = 300  # connections in a crowd: more than the cap
#: Pages without initData are held as long as the test needs (3 s in the bot): what gives
#: room here is the pages' cap, not the wait running out.
PATIENT = replace(LIMITS, auth=600.0)


def webapp_of(g: Game) -> WebApp:
    webapp = durak_of(g.app).webapp
    assert webapp is not None
    return webapp


async def until(done: Callable[[], bool], guard: float = 10.0) -> None:
    """Wait until ``done()`` (``guard``: a hang, not a speed)."""
    async with asyncio.timeout(guard):
        while not done():
            await asyncio.sleep(0.01)


async def presses(g: Game | Table, count: int) -> None:
    """``count`` presses of the players' panels, by turns: each must be answered (a press
    waits 10 s for its answer: a hang, not a speed)."""
    table = g.table if isinstance(g, Game) else g
    for n in range(count):
        if table.ended() is not None:
            return
        user = table.users[n % len(table.users)]
        panel = table.panel(user)
        assert panel is not None
        data = [b.callback_data for b in panel.buttons if b.callback_data]
        await table.press(user, panel, table.rng.choice(data))


@async_test
async def test_upgrades_without_init_data_never_starve_the_webhook(
    make_fake_telegram, tmp_path, errors, monkeypatch
):
    monkeypatch.setattr(listener, "connection_cap", lambda: CAP)
    async with (
        a_game(make_fake_telegram, tmp_path, webhook=True, webapp_limits=PATIENT) as g,
        crowd(port=g.port, count=CROWD, mode="silent", spread=True) as c,
    ):
        await presses(g, 20)
        assert g.server.webhook is not None and g.server.webhook.failed == 0
        gate = webapp_of(g).gate
        assert gate.count <= gate.cap < CAP  # the pages kept below the listener's cap,
        assert gate.dropped >= c.ready["silent"] - gate.cap  # the oldest silent ones dropped
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_spectator_pages_never_starve_the_webhook(
    make_fake_telegram, tmp_path, errors, monkeypatch
):
    monkeypatch.setattr(listener, "connection_cap", lambda: CAP)
    async with a_game(make_fake_telegram, tmp_path, webhook=True, members=CROWD // 3) as g:
        users = [[m.id, m.first_name] for m in g.members]
        async with crowd(
            port=g.port,
            count=CROWD,
            mode="pages",
            spread=True,
            token=g.server.token,
            users=users,
            start=str(g.game_id),
        ) as c:
            assert c.ready["state"] > 0
            await presses(g, 20)
            assert g.server.webhook is not None and g.server.webhook.failed == 0
            gate = webapp_of(g).gate
            assert c.ready["state"] <= gate.cap < CAP
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_in_polling_mode_a_page_gets_in_past_held_upgrades(
    make_fake_telegram, tmp_path, errors, monkeypatch
):
    monkeypatch.setattr(listener, "connection_cap", lambda: CAP)
    async with a_game(make_fake_telegram, tmp_path, webapp_limits=PATIENT) as g:
        held = crowd(port=g.port, count=CROWD, mode="silent", spread=True)
        async with held, page(g.port, {"init": init_data(g.server, g.users[0])}) as p:
            assert (await p.state())["you"] == 0
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_the_listeners_cap_closing_upgrades_logs_no_error(
    make_fake_telegram, tmp_path, errors, monkeypatch
):
    """Without the pages' cap below it, the listener's own cap closes connections whose
    upgrade has come: aiohttp logged each as an ERROR with a traceback (issue 36 item 6)."""
    monkeypatch.setattr(listener, "connection_cap", lambda: CAP)
    monkeypatch.setattr(listener, "held_cap", lambda: 10 * CAP)
    async with (
        a_game(make_fake_telegram, tmp_path, webhook=True, webapp_limits=PATIENT) as g,
        crowd(port=g.port, count=CROWD, mode="silent", spread=True) as c,
    ):
        assert c.ready["closed"] + c.ready["refused"] > 0  # the listener made room
        await presses(g, 5)
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_one_address_holds_a_few_pages_without_init_data(
    make_fake_telegram, tmp_path, errors
):
    async with a_game(make_fake_telegram, tmp_path, webapp_limits=PATIENT) as g:
        share = PATIENT.per_source
        async with crowd(port=g.port, count=5 * share, mode="silent", source="127.0.0.9") as c:
            assert c.ready["silent"] == share and c.ready["refused"] == 4 * share
            assert webapp_of(g).gate.waiting("127.0.0.9") == share
            # from another address a page gets in
            async with page(g.port, {"init": init_data(g.server, g.users[0])}) as p:
                assert (await p.state())["you"] == 0
    assert not errors.records, [r.getMessage() for r in errors.records]


@pytest.mark.parametrize("trusted", [True, False])
@async_test
async def test_the_forwarded_header_counts_only_when_the_operator_says_so(
    make_fake_telegram, tmp_path, errors, trusted
):
    """Behind the TLS proxy every connection comes from its address: the header it sets
    (``DURAK_WEBAPP_FORWARDED_HEADER``) names the client; without that setting the header
    is anyone's word and does not count."""
    header = "X-Forwarded-For"
    settings = {"webapp_forwarded_header": header} if trusted else {}
    async with a_game(make_fake_telegram, tmp_path, settings=settings, webapp_limits=PATIENT) as g:
        share = PATIENT.per_source
        count = 3 * share
        async with crowd(
            port=g.port, count=count, mode="silent", source="127.0.0.9", header=header
        ) as c:
            assert c.ready["silent"] == (count if trusted else share)
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_a_page_without_init_data_is_closed_when_its_time_is_up(
    make_fake_telegram, tmp_path, errors
):
    assert LIMITS.auth == 3.0  # seconds to send initData (10 before issue 36)
    quick = replace(LIMITS, auth=0.2)
    async with a_game(make_fake_telegram, tmp_path, webapp_limits=quick) as g:
        async with page(g.port, None) as p:
            assert (await p.next())["error"] == "unauthorized"
            assert (await p.next())["code"] == 4401
        await until(lambda: webapp_of(g).gate.count == 0)
    assert not errors.records, [r.getMessage() for r in errors.records]


def request_from(peer: str, headers: dict[str, str] | None = None) -> web.Request:
    transport = mock.Mock()
    transport.get_extra_info.side_effect = lambda name, default=None: (
        (peer, 4711) if name == "peername" else default
    )
    return make_mocked_request("GET", "/ws", headers=headers or {}, transport=transport)


def test_the_address_a_connection_comes_from():
    proxy = "127.0.0.1"
    xff = {"X-Forwarded-For": "6.6.6.6, 203.0.113.7"}  # the client's word, then the proxy's
    assert source_of(request_from(proxy, xff)) == proxy  # not trusted unless told
    assert source_of(request_from(proxy, xff), "X-Forwarded-For") == "203.0.113.7"
    real = {"X-Real-IP": "198.51.100.2"}
    assert source_of(request_from(proxy, real), "X-Real-IP") == "198.51.100.2"
    assert source_of(request_from(proxy), "X-Real-IP") == proxy  # not set: the peer
    assert source_of(request_from(proxy, {"X-Real-IP": "nonsense"}), "X-Real-IP") == proxy
    # one client holds a whole /64 of IPv6
    assert source_of(request_from("2001:db8:1:2:aaaa::1")) == "2001:db8:1:2::/64"
    assert source_of(request_from("::ffff:192.0.2.9")) == "192.0.2.9"


def test_the_forwarded_header_setting():
    base = {"DURAK_BOT_TOKEN": "123456:" + "A" * 35}
    assert from_env(base).webapp_forwarded_header is None
    env = {**base, "DURAK_WEBAPP_FORWARDED_HEADER": "X-Real-IP"}
    assert from_env(env).webapp_forwarded_header == "X-Real-IP"
    with pytest.raises(ConfigError):
        from_env({**base, "DURAK_WEBAPP_FORWARDED_HEADER": "X-Real-IP: 1.2.3.4"})


def test_the_gate_drops_the_oldest_page_without_init_data_first():
    dropped: list[str] = []
    gate = Gate(cap=3, per_source=2)
    a = gate.enter("a", lambda: dropped.append("a"))
    b = gate.enter("b", lambda: dropped.append("b"))
    assert isinstance(a, Held) and isinstance(b, Held)
    assert gate.enter("a", lambda: dropped.append("a2")) != "source"
    assert gate.enter("a", lambda: None) == "source"  # two from "a" wait already
    gate.signed(a)  # a signed in: no longer waiting, never dropped for room
    c = gate.enter("c", lambda: dropped.append("c"))  # full: the oldest waiting goes
    assert isinstance(c, Held) and dropped == ["b"] and gate.count == 3
    gate.signed(c)
    assert gate.spare() and dropped == ["b", "a2"]  # (the listener needs room)
    assert not gate.spare()  # every page left has signed in
    d = gate.enter("d", lambda: dropped.append("d"))
    assert isinstance(d, Held) and gate.waiting("d") == 1
    gate.signed(d)
    assert gate.enter("e", lambda: None) == "full"  # every page held has signed in
    for held in (a, b, c):
        gate.leave(held)
    assert gate.count == 1 and gate.waiting() == 0 and dropped == ["b", "a2"]


class BotProcess:
    """``python -m bot`` in webhook mode with the tests' clock (tests/bot/webhook_child.py),
    in a process of its own, and the lines it logged."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, env: dict[str, str], files: int) -> BotProcess:
        def limit() -> None:  # (in the child, before it runs: its open-file limit)
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (files, hard))

        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.bot.webhook_child", cwd=ROOT, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, preexec_fn=limit,
        )  # fmt: skip
        return cls(proc)

    async def _read(self) -> None:
        assert self.proc.stderr is not None
        async for line in self.proc.stderr:
            self.lines.append(line.decode(errors="replace").rstrip("\n"))

    async def stop(self) -> int:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.wait_for(self.proc.wait(), 30)
        except TimeoutError:
            self.proc.kill()
            code = await self.proc.wait()
        await self._reader
        return code


#: The bot process's open-file limit here: a cap of 200 connections (the limit less 256),
#: 100 of them for pages.
FILES = 456


@pytest.mark.parametrize("mode", ["silent", "pages"])
@async_test
async def test_the_bot_process_on_postgresql_serves_the_webhook_beside_a_crowd(
    make_fake_telegram, pg_db, mode
):
    """As python -m bot runs (a process of its own, PostgreSQL, the webhook and the Mini
    App on one port, its cap from its own open-file limit), under the tests' clock."""
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    port = free_port()
    server.webhook_target = f"http://127.0.0.1:{port}/{WEBHOOK_PATH}"
    users = [server.add_user(f"Player{i}", started=True) for i in range(2)]
    members = [server.add_user(f"Member{i}") for i in range(CROWD // 3 if mode == "pages" else 0)]
    group = server.add_group("Friends", [*users, *members], admins=[users[0]])
    env = {
        **os.environ,
        "DURAK_BOT_TOKEN": server.token,
        "DURAK_DB": pg_db,
        "DURAK_API_URL": server.base_url,
        "DURAK_LOG_LEVEL": "INFO",
        "DURAK_WEBHOOK_URL": WEBHOOK_URL,
        "DURAK_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "DURAK_WEBHOOK_PORT": str(port),
        "DURAK_WEBAPP_URL": WEBAPP_URL,
        "DURAK_TEST_WEBAPP_AUTH": str(PATIENT.auth),
    }
    bot = await BotProcess.start(env, FILES)
    try:
        await server.wait_for(lambda: server.request_count("setWebhook") == 1, 60, what="hook")
        table = Table(server, group, users, random.Random(4))
        await table.open_lobby()
        await table.join_all()
        await table.start()
        [(game_id,)] = db_rows(pg_db, "SELECT game_id FROM games WHERE status = 'running'")
        spec: dict[str, Any] = {"port": port, "count": CROWD, "mode": mode, "spread": True}
        if mode == "pages":
            users_of = [[m.id, m.first_name] for m in members]
            spec |= {"token": server.token, "users": users_of, "start": str(game_id)}
        async with crowd(**spec) as c:
            await presses(table, 20)
            assert server.webhook is not None and server.webhook.failed == 0
            if mode == "pages":
                assert 0 < c.ready["state"] <= 100  # the pages' cap at 456 open files
    finally:
        code = await bot.stop()
    assert code == 0, "\n".join(bot.lines[-30:])
    bad = [line for line in bot.lines if " ERROR " in line or "Traceback" in line]
    assert not bad, "\n".join(bad[:20])
