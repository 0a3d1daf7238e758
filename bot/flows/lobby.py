"""A game's way in: /newgame (and the /notify_me that hears of it), /start with its
deep links, and the lobby's buttons (join, leave, AI players, the cap, start, own
trumps' suits, Play again, the record)."""

from __future__ import annotations

import json
from typing import Any

from telegram import Update, User
from telegram.constants import ChatType
from telegram.error import Forbidden, TelegramError

from durak.service import CANCELLED, LOBBY, RUNNING, GameInfo, NoLobby, ServiceError

from ..screens.presenter import place
from ..transport import topics
from ..ui import callbacks as cb
from ..ui import games_text, keyboards, render
from ..ui.i18n import N_, _, language, n_
from .context import (
    PRIORITY_REPLY,
    Answer,
    Context,
    FlowContext,
    Press,
    display_name,
    group_link,
    not_a_person,
    sent_as,
)


class Lobbies:
    def __init__(self, ctx: FlowContext) -> None:
        self.ctx = ctx
        self.service = ctx.service
        self.presenter = ctx.presenter
        self.outbox = ctx.outbox
        self.langs = ctx.langs

    async def newgame(self, update: Update, context: Context) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        if not self.ctx.in_group(update):
            self.ctx.reply(chat.id, _("Start a game in a group: add me there and send /newgame."))
            return
        if sent_as(update) != "user":
            self.ctx.reply(chat.id, not_a_person())
            return
        self.ctx.note_chat(chat)
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
                self.ctx.reply(chat.id, games_text.unknown_game_text())
                return
            settings = await self.service.chat_settings(chat.id)
            rules = games_text.choose(choice, settings.rules).rules
        try:
            info = await self.service.create_lobby(
                chat.id, user.id, display_name(user), chat.title, rules, topics.here()
            )
        except ServiceError as e:
            self.ctx.reply(chat.id, render.refusal(e.code))
            return
        await self.presenter.lobby(info)
        await self._tell_subscribers(info, user.id)

    def _to_the_table(self, info: GameInfo) -> None:
        """``/newgame`` while a game runs: no second game, a link to the table (a
        supergroup's message link, in its topic), sent as a reply to the table so that
        a basic group, which has no message links, can jump to it too."""
        table = self.outbox.message_id(info.chat_id, place("table", info.game_id))
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
            self.ctx.reply(chat.id, render.help_text())  # as /help
            return
        link = cb.parse_start(context.args[0] if context.args else "")
        if link is not None and link[0] == cb.Link.JOIN:
            await self._join_from_private(user, link[1])
        elif link is not None and link[0] == cb.Link.CARDS:
            game_id = link[1]
            try:
                info = await self.service.game(game_id)
            except ServiceError:
                info = None
            if info is None or info.seat_of(user.id) is None:
                self.ctx.reply(chat.id, render.refusal("not_in_game"))
            else:
                await self._seated_start(info, user.id)
        else:  # no game: what the bot is, and the way into a group
            markup = keyboards.add_to_group(self.presenter.username)
            self.ctx.reply(chat.id, render.welcome_text() + "\n\n" + render.help_text(), markup)

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
            self.ctx.reply(user.id, render.refusal(e.code))
            return
        await self._joined(info, user.id)
        if info.status != LOBBY:  # the lobby was full with him: it started itself
            await self.ctx.dealt(info)

    async def _seated_start(self, info: GameInfo, user_id: int) -> None:
        """Start from a deep link by a seated player: his panel once the game runs; in
        the lobby, that his cards will come here (the chat exists now)."""
        seat = info.seat_of(user_id)
        app = self.presenter.app_link(info.game_id)
        if seat is not None and info.seats[seat].app and app is not None:
            # he joined from the Mini App and plays there; its link brings him back to it
            text = _('You play this game in the Mini App: <a href="{link}">open it</a>.')
            self.ctx.reply(user_id, text.format(link=app))
        elif info.status == LOBBY:
            title = await self.presenter.titles.get(info.chat_id)
            text = _("You are in the game in {group}. Your cards will arrive here.")
            self.ctx.reply(user_id, text.format(group=render.esc(title)))
        else:
            await self.presenter.panel(info, user_id, notify=True)

    async def _joined(self, info: GameInfo, user_id: int) -> None:
        title = await self.presenter.titles.get(info.chat_id)
        text = _("You joined the game in {group}. Your cards will arrive here.").format(
            group=render.esc(title)
        )
        link = group_link(
            info.chat_id, self.outbox.message_id(info.chat_id, place("lobby", info.game_id))
        )
        if link:
            text += "\n" + _('<a href="{link}">Back to the group</a>').format(link=link)
        self.ctx.reply(user_id, text)
        await self.presenter.lobby(info)

    async def notify_me(self, update: Update, context: Context) -> None:
        """``/notify_me`` in a group: a private message when a lobby opens there, until
        sent again. Answered privately: the group hears nothing of it."""
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None:
            return
        if not self.ctx.in_group(update) or sent_as(update) != "user":
            self.ctx.reply(chat.id, _("Send /notify_me in a group to hear of its new games."))
            return
        self.ctx.note_chat(chat)
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
            self.ctx.reply(user.id, text)

    async def _tell_subscribers(self, info: GameInfo, opener: int) -> None:
        """``/notify_me``: a lobby opened; each subscriber hears it once, privately and
        paced like any message, not the opener nor who sits in it already."""
        if info.status != LOBBY:
            return
        seated = {s.user_id for s in info.seats}
        title = await self.presenter.titles.get(info.chat_id)
        creator = next((s.name for s in info.seats if s.user_id == info.creator_id), "")
        for user_id in await self.service.subscribers(info.chat_id):
            if user_id == opener or user_id in seated:
                continue
            with language(await self.langs.of_user(user_id)):
                text = _("🃏 {name} opened a game of durak in {group}.").format(
                    name=render.esc(creator), group=render.esc(title)
                )
                self.outbox.send(
                    user_id,
                    text,
                    keyboards.notify_join(self.presenter.username, info.game_id),
                    priority=0,
                )

    # ---- the lobby's buttons ------------------------------------------------------

    async def play_again(self, press: Press) -> Answer:
        user, data = press.user, press.data
        if (await self.service.game(data.game_id)).status == CANCELLED:
            # the service's not_allowed would say "only the creator or an admin"
            return Answer(render.refusal("game_over"), alert=True)
        info = await self.service.play_again(data.game_id, user.id)
        if info.status == LOBBY:
            await self.presenter.lobby(info)
            return Answer(_("You are in the next game; the others confirm."))
        await self.ctx.dealt(info)
        return Answer(
            _dealt(info, user.id, _("A new game starts: your cards are in our private chat."))
        )

    async def _pressed_lobby(self, press: Press) -> GameInfo | None:
        """The topic's open lobby, if it is the one whose button was pressed."""
        lobby = await self.service.lobby(press.chat.id, topics.here())
        if lobby is None or lobby.game_id != press.data.game_id:
            return None
        return lobby

    async def _by_admin(self, press: Press, lobby: GameInfo) -> bool:
        """Whether the presser acts as an admin (asked only when he is not the creator)."""
        user = press.user
        return lobby.creator_id != user.id and await self.ctx.is_admin(
            press.context, press.chat, user.id
        )

    async def join_button(self, press: Press) -> Answer:
        lobby = await self._pressed_lobby(press)
        if lobby is None:
            return Answer(render.refusal("no_lobby"), alert=True)
        return await self._join_button(press.context, lobby, press.user)

    async def confirm_seat(self, press: Press) -> Answer:
        lobby = await self._pressed_lobby(press)
        if lobby is None:
            return Answer(render.refusal("no_lobby"), alert=True)
        info = await self.service.confirm(lobby.game_id, press.user.id)
        if info.status != LOBBY:
            await self.ctx.dealt(info)
            return Answer(_dealt(info, press.user.id))
        await self.presenter.lobby(info)
        return Answer(_("You are in the next game; the others confirm."))

    async def cap(self, press: Press) -> Answer:
        lobby = await self._pressed_lobby(press)
        if lobby is None:
            return Answer(render.refusal("no_lobby"), alert=True)
        chat, user = press.chat, press.user
        is_admin = await self._by_admin(press, lobby)
        info = await self.service.set_cap(
            chat.id, user.id, press.data.choice, is_admin, lobby.thread_id
        )
        if info.status != LOBBY:
            await self.ctx.dealt(info)
            return Answer(_dealt(info, press.user.id))
        await self.presenter.lobby(info)
        return Answer(_("The game starts when {n} players sit.").format(n=info.room))

    async def add_ai(self, press: Press) -> Answer:
        lobby = await self._pressed_lobby(press)
        if lobby is None:
            return Answer(render.refusal("no_lobby"), alert=True)
        chat, user = press.chat, press.user
        is_admin = await self._by_admin(press, lobby)
        level = cb.AI_KINDS[press.data.kind]
        with language(await self.langs.of_group(chat.id, lobby.creator_id)):
            name = render.ai_name(level)
        info = await self.service.add_ai(
            chat.id, level, user.id, is_admin, lobby.thread_id, name=name
        )
        if info.status != LOBBY:  # full: it started itself
            await self.ctx.dealt(info)
            return Answer(_dealt(info, press.user.id))
        await self.presenter.lobby(info)
        return Answer(_("An AI player sits down."))

    async def leave_button(self, press: Press) -> Answer:
        lobby = await self._pressed_lobby(press)
        if lobby is None:
            return Answer(render.refusal("no_lobby"), alert=True)
        result = await self.service.leave(press.chat.id, press.user.id, lobby.thread_id)
        if result.info.status == RUNNING:  # a Play-again lobby: the others had all confirmed
            await self.ctx.dealt(result.info)
            return Answer(_("You left the lobby."))
        note = N_("Everyone left; the lobby is closed.") if result.outcome == "closed" else ""
        await self.presenter.lobby(result.info, note=note)
        return Answer(_("You left the lobby."))

    async def start_button(self, press: Press) -> Answer:
        lobby = await self._pressed_lobby(press)
        if lobby is None:
            return Answer(render.refusal("no_lobby"), alert=True)
        chat, user = press.chat, press.user
        is_admin = await self._by_admin(press, lobby)
        info = await self.service.start(
            chat.id, user.id, is_admin=is_admin, thread_id=lobby.thread_id
        )
        if info.status == LOBBY:  # own trumps: the players choose their suits first
            await self.presenter.changed(info)
            return Answer(_("Choose your suits, in turn."))
        await self.ctx.dealt(info)
        return await self._dealt_answer(press.context, info, user.id)

    async def _dealt_answer(self, context: Context, info: GameInfo, user_id: int) -> Answer:
        """The presser's answer to a deal: "your cards are in our private chat" only if
        that chat exists; for a player the bot cannot write to (he never opened it), the
        answer opens it, and its Start delivers his panel (issue 11 item 9)."""
        seat = info.seat_of(user_id)
        if seat is not None and info.seats[seat].app:
            return Answer(_("Dealt! Your cards are in the Mini App."))
        if seat is not None and not await self._reachable(context, user_id):
            link = cb.start_payload(cb.Link.CARDS, info.game_id)
            return Answer(url=keyboards.deep_link(self.presenter.username, link))
        if seat is None:
            return Answer(_("Dealt!"))
        return Answer(_("Dealt! Your cards are in our private chat."))

    async def _reachable(self, context: Context, user_id: int) -> bool:
        """Whether the bot may write to ``user_id`` (a 403 means never started or blocked)."""
        try:
            await context.bot.send_chat_action(user_id, "typing")
        except Forbidden:
            return False
        except TelegramError:
            pass
        return True

    async def suit(self, press: Press) -> Answer:
        """Own trumps in the lobby: the player whose turn it is takes a free suit (from
        the group's lobby, or from the chooser's private message, which carries the free
        suits too)."""
        where, data = press.where, press.data
        if where is None:
            return Answer(render.refusal("bad_callback"), alert=True)
        if where.chat.type == ChatType.PRIVATE:
            chat_id = (await self.service.game(data.game_id)).chat_id
        else:
            chat_id = where.chat.id
        context, game_id, user, suit = press.context, data.game_id, press.user, data.suit or ""
        info = await self.service.game(game_id)
        if info.chat_id != chat_id:
            return Answer(render.refusal("unknown_game"), alert=True)
        info = await self.service.choose_suit(game_id, user.id, suit)
        if info.status == RUNNING:
            await self.ctx.dealt(info)
            return await self._dealt_answer(context, info, user.id)
        await self.presenter.changed(info)
        return Answer(_("Your trump: {suit}").format(suit=render.SUIT_NAMES[suit]))

    async def record(self, press: Press) -> Answer:
        """Send a finished game's record (durak-record/1) as a JSON document."""
        chat_id, game_id = press.chat.id, press.data.game_id
        info = await self.service.game(game_id)
        if info.chat_id != chat_id:
            return Answer(render.refusal("unknown_game"), alert=True)
        if info.status == RUNNING:
            return Answer(render.refusal("game_running"), alert=True)
        if info.rules.sprint:  # the whole match, every deal (its last is this game)
            document = await self.service.export_match(game_id)
            caption = match_caption(game_id, document)
            filename = f"durak-match-{game_id}.json"
        else:
            document = await self.service.export_record(game_id)
            caption = _(
                "📄 Game #{id}: every move of the game, to look back on or to check"
                " (python -m durak check-record replays it)."
            ).format(id=game_id)
            filename = f"durak-game-{game_id}.json"
        content = json.dumps(document, ensure_ascii=False, indent=1).encode()
        self.outbox.send_document(chat_id, filename, content, caption, priority=PRIORITY_REPLY)
        return Answer(_("The record is on its way."))

    async def _join_button(self, context: Context, lobby: GameInfo, user: User) -> Answer:
        if lobby.seat_of(user.id) is not None:
            return Answer(render.refusal("already_joined"))
        try:
            await context.bot.send_chat_action(user.id, "typing")
        except Forbidden:
            # Never talked to the bot: the button itself opens the private chat,
            # where Start finishes the join.
            link = cb.start_payload(cb.Link.JOIN, lobby.game_id)
            return Answer(url=keyboards.deep_link(self.presenter.username, link))
        except TelegramError:
            pass
        info = await self.service.join(lobby.chat_id, user.id, display_name(user), lobby.thread_id)
        await self._joined(info, user.id)
        if info.status != LOBBY:  # the lobby was full with him: it started itself
            await self.ctx.dealt(info)
        return Answer(_("You are in!"))


def _dealt(info: GameInfo, user_id: int, text: str = "") -> str:
    """The presser's answer to a deal: where his cards are."""
    seat = info.seat_of(user_id)
    if seat is not None and info.seats[seat].app:
        return _("Dealt! Your cards are in the Mini App.")
    return text or _("Dealt! Your cards are in our private chat.")


def match_caption(game_id: int, document: dict[str, Any]) -> str:
    """What a match document holds: a sprint match's or a knock-out's every deal."""
    deals = len(document["deals"])
    if len(document["deals"][0]["players"]) > 2:
        text = n_(
            "📄 Knock-out ending with game #{id}: its {n} deal, every move of it (python"
            " -m durak check-record replays it).",
            "📄 Knock-out ending with game #{id}: all its {n} deals in order, every move of"
            " each (python -m durak check-record replays them).",
            deals,
        )
    else:
        text = n_(
            "📄 Sprint match ending with game #{id}: its {n} deal, every move of it"
            " (python -m durak check-record replays it).",
            "📄 Sprint match ending with game #{id}: all its {n} deals in order, every move"
            " of each (python -m durak check-record replays them).",
            deals,
        )
    return text.format(id=game_id, n=deals)
