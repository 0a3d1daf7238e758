"""Telegram handlers: parse the update, call the service, hand the result to the
presenter. No rules logic lives here."""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from telegram import Chat, Update, User
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import Forbidden, TelegramError
from telegram.ext import ContextTypes

from durak import Pass, View
from durak.actions import Action, Attack
from durak.cards import Card
from durak.service import (
    CANCELLED,
    FINISHED,
    LOBBY,
    RUNNING,
    ChatSettings,
    GameInfo,
    GameService,
    IllegalMove,
    NoLobby,
    ServiceError,
    StaleVersion,
)
from durak.view import PileView

from ..screens.presenter import Presenter, slot
from ..transport import topics
from ..ui import callbacks as cb
from ..ui import events, games_menu, games_text, keyboards, render
from ..ui import settings_menu as menu
from ..ui.i18n import DEFAULT, N_, _, language
from . import leaving

if TYPE_CHECKING:
    from .lifecycle import Lifecycle
    from .skip import Skips

log = logging.getLogger(__name__)

Context = ContextTypes.DEFAULT_TYPE
_SEEN_QUERIES = 4096
#: A member's same command in a group is answered once in this many seconds.
REPEAT_WINDOW = 60.0
#: Command answers go after the table and the lobby (the presenter's PRIORITY_GROUP).
PRIORITY_REPLY = 1


def display_name(user: User) -> str:
    name = " ".join(p for p in (user.first_name, user.last_name) if p).strip()
    return (name or user.username or f"player {user.id}")[:48]


def group_link(chat_id: int, message_id: int | None, topic: int = 0) -> str | None:
    """A t.me link into a supergroup (members can open it), into the forum topic
    ``topic`` if not 0; None for other chats (a basic group has no message links)."""
    text = str(chat_id)
    if not text.startswith("-100") or message_id is None:
        return None
    where = f"{topic}/" if topic else ""
    return f"https://t.me/c/{text[4:]}/{where}{message_id}"


Handler = Callable[[Update, Context], Coroutine[Any, Any, None]]


def sent_as(update: Update) -> str:
    """Who sent the message: ``"user"`` (a person), ``"group"`` (an anonymous admin:
    Telegram sends on behalf of the group itself only for its admins) or ``"channel"``.
    For the last two, ``from`` is a placeholder user (GroupAnonymousBot, Channel_Bot)
    that many senders share: never a seat, never a lobby's creator."""
    message, chat = update.effective_message, update.effective_chat
    sender = message.sender_chat if message is not None else None
    if sender is None or update.callback_query is not None:
        return "user"
    return "group" if chat is not None and sender.id == chat.id else "channel"


def not_a_person() -> str:
    return _(
        "Seats are for people: send this as yourself, not on behalf of the group or a channel."
    )


