"""/settings: a group's menu of its options (the game, house rules, turn time, language),
for its admins; each change checked against the rules and the open lobbies' players."""

from __future__ import annotations

from typing import Any

from telegram import Chat, Update, User
from telegram.error import TelegramError

from durak.service import ChatSettings, GameInfo

from ..transport import topics
from ..ui import games_menu, games_text, render
from ..ui import settings_menu as menu
from ..ui.i18n import _, language
from .context import PRIORITY_REPLY, Answer, Context, FlowContext, Press, sent_as


class SettingsMenu:
    def __init__(self, ctx: FlowContext) -> None:
        self.ctx = ctx
        self.service = ctx.service
        self.presenter = ctx.presenter
        self.outbox = ctx.outbox
        self.langs = ctx.langs

    async def may_configure(self, context: Context, chat: Chat, user_id: int) -> bool:
        """Chat admins; in a group without (human) admins, anyone."""
        try:
            admins = await context.bot.get_chat_administrators(chat.id)
        except TelegramError:
            return False
        humans = [a.user.id for a in admins if not a.user.is_bot]
        return not humans or user_id in humans

    async def settings(self, update: Update, context: Context) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        if not self.ctx.in_group(update):
            self.ctx.reply(chat.id, _("Settings belong to a group: send /settings there."))
            return
        kind = sent_as(update)
        allowed = kind == "group" or (
            kind == "user" and await self.may_configure(context, chat, user.id)
        )
        if not allowed:
            # privately, in his own language: the group need not read (nor pay the
            # message budget for) a refusal only the sender cares about
            with language(await self.langs.of_user(user.id)):
                self.ctx.reply(user.id, render.refusal("admins_only"))
            return
        current = await self.service.chat_settings(chat.id)
        self.outbox.show(
            chat.id,
            "settings",
            menu.menu_text(current),
            menu.menu_keyboard(current),
            notify=True,
            priority=PRIORITY_REPLY,
            thread=topics.here(),
        )

    async def button(self, press: Press) -> Answer:
        """A button of /settings. The answer (a toast) is in the presser's language,
        the menu, which the whole group reads, in the group's."""
        context, chat, user = press.context, press.chat, press.user
        code, choice = press.data.setting or "", press.data.choice
        assert press.where is not None
        if self.outbox.message_id(chat.id, "settings") is None:
            self.outbox.remember(chat.id, "settings", press.where.message_id)
        if not await self.may_configure(context, chat, user.id):
            return Answer(render.refusal("admins_only"), alert=True)
        before = await self.service.chat_settings(chat.id)
        if code in (menu.CLOSE, menu.BACK) or games_menu.handles(code):
            if choice is not None:
                return Answer(render.refusal("bad_callback"), alert=True)
            if code == menu.CLOSE:
                with language(await self.langs.of_group(chat.id, user.id)):
                    self.outbox.show(
                        chat.id, "settings", menu.menu_text(before), None, priority=PRIORITY_REPLY
                    )
                self.outbox.release(chat.id, "settings")  # after that edit, not instead of it
                return Answer(_("Saved."))
            if code == menu.BACK:
                await self._show_menu(chat.id, user.id, before)
                return Answer()
            return await self._game_choice(chat, user, code, before)
        if not menu.valid(code, choice):
            return Answer(render.refusal("bad_callback"), alert=True)
        if choice is None:
            return await self._open_values(chat, user, code, before)
        return await self._change_settings(chat, user, before, menu.changes_for(code, choice))

    async def _show_menu(self, chat_id: int, user_id: int, settings: ChatSettings) -> None:
        with language(await self.langs.of_group(chat_id, user_id)):
            self.outbox.show(
                chat_id,
                "settings",
                menu.menu_text(settings),
                menu.menu_keyboard(settings),
                priority=PRIORITY_REPLY,
                thread=topics.here(),  # a new post goes to the topic it was asked in
            )

    async def _open_values(self, chat: Chat, user: User, code: str, before: ChatSettings) -> Answer:
        """An option's list of values: only those the rules allow with the other
        settings (and the open lobby's players); if none but the current one is,
        a toast says why instead."""
        seated = await self._seated(chat.id)
        name, values = menu.CODES[code]
        now = menu.current(before)[name]
        allowed: list[int] = []
        why: str | None = None
        for index, value in enumerate(values):
            refused = (
                None
                if value == now
                else games_menu.why_not(before, menu.changes_for(code, index), seated)
            )
            if refused is None:
                allowed.append(index)
            else:
                why = why or refused
        if len(allowed) <= 1 and why is not None:
            return Answer(why, alert=True)
        with language(await self.langs.of_group(chat.id, user.id)):
            self.outbox.show(
                chat.id,
                "settings",
                menu.values_text(code, before),
                menu.values_keyboard(code, before, tuple(allowed)),
                priority=PRIORITY_REPLY,
                thread=topics.here(),
            )
        return Answer()

    async def _game_choice(self, chat: Chat, user: User, code: str, before: ChatSettings) -> Answer:
        """The game list of /settings: open it, go back, or choose a game."""
        if code in (games_menu.OPEN, games_menu.BACK):
            if code == games_menu.BACK:
                await self._show_menu(chat.id, user.id, before)
                return Answer()
            with language(await self.langs.of_group(chat.id, user.id)):
                self.outbox.show(
                    chat.id,
                    "settings",
                    games_menu.list_text(before),
                    games_menu.list_keyboard(before),
                    priority=PRIORITY_REPLY,
                    thread=topics.here(),
                )
            return Answer()
        chosen = games_menu.pick(code, before)
        changes = games_menu.changes_of(before.rules, chosen.rules)
        answer = await self._change_settings(chat, user, before, changes)
        if answer.text is None and chosen.dropped:
            answer = Answer(games_text.dropped_text(chosen), alert=True)
        return answer

    async def _change_settings(
        self, chat: Chat, user: User, before: ChatSettings, changes: dict[str, Any]
    ) -> Answer:
        """Store ``changes`` and show the menu (in the group's language, which may
        be the one just chosen); a forbidden combination (a stale value list, or
        forged data) is refused with its reason before anything is stored."""
        why = games_menu.why_not(before, changes, await self._seated(chat.id))
        if why is not None:
            return Answer(why, alert=True)
        after = await self.service.set_chat_settings(chat.id, **changes)
        self.langs.changed(after)
        await self._show_menu(chat.id, user.id, after)
        for lobby in await self._lobbies(chat.id):  # the group's settings: every topic's
            await self.presenter.lobby(lobby)
        return Answer()

    async def _lobbies(self, chat_id: int) -> list[GameInfo]:
        """The group's open lobbies, one per forum topic at most."""
        found = [
            await self.service.lobby(chat_id, t) for t in await self.service.open_topics(chat_id)
        ]
        return [lobby for lobby in found if lobby is not None]

    async def _seated(self, chat_id: int) -> int | None:
        """The most players seated in one of the group's open lobbies (``None``: no
        lobby): the settings must still seat them all."""
        lobbies = await self._lobbies(chat_id)
        return max((len(lobby.seats) for lobby in lobbies), default=None)
