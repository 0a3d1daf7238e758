"""What every flow is given: one :class:`FlowContext` with the service, the presenter,
the outbox, the languages, a reply, the admin checks and the steps several flows share
(a deal shown, a game closed, a question asked in private). Flows import this module,
never one another."""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Hashable
from dataclasses import dataclass
from typing import Any, Protocol

from telegram import Chat, Update, User
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from durak.service import GameInfo, GameService

from ..screens.presenter import Presenter, place
from ..transport import topics
from ..transport.outbox import ANSWER
from ..ui import callbacks as cb
from ..ui import keyboards
from ..ui.i18n import DEFAULT, _, language
from .moves import Moves
from .seating import Seating

#: PTB's per-update context (``context.bot``, ``context.args``, ``context.application``).
Context = ContextTypes.DEFAULT_TYPE
Handler = Callable[[Update, Context], Coroutine[Any, Any, None]]

#: A member's same command in a group is answered once in this many seconds.
REPEAT_WINDOW = 60.0
#: The usernames remembered for ``/stats @name`` (the latest seen).
USERNAMES_KEPT = 10_000
#: A command's answer goes before the chat's table (which waits one slot for it):
#: a person asked, the table is coalesced anyway (issue 27 item 3).
PRIORITY_REPLY = ANSWER
#: At most this many questions wait for an answer; the oldest is forgotten first.
PENDING_MAX = 4096
#: At most this many of them are one user's (his oldest goes first): one player's flood
#: of /leave never pushes out another player's open question.
PENDING_PER_USER = 8


class Named(Protocol):
    """Who a seat is named after: Telegram's ``User``, or the Mini App's signed user."""

    @property
    def id(self) -> int: ...
    @property
    def first_name(self) -> str: ...
    @property
    def last_name(self) -> str | None: ...
    @property
    def username(self) -> str | None: ...


def display_name(user: Named) -> str:
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


@dataclass(frozen=True, slots=True)
class Pending:
    kind: str  # "v" leave, "w" cancel
    game_id: int
    user_id: int
    is_admin: bool


class Questions:
    """Leaving and cancelling ask first, in private, with two buttons (bot/flows/leaving.py
    reads the answer). A question is a one-use token the bot drew for one user, one game
    and one question: a forged or replayed press names nothing pending. In memory only:
    a restart forgets them, and the question must be asked again."""

    def __init__(self, outbox: Any) -> None:
        self._outbox = outbox
        self._pending: OrderedDict[int, Pending] = OrderedDict()
        self._of_user: dict[int, list[int]] = {}  # each user's open tokens, oldest first

    def ask(
        self, kind: str, info: GameInfo, user_id: int, is_admin: bool = False, note: str = ""
    ) -> None:
        """Ask ``user_id`` privately whether to leave (``"v"``) or cancel (``"w"``);
        ``note`` is a line more (what leaving costs)."""
        token = secrets.randbits(48)
        while len(self._of_user.get(user_id, ())) >= PENDING_PER_USER:
            self._forget(self._of_user[user_id][0])
        self._pending[token] = Pending(kind, info.game_id, user_id, is_admin)
        self._of_user.setdefault(user_id, []).append(token)
        while len(self._pending) > PENDING_MAX:
            self._forget(next(iter(self._pending)))
        if kind == "v":
            text = _(
                "Leave the game? The AI plays your seat to the end;"
                " you are the durak only if it loses."
            )
        else:
            text = _("Cancel the game for everyone? Nobody is the durak.")
        self._outbox.show(
            user_id,
            place("confirm", info.game_id),
            "❓ " + text + ("\n" + note if note else ""),
            keyboards.confirm(kind, info.game_id, token),
            notify=True,
            priority=3,
        )

    def take(self, token: int | None, kind: str, game_id: int, user_id: int) -> Pending | None:
        """The question this press answers, forgotten now (one use); None if none is."""
        pending = self._pending.get(-1 if token is None else token)
        if (
            pending is None
            or pending.kind != kind
            or pending.game_id != game_id
            or pending.user_id != user_id
        ):
            return None
        self._forget(-1 if token is None else token)
        return pending

    def _forget(self, token: int) -> None:
        pending = self._pending.pop(token)
        mine = self._of_user[pending.user_id]
        mine.remove(token)
        if not mine:
            del self._of_user[pending.user_id]

    def answered(self, pending: Pending, text: str) -> None:
        """The question's message loses its buttons and says what happened."""
        self._outbox.show(
            pending.user_id, place("confirm", pending.game_id), text, None, priority=3
        )


