"""Every pressed button comes in here: decoded once, routed by its kind to the flow
that handles it (one table, every kind in it: a kind without a route is refused, never
taken for another), and answered exactly once."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from telegram import Update
from telegram.constants import ChatType
from telegram.error import TelegramError

from durak.service import ServiceError

from ..transport import topics
from ..ui import callbacks as cb
from ..ui import render
from ..ui.callbacks import Kind
from .context import Answer, Context, FlowContext, Press
from .leaving import Leaving
from .lifecycle import Lifecycle
from .lobby import Lobbies
from .play import Play
from .settings_menu import SettingsMenu
from .skip import Skips

log = logging.getLogger(__name__)

_SEEN_QUERIES = 4096
Route = Callable[[Press], Awaitable[Answer]]


def _bad(press: Press) -> Answer:
    return Answer(render.refusal("bad_callback"), alert=True)


class Buttons:
    def __init__(
        self,
        ctx: FlowContext,
        *,
        lobbies: Lobbies,
        play: Play,
        settings: SettingsMenu,
        lifecycle: Lifecycle,
        leaving: Leaving,
        skips: Skips,
    ) -> None:
        self.ctx = ctx
        self._seen: OrderedDict[str, None] = OrderedDict()
        in_group = self._in_group
        #: Kind -> flow. Private chat presses: moves, own language, confirmations, suits.
        self.routes: dict[Kind, Route] = {
            Kind.MOVE: play.move,
            Kind.OPTION: self._option(lifecycle.language_button, in_group(settings.button)),
            Kind.CONFIRM_LEAVE: leaving.press,
            Kind.CONFIRM_CANCEL: leaving.press,
            Kind.SUIT: lobbies.suit,
            Kind.SKIP_VOTE: in_group(skips.button),
            Kind.RECORD: in_group(lobbies.record),
            Kind.PLAY_AGAIN: in_group(lobbies.play_again),
            Kind.JOIN: in_group(lobbies.join_button),
            Kind.CONFIRM_SEAT: in_group(lobbies.confirm_seat),
            Kind.CAP: in_group(lobbies.cap),
            Kind.AI_EASY: in_group(lobbies.add_ai),
            Kind.AI_NORMAL: in_group(lobbies.add_ai),
            Kind.AI_HARD: in_group(lobbies.add_ai),
            Kind.LEAVE: in_group(lobbies.leave_button),
            Kind.START: in_group(lobbies.start_button),
        }
        missing = set(Kind) - set(self.routes)
        if missing:  # caught at start-up, not by the first press of such a button
            raise RuntimeError(f"no route for {sorted(k.name for k in missing)}")

    @staticmethod
    def _in_group(route: Route) -> Route:
        """A button of a group's message: refused when pressed anywhere else."""

        async def run(press: Press) -> Answer:
            if press.where is None or press.where.chat.type == ChatType.PRIVATE:
                return _bad(press)
            return await route(press)

        return run

    @staticmethod
    def _option(own_language: Route, settings: Route) -> Route:
        """``1o.u...`` is one's own language (anywhere); any other option the group's menu."""

        async def run(press: Press) -> Answer:
            if (press.data.setting or "").startswith("u"):
                if press.data.choice is not None:
                    return _bad(press)
                return await own_language(press)
            return await settings(press)

        return run

    async def button(self, update: Update, context: Context) -> None:
        """Every callback query is answered exactly once, whatever happens."""
        query = update.callback_query
        if query is None:
            return
        if query.id in self._seen:
            return  # the same update delivered twice: it was answered the first time
        self._seen[query.id] = None
        if len(self._seen) > _SEEN_QUERIES:
            self._seen.popitem(last=False)
        answer = Answer()
        try:
            answer = await self._route(update, context)
        except ServiceError as e:
            answer = Answer(render.refusal(e.code), alert=True)
        except Exception:
            log.exception("a button failed")
            answer = Answer(render.refusal("database_error"), alert=True)
        finally:
            # The answer goes on its own too: its round trip (tens of ms on the real Bot
            # API) need not hold this update's slot; it starts before the move is shown.
            context.application.create_task(
                self._answer(query.id, answer.api()), name="answer a press"
            )
        if answer.then is not None:
            # Showing the move everywhere runs on its own, so that this update's slot among
            # the concurrently handled ones is free for the next press at once; the
            # application awaits such tasks when it stops.
            context.application.create_task(_shown(answer.then), name="show a move")

    async def _answer(self, query_id: str, answer: dict[str, Any]) -> None:
        try:
            await self.ctx.outbox.api.answer(query_id, answer)  # not PTB's Bot (transport)
        except TelegramError as e:
            log.info("could not answer a callback query: %s", e)

    async def _route(self, update: Update, context: Context) -> Answer:
        query = update.callback_query
        assert query is not None
        where = topics.pressed(query)  # never query.message: PTB builds none (transport/topics)
        try:
            data = cb.decode(query.data)
        except cb.BadCallback:
            return Answer(render.refusal("bad_callback"), alert=True)
        if where is not None:
            self.ctx.note_chat(where.chat)
        route = self.routes.get(data.kind)
        press = Press(context, query.from_user, where, data)
        return _bad(press) if route is None else await route(press)

    async def error(self, update: object, context: Context) -> None:
        log.error("unhandled error in an update handler", exc_info=context.error)


async def _shown(showing: Coroutine[Any, Any, None]) -> None:
    try:
        await showing
    except Exception:
        log.exception("showing a move failed")
