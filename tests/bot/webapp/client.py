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
from tests.clock import ManualClock
from tests.fake_telegram import FakeTelegram
from tests.fake_telegram.models import Chat, User

from ..harness import (
    SCALE,
    WEBAPP_PATH,
    WEBHOOK_PATH,
    Table,
    free_port,
    running_bot,
)


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


@dataclass
class Group:
    """A group whose Mini App is its bot's main app: Ann (its admin, who opens lobbies),
    Bob and Fay (who plays on the chat's panels) started the bot, Cid never did (the page is
    his only way in), Dan is a member who watches, Eve is no member; ``clock`` is the bot's
    table pace and phrase clock."""

    server: FakeTelegram
    port: int
    group: Chat
    app: Any
    clock: ManualClock
    ann: User
    bob: User
    cid: User
    dan: User
    eve: User
    fay: User

    @property
    def table(self) -> Table:
        return Table(self.server, self.group, [self.ann, self.bob, self.cid], random.Random(5))

    def private(self, user: User) -> list[Any]:
        """Every Bot API call the bot made to ``user``'s private chat (its probe aside)."""
        return [
            r
            for r in self.server.requests()
            if str(r.params.get("chat_id")) == str(user.id) and r.method != "sendChatAction"
        ]

    async def said(self, words: str, what: str, timeout: float = 10.0) -> Any:
        """The bot's message in the group whose text has ``words`` (waited for)."""
        return await self.server.wait_for(
            lambda: next(
                (m for m in self.table.bot_messages(self.group) if words in (m.plain_text or "")),
                None,
            ),
            timeout,
            what=what,
        )

    async def lobby_link(self) -> tuple[str, int]:
        """``/newgame`` by Ann; the lobby message's Mini App link and the start parameter
        it carries (as a member taps it: Telegram hands the page that parameter)."""
        await self.ann.send(self.group, "/newgame")
        lobby = await self.server.wait_for(lambda: self.table.lobby(), 10, what="a lobby")
        link = next(b.url for b in lobby.buttons if b.url and "startapp=" in b.url)
        return link, int(link.split("startapp=")[1])


@asynccontextmanager
async def a_group(make_fake_telegram: Any, tmp_path: Any, **tweaks: Any) -> AsyncIterator[Group]:
    from tests.fake_telegram import RateLimits

    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    server.has_main_web_app = True
    ann = server.add_user("Ann", started=True)
    bob = server.add_user("Bob", started=True)
    cid = server.add_user("Cid")  # never started the bot
    dan = server.add_user("Dan", started=True)
    eve = server.add_user("Eve", started=True)
    fay = server.add_user("Fay", started=True)
    group = server.add_group("Friends", [ann, bob, cid, dan, fay], admins=[ann])
    clock = ManualClock()
    port = free_port()
    db = tmp_path / "durak.sqlite3"
    async with running_bot(server, db, webapp_port=port, pace_clock=clock, **tweaks) as app:
        yield Group(server, port, group, app, clock, ann, bob, cid, dan, eve, fay)


async def play_on_page(p: Page, rng: random.Random, stop: asyncio.Event) -> dict[str, Any]:
    """A player on his page: a random move the state offers, each time it offers one,
    until the game is over (its last state) or ``stop``."""
    state: dict[str, Any] = {}
    acted, last = -1, 0.0
    while not stop.is_set():
        try:
            data = await p.next(timeout=0.5)
        except TimeoutError:
            continue
        if "closed" in data:
            raise AssertionError(f"the page closed: {data}")
        if "state" not in data:
            continue
        state = data["state"]
        if state["over"]:
            return state
        steps = offered(state)
        if steps and state["version"] > acted:
            # a person's taps: 4 a second at most (the bot closes a page that floods it)
            await asyncio.sleep(max(0.0, last + 0.25 - asyncio.get_running_loop().time()))
            acted, last = state["version"], asyncio.get_running_loop().time()
            await p.send({"move": rng.choice(steps), "version": state["version"]})
    return state
