"""Who has the Mini App open, for which game, the limits of one connection, and the
pushes: every change of a game (or a lobby) sent to each page open on it (the presenter's
``Live``), the phrases said at a table, and how many watch it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass, field

from aiohttp import web

from durak import Game
from durak.service import LOBBY, RUNNING, GameInfo

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


#: What a page shows: a lobby (or Play again's), a game (its table, then its end), or
#: a finished game's replay (nothing is pushed to it).
LOBBY_MODE, GAME_MODE, REPLAY_MODE = "lobby", "game", "replay"


@dataclass(eq=False)
class Conn:
    """One open page: its user, the game it shows, his seat there (``None``: watching),
    and what it shows of that game (``mode``)."""

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
    mode: str = GAME_MODE
    #: His name as a seat would carry it (he may join a lobby from the page).
    name: str = ""

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
        #: game: how many watch, as its pages were last told (``count_watchers``)
        self._told: dict[int, int] = {}

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

    def moved(self, old: int, new: int, mode: str = GAME_MODE) -> None:
        """A sprint match dealt again (or Play again opened a lobby, ``mode``): its
        pages follow to the next deal (the lobby). A replay stays where it is."""
        for conn in self.of_game(old):
            if conn.mode == REPLAY_MODE:
                continue
            self._games[old].discard(conn)
            conn.game_id = new
            conn.shown = -1
            conn.mode = mode
            self._games.setdefault(new, set()).add(conn)
        if not self._games.get(old, True):
            del self._games[old]

    def lobby(
        self, info: GameInfo, title: str, note: str = "", fields: dict[str, str] | None = None
    ) -> None:
        """Every page open on this lobby gets it, each as its user sees it (his buttons);
        a Play-again lobby first takes over the pages left on the game before it. A lobby
        that was dealt is a game: its state comes with the table (:meth:`push`)."""
        if info.previous_game_id is not None and info.status == LOBBY:
            self.moved(info.previous_game_id, info.game_id, LOBBY_MODE)
        if info.status == RUNNING:
            return
        for conn in self.of_game(info.game_id):
            if conn.mode == LOBBY_MODE:
                conn.seat = info.seat_of(conn.user_id)
                message = protocol.lobby(info, conn.user_id, conn.lang, title, note, fields)
                conn.send(protocol.dumps(message))

    def push(self, info: GameInfo, game: Game, table: render.Table) -> None:
        """Every page open on this game gets the new state, each its own seat's view:
        one message per page, made once per (seat, language). A page that showed the
        lobby shows the game from its deal on, at its user's seat (or watching)."""
        made: dict[tuple[int | None, str], str] = {}
        version = max(table.version, game.view(None).moves)
        dealt = False
        for conn in self.of_game(info.game_id):
            if conn.mode == LOBBY_MODE:
                conn.mode, conn.seat, dealt = GAME_MODE, info.seat_of(conn.user_id), True
            elif conn.mode == REPLAY_MODE:
                continue
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
        if dealt:
            self.count_watchers(info.game_id)

    def say(self, game_id: int, seat: int, phrase: str) -> None:
        """A quick phrase said at seat ``seat``: to every page of the game (its table or
        its end), each in its own language; never to the group."""
        made: dict[str, str] = {}
        for conn in self.of_game(game_id):
            if conn.mode != GAME_MODE:
                continue
            text = made.get(conn.lang)
            if text is None:
                text = made[conn.lang] = protocol.dumps(protocol.said(seat, phrase, conn.lang))
            conn.send(text)

    def watchers(self, game_id: int) -> int:
        """How many members who do not play have the game's table open (each once)."""
        return len(
            {c.user_id for c in self.of_game(game_id) if c.seat is None and c.mode == GAME_MODE}
        )

    def count_watchers(self, game_id: int) -> None:
        """Tell the game's pages how many watch, if that changed since they were told."""
        n = self.watchers(game_id)
        if self._told.get(game_id, 0) == n:
            return
        self._told[game_id] = n
        if not self._games.get(game_id):
            self._told.pop(game_id, None)
            return
        text = protocol.dumps({"watchers": n})
        for conn in self.of_game(game_id):
            if conn.mode == GAME_MODE:
                conn.send(text)

    def opened(self, conn: Conn) -> None:
        """A page opened (or closed, or moved on): everyone is told how many watch
        now if that changed; a new player's page is told once how many watch."""
        n = self._told.get(conn.game_id, 0)
        self.count_watchers(conn.game_id)
        if n and self._told.get(conn.game_id, 0) == n and conn.mode == GAME_MODE:
            conn.send(protocol.dumps({"watchers": n}))

    def all(self) -> tuple[Conn, ...]:
        return tuple(c for conns in self._users.values() for c in conns)

    def count(self) -> int:
        return sum(len(c) for c in self._users.values())
