"""The Mini App's one seam into the rest of the bot: which game a page shows, its state
for the connection's seat, a move through the same service call as a panel press, and
the private panel brought up to date when his last page closes. (The pushes on every
change are the registry's: the presenter, which shows every change, is given it.)"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from durak.actions import action_from_step
from durak.service import RUNNING, GameInfo, GameService, ServiceError

from ..flows.moves import Move, Moves, Refused, Seated
from ..ui.callbacks import Slot
from . import protocol
from .auth import WebAppUser
from .registry import Conn, Registry

if TYPE_CHECKING:
    from ..screens.presenter import Presenter

log = logging.getLogger(__name__)

__all__ = ["Bridge", "Target"]

#: Whether a user is a member of a group (``getChatMember``), for spectators.
Member = Callable[[int, int], Awaitable[bool]]


class Target:
    """The game a page is opened on, and the seat it shows (``None``: a spectator)."""

    def __init__(self, info: GameInfo, seat: int | None) -> None:
        self.info, self.seat = info, seat


class Bridge:
    def __init__(
        self, service: GameService, presenter: Presenter, registry: Registry, member: Member
    ) -> None:
        self.service = service
        self.presenter = presenter
        self.registry = registry
        self.member = member
        self.moves = Moves(service, presenter)
        self._tasks: set[asyncio.Task[None]] = set()

    async def language(self, user: WebAppUser) -> str:
        return await self.presenter.langs.of_user(user.user_id)

    async def find(self, user: WebAppUser, game: int | None) -> Target | str:
        """The game the page asks for (``start_param`` first, then the button's ``game``),
        else his newest running game; a refusal code if he may not see it."""
        wanted = game
        start = user.start_param
        if start is not None:
            if not start.isdigit() or len(start) > 15:
                return "no_game"
            wanted = int(start)
        if wanted is None:
            mine = [
                i for i in await self.service.games_of_user(user.user_id) if i.status == RUNNING
            ]
            if not mine:
                return "no_game"
            wanted = max(i.game_id for i in mine)
        try:
            info = await self.service.game(wanted)
        except ServiceError:
            return "no_game"
        if info.game is None:
            return "no_game"
        seat = info.seat_of(user.user_id)
        if seat is not None:
            # left or kicked: the AI plays his seat, he watches (his result still counts)
            return Target(info, None if info.seats[seat].left else seat)
        if info.status != RUNNING:  # Telegram is asked about a running game only
            return "no_game"
        if await self.member(info.chat_id, user.user_id):  # (cached: bot.transport.members)
            return Target(info, None)
        return "not_member"

    async def state(self, conn: Conn, info: GameInfo | None = None) -> dict[str, Any] | None:
        info = info or await self.service.game(conn.game_id)
        game = info.game
        if game is None:
            return None
        table = await self.presenter.table(info, game)
        view = game.view(conn.seat)
        return protocol.state(protocol.for_seat(table, view), conn.lang)

    async def send_state(self, conn: Conn, info: GameInfo | None = None) -> None:
        message = await self.state(conn, info)
        if message is not None:
            conn.shown = message["state"]["version"]
            conn.send(protocol.dumps(message))

    async def play(
        self, conn: Conn, message: protocol.MoveIn | protocol.SlotIn | protocol.Sync
    ) -> None:
        """A message from the page after its initData: a move, which takes the one step a
        panel's press takes too (the same checks, service call, version fence and
        refusal codes; bot/flows/moves.py), or ``sync``, a request for the whole state
        (the page came back from the background). A refusal is sent in his language; on
        a table the game has left behind, the state now too."""
        if isinstance(message, protocol.Sync):
            await self.send_state(conn)
            return
        if conn.seat is None:
            self._refuse(conn, "not_in_game")
            return
        move: Move
        if isinstance(message, protocol.SlotIn):
            move = Slot(message.slot)
        else:
            try:
                move = action_from_step(message.step)
            except ValueError:
                self._refuse(conn, "bad_action")
                return
        seated = await self.moves.seated(conn.game_id, conn.user_id)
        if isinstance(seated, Seated) and seated.seat != conn.seat:
            seated = Refused("not_in_game")
        if isinstance(seated, Refused):
            self._refuse(conn, seated.code)
            return
        played = await self.moves.play(seated, move, message.version)
        if isinstance(played, Refused):
            self._refuse(conn, played.code)
            if played.behind:
                await self.send_state(conn)
            return
        await self.moves.shown(played)

    @staticmethod
    def _refuse(conn: Conn, code: str) -> None:
        conn.send(protocol.dumps(protocol.error(code, conn.lang)))

    def closed(self, user_id: int, game_id: int) -> None:
        """His last page of this game closed: his private panel is brought up to date,
        once (it was not edited while he played here)."""
        task = asyncio.create_task(self._panel(user_id, game_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _panel(self, user_id: int, game_id: int) -> None:
        try:
            info = await self.service.game(game_id)
            if info.status == RUNNING and info.seat_of(user_id) is not None:
                await self.presenter.panel(info, user_id)
        except Exception:
            log.exception("webapp: the panel after a closed page failed")

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
