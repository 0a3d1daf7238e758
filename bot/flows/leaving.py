"""Explicit leaving and cancelling (issue 11 item 4), and ``/notify_me`` (item 10).

``/leave`` in a running game and ``/cancel`` ask first, in private, with two buttons;
only a confirmed press acts. A confirmation is a one-use token the bot drew for one
user, one game and one question (``1v``/``1w`` callback data): a forged token, a
replayed press, another user's press or one for a game that is no longer the topic's
open one names nothing pending and is refused with a toast. Tokens live in memory: a
restart forgets them, and the question must be asked again (a toast says so).
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from durak.service import LOBBY, RUNNING, GameInfo, ServiceError

from ..screens.presenter import slot
from ..ui import callbacks as cb
from ..ui import keyboards, render
from ..ui.i18n import N_, _, language

if TYPE_CHECKING:
    from .handlers import Handlers

#: At most this many questions wait for an answer; the oldest is forgotten first.
PENDING_MAX = 4096


@dataclass(frozen=True, slots=True)
class Pending:
    kind: str  # "v" leave, "w" cancel
    game_id: int
    user_id: int
    is_admin: bool


class Confirmations:
    def __init__(self, handlers: Handlers) -> None:
        self.h = handlers
        self._pending: OrderedDict[int, Pending] = OrderedDict()

    def ask(self, kind: str, info: GameInfo, user_id: int, is_admin: bool = False) -> None:
        """Ask ``user_id`` privately; the answer is a press of :meth:`press`."""
        token = secrets.randbits(48)
        self._pending[token] = Pending(kind, info.game_id, user_id, is_admin)
        while len(self._pending) > PENDING_MAX:
            self._pending.popitem(last=False)
        if kind == "v":
            text = _(
                "Leave the game? The AI plays your seat to the end;"
                " you are the durak only if it loses."
            )
        else:
            text = _("Cancel the game for everyone? Nobody is the durak.")
        self.h.outbox.show(
            user_id,
            slot("confirm", info.game_id),
            "❓ " + text,
            keyboards.confirm(kind, info.game_id, token),
            notify=True,
            priority=3,
        )

    async def press(self, data: cb.Callback, user_id: int, context: Any) -> dict[str, Any]:
        """A press of a confirmation button (in the private chat)."""
        pending = self._pending.get(data.token or -1)
        if (
            pending is None
            or pending.kind != data.kind
            or pending.game_id != data.game_id
            or pending.user_id != user_id
        ):
            return {"text": _("This question is no longer open: ask again.")}
        del self._pending[data.token or -1]  # one use
        info = await self.h.service.game(pending.game_id)
        current = await self.h.service.active_game(info.chat_id, info.thread_id)
        if current is None or current.game_id != info.game_id:
            self._answered(pending, _("That game is over."))
            return {"text": render.refusal("game_over")}
        if not data.yes:
            stay = _("You stay in the game.") if pending.kind == "v" else _("The game goes on.")
            self._answered(pending, stay)
            return {"text": stay}
        if pending.kind == "v":
            return await self._leave(info, user_id, pending)
        return await self._cancel(info, user_id, pending)

    async def _leave(self, info: GameInfo, user_id: int, pending: Pending) -> dict[str, Any]:
        if info.status != RUNNING:
            return {"text": render.refusal("not_running")}
        try:
            changed = await self.h.service.hand_over(info.game_id, user_id)
        except ServiceError as e:
            return {"text": render.refusal(e.code)}
        done = _("You left the game: the AI plays your seat.")
        self._answered(pending, done)
        await self.h.presenter.changed(changed)
        return {"text": done}

    async def _cancel(self, info: GameInfo, user_id: int, pending: Pending) -> dict[str, Any]:
        try:
            cancelled = await self.h.service.cancel(
                info.chat_id, user_id, is_admin=pending.is_admin, thread_id=info.thread_id
            )
        except ServiceError as e:
            return {"text": render.refusal(e.code)}
        self._answered(pending, _("The game is cancelled."))
        if self.h.lifecycle is not None:
            await self.h.lifecycle.closed(
                cancelled, N_("The game was cancelled; nobody is the durak.")
            )
        return {"text": _("The game is cancelled.")}

    def _answered(self, pending: Pending, text: str) -> None:
        """The question's message loses its buttons and says what happened."""
        self.h.outbox.show(
            pending.user_id, slot("confirm", pending.game_id), text, None, priority=3
        )


async def tell_subscribers(handlers: Handlers, info: GameInfo, opener: int) -> None:
    """``/notify_me``: a lobby opened; each subscriber hears it once, privately and
    paced like any message, not the opener nor who sits in it already."""
    if info.status != LOBBY:
        return
    seated = {s.user_id for s in info.seats}
    title = await handlers.presenter.titles.get(info.chat_id)
    creator = next((s.name for s in info.seats if s.user_id == info.creator_id), "")
    for user_id in await handlers.service.subscribers(info.chat_id):
        if user_id == opener or user_id in seated:
            continue
        with language(await handlers.langs.of_user(user_id)):
            text = _("🃏 {name} opened a game of durak in {group}.").format(
                name=render.esc(creator), group=render.esc(title)
            )
            handlers.outbox.send(
                user_id,
                text,
                keyboards.notify_join(handlers.presenter.username, info.game_id),
                priority=0,
            )
