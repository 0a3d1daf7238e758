"""The service's core: the running games in memory, the locks, and the one shape of
every write (:meth:`Core.write`).

Running games live in memory (``game_id`` -> engine ``Game`` + version), loaded
and checked against their action logs at open (the log wins where a stored
snapshot disagrees). New games enter memory only after their COMMIT
(:meth:`Write.enter`); a write that fails or is cancelled drops the games it
touched from memory (:meth:`Core.repairing`), and they are rebuilt from the
store's log on next use. So memory never runs ahead of the disk.

Locks, always taken in this order so they cannot deadlock: the chat's lock
(lobby life cycle), then the game's lock (actions, surrender, timeouts, reads of
a running game), then the store's lock (inside ``transaction``/``reading``).
Several chats' or games' locks are taken in ascending id order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..games import Game
from . import suits
from .codec import Damaged, rebuild, rules_of, snapshot_text
from .errors import (
    DatabaseError,
    GameOver,
    GameRunning,
    LobbyExists,
    NotInGame,
    NotRunning,
    UnknownGame,
)
from .types import LOBBY, RUNNING, GameInfo, Seat

if TYPE_CHECKING:
    from ..store.base import GameRow, Store, Tx

log = logging.getLogger(__name__)

_ENDED_CACHE = 64


@dataclass(slots=True, eq=False)
class Live:
    """A running game in memory; its ``version`` always equals the stored one.

    ``info`` is the game's :class:`GameInfo` as last read, kept equal to the store's (an
    action updates it; any other write to the game drops it), so that reading a running
    game, which the bot does on every button press, costs no trip to the database."""

    game_id: int
    chat_id: int
    game: Game
    version: int
    seats: tuple[Seat, ...]
    info: GameInfo | None = None

    def seat_of(self, user_id: int) -> int:
        for s in self.seats:
            if s.user_id == user_id:
                return s.seat
        raise NotInGame(f"user {user_id} has no seat in game {self.game_id}")

    def set_seat(self, seat: Seat) -> None:
        """Take a seat's new state, once it is committed."""
        self.seats = tuple(seat if s.seat == seat.seat else s for s in self.seats)
        self.info = None


class Write:
    """One write under way: its transaction, and what memory takes once it commits."""

    __slots__ = ("_core", "done", "tx")

    def __init__(self, core: Core, tx: Tx) -> None:
        self._core = core
        self.tx = tx
        self.done: list[Callable[[], None]] = []

    def enter(self, live: Live) -> None:
        """A dealt game enters memory after the commit (never before it)."""
        live_games = self._core.live

        def enter() -> None:
            live_games.setdefault(live.game_id, live)

        self.done.append(enter)

    def after(self, then: Callable[[], None]) -> None:
        """Change memory once the write has committed."""
        self.done.append(then)


