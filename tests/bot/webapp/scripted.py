"""The page in Chromium against a table the test controls: the real engine and the real
protocol (``protocol.state``, the bot's own offers and texts) behind the page's WebSocket,
which Playwright routes to this script instead of a bot. So a test sets up exactly the
hand and the moment it needs (a 36-card hand, a state that comes mid-drag, a refusal),
and sees every frame the page sends. The page itself is served by the bot's own
``WebApp`` routes (content hashes, Content-Security-Policy)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from bot.ui import events, render
from bot.webapp import WebApp, protocol
from durak import Game, Rules
from durak.actions import action_from_step
from durak.errors import IllegalAction
from durak.service import Seat

from ..harness import WEBAPP_PATH, free_port

ALL = [f"{r}{s}" for s in "SHDC" for r in ("6", "7", "8", "9", "10", "J", "Q", "K", "A")]


def position(hands: dict[str, list[str]], attacker: str = "Ann", **more: Any) -> dict[str, Any]:
    """A record's position (RECORDS.md): these hands, trump hearts, no stock."""
    return {"trump": "H", "hands": hands, "attacker": attacker, "stock": [], **more}


@dataclass
class Scripted:
    """The bot as the page sees it: one game, one seat (``seat``), pushed on every change."""

    game: Game
    seat: int = 0
    lang: str = "en"
    version: int = 0
    #: every message the page sent, parsed
    got: list[dict[str, Any]] = field(default_factory=list)
    #: what a move does (default: applied to the game, the new state pushed)
    respond: Callable[[Scripted, dict[str, Any]], None] | None = None
    routes: list[Any] = field(default_factory=list)

    def state(self) -> dict[str, Any]:
        g = self.game
        public = g.view(None)
        seats = tuple(Seat(i, 100 + i, name) for i, name in enumerate(g.players))
        story = events.story(id(self), g)
        table = render.Table(7, self.version, "Friends", seats, public, story=story)
        return protocol.state(protocol.for_seat(table, g.view(self.seat)), self.lang)

    def push(self) -> None:
        text = protocol.dumps(self.state())
        for ws in self.routes:
            ws.send(text)

    def refuse(self, code: str) -> None:
        for ws in self.routes:
            ws.send(protocol.dumps(protocol.error(code, self.lang)))

    def apply(self, seat: int, step: dict[str, Any]) -> None:
        """Another player's move (or this one's), then the new state on the page."""
        self.game.apply(seat, action_from_step(step))
        self.version += 1
        self.push()

    def moves(self) -> list[dict[str, Any]]:
        return [m["move"] for m in self.got if "move" in m]

    def handler(self, ws: Any) -> None:
        self.routes.append(ws)

        def message(text: str | bytes) -> None:
            data = json.loads(text)
            self.got.append(data)
            if "init" in data:
                ws.send(protocol.dumps({"texts": protocol.texts(self.lang)}))
                ws.send(protocol.dumps(self.state()))
            elif "sync" in data:
                ws.send(protocol.dumps(self.state()))
            elif "move" in data:
                if self.respond is not None:
                    self.respond(self, data)
                    return
                try:
                    self.apply(self.seat, data["move"])
                except IllegalAction as e:
                    self.refuse(e.code)

        ws.on_message(message)


def scripted(hands: dict[str, list[str]], rules: Rules | None = None, **more: Any) -> Scripted:
    names = list(hands)
    return Scripted(Game.from_start(rules or Rules(), names, position(hands, **more)))


@asynccontextmanager
async def page_server() -> AsyncIterator[int]:
    """The page's files as the bot serves them, on a free port of 127.0.0.1."""
    app = web.Application()
    WebApp(WEBAPP_PATH, "0:test", None, None).install(app)  # type: ignore[arg-type]
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    try:
        yield port
    finally:
        await runner.cleanup()


def link(port: int, theme: dict[str, str] | None = None, version: str | None = None) -> str:
    from .browser import url

    return url(port, "user=%7B%22id%22%3A100%7D&hash=test", None, theme, version)
