"""The commands that only inform: /help, /rules, /stats."""

from __future__ import annotations

from telegram import Update

from ..transport import topics
from ..ui import render
from ..ui.i18n import _
from .context import Context, FlowContext


class Info:
    def __init__(self, ctx: FlowContext) -> None:
        self.ctx = ctx
        self.service = ctx.service
        self.presenter = ctx.presenter
        self.outbox = ctx.outbox
        self.langs = ctx.langs

    async def help(self, update: Update, context: Context) -> None:
        if update.effective_chat is not None:
            self.ctx.reply(update.effective_chat.id, render.help_text())

    async def rules(self, update: Update, context: Context) -> None:
        chat = update.effective_chat
        if chat is None:
            return
        info = await self.service.active_game(chat.id, topics.here())
        rules = (
            info.rules if info is not None else (await self.service.chat_settings(chat.id)).rules
        )
        self.ctx.reply(chat.id, render.rules_text(rules))

    async def stats(self, update: Update, context: Context) -> None:
        chat = update.effective_chat
        if chat is None:
            return
        if not self.ctx.in_group(update):
            self.ctx.reply(chat.id, _("The tally is kept per group: ask there with /stats."))
            return
        self.ctx.note_chat(chat)
        board = await self.service.leaderboard(chat.id, limit=20)
        self.ctx.reply(chat.id, render.stats_text(board, chat.title or ""))