class Core:
    """What every concern of the service shares: the store, the games in memory
    and their locks, and the one shape of a write."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.live: dict[int, Live] = {}
        self.damaged: dict[int, str] = {}
        self.repair: set[int] = set()  # loaded games whose stored snapshot must be rewritten
        self.ended: OrderedDict[int, Game] = OrderedDict()
        self._game_locks: weakref.WeakValueDictionary[int, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._chat_locks: weakref.WeakValueDictionary[int, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )

    # ---- locks and the shape of a write -------------------------------------------

    def game_lock(self, game_id: int) -> asyncio.Lock:
        lock = self._game_locks.get(game_id)
        if lock is None:
            lock = self._game_locks[game_id] = asyncio.Lock()
        return lock

    def chat_lock(self, chat_id: int) -> asyncio.Lock:
        lock = self._chat_locks.get(chat_id)
        if lock is None:
            lock = self._chat_locks[chat_id] = asyncio.Lock()
        return lock

    @contextlib.asynccontextmanager
    async def locked(
        self, *, chats: Iterable[int] = (), games: Iterable[int] = ()
    ) -> AsyncIterator[None]:
        """The chats' locks, then the games' locks, each in ascending id order."""
        async with contextlib.AsyncExitStack() as held:
            for chat_id in sorted(set(chats)):
                await held.enter_async_context(self.chat_lock(chat_id))
            for game_id in sorted(set(games)):
                await held.enter_async_context(self.game_lock(game_id))
            yield

    @contextlib.asynccontextmanager
    async def write(
        self, *, chat: int | None = None, game: int | None = None, repair: Iterable[int] = ()
    ) -> AsyncIterator[Write]:
        """The one shape of a write: the chat's and the game's locks (those given),
        one transaction, and, once it commits, the memory changes the body asked for
        (:meth:`Write.enter`, :meth:`Write.after`). If it fails, ``game`` and
        ``repair`` leave memory: they are rebuilt from the store on next use."""
        chats = () if chat is None else (chat,)
        games = () if game is None else (game,)
        async with self.locked(chats=chats, games=games):
            with self.repairing(*games, *repair):
                async with self.store.transaction() as tx:
                    write = Write(self, tx)
                    yield write
            for then in write.done:
                then()

    @contextlib.contextmanager
    def repairing(self, *game_ids: int) -> Iterator[None]:
        """Memory may lag the disk after a failed write: trust only the store then."""
        try:
            yield
        except BaseException:
            for game_id in game_ids:
                self.drop(game_id)
            raise

    def drop(self, game_id: int) -> None:
        """Out of memory: the game is rebuilt from the store's log on next use."""
        self.live.pop(game_id, None)

    def forget(self, game_id: int) -> None:
        """A running game ended: out of memory, into the cache of ended games."""
        live = self.live.pop(game_id, None)
        self.damaged.pop(game_id, None)
        if live is not None:
            self.remember_ended(game_id, live.game)

    def remember_ended(self, game_id: int, game: Game) -> None:
        self.ended[game_id] = game
        self.ended.move_to_end(game_id)
        while len(self.ended) > _ENDED_CACHE:
            self.ended.popitem(last=False)

    # ---- rows and infos -----------------------------------------------------------

    async def row(self, tx: Tx, game_id: int) -> GameRow:
        row = await tx.game_row(game_id)
        if row is None:
            raise UnknownGame(f"there is no game {game_id}")
        return row

    async def refuse_open(self, tx: Tx, chat_id: int, thread_id: int = 0) -> None:
        """``lobby_exists`` (``game_running``) if the topic has an open game."""
        row = await tx.open_game_in_chat(chat_id, thread_id)
        if row is not None and row.status == RUNNING:
            raise GameRunning(f"chat {chat_id} has a running game ({row.game_id})")
        if row is not None:
            raise LobbyExists(f"chat {chat_id} already has an open lobby ({row.game_id})")

    async def info(self, tx: Tx, row: GameRow, live: Live | None = None) -> GameInfo:
        """Build a :class:`GameInfo` inside a transaction (the game's lock held)."""
        seats = tuple(await tx.seats(row.game_id))
        game: Game | None = None
        version = row.version
        if row.status == RUNNING and row.game_id not in self.damaged:
            live = live or self.live.get(row.game_id) or await self.load(tx, row, seats)
            game, version = live.game, live.version
        elif live is not None:
            game = live.game
        elif row.start is not None and row.game_id not in self.damaged:
            game = await self.ended_game(tx, row, seats)
        info = GameInfo(
            game_id=row.game_id,
            chat_id=row.chat_id,
            status=row.status,
            version=version,
            seats=seats,
            creator_id=row.creator_id,
            rules=rules_of(row.rules),
            game=game,
            created_at=row.created_at,
            updated_at=row.updated_at,
            messages=tuple(await tx.messages(row.game_id)),
            ending=row.ending(),
            seed=row.seed,
            previous_game_id=row.previous_game_id,
            suit_choice=suits.loads(row.snapshot) if row.status == LOBBY else None,
            thread_id=row.thread_id,
            cap=row.cap,
        )
        cached = self.live.get(row.game_id)
        if (
            cached is not None
            and cached is live
            and row.status == RUNNING
            and cached.version == row.version
            and row.game_id not in self.repair
        ):
            cached.info = info
        return info

    async def info_now(self, tx: Tx, game_id: int, live: Live | None = None) -> GameInfo:
        """The game's :class:`GameInfo` as the transaction sees it now."""
        return await self.info(tx, await self.row(tx, game_id), live)

    async def game(self, game_id: int) -> GameInfo:
        """A lobby or game by id; :class:`UnknownGame` if there is none."""
        live = self.live.get(game_id)
        if live is not None and live.info is not None:
            # No waiting for an action in flight: its move is in ``game`` already and its
            # version comes with its commit. Whoever acts on what he read goes through
            # apply(), which checks against the game under its lock.
            return live.info
        async with self.game_lock(game_id):
            live = self.live.get(game_id)
            if live is not None and live.info is not None:
                return live.info
            async with self.store.reading() as tx:
                return await self.info_now(tx, game_id)

    # ---- games in memory ----------------------------------------------------------

    async def running(self, game_id: int) -> Live:
        """The running game in memory, loaded from the store if needed (game lock held)."""
        live = self.live.get(game_id)
        if live is None:
            if game_id in self.damaged:
                raise DatabaseError(f"game {game_id} is damaged: {self.damaged[game_id]}")
            async with self.store.reading() as tx:
                row = await self.row(tx, game_id)
                if row.status == LOBBY:
                    raise NotRunning(f"game {game_id} has not started yet")
                if row.status != RUNNING:
                    raise GameOver(f"game {game_id} is over")
                live = await self.load(tx, row, tuple(await tx.seats(game_id)))
        if game_id in self.repair:
            await self.write_repairs([live])
        return live

    async def write_repairs(self, lives: list[Live]) -> None:
        """Write back the log's version and snapshot where the stored ones disagreed."""
        async with self.store.transaction() as tx:
            for live in lives:
                snapshot = snapshot_text(live.game)
                await tx.repair_snapshot(live.game_id, live.version, snapshot, time.time())
                live.info = None
        for live in lives:
            self.repair.discard(live.game_id)

    async def load(self, tx: Tx, row: GameRow, seats: tuple[Seat, ...]) -> Live:
        entries = await tx.log(row.game_id)
        try:
            game, problems = rebuild(row, seats, entries)
        except Damaged as e:
            self.damaged[row.game_id] = str(e)
            log.error("game %d cannot be replayed from its log: %s", row.game_id, e)
            raise DatabaseError(f"game {row.game_id} is damaged: {e}") from None
        live = self.live.setdefault(
            row.game_id, Live(row.game_id, row.chat_id, game, len(entries), seats)
        )
        if problems and live.game is game:
            log.warning(
                "game %d: the stored %s disagrees with its action log; the log wins",
                row.game_id,
                " and ".join(problems),
            )
            self.repair.add(row.game_id)
        return live

    async def load_running(self) -> None:
        """At open: every running game into memory, checked against its log; where
        the stored snapshot or version disagrees, the log wins and is written back.
        A game whose log cannot be replayed is reported and left out (any use of
        it raises :class:`DatabaseError`; ``cancel`` still ends it)."""
        async with self.store.reading() as tx:
            for game_id in await tx.game_ids(RUNNING):
                row = await self.row(tx, game_id)
                try:
                    await self.load(tx, row, tuple(await tx.seats(game_id)))
                except DatabaseError:
                    continue  # logged and remembered by load
        if self.repair:
            await self.write_repairs([self.live[g] for g in sorted(self.repair)])

    async def ended_game(self, tx: Tx, row: GameRow, seats: tuple[Seat, ...] | list[Seat]) -> Game:
        """A finished or cancelled game's engine object, rebuilt from its log."""
        game = self.ended.get(row.game_id)
        if game is not None:
            self.ended.move_to_end(row.game_id)
            return game
        try:
            game, _ = rebuild(row, tuple(seats), await tx.log(row.game_id))
        except Damaged as e:
            raise DatabaseError(f"game {row.game_id} is damaged: {e}") from None
        self.remember_ended(row.game_id, game)
        return game

    async def game_object(self, game_id: int) -> tuple[Game, tuple[Seat, ...]]:
        """A started game's engine object and seats, running or ended."""
        live = self.live.get(game_id)
        if live is not None:
            return live.game, live.seats
        async with self.game_lock(game_id):
            live = self.live.get(game_id)
            if live is not None:
                return live.game, live.seats
            async with self.store.reading() as tx:
                row = await self.row(tx, game_id)
                if row.status == RUNNING:
                    if row.game_id in self.damaged:
                        damage = self.damaged[row.game_id]
                        raise DatabaseError(f"game {row.game_id} is damaged: {damage}")
                    live = await self.load(tx, row, tuple(await tx.seats(row.game_id)))
                    return live.game, live.seats
                if row.start is None:
                    if row.status == LOBBY:
                        raise NotRunning(f"game {game_id} has not started yet")
                    raise GameOver(f"game {game_id} was cancelled before it started")
                seats = tuple(await tx.seats(game_id))
                return await self.ended_game(tx, row, seats), seats
