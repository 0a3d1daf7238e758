"""The Mini App's one seam into the rest of the bot: which game a page shows (a lobby, a
table, its end, a replay) and what its user may do there, each through the step the chat
takes too: a move through the shared move step, a lobby's button through the service and
the shared lobby step (bot/flows/seating.py), and the private panel brought up to date
when his last page closes. (The pushes on every change are the registry's: the presenter,
which shows every change, is given it.)"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from durak.actions import action_from_step
from durak.service import CANCELLED, FINISHED, LOBBY, RUNNING, GameInfo, GameService, ServiceError

from ..clock import MONOTONIC, Clock
from ..flows.moves import Move, Moves, Refused, Seated
from ..flows.seating import Seating
from ..ui import callbacks as cb
from ..ui import render
from ..ui.callbacks import Slot
from ..ui.i18n import N_, language
from . import protocol, replays
from .auth import WebAppUser
from .registry import GAME_MODE, LOBBY_MODE, REPLAY_MODE, Conn, Registry

if TYPE_CHECKING:
    from ..screens.presenter import Presenter

log = logging.getLogger(__name__)

__all__ = ["PHRASE_EVERY", "Bridge", "Target"]

#: Whether a user is a member of a group (``getChatMember``): who may watch, join, replay.
Member = Callable[[int, int], Awaitable[bool]]
#: Whether the bot may write to a user (his private chat: a 403 says he never started it).
Reachable = Callable[[int], Awaitable[bool]]
#: The fewest seconds between two quick phrases of one player (issue 35 item 6).
PHRASE_EVERY = 3.0


class Target:
    """What a page is opened on: the game (or lobby), the seat it shows (``None``: a
    member watching), and how (``mode``: a lobby, a game, or a finished game's replay)."""

    def __init__(self, info: GameInfo, seat: int | None, mode: str = GAME_MODE) -> None:
        self.info, self.seat, self.mode = info, seat, mode


class Bridge:
    def __init__(
        self,
        service: GameService,
        presenter: Presenter,
        registry: Registry,
        member: Member,
        reachable: Reachable | None = None,
        clock: Clock = MONOTONIC,
    ) -> None:
        self.service = service
        self.presenter = presenter
        self.registry = registry
        self.member = member
        self.reachable = reachable
        self.clock = clock
        self.moves = Moves(service, presenter)
        self.seating = Seating(presenter)
        self.replays = replays.Replays()
        #: (game, user): when he last said a phrase (``clock``), for the 3 s between two
        self._said: dict[tuple[int, int], float] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def language(self, user: WebAppUser) -> str:
        return await self.presenter.langs.of_user(user.user_id)

    # ---- what a page opens on ------------------------------------------------------

    async def find(self, user: WebAppUser, game: int | None) -> Target | str:
        """What the page asks for: the start parameter (the project's codec: a game, or
        ``r<game>`` its replay), else the private button's ``game``, else his newest
        running game; a refusal code if he may not see it. A lobby or a game is shown to
        its players and the group's members, a replay to the group's members only."""
        wanted, link = game, cb.AppLink.GAME
        if user.start_param is not None:
            parsed = cb.parse_app(user.start_param)
            if parsed is None:
                return "no_game"
            link, wanted = parsed
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
        seat = info.seat_of(user.user_id)
        if link == cb.AppLink.REPLAY:
            if info.status not in (FINISHED, CANCELLED) or info.game is None:
                return "no_replay"
            if not await self.member(info.chat_id, user.user_id):
                return "not_member"
            return Target(info, seat, REPLAY_MODE)
        if info.game is None and info.status != LOBBY:
            return "no_game"  # a lobby that closed before its deal
        if seat is not None and info.seats[seat].left:
            seat = None  # left or kicked: the AI plays his seat, he watches (it still counts)
        elif seat is None and info.status not in (LOBBY, RUNNING):
            return "no_game"  # an ended game's page is its players'; the group's: r<game>
        elif seat is None and not await self.member(info.chat_id, user.user_id):
            return "not_member"  # (asked of Telegram once a minute: bot.transport.members)
        return Target(info, seat, LOBBY_MODE if info.status == LOBBY else GAME_MODE)

    async def opened(self, conn: Conn, target: Target) -> None:
        """The page's first content: the lobby, the game's state, or the replay."""
        if conn.mode != REPLAY_MODE:
            await self._page_only(target.info, target.seat, conn.user_id)
        if conn.mode == LOBBY_MODE:
            title = await self.presenter.titles.get(target.info.chat_id)
            conn.send(protocol.dumps(protocol.lobby(target.info, conn.user_id, conn.lang, title)))
        elif conn.mode == REPLAY_MODE:
            await self._replay(conn, target.info, 0)
        else:
            await self.send_state(conn, target.info)
        self.registry.opened(conn)

    async def _page_only(self, info: GameInfo, seat: int | None, user_id: int) -> None:
        """A seated player who opens the page and to whom the bot cannot write (a lobby's
        creator who never started it) plays here only from now on (``Seat.app``): no
        private message is tried, and the group hears nothing of it."""
        if seat is None or self.reachable is None or info.seats[seat].app:
            return
        if info.status not in (LOBBY, RUNNING) or info.message("panel", user_id) is not None:
            return  # (a panel of his was delivered: the bot can write to him)
        if not await self.reachable(user_id):
            await self.service.set_app(info.game_id, user_id)

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

    # ---- what the page says --------------------------------------------------------

    async def handle(self, conn: Conn, message: protocol.Incoming) -> None:
        """A message from the page after its initData, each through the chat's own step."""
        if isinstance(message, protocol.MoveIn | protocol.SlotIn):
            await self.play(conn, message)
        elif isinstance(message, protocol.Sync):
            await self.sync(conn)
        elif isinstance(message, protocol.LobbyIn):
            await self.lobby(conn, message)
        elif isinstance(message, protocol.AgainIn):
            await self.again(conn)
        elif isinstance(message, protocol.LeaveIn):
            await self.leave(conn)
        elif isinstance(message, protocol.SayIn):
            self.say(conn, message.phrase)
        elif isinstance(message, protocol.DealIn):  # a replay's deal, or an ended game's
            if conn.mode == LOBBY_MODE:
                self._refuse(conn, "no_replay")
                return
            info = await self.service.game(conn.game_id)
            if conn.mode == GAME_MODE and not await self.member(info.chat_id, conn.user_id):
                self._refuse(conn, "not_member")  # (a replay is the group's members' only)
                return
            await self._replay(conn, info, message.deal)
        else:
            self._refuse(conn, "bad_message")

    async def sync(self, conn: Conn) -> None:
        """The page (back from the background, or having seen a gap in the versions) asks
        for what it shows, whole: the state, or the lobby (a replay has nothing new)."""
        if conn.mode == GAME_MODE:
            await self.send_state(conn)
        elif conn.mode == LOBBY_MODE:
            info = await self.service.game(conn.game_id)
            title = await self.presenter.titles.get(info.chat_id)
            conn.send(protocol.dumps(protocol.lobby(info, conn.user_id, conn.lang, title)))

    async def play(self, conn: Conn, message: protocol.MoveIn | protocol.SlotIn) -> None:
        """A move from the page: the one step a panel's press takes too (the same checks,
        service call, version fence and refusal codes; bot/flows/moves.py). A refusal is
        sent in his language; on a table the game has left behind, the state now too."""
        if conn.seat is None or conn.mode != GAME_MODE:
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

    async def lobby(self, conn: Conn, message: protocol.LobbyIn) -> None:
        """A lobby's button on the page: the service's step, then the lobby (or the game
        it became) shown as after the same button in the group."""
        info = await self.service.game(conn.game_id)
        if conn.mode != LOBBY_MODE or info.status != LOBBY:
            self._refuse(conn, "no_lobby")
            return
        user, chat, thread = conn.user_id, info.chat_id, info.thread_id
        note = ""
        try:
            if message.action == "join":
                changed = await self._join(conn, info)
                if changed is None:
                    return
            elif message.action == "leave":
                left = await self.service.leave(chat, user, thread)
                changed = left.info
                if left.outcome == "closed":
                    note = N_("Everyone left; the lobby is closed.")
            elif message.action == "start":
                changed = await self.service.start(chat, user, is_admin=False, thread_id=thread)
            elif message.action == "confirm":
                changed = await self.service.confirm(info.game_id, user)
            elif message.action == "ai":
                level = message.level or "normal"
                with language(await self.presenter.langs.of_group(chat, info.creator_id)):
                    name = render.ai_name(level)
                changed = await self.service.add_ai(chat, level, user, False, thread, name=name)
            elif message.action == "cap":
                changed = await self.service.set_cap(chat, user, message.players, False, thread)
            else:  # "suit": own trumps, his turn to choose
                changed = await self.service.choose_suit(info.game_id, user, message.suit or "")
        except ServiceError as e:
            self._refuse(conn, e.code)
            return
        await self.seating.shown(changed, note)

    async def _join(self, conn: Conn, info: GameInfo) -> GameInfo | None:
        """He sits down, as a member of the group (asked again now); whether the bot may
        write to him decides where his cards go: nowhere but this page if it may not
        (``Seat.app``), and the group hears nothing of it."""
        if not await self.member(info.chat_id, conn.user_id):
            self._refuse(conn, "not_member")
            return None
        reachable = self.reachable is None or await self.reachable(conn.user_id)
        return await self.service.join(
            info.chat_id, conn.user_id, conn.name, info.thread_id, app=not reachable
        )

    async def again(self, conn: Conn) -> None:
        """Play again, from the end of the game: the next lobby of the same players (every
        page on this game follows to it), as the end message's button opens it."""
        info = await self.service.game(conn.game_id)
        if conn.mode != GAME_MODE or conn.seat is None:
            self._refuse(conn, "not_in_game")
            return
        if info.status != FINISHED:  # running, or cancelled (a cancelled game has no next)
            self._refuse(conn, "game_running" if info.status == RUNNING else "game_over")
            return
        try:
            changed = await self.service.play_again(info.game_id, conn.user_id)
        except ServiceError as e:
            self._refuse(conn, e.code)
            return
        await self.seating.shown(changed)

    async def leave(self, conn: Conn) -> None:
        """He leaves the running game (the page asked him first): the AI plays his seat
        to the end, as ``/leave`` once confirmed."""
        if conn.mode != GAME_MODE or conn.seat is None:
            self._refuse(conn, "not_in_game")
            return
        try:
            changed = await self.service.hand_over(conn.game_id, conn.user_id)
        except ServiceError as e:
            self._refuse(conn, e.code)
            return
        await self.presenter.changed(changed)

    def say(self, conn: Conn, phrase: str) -> None:
        """A quick phrase at the table: on his seat on every page of the game (never in
        the group), at most one each :data:`PHRASE_EVERY` seconds a player."""
        if conn.mode != GAME_MODE or conn.seat is None:
            self._refuse(conn, "not_in_game")
            return
        now = self.clock.now()
        key = (conn.game_id, conn.user_id)
        last = self._said.get(key)
        if last is not None and now - last < PHRASE_EVERY:
            self._refuse(conn, "too_fast")
            return
        if len(self._said) > 10_000:  # bounded: the long quiet ones go
            self._said = {k: t for k, t in self._said.items() if now - t < PHRASE_EVERY}
        self._said[key] = now
        self.registry.say(conn.game_id, conn.seat, phrase)

    async def _replay(self, conn: Conn, info: GameInfo, deal: int) -> None:
        """Deal ``deal`` of a finished game's replay (0: the deal the game is), read from
        its stored record."""
        if info.status not in (FINISHED, CANCELLED) or info.game is None:
            self._refuse(conn, "no_replay")
            return
        document = await self._document(info)
        if document is None:
            self._refuse(conn, "no_replay")
            return
        count = len(document["deals"]) if "deals" in document else 1
        deal = deal or count
        if not 1 <= deal <= count:
            self._refuse(conn, "no_replay")
            return
        text = self.replays.get(info.game_id, deal, conn.lang)
        if text is None:
            title = await self.presenter.titles.get(info.chat_id)
            try:
                made = replays.deal_message(info, document, deal, conn.lang, title)
            except replays.BROKEN as e:
                log.warning("game %s: its record cannot be replayed: %s", info.game_id, e)
                self._refuse(conn, "no_replay")
                return
            text = json.dumps(made, separators=(",", ":"), ensure_ascii=False)
            self.replays.put(info.game_id, deal, conn.lang, text)
        conn.send(text)

    async def _document(self, info: GameInfo) -> dict[str, Any] | None:
        """The stored game as the record button sends it (a sprint match: every deal)."""
        try:
            if info.rules.sprint:
                return await self.service.export_match(info.game_id)
            return await self.service.export_record(info.game_id)
        except ServiceError:
            return None

    @staticmethod
    def _refuse(conn: Conn, code: str) -> None:
        conn.send(protocol.dumps(protocol.error(code, conn.lang)))

    # ---- a page closed -------------------------------------------------------------

    def closed(self, user_id: int, game_id: int) -> None:
        """His last page of this game closed: his private panel is brought up to date,
        once (it was not edited while he played here), and the group's table too (it
        went at a spectator's pace while every player had the page open)."""
        task = asyncio.create_task(self._panel(user_id, game_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _panel(self, user_id: int, game_id: int) -> None:
        try:
            info = await self.service.game(game_id)
            seat = info.seat_of(user_id)
            if info.status == RUNNING and seat is not None:
                await self.presenter.panel(info, user_id)
                if self.presenter.pace.behind(game_id):  # no longer every player there
                    await self.presenter.game(game_id, info)
        except Exception:
            log.exception("webapp: the panel after a closed page failed")

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