class Handlers:
    def __init__(self, service: GameService, presenter: Presenter) -> None:
        self.service = service
        self.presenter = presenter
        self.outbox = presenter.outbox
        self.langs = presenter.langs
        self.lifecycle: Lifecycle | None = None
        self.skips: Skips | None = None
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._asked: OrderedDict[tuple[int, int, str], float] = OrderedDict()  # oldest first
        self.repeat_window = REPEAT_WINDOW
        self._clock = time.monotonic
        self.confirmations = leaving.Confirmations(self)

    def localized(self, handler: Handler) -> Handler:
        """Run a handler in the language of whoever reads its replies: a button's
        answer and a private chat in the user's language, a group in the group's."""

        async def run(update: Update, context: Context) -> None:
            user, chat = update.effective_user, update.effective_chat
            self.langs.note(user)
            if update.callback_query is not None or chat is None or chat.type == ChatType.PRIVATE:
                lang = await self.langs.of_user(user.id) if user is not None else DEFAULT
            else:
                lang = await self.langs.of_group(chat.id, user.id if user else None)
            token = topics.current.set(topics.of_update(update))
            try:
                with language(lang):
                    await handler(update, context)
            finally:
                topics.current.reset(token)

        return run

    # ---- helpers ------------------------------------------------------------------

    def reply(self, chat_id: int, text: str, markup: Any = None, thread: int | None = None) -> None:
        """A command's answer: after the chat's table and lobby (priority 2), which a
        flood of commands must never hold up; in the forum topic it was asked in (or
        ``thread``), never in a private chat's."""
        topic = (topics.here() if thread is None else thread) if chat_id < 0 else 0
        self.outbox.send(chat_id, text, markup, priority=PRIORITY_REPLY, thread=topic)

    def once_a_minute(self, name: str, handler: Handler) -> Handler:
        """Answer a member's same command in a group at most once per ``repeat_window``
        seconds; the repeats are ignored (forty /help must not cost the group two minutes
        of Telegram's pace). Private chats are not limited: only the sender reads them."""

        async def run(update: Update, context: Context) -> None:
            chat, user = update.effective_chat, update.effective_user
            if chat is not None and user is not None and chat.type != ChatType.PRIVATE:
                now = self._clock()
                while self._asked and next(iter(self._asked.values())) <= now - self.repeat_window:
                    self._asked.popitem(last=False)  # forgotten once the window is over
                key = (chat.id, user.id, name)
                if key in self._asked:
                    return
                self._asked[key] = now
            await handler(update, context)

        return run

    async def sender_is_admin(self, update: Update, context: Context) -> bool:
        """An admin as Telegram says: an anonymous admin (sent as the group) is one, a
        channel's placeholder never; a person is asked about."""
        chat, user = update.effective_chat, update.effective_user
        kind = sent_as(update)
        if kind != "user" or chat is None or user is None:
            return kind == "group"
        return await self.is_admin(context, chat, user.id)

    async def is_admin(self, context: Context, chat: Chat, user_id: int) -> bool:
        if chat.type == ChatType.PRIVATE:
            return False
        try:
            member = await context.bot.get_chat_member(chat.id, user_id)
        except TelegramError:
            return False
        return member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)

    def in_group(self, update: Update) -> bool:
        chat = update.effective_chat
        return chat is not None and chat.type in (ChatType.GROUP, ChatType.SUPERGROUP)

    def _note_chat(self, chat: Chat | None) -> None:
        if chat is not None and chat.type != ChatType.PRIVATE:
            self.presenter.titles.note(chat.id, chat.title)

    # ---- commands -----------------------------------------------------------------

    async def newgame(self, update: Update, context: Context) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        if not self.in_group(update):
            self.reply(chat.id, _("Start a game in a group: add me there and send /newgame."))
            return
        if sent_as(update) != "user":
            self.reply(chat.id, not_a_person())
            return
        self._note_chat(chat)
        open_now = await self.service.active_game(chat.id, topics.here())
        if open_now is not None and open_now.status == LOBBY:
            await self.presenter.lobby(open_now, repost=True)
            return
        if open_now is not None:
            self._to_the_table(open_now)
            return
        rules = None
        if context.args:  # /newgame road: that game, for this lobby only
            choice = games_text.lookup(" ".join(context.args)[:40])
            if choice is None:
                self.reply(chat.id, games_text.unknown_game_text())
                return
            settings = await self.service.chat_settings(chat.id)
            rules = games_text.choose(choice, settings.rules).rules
        try:
            info = await self.service.create_lobby(
                chat.id, user.id, display_name(user), chat.title, rules, topics.here()
            )
        except ServiceError as e:
            self.reply(chat.id, render.refusal(e.code))
            return
        await self.presenter.lobby(info)
        await leaving.tell_subscribers(self, info, user.id)

    async def notify_me(self, update: Update, context: Context) -> None:
        """``/notify_me`` in a group: a private message when a lobby opens there, until
        sent again. Answered privately: the group hears nothing of it."""
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        if not self.in_group(update) or sent_as(update) != "user":
            self.reply(chat.id, _("Send /notify_me in a group to hear of its new games."))
            return
        self._note_chat(chat)
        on = await self.service.toggle_notify(chat.id, user.id)
        title = render.esc(chat.title or "")
        with language(await self.langs.of_user(user.id)):
            if on:
                text = _(
                    "I will write to you when a game opens in {group}."
                    " Send /notify_me there again to stop."
                ).format(group=title)
            else:
                text = _("No more messages about new games in {group}.").format(group=title)
            self.reply(user.id, text)

    def _to_the_table(self, info: GameInfo) -> None:
        """``/newgame`` while a game runs: no second game, a link to the table (a
        supergroup's message link, in its topic), sent as a reply to the table so that
        a basic group, which has no message links, can jump to it too."""
        table = self.outbox.message_id(info.chat_id, slot("table", info.game_id))
        table = table or info.message("table", info.chat_id)
        text = render.refusal("game_running")
        link = group_link(info.chat_id, table, info.thread_id)
        if link:
            text += " " + _('<a href="{link}">To the table</a>').format(link=link)
        elif table is not None:
            text += " " + _("The table is the message this answers.")
        self.outbox.send(
            info.chat_id,
            text,
            priority=PRIORITY_REPLY,
            thread=info.thread_id,
            reply_to=table or 0,
        )

    async def start(self, update: Update, context: Context) -> None:
        """``/start`` in private: plain, ``j<game>`` (join a lobby) or ``g<game>`` (my cards)."""
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        if chat.type != ChatType.PRIVATE:
            await self.help(update, context)
            return
        payload = context.args[0] if context.args else ""
        digits = payload[1:]  # ASCII only: str.isdigit() also takes "²", which int() refuses
        readable = digits.isascii() and digits.isdigit() and len(payload) < 20
        game_id = int(digits) if readable else None
        if payload.startswith("j") and game_id is not None:
            await self._join_from_private(user, game_id)
        elif payload.startswith("g") and game_id is not None:
            try:
                info = await self.service.game(game_id)
            except ServiceError:
                info = None
            if info is None or info.seat_of(user.id) is None:
                self.reply(chat.id, render.refusal("not_in_game"))
            else:
                await self._seated_start(info, user.id)
        else:  # no game: what the bot is, and the way into a group
            markup = keyboards.add_to_group(self.presenter.username)
            self.reply(chat.id, render.welcome_text() + "\n\n" + render.help_text(), markup)

    async def _join_from_private(self, user: User, game_id: int) -> None:
        try:
            lobby = await self.service.game(game_id)
            if lobby.seat_of(user.id) is not None:  # seated already (the creator, say)
                await self._seated_start(lobby, user.id)
                return
            if lobby.status != LOBBY:
                raise NoLobby("not a lobby")
            info = await self.service.join(
                lobby.chat_id, user.id, display_name(user), lobby.thread_id
            )
        except ServiceError as e:
            self.reply(user.id, render.refusal(e.code))
            return
        await self._joined(info, user.id)
        if info.status != LOBBY:  # the lobby was full with him: it started itself
            await self._dealt(info)

    async def _seated_start(self, info: GameInfo, user_id: int) -> None:
        """Start from a deep link by a seated player: his panel once the game runs; in
        the lobby, that his cards will come here (the chat exists now)."""
        if info.status == LOBBY:
            title = await self.presenter.titles.get(info.chat_id)
            text = _("You are in the game in {group}. Your cards will arrive here.")
            self.reply(user_id, text.format(group=render.esc(title)))
        else:
            await self.presenter.panel(info, user_id, notify=True)

    async def _joined(self, info: GameInfo, user_id: int) -> None:
        title = await self.presenter.titles.get(info.chat_id)
        text = _("You joined the game in {group}. Your cards will arrive here.").format(
            group=render.esc(title)
        )
        link = group_link(
            info.chat_id, self.outbox.message_id(info.chat_id, slot("lobby", info.game_id))
        )
        if link:
            text += "\n" + _('<a href="{link}">Back to the group</a>').format(link=link)
        self.reply(user_id, text)
        await self.presenter.lobby(info)

    async def help(self, update: Update, context: Context) -> None:
        if update.effective_chat is not None:
            self.reply(update.effective_chat.id, render.help_text())

    async def rules(self, update: Update, context: Context) -> None:
        chat = update.effective_chat
        if chat is None:
            return
        info = await self.service.active_game(chat.id, topics.here())
        rules = (
            info.rules if info is not None else (await self.service.chat_settings(chat.id)).rules
        )
        self.reply(chat.id, render.rules_text(rules))

    async def stats(self, update: Update, context: Context) -> None:
        chat = update.effective_chat
        if chat is None:
            return
        if not self.in_group(update):
            self.reply(chat.id, _("The tally is kept per group: ask there with /stats."))
            return
        self._note_chat(chat)
        board = await self.service.leaderboard(chat.id, limit=20)
        self.reply(chat.id, render.stats_text(board, chat.title or ""))

    async def leave(self, update: Update, context: Context) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None or not self.in_group(update):
            return
        if sent_as(update) != "user":
            self.reply(chat.id, not_a_person())
            return
        open_now = await self.service.active_game(chat.id, topics.here())
        if open_now is not None and open_now.status == RUNNING:
            seat = open_now.seat_of(user.id)
            if seat is not None and open_now.seats[seat].left:  # never a surrender later
                self.reply(user.id, _("You left this game: the AI plays your seat."))
                return
            if seat is not None:
                self.confirmations.ask("v", open_now, user.id)  # in private, with buttons
                return
        try:
            result = await self.service.leave(chat.id, user.id, topics.here())
        except ServiceError as e:
            self.reply(chat.id, render.refusal(e.code))
            return
        info = result.info
        if result.outcome == "surrendered":
            await self.presenter.changed(info, finished=True)
        elif result.outcome == "closed":
            await self.presenter.lobby(info, note=N_("Everyone left; the lobby is closed."))
        elif info.status == RUNNING:  # a Play-again lobby: the others had all confirmed
            await self._dealt(info)
        else:
            await self.presenter.lobby(info)

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
        if not self.in_group(update):
            self.reply(chat.id, _("Settings belong to a group: send /settings there."))
            return
        kind = sent_as(update)
        allowed = kind == "group" or (
            kind == "user" and await self.may_configure(context, chat, user.id)
        )
        if not allowed:
            # privately, in his own language: the group need not read (nor pay the
            # message budget for) a refusal only the sender cares about
            with language(await self.langs.of_user(user.id)):
                self.reply(user.id, render.refusal("admins_only"))
            return
        current = await self.service.chat_settings(chat.id)
        self.outbox.show(
            chat.id,
            "settings",
            menu.menu_text(current),
            menu.menu_keyboard(current),
            notify=True,
            priority=2,
            thread=topics.here(),
        )

    async def _setting_button(
        self, context: Context, chat: Chat, user: User, code: str, choice: int | None
    ) -> dict[str, Any]:
        """A button of /settings. The answer (a toast) is in the presser's language,
        the menu, which the whole group reads, in the group's."""
        if not await self.may_configure(context, chat, user.id):
            return {"text": render.refusal("admins_only"), "show_alert": True}
        before = await self.service.chat_settings(chat.id)
        if code in (menu.CLOSE, menu.BACK) or games_menu.handles(code):
            if choice is not None:
                return {"text": render.refusal("bad_callback"), "show_alert": True}
            if code == menu.CLOSE:
                with language(await self.langs.of_group(chat.id, user.id)):
                    self.outbox.show(chat.id, "settings", menu.menu_text(before), None, priority=2)
                self.outbox.release(chat.id, "settings")  # after that edit, not instead of it
                return {"text": _("Saved.")}
            if code == menu.BACK:
                await self._show_menu(chat.id, user.id, before)
                return {}
            return await self._game_choice(chat, user, code, before)
        if not menu.valid(code, choice):
            return {"text": render.refusal("bad_callback"), "show_alert": True}
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
                priority=2,
                thread=topics.here(),  # a new post goes to the topic it was asked in
            )

    async def _open_values(
        self, chat: Chat, user: User, code: str, before: ChatSettings
    ) -> dict[str, Any]:
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
            return {"text": why, "show_alert": True}
        with language(await self.langs.of_group(chat.id, user.id)):
            self.outbox.show(
                chat.id,
                "settings",
                menu.values_text(code, before),
                menu.values_keyboard(code, before, tuple(allowed)),
                priority=2,
                thread=topics.here(),
            )
        return {}

    async def _game_choice(
        self, chat: Chat, user: User, code: str, before: ChatSettings
    ) -> dict[str, Any]:
        """The game list of /settings: open it, go back, or choose a game."""
        if code in (games_menu.OPEN, games_menu.BACK):
            if code == games_menu.BACK:
                await self._show_menu(chat.id, user.id, before)
                return {}
            with language(await self.langs.of_group(chat.id, user.id)):
                self.outbox.show(
                    chat.id,
                    "settings",
                    games_menu.list_text(before),
                    games_menu.list_keyboard(before),
                    priority=2,
                    thread=topics.here(),
                )
            return {}
        chosen = games_menu.pick(code, before)
        changes = games_menu.changes_of(before.rules, chosen.rules)
        answer = await self._change_settings(chat, user, before, changes)
        if not answer and chosen.dropped:
            answer = {"text": games_text.dropped_text(chosen), "show_alert": True}
        return answer

    async def _change_settings(
        self, chat: Chat, user: User, before: ChatSettings, changes: dict[str, Any]
    ) -> dict[str, Any]:
        """Store ``changes`` and show the menu (in the group's language, which may
        be the one just chosen); a forbidden combination (a stale value list, or
        forged data) is refused with its reason before anything is stored."""
        why = games_menu.why_not(before, changes, await self._seated(chat.id))
        if why is not None:
            return {"text": why, "show_alert": True}
        after = await self.service.set_chat_settings(chat.id, **changes)
        self.langs.changed(after)
        await self._show_menu(chat.id, user.id, after)
        for lobby in await self._lobbies(chat.id):  # the group's settings: every topic's
            await self.presenter.lobby(lobby)
        return {}

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

    # ---- buttons ------------------------------------------------------------------

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
        answer: dict[str, Any] = {}
        then: Coroutine[Any, Any, None] | None = None
        try:
            answer = await self._button(update, context) or {}
            then = answer.pop("then", None)
        except ServiceError as e:
            answer = {"text": render.refusal(e.code), "show_alert": True}
        except Exception:
            log.exception("a button failed")
            answer = {"text": render.refusal("database_error"), "show_alert": True}
        finally:
            # The answer goes on its own too: its round trip (tens of ms on the real Bot
            # API) need not hold this update's slot; it starts before the move is shown.
            context.application.create_task(self._answer(query.id, answer), name="answer a press")
        if then is not None:
            # Showing the move everywhere runs on its own, so that this update's slot among
            # the concurrently handled ones is free for the next press at once; the
            # application awaits such tasks when it stops.
            context.application.create_task(_shown(then), name="show a move")

    async def _answer(self, query_id: str, answer: dict[str, Any]) -> None:
        try:
            await self.outbox.api.answer(query_id, answer)  # not PTB's Bot (transport/request.py)
        except TelegramError as e:
            log.info("could not answer a callback query: %s", e)

    async def _button(self, update: Update, context: Context) -> dict[str, Any] | None:
        query = update.callback_query
        assert query is not None
        user = query.from_user
        where = topics.pressed(query)  # never query.message: PTB builds none (transport/topics)
        try:
            data = cb.decode(query.data)
        except cb.BadCallback:
            return {"text": render.refusal("bad_callback"), "show_alert": True}
        if where is not None:
            self._note_chat(where.chat)
        if data.kind == "g":
            return await self._move(user, where, data)
        if data.kind == "o" and (data.setting or "").startswith("u") and self.lifecycle:
            if data.choice is not None:
                return {"text": render.refusal("bad_callback"), "show_alert": True}
            return await self.lifecycle.language_button(user.id, data.setting or "")
        if data.kind in cb.CONFIRM_KINDS:
            return await self.confirmations.press(data, user.id, context)
        if data.kind == "c" and where is not None and where.chat.type == ChatType.PRIVATE:
            # own trumps: the chooser's private message carries the free suits too
            chosen = await self.service.game(data.game_id)
            return await self._suit(context, chosen.chat_id, data.game_id, user, data.suit or "")
        if where is None or where.chat.type == ChatType.PRIVATE:
            return {"text": render.refusal("bad_callback"), "show_alert": True}
        chat = where.chat
        if data.kind == "q" and self.skips is not None:
            return await self.skips.button(chat.id, user.id, data)
        if data.kind == "o":
            if self.outbox.message_id(chat.id, "settings") is None:
                self.outbox.remember(chat.id, "settings", where.message_id)
            return await self._setting_button(context, chat, user, data.setting or "", data.choice)
        if data.kind == "h":
            return await self._record(chat.id, data.game_id)
        if data.kind == "c":
            return await self._suit(context, chat.id, data.game_id, user, data.suit or "")
        if data.kind == "r":
            if (await self.service.game(data.game_id)).status == CANCELLED:
                # the service's not_allowed would say "only the creator or an admin"
                return {"text": render.refusal("game_over"), "show_alert": True}
            info = await self.service.play_again(data.game_id, user.id)
            if info.status == LOBBY:
                await self.presenter.lobby(info)
                return {"text": _("You are in the next game; the others confirm.")}
            await self._dealt(info)
            return {"text": _("A new game starts: your cards are in our private chat.")}
        lobby = await self.service.lobby(chat.id, topics.here())
        if lobby is None or lobby.game_id != data.game_id:
            return {"text": render.refusal("no_lobby"), "show_alert": True}
        if data.kind == "j":
            return await self._join_button(context, lobby, user)
        if data.kind == "a":
            info = await self.service.confirm(lobby.game_id, user.id)
            if info.status != LOBBY:
                await self._dealt(info)
                return {"text": _("Dealt! Your cards are in our private chat.")}
            await self.presenter.lobby(info)
            return {"text": _("You are in the next game; the others confirm.")}
        if data.kind == "n":
            is_admin = lobby.creator_id != user.id and await self.is_admin(context, chat, user.id)
            info = await self.service.set_cap(
                chat.id, user.id, data.choice, is_admin, lobby.thread_id
            )
            if info.status != LOBBY:
                await self._dealt(info)
                return {"text": _("Dealt! Your cards are in our private chat.")}
            await self.presenter.lobby(info)
            return {"text": _("The game starts when {n} players sit.").format(n=info.room)}
        if data.kind in cb.AI_KINDS:
            is_admin = lobby.creator_id != user.id and await self.is_admin(context, chat, user.id)
            level = cb.AI_KINDS[data.kind]
            with language(await self.langs.of_group(chat.id, lobby.creator_id)):
                name = render.ai_name(level)
            info = await self.service.add_ai(
                chat.id, level, user.id, is_admin, lobby.thread_id, name=name
            )
            if info.status != LOBBY:  # full: it started itself
                await self._dealt(info)
                return {"text": _("Dealt! Your cards are in our private chat.")}
            await self.presenter.lobby(info)
            return {"text": _("An AI player sits down.")}
        if data.kind == "l":
            result = await self.service.leave(chat.id, user.id, lobby.thread_id)
            if result.info.status == RUNNING:  # a Play-again lobby: the others had all confirmed
                await self._dealt(result.info)
                return {"text": _("You left the lobby.")}
            note = N_("Everyone left; the lobby is closed.") if result.outcome == "closed" else ""
            await self.presenter.lobby(result.info, note=note)
            return {"text": _("You left the lobby.")}
        # "s": start
        is_admin = lobby.creator_id != user.id and await self.is_admin(context, chat, user.id)
        info = await self.service.start(
            chat.id, user.id, is_admin=is_admin, thread_id=lobby.thread_id
        )
        if info.status == LOBBY:  # own trumps: the players choose their suits first
            await self.presenter.changed(info)
            return {"text": _("Choose your suits, in turn.")}
        await self._dealt(info)
        return await self._dealt_answer(context, info, user.id)

    async def _dealt_answer(self, context: Context, info: GameInfo, user_id: int) -> dict[str, Any]:
        """The presser's answer to a deal: "your cards are in our private chat" only if
        that chat exists; for a player the bot cannot write to (he never opened it), the
        answer opens it, and its Start delivers his panel (issue 11 item 9)."""
        if info.seat_of(user_id) is not None and not await self._reachable(context, user_id):
            return {"url": keyboards.deep_link(self.presenter.username, f"g{info.game_id}")}
        if info.seat_of(user_id) is None:
            return {"text": _("Dealt!")}
        return {"text": _("Dealt! Your cards are in our private chat.")}

    async def _reachable(self, context: Context, user_id: int) -> bool:
        """Whether the bot may write to ``user_id`` (a 403 means never started or blocked)."""
        try:
            await context.bot.send_chat_action(user_id, "typing")
        except Forbidden:
            return False
        except TelegramError:
            pass
        return True

    async def _dealt(self, info: GameInfo) -> None:
        names = ", ".join(render.player(s) for s in info.seats)
        await self.presenter.lobby(info, note=N_("The game started: {names}."), names=names)
        await self.presenter.changed(info)

    async def _suit(
        self, context: Context, chat_id: int, game_id: int, user: User, suit: str
    ) -> dict[str, Any]:
        """Own trumps in the lobby: the player whose turn it is takes a free suit."""
        info = await self.service.game(game_id)
        if info.chat_id != chat_id:
            return {"text": render.refusal("unknown_game"), "show_alert": True}
        info = await self.service.choose_suit(game_id, user.id, suit)
        if info.status == RUNNING:
            await self._dealt(info)
            return await self._dealt_answer(context, info, user.id)
        await self.presenter.changed(info)
        return {"text": _("Your trump: {suit}").format(suit=render.SUIT_NAMES[suit])}

    async def _record(self, chat_id: int, game_id: int) -> dict[str, Any]:
        """Send a finished game's record (durak-record/1) as a JSON document."""
        info = await self.service.game(game_id)
        if info.chat_id != chat_id:
            return {"text": render.refusal("unknown_game"), "show_alert": True}
        if info.status == RUNNING:
            return {"text": render.refusal("game_running"), "show_alert": True}
        record = await self.service.export_record(game_id)
        content = json.dumps(record, ensure_ascii=False, indent=1).encode()
        caption = _(
            "📄 Game #{id}: every deal and every move, to look back on or to check"
            " (python -m durak check-record replays it)."
        )
        self.outbox.send_document(
            chat_id, f"durak-game-{game_id}.json", content, caption.format(id=game_id), priority=2
        )
        return {"text": _("The record is on its way.")}

    async def _join_button(self, context: Context, lobby: GameInfo, user: User) -> dict[str, Any]:
        if lobby.seat_of(user.id) is not None:
            return {"text": render.refusal("already_joined")}
        try:
            await context.bot.send_chat_action(user.id, "typing")
        except Forbidden:
            # Never talked to the bot: the button itself opens the private chat,
            # where Start finishes the join.
            return {"url": keyboards.deep_link(self.presenter.username, f"j{lobby.game_id}")}
        except TelegramError:
            pass
        info = await self.service.join(lobby.chat_id, user.id, display_name(user), lobby.thread_id)
        await self._joined(info, user.id)
        if info.status != LOBBY:  # the lobby was full with him: it started itself
            await self._dealt(info)
        return {"text": _("You are in!")}

    async def _move(
        self, user: User, where: topics.Pressed | None, data: cb.Callback
    ) -> dict[str, Any]:
        info = await self.service.game(data.game_id)
        seat = info.seat_of(user.id)
        if seat is None:
            return {"text": render.refusal("not_in_game"), "show_alert": True}
        if info.status != RUNNING or info.game is None:
            return {"text": render.refusal("game_over"), "show_alert": True}
        if info.seats[seat].left:
            return {"text": _("You left this game: the AI plays your seat.")}
        if info.seats[seat].away or info.seats[seat].timeouts:
            was_away = info.seats[seat].away
            await self.service.mark_present(info.game_id, user.id)
            info = await self.service.game(info.game_id)
            if info.status != RUNNING or info.game is None:
                return {"text": render.refusal("game_over"), "show_alert": True}
            if was_away:  # back: the table drops his 🤖 mark, his own clock runs again
                await self.presenter.changed(info)
        current = self.outbox.message_id(user.id, slot("panel", info.game_id))
        if current is not None and where is not None and where.message_id != current:
            await self.presenter.panel(info, user.id)
            return {"text": render.refusal("old_panel")}
        move = data.move
        if isinstance(move, cb.Refresh | cb.Back):
            await self.presenter.panel(info, user.id, full=isinstance(move, cb.Refresh))
            return {}
        if isinstance(move, Pass | cb.Slot) and data.version is None:
            return {"text": render.refusal("bad_callback")}  # made without the table seen
        game = info.game
        assert game is not None  # a running game has one
        view = game.view(seat)
        # a button edited away before he pressed it: the press and the edit crossed
        crossed = where is not None and where.on_keyboard is False
        if isinstance(move, cb.Slot):
            return await self._play(
                info, user.id, None, data.version, data.version, crossed, slot_index=move.index
            )
        if isinstance(move, cb.Pick):
            if not isinstance(view, View) or not keyboards.several_card_openings(view):
                return {"text": render.refusal("cannot_play")}
            if not set(move.cards) <= set(view.hand):
                return {"text": render.refusal("not_in_hand")}
            self.outbox.show(
                user.id,
                slot("panel", info.game_id),
                render.panel_text(await self._panel_table(info, view))
                + "\n\n"
                + _("Choose the cards to open with, then play them."),
                keyboards.picker(info.game_id, info.version, view, move.cards),
                priority=3,
            )
            return {}
        action: Action
        if isinstance(move, cb.Tap):
            options = keyboards.card_actions(view, move.card)
            if not options:
                code = "cannot_play" if view.legal else "not_your_turn"
                if move.card not in view.hand:
                    # face up: a card he has played, pressed again on a panel whose newer
                    # content is on its way (or was on its way when he pressed)
                    code = "stale_version" if face_up(view, move.card) else "not_in_hand"
                return {"text": render.refusal(code)}  # a mis-tap: a toast (issue 11)
            several = isinstance(options[0], Attack) and len(options[0].cards) > 1
            if len(options) > 1 or several:  # a pair is confirmed, not played by one tap
                self.outbox.show(
                    user.id,
                    slot("panel", info.game_id),
                    render.panel_text(await self._panel_table(info, view))
                    + "\n\n"
                    + _("What should {card} do?").format(card=render.card(move.card)),
                    keyboards.choice(info.game_id, info.version, options),
                    priority=3,
                )
                return {}
            action = options[0]
        else:
            assert move is not None
            action = move
        # A pass means "I have seen the table and add nothing": only for the table seen.
        return await self._play(
            info,
            user.id,
            action,
            data.version if isinstance(action, Pass) else None,
            data.version,
            crossed,
        )

    async def _panel_table(self, info: GameInfo, view: View | PileView) -> render.Table:
        title = await self.presenter.titles.get(info.chat_id)
        story = events.story(info.game_id, info.game) if info.game is not None else None
        return render.Table(
            info.game_id, info.version, title, info.seats, view, info.ending, story=story
        )

    async def _play(
        self,
        info: GameInfo,
        user_id: int,
        action: Action | None,
        version: int | None,
        seen: int | None,
        crossed: bool = False,
        slot_index: int | None = None,
    ) -> dict[str, Any]:
        """Apply the action (or ``blind``'s face-down slot: only for the table seen,
        since the player cannot tell what the slot holds) and show the result.

        ``seen`` is the version of the table the pressed panel showed, if known; ``crossed``:
        the panel was edited before the press arrived (its newer content is on screen)."""
        user = user_id
        try:
            if action is None:
                assert slot_index is not None
                result = await self.service.play_slot(info.game_id, user, slot_index, version)
            else:
                result = await self.service.apply(info.game_id, user, action, version)
        except StaleVersion:
            await self.presenter.panel(await self.service.game(info.game_id), user)
            return {"text": render.refusal("stale_version")}
        except IllegalMove as e:
            behind = seen is not None and seen != info.version
            if behind or crossed or self.outbox.pending(user, slot("panel", info.game_id)):
                # pressed on a panel the game has left behind (the buttons carry no
                # version: its newer content may still be on its way): look again
                if behind:
                    await self.presenter.panel(await self.service.game(info.game_id), user)
                return {"text": render.refusal("stale_version")}
            # Nothing is lost by a move that cannot be made now: a toast, not an alert
            # that has to be closed (issue 11); alerts are for what needs reading.
            return {"text": render.refusal(e.code)}
        after = replace(
            info,
            version=result.version,
            status=FINISHED if result.finished else RUNNING,
            ending=result.ending,
        )
        return {"then": self.presenter.changed(after, result.finished)}

    # ---- errors -------------------------------------------------------------------

    async def error(self, update: object, context: Context) -> None:
        log.error("unhandled error in an update handler", exc_info=context.error)


def face_up(view: View | PileView, card: Card) -> bool:
    """Whether ``card`` lies face up on the table (or the pile) that ``view`` shows."""
    if isinstance(view, View):
        return any(card in pair for pair in view.table)
    return card in view.pile


async def _shown(showing: Coroutine[Any, Any, None]) -> None:
    try:
        await showing
    except Exception:
        log.exception("showing a move failed")