class FlowContext:
    """The one object every flow is built with."""

    def __init__(self, service: GameService, presenter: Presenter) -> None:
        self.service = service
        self.presenter = presenter
        self.outbox = presenter.outbox
        self.langs = presenter.langs
        self.questions = Questions(self.outbox)
        #: the one step every move takes, a panel's press or the Mini App's (bot/webapp)
        self.moves = Moves(service, presenter)
        #: a lobby's change shown, from a button or the Mini App's page alike
        self.seating = Seating(presenter)
        self._asked: OrderedDict[tuple[int, int, Hashable], float] = OrderedDict()  # oldest first
        self.repeat_window = REPEAT_WINDOW
        self._clock = time.monotonic
        #: ``@username`` (lower case) -> user id, of the users the bot saw lately: Telegram
        #: resolves no username for a bot, and ``/stats @name`` names people so.
        self.usernames: OrderedDict[str, int] = OrderedDict()

    # ---- around every update --------------------------------------------------------

    def localized(self, handler: Handler) -> Handler:
        """Run a handler in the language of whoever reads its replies: a button's
        answer and a private chat in the user's language, a group in the group's."""

        async def run(update: Update, context: Context) -> None:
            user, chat = update.effective_user, update.effective_chat
            self.langs.note(user)
            self.note_username(user)
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

    def once_a_minute(self, name: str, handler: Handler) -> Handler:
        """Answer a member's same command in a group at most once per ``repeat_window``
        seconds; the repeats are ignored (forty /help must not cost the group two minutes
        of Telegram's pace). Private chats are not limited: only the sender reads them."""

        async def run(update: Update, context: Context) -> None:
            chat, user = update.effective_chat, update.effective_user
            if (
                chat is not None
                and user is not None
                and chat.type != ChatType.PRIVATE
                and self.repeated(chat.id, user.id, name)
            ):
                return
            await handler(update, context)

        return run

    def repeated(self, chat_id: int, user_id: int, what: Hashable) -> bool:
        """Whether the member was answered ``what`` in this group within the last
        ``repeat_window`` seconds (the repeat is then ignored); if not, it is noted now.
        A command whose answer depends on the moment (/skip) names what it answers."""
        now = self._clock()
        while self._asked and next(iter(self._asked.values())) <= now - self.repeat_window:
            self._asked.popitem(last=False)  # forgotten once the window is over
        key = (chat_id, user_id, what)
        if key in self._asked:
            return True
        self._asked[key] = now
        return False

    def note_username(self, user: User | None) -> None:
        if user is None or not user.username:
            return
        self.usernames[user.username.casefold()] = user.id
        self.usernames.move_to_end(user.username.casefold())
        while len(self.usernames) > USERNAMES_KEPT:
            self.usernames.popitem(last=False)

    # ---- replies and checks ---------------------------------------------------------

    def reply(self, chat_id: int, text: str, markup: Any = None, thread: int | None = None) -> None:
        """A command's answer: before the chat's table, which waits one slot for it
        and no more however many answers queue (the outbox's ``ANSWER``); in the forum
        topic it was asked in (or ``thread``), never in a private chat's."""
        topic = (topics.here() if thread is None else thread) if chat_id < 0 else 0
        self.outbox.send(chat_id, text, markup, priority=PRIORITY_REPLY, thread=topic)

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

    def note_chat(self, chat: Chat | None) -> None:
        if chat is not None and chat.type != ChatType.PRIVATE:
            self.presenter.titles.note(chat.id, chat.title)

    # ---- steps several flows share --------------------------------------------------

    async def dealt(self, info: GameInfo) -> None:
        """A lobby became a game: the lobby says who plays, the table and panels appear
        (the one step the Mini App's page takes too, ``bot/flows/seating.py``)."""
        await self.seating.dealt(info)

    async def closed(self, info: GameInfo, note: str) -> None:
        """A lobby or game was cancelled: a game's end is announced once, by the presenter;
        a lobby says so, and a line in the group."""
        if info.game is not None:
            await self.presenter.changed(info)
            return
        await self.presenter.lobby(info, note=note)
        with language(await self.langs.of_group(info.chat_id, info.creator_id)):
            self.reply(info.chat_id, "🛑 " + _(note), thread=info.thread_id)


@dataclass(frozen=True, slots=True)
class Press:
    """A pressed button, decoded: who pressed, on which message (``None``: not known,
    an inline message), and what its data says."""

    context: Context
    user: User
    where: topics.Pressed | None
    data: cb.Callback

    @property
    def chat(self) -> Chat:
        """The message's chat (routes of a group's buttons run only when it is known)."""
        assert self.where is not None
        return self.where.chat


@dataclass(frozen=True, slots=True)
class Answer:
    """The answer to a press: a toast (``text``), an alert to close (``alert``), or a
    t.me link Telegram opens (``url``); ``then``: what to show once it is answered."""

    text: str | None = None
    alert: bool = False
    url: str | None = None
    then: Coroutine[Any, Any, None] | None = None

    def api(self) -> dict[str, Any]:
        """``answerCallbackQuery``'s parameters."""
        out: dict[str, Any] = {}
        if self.text is not None:
            out["text"] = self.text
        if self.alert:
            out["show_alert"] = True
        if self.url is not None:
            out["url"] = self.url
        return out
