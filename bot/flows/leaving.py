"""/leave, and the answer to the questions of leaving and cancelling (issue 11 item 4).

``/leave`` in a running game and ``/cancel`` ask first, in private, with two buttons
(:class:`~bot.flows.context.Questions`); only a confirmed press acts. A forged token,
a replayed press, another user's press or one for a game that is no longer the topic's
open one names nothing pending and is refused with a toast.
"""

from __future__ import annotations

from telegram import Update

from durak.service import RUNNING, GameInfo, ServiceError

from ..transport import topics
from ..ui import ratings_text, render
from ..ui.i18n import N_, _
from .context import Answer, Context, FlowContext, Pending, Press, not_a_person, sent_as


class Leaving:
    def __init__(self, ctx: FlowContext) -> None:
        self.ctx = ctx
        self.service = ctx.service
        self.presenter = ctx.presenter

    async def leave(self, update: Update, context: Context) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None or not self.ctx.in_group(update):
            return
        if sent_as(update) != "user":
            self.ctx.reply(chat.id, not_a_person())
            return
        open_now = await self.service.active_game(chat.id, topics.here())
        if open_now is not None and open_now.status == RUNNING:
            seat = open_now.seat_of(user.id)
            if seat is not None and open_now.seats[seat].left:  # never a surrender later
                if not open_now.seats[seat].app:
                    self.ctx.reply(user.id, _("You left this game: the AI plays your seat."))
                return
            if seat is not None and open_now.seats[seat].app:
                # a player of the Mini App only has no private chat to be asked in: as an
                # anonymous admin's /cancel, it acts at once (the page asks before its Leave)
                await self.presenter.changed(
                    await self.service.hand_over(open_now.game_id, user.id)
                )
                return
            if seat is not None:
                record = await self.service.player_record(chat.id, user.id)
                cost = ratings_text.leave_cost_text(record.line if record else None)
                # in private, with buttons
                self.ctx.questions.ask("v", open_now, user.id, note=cost)
                return
        try:
            result = await self.service.leave(chat.id, user.id, topics.here())
        except ServiceError as e:
            self.ctx.reply(chat.id, render.refusal(e.code))
            return
        info = result.info
        if result.outcome == "surrendered":
            await self.presenter.changed(info, finished=True)
        elif result.outcome == "closed":
            await self.presenter.lobby(info, note=N_("Everyone left; the lobby is closed."))
        elif info.status == RUNNING:  # a Play-again lobby: the others had all confirmed
            await self.ctx.dealt(info)
        else:
            await self.presenter.lobby(info)

    async def press(self, press: Press) -> Answer:
        """A press of a confirmation button (in the private chat)."""
        data, user_id = press.data, press.user.id
        questions = self.ctx.questions
        pending = questions.take(data.token, data.kind, data.game_id, user_id)
        if pending is None:
            return Answer(_("This question is no longer open: ask again."))
        info = await self.ctx.service.game(pending.game_id)
        current = await self.ctx.service.active_game(info.chat_id, info.thread_id)
        if current is None or current.game_id != info.game_id:
            questions.answered(pending, _("That game is over."))
            return Answer(render.refusal("game_over"))
        if not data.yes:
            stay = _("You stay in the game.") if pending.kind == "v" else _("The game goes on.")
            questions.answered(pending, stay)
            return Answer(stay)
        if pending.kind == "v":
            return await self._leave(info, user_id, pending)
        return await self._cancel(info, user_id, pending)

    async def _leave(self, info: GameInfo, user_id: int, pending: Pending) -> Answer:
        if info.status != RUNNING:
            return Answer(render.refusal("not_running"))
        try:
            changed = await self.ctx.service.hand_over(info.game_id, user_id)
        except ServiceError as e:
            return Answer(render.refusal(e.code))
        done = _("You left the game: the AI plays your seat.")
        self.ctx.questions.answered(pending, done)
        await self.ctx.presenter.changed(changed)
        return Answer(done)

    async def _cancel(self, info: GameInfo, user_id: int, pending: Pending) -> Answer:
        try:
            cancelled = await self.ctx.service.cancel(
                info.chat_id, user_id, is_admin=pending.is_admin, thread_id=info.thread_id
            )
        except ServiceError as e:
            return Answer(render.refusal(e.code))
        self.ctx.questions.answered(pending, _("The game is cancelled."))
        await self.ctx.closed(cancelled, N_("The game was cancelled; nobody is the durak."))
        return Answer(_("The game is cancelled."))
