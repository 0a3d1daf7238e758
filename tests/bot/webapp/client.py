"""Opening the Mini App as a player would, without a browser: the WebSocket with initData
made with the test's token (the browser tests use the same)."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bot.webapp import sign_init_data
from tests.fake_telegram import FakeTelegram
from tests.fake_telegram.models import Chat, User

from ..harness import SCALE, WEBAPP_PATH, WEBHOOK_PATH, Table, free_port, running_bot


def offered(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Every move the state offers its page (its cards' options, its buttons, its
    several-card openings), as record steps."""
    offer = state["offer"]
    steps = [o["step"] for entry in offer["cards"].values() for o in entry["options"]]
    steps += [a["step"] for a in offer["actions"]]
    steps += [o["step"] for o in offer["openings"]]
    return steps


def init_data(server: FakeTelegram, user: User, start: str | None = None, **kw: Any) -> str:
    return sign_init_data(
        server.token,
        {"id": user.id, "first_name": user.first_name, "language_code": user.language_code},
        start_param=start,
        **kw,
    )


@dataclass
class Page:
    """One open WebSocket and every message it got, in order."""

    ws: aiohttp.ClientWebSocketResponse
    got: list[dict[str, Any]] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)

    async def next(self, timeout: float = 5.0) -> dict[str, Any]:
        msg = await self.ws.receive(timeout=timeout)
        if msg.type != aiohttp.WSMsgType.TEXT:
            return {"closed": msg.type.name, "code": self.ws.close_code}
        self.frames.append(msg.data)
        data = json.loads(msg.data)
        self.got.append(data)
        return data

    async def until(self, key: str, timeout: float = 5.0) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while True:
                data = await self.next(timeout)
                if key in data or "closed" in data:
                    return data

    async def state(self, timeout: float = 5.0) -> dict[str, Any]:
        data = await self.until("state", timeout)
        assert "state" in data, data
        return data["state"]

    async def send(self, message: Any) -> None:
        await self.ws.send_str(message if isinstance(message, str) else json.dumps(message))


@asynccontextmanager
async def page(port: int, first: Any | None) -> AsyncIterator[Page]:
    url = f"http://127.0.0.1:{port}{WEBAPP_PATH}/ws"
    async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:
        p = Page(ws)
        if first is not None:
            await p.send(first)
        yield p


@dataclass
class Game:
    server: FakeTelegram
    port: int
    users: list[User]
    group: Chat
    table: Table
    app: Any
    game_id: int
    outsider: User
    members: list[User] = field(default_factory=list)


@asynccontextmanager
async def a_game(
    make_fake_telegram: Any,
    tmp_path: Any,
    players: int = 2,
    rules: str = "",
    *,
    webhook: bool = False,
    settings: dict[str, Any] | None = None,
    members: int = 0,
    **tweaks: Any,
) -> AsyncIterator[Game]:
    """A running game of ``players`` (started in the private chat: they can get panels),
    an outsider (and ``members`` more) in the group, the Mini App on a free port; with
    ``webhook``, updates come by the webhook, served on that port beside the Mini App (as
    ``python -m bot`` serves both in webhook mode). ``settings``: more of the bot's Config.
    Its turn clock stands still (a clock the test moves, never moved here): a page's
    player is never timed out by a slow machine, the state's version moves only with the
    players' moves."""
    from tests.clock import ManualClock
    from tests.fake_telegram import RateLimits

    tweaks.setdefault("turn_clock", ManualClock(time.time()))

    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Player{i}", started=True) for i in range(players)]
    outsider = server.add_user("Outsider", started=True)
    others = [server.add_user(f"Member{i}") for i in range(members)]
    group = server.add_group("Friends", [*users, outsider, *others], admins=[users[0]])
    port = free_port()
    if webhook:
        server.webhook_target = f"http://127.0.0.1:{port}/{WEBHOOK_PATH}"
    async with running_bot(
        server,
        tmp_path / "durak.sqlite3",
        webapp_port=port,
        webhook_port=port if webhook else None,
        settings=settings,
        **tweaks,
    ) as app:
        table = Table(server, group, [*users], random.Random(players))
        if rules:
            await users[0].send(group, f"/newgame {rules}")
            await server.wait_for(lambda: table.lobby() is not None, 10, what="a lobby")
        else:
            await table.open_lobby()
        await table.join_all()
        await table.start()
        service = app.bot_data["durak"].service
        game_id = (await service.running_games())[0].game_id
        yield Game(server, port, users, group, table, app, game_id, outsider, others)
