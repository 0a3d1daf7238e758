"""Who has the Mini App open, for which game, the limits of one connection, and the
pushes: every change of a game sent to each page open on it (the presenter's ``Live``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field

from aiohttp import web

from durak import Game
from durak.service import RUNNING, GameInfo

from ..ui import render
from . import protocol

__all__ = ["Bucket", "Conn", "Registry"]

log = logging.getLogger(__name__)

#: Messages a connection may queue for a page that does not read them; then it is closed.
QUEUE = 64


@dataclass
class Bucket:
    """A token bucket: ``burst`` messages at once, ``rate`` a second after that."""

    burst: float
    rate: float
    tokens: float = -1.0
    at: float = field(default_factory=time.monotonic)

    def take(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        if self.tokens < 0:
            self.tokens = self.burst
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


@dataclass(eq=False)
class Conn:
    """One open page: its user, the game it shows, his seat there (``None``: watching)."""

    ws: web.WebSocketResponse
    user_id: int
    game_id: int
    seat: int | None
    lang: str
    bucket: Bucket
    queue: asyncio.Queue[str] = field(default_factory=lambda: asyncio.Queue(QUEUE))
    writer: asyncio.Task[None] | None = None
    #: The version of the last state sent: the same state is not sent twice.
    shown: int = -1
    closing: asyncio.Task[bool] | None = None

    def start(self) -> None:
        self.writer = asyncio.create_task(self._write())

    def send(self, text: str) -> None:
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:  # a page that does not read: close it, it reconnects
            if self.closing is not None:  # (closing already: said and done once)
                return
            # a page's doing: not a line at INFO for each (issue 36 item 3)
            log.debug("webapp: user %d reads too slowly; closing", self.user_id)
            if self.writer is not None:
                self.writer.cancel()
            self.closing = asyncio.create_task(self.ws.close(code=1008, message=b"slow"))

    async def _write(self) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError, asyncio.CancelledError):
            while True:
                text = await self.queue.get()
                await self.ws.send_str(text)

    async def stop(self) -> None:
        if self.writer is not None:
            self.writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.writer


class Registry:
    """The open connections by game and by user, with a cap per user."""

    def __init__(self, per_user: int) -> None:
        self.per_user = per_user
        self._games: dict[int, set[Conn]] = {}
        self._users: dict[int, set[Conn]] = {}

    def add(self, conn: Conn) -> bool:
        mine = self._users.setdefault(conn.user_id, set())
        if len(mine) >= self.per_user:
            if not mine:
                del self._users[conn.user_id]
            return False
        mine.add(conn)
        self._games.setdefault(conn.game_id, set()).add(conn)
        return True

    def remove(self, conn: Conn) -> bool:
        """Forget ``conn``; True if it was its user's last page of its game."""
        mine = self._users.get(conn.user_id)
        if mine is None or conn not in mine:
            return False
        mine.discard(conn)
        if not mine:
            del self._users[conn.user_id]
        game = self._games.get(conn.game_id)
        if game is not None:
            game.discard(conn)
            if not game:
                del self._games[conn.game_id]
        return not self.watching(conn.user_id, conn.game_id)

    def watching(self, user_id: int, game_id: int) -> bool:
        """Whether the user has this game open in the Mini App now."""
        return any(c.game_id == game_id for c in self._users.get(user_id, ()))

    def of_game(self, game_id: int) -> tuple[Conn, ...]:
        return tuple(self._games.get(game_id, ()))

    def moved(self, old: int, new: int) -> None:
        """A sprint match dealt again: its pages follow to the next deal."""
        for conn in self._games.pop(old, set()):
            conn.game_id = new
            conn.shown = -1
            self._games.setdefault(new, set()).add(conn)

    def push(self, info: GameInfo, game: Game, table: render.Table) -> None:
        """Every page open on this game gets the new state, each its own seat's view:
        one message per page, made once per (seat, language)."""
        made: dict[tuple[int | None, str], str] = {}
        version = max(table.version, game.view(None).moves)
        for conn in self.of_game(info.game_id):
            if conn.seat is not None and info.seats[conn.seat].left:
                conn.seat = None  # he left or was kicked: the AI's hand is not his to see
                conn.shown = -1
            if conn.shown == version and info.status == RUNNING:
                continue
            key = (conn.seat, conn.lang)
            text = made.get(key)
            if text is None:
                view = game.view(conn.seat)
                text = made[key] = protocol.dumps(
                    protocol.state(protocol.for_seat(table, view), conn.lang)
                )
            conn.shown = version
            conn.send(text)

    def all(self) -> tuple[Conn, ...]:
        return tuple(c for conns in self._users.values() for c in conns)

    def count(self) -> int:
        return sum(len(c) for c in self._users.values())
