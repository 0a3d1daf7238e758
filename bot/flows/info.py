"""The commands that only inform: /help, /rules, /stats."""

from __future__ import annotations

import time

from telegram import Message, MessageEntity, Update

from ..transport import topics
from ..ui import ratings_text, render
from ..ui.i18n import _
from .context import PRIORITY_REPLY, Context, FlowContext

#: /stats again within this many seconds edits the group's last /stats message.
STATS_EDIT_WINDOW = 60.0


class Info:
    def __init__(self, ctx: FlowContext) -> None:
        self.ctx = ctx
        self.service = ctx.service
        self.presenter = ctx.presenter
        self.outbox = ctx.outbox
        self.langs = ctx.langs
        self._stats_shown: dict[tuple[int, int], float] = {}  # (chat, topic): when
        self._clock = time.monotonic

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
        """/stats: the group's ratings; ``/stats @name`` or in reply to a player: his
        record against each other player. One message per group: asked again within
        a minute, that message is edited rather than a new one sent."""
        chat, message = update.effective_chat, update.effective_message
        if chat is None:
            return
        if not self.ctx.in_group(update):
            self.ctx.reply(chat.id, _("The tally is kept per group: ask there with /stats."))
            return
        self.ctx.note_chat(chat)
        target, asked = await self._target(chat.id, message, context.args or [])
        if target is not None:
            record = await self.service.player_record(chat.id, target)
            text = (
                ratings_text.player_text(record)
                if record is not None
                else ratings_text.no_record_text(asked)
            )
        elif asked:
            text = ratings_text.no_record_text(asked)
        else:
            stats = await self.service.group_stats(chat.id)
            text = ratings_text.group_stats_text(stats, chat.title or "")
        self._show_stats(chat.id, text)

    async def _target(
        self, chat_id: int, message: Message | None, args: list[str]
    ) -> tuple[int | None, str]:
        """Whose record /stats asks for: the player replied to, one mentioned by a
        text mention, or one named (``@name`` or a name); ``(None, '')`` for the table."""
        if message is None:
            return None, ""
        replied = message.reply_to_message
        if replied is not None and replied.from_user is not None and not replied.from_user.is_bot:
            return replied.from_user.id, replied.from_user.full_name
        for entity in message.entities or ():
            if entity.type == MessageEntity.TEXT_MENTION and entity.user is not None:
                return entity.user.id, entity.user.full_name
        name = " ".join(args).strip()[:64]
        if not name:
            return None, ""
        if name.startswith("@") and name[1:].casefold() in self.ctx.usernames:
            return self.ctx.usernames[name[1:].casefold()], name
        return await self.service.find_player(chat_id, name), name

    def _show_stats(self, chat_id: int, text: str) -> None:
        topic = topics.here()
        key = (chat_id, topic)
        place = f"stats:{topic}"
        now = self._clock()
        for old in [k for k, at in self._stats_shown.items() if at <= now - STATS_EDIT_WINDOW]:
            del self._stats_shown[old]
        if key not in self._stats_shown:
            self.outbox.forget(chat_id, place)  # a minute on: a new message, below the chat
            self._stats_shown[key] = now
        self.outbox.show(chat_id, place, text, priority=PRIORITY_REPLY, thread=topic)
