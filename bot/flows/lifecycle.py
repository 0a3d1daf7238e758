"""Admin commands and a group's life cycle: /cancel, /kick, /history,
/language, the bot removed from a group, a group becoming a supergroup, and
lobbies that nobody starts."""

from __future__ import annotations

import asyncio
import logging

from telegram import ChatMemberUpdated, InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ChatMemberStatus, ChatType

from durak.service import LOBBY, RUNNING, ServiceError

from ..transport import topics
from ..ui import callbacks as cb
from ..ui import ratings_text, render
from ..ui.i18n import LANGUAGE_NAMES, N_, SUPPORTED, _, language
from .context import Answer, Context, FlowContext, Press, sent_as

log = logging.getLogger(__name__)

#: A lobby nobody touched for this long is closed.
LOBBY_IDLE_SECONDS = 15 * 60


class Lifecycle:
    def __init__(self, ctx: FlowContext) -> None:
        self.ctx = ctx
        self.service = ctx.service
        self.presenter = ctx.presenter
        self.outbox = ctx.outbox
        self._sweeper: asyncio.Task[None] | None = None

    # ---- admin commands -------------------------------------------------------------

    async def cancel(self, update: Update, context: Context) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None or not self.ctx.in_group(update):
            return
        open_now = await self.service.active_game(chat.id, topics.here())
        if open_now is None:
            self.ctx.reply(chat.id, render.refusal("no_lobby"))
            return
        is_admin = open_now.creator_id != user.id and await self.ctx.sender_is_admin(
            update, context
        )
        if open_now.creator_id != user.id and not is_admin:
            # a person is refused where only he reads it: the group's budget is the game's
            where = user.id if sent_as(update) == "user" else chat.id
            self.ctx.reply(where, render.refusal("not_allowed"))
            return
        mine = open_now.seat_of(user.id)
        page_only = mine is not None and open_now.seats[mine].app
        # an anonymous admin, or a player of the Mini App only, has no private chat to ask in
        if sent_as(update) != "user" or page_only:
            try:
                info = await self.service.cancel(
                    chat.id, user.id, is_admin=is_admin, thread_id=open_now.thread_id
                )
            except ServiceError as e:
                self.ctx.reply(chat.id, render.refusal(e.code))
                return
            await self.ctx.closed(info, N_("The game was cancelled; nobody is the durak."))
            return
        self.ctx.questions.ask("w", open_now, user.id, is_admin)

    async def kick(self, update: Update, context: Context) -> None:
        """An admin's /kick in reply to a player's message: he leaves the lobby, or, in a
        running game, the AI plays his seat to the end as after his own /leave (only
        /cancel ends a game for everyone; he is the durak only if that seat loses)."""
        chat, user, message = update.effective_chat, update.effective_user, update.message
        if chat is None or user is None or message is None or not self.ctx.in_group(update):
            return
        target = message.reply_to_message.from_user if message.reply_to_message else None
        if target is None or target.is_bot:
            self.ctx.reply(chat.id, _("Reply to a message of the player to kick with /kick."))
            return
        if not await self.ctx.sender_is_admin(update, context):
            self.ctx.reply(chat.id, render.refusal("admins_only"))
            return
        try:
            running = await self.service.active_game(chat.id, topics.here())
            if running is not None and running.status == RUNNING:
                changed = await self.service.hand_over(running.game_id, target.id)
                await self.presenter.changed(changed)
                name = render.esc(target.first_name or "")
                self.ctx.reply(
                    chat.id, _("{name} is out: the AI plays his seat to the end.").format(name=name)
                )
                return
            result = await self.service.leave(chat.id, target.id, topics.here())
        except ServiceError as e:
            self.ctx.reply(chat.id, render.refusal(e.code))
            return
        if result.info.status == RUNNING:  # a Play-again lobby: the others had all confirmed
            await self.ctx.dealt(result.info)
        else:
            await self.presenter.lobby(result.info)

    async def history(self, update: Update, context: Context) -> None:
        chat = update.effective_chat
        if chat is None or not self.ctx.in_group(update):
            return
        games = await self.service.recent_games(chat.id, limit=10)
        rated = await self.service.game_ratings([g.game_id for g in games])
        suffixes = {
            g.game_id: ratings_text.history_suffix(g.seats, rated.get(g.game_id)) for g in games
        }
        replays = {  # each game that was dealt, step by step in the Mini App
            g.game_id: link
            for g in games
            if g.game is not None
            and (link := self.presenter.app_link(g.game_id, cb.AppLink.REPLAY)) is not None
        }
        self.ctx.reply(chat.id, render.history_text(games, suffixes, replays))

    async def language_menu(self, update: Update, context: Context) -> None:
        chat = update.effective_chat
        if chat is None:
            return
        if chat.type != ChatType.PRIVATE:
            self.ctx.reply(chat.id, _("Choose your language in our private chat: /language"))
            return
        rows = [
            [InlineKeyboardButton(LANGUAGE_NAMES[code], callback_data=cb.setting("u" + code))]
            for code in SUPPORTED
        ]
        rows.append([InlineKeyboardButton(_("As my Telegram app"), callback_data=cb.setting("u"))])
        self.ctx.reply(
            chat.id, _("Which language should I speak with you?"), InlineKeyboardMarkup(rows)
        )

    async def language_button(self, press: Press) -> Answer:
        """``1o.u<lang>`` (``1o.u``: as one's Telegram app), from /language's buttons."""
        user_id, code = press.user.id, press.data.setting or ""
        choice = code[1:] or None
        if choice is not None and choice not in SUPPORTED:
            return Answer(render.refusal("bad_callback"), alert=True)
        await self.ctx.langs.choose(user_id, choice)
        lang = await self.ctx.langs.of_user(user_id)
        with language(lang):
            return Answer(
                _("I will speak {language} with you.").format(language=LANGUAGE_NAMES[lang])
            )

    # ---- the group itself -----------------------------------------------------------

    async def membership(self, update: Update, context: Context) -> None:
        """The bot was removed from a group: its lobbies and games (one per topic) end cleanly."""
        change: ChatMemberUpdated | None = update.my_chat_member
        if change is None or change.chat.type == ChatType.PRIVATE:
            return
        status = change.new_chat_member.status
        if status not in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED):
            return
        for place in ("settings",):
            self.outbox.forget(change.chat.id, place)
        for thread in await self.service.open_topics(change.chat.id):  # every topic's game
            info = await self.service.close_chat(change.chat.id, thread)
            if info is None:
                continue
            log.info("removed from chat %s: game %s closed", change.chat.id, info.game_id)
            if self.presenter.timers is not None:
                self.presenter.timers.cancel(info.game_id)
            if info.game is not None:
                await self.presenter.game(info.game_id, info)  # the players' panels

    async def migrated(self, update: Update, context: Context) -> None:
        """A group became a supergroup (a new chat id): games and tallies move along."""
        message = update.effective_message
        if message is None or message.migrate_to_chat_id is None:
            return
        old, new = message.chat.id, message.migrate_to_chat_id
        await self.service.migrate_chat(old, new)
        self.ctx.langs.forget(old)
        self.ctx.langs.forget(new)
        self.presenter.titles.note(new, message.chat.title)
        open_now = await self.service.active_game(new)
        if open_now is not None:
            for kind in ("lobby", "table"):
                self.outbox.forget(old, f"{kind}:{open_now.game_id}")
            if open_now.status == LOBBY:
                await self.presenter.lobby(open_now, repost=True)
            elif open_now.status == RUNNING:
                await self.presenter.game(open_now.game_id, open_now)
        log.info("chat %s migrated to %s", old, new)

    # ---- lobbies nobody starts --------------------------------------------------------

    def start_sweeping(self, every: float, idle: float = LOBBY_IDLE_SECONDS) -> None:
        async def sweep() -> None:
            while True:
                await asyncio.sleep(every)
                try:
                    for info in await self.service.expire_lobbies(idle):
                        await self.presenter.lobby(
                            info, note=N_("Nobody started this lobby; it is closed.")
                        )
                except ServiceError as e:
                    log.warning("lobby sweep failed: %s", e.code)

        self._sweeper = asyncio.create_task(sweep(), name="lobby-sweeper")

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
