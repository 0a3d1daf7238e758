"""State objects of the fake Telegram: users, chats, messages, callback presses.

They are plain mutable dataclasses owned by :class:`~tests.fake_telegram.server.FakeTelegram`;
tests read them freely but should change them only through the server's methods.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .ratelimit import RateStats

if TYPE_CHECKING:
    from .server import FakeTelegram

JSON = dict[str, Any]


@dataclass(eq=False)
class User:
    """A Telegram user (or the bot itself when ``is_bot``)."""

    id: int
    first_name: str
    username: str | None = None
    language_code: str | None = "en"
    last_name: str | None = None
    is_bot: bool = False
    started: bool = False  # has an open private chat with the bot
    blocked: bool = False  # has blocked the bot
    server: FakeTelegram | None = field(default=None, repr=False)

    def to_api(self) -> JSON:
        data: JSON = {"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name}
        if self.last_name:
            data["last_name"] = self.last_name
        if self.username:
            data["username"] = self.username
        if self.language_code and not self.is_bot:
            data["language_code"] = self.language_code
        return data

    def _server(self) -> FakeTelegram:
        if self.server is None:
            raise RuntimeError("user is not attached to a FakeTelegram")
        return self.server

    # Async conveniences for "acting as this user"; each yields once to the event loop.

    async def send(
        self,
        chat: Chat,
        text: str,
        *,
        reply_to: Message | None = None,
        topic: int | None = None,
    ) -> Message:
        """Write in ``chat``; ``topic``: in that forum topic (see ``FakeTelegram.add_topic``)."""
        message = self._server().send_message(self, chat, text, reply_to=reply_to, topic=topic)
        await asyncio.sleep(0)
        return message

    async def start_bot(self, payload: str | None = None) -> Message:
        message = self._server().start_bot(self, payload)
        await asyncio.sleep(0)
        return message

    async def block_bot(self) -> None:
        self._server().block_bot(self)
        await asyncio.sleep(0)

    async def press(
        self, message: Message, callback_data: str, *, check: bool = True
    ) -> CallbackPress:
        press = self._server().press(
            self, message.chat, message.message_id, callback_data, check=check
        )
        await asyncio.sleep(0)
        return press


@dataclass(frozen=True)
class Button:
    """One inline keyboard button of a message."""

    text: str
    row: int
    column: int
    callback_data: str | None = None
    url: str | None = None
    raw: JSON = field(default_factory=dict, compare=False)


def buttons_of(markup: JSON | None) -> list[Button]:
    if not markup or "inline_keyboard" not in markup:
        return []
    return [
        Button(
            text=str(button.get("text", "")),
            row=r,
            column=c,
            callback_data=button.get("callback_data"),
            url=button.get("url"),
            raw=button,
        )
        for r, row in enumerate(markup["inline_keyboard"])
        for c, button in enumerate(row)
    ]


@dataclass(frozen=True)
class MessageVersion:
    """One version of a message's content (the original or an edit)."""

    text: str | None  # as sent, e.g. with HTML tags
    plain_text: str | None  # what users see: tags stripped, entities unescaped
    entities: tuple[JSON, ...]
    reply_markup: JSON | None
    date: int


@dataclass(eq=False)
class StoredFile:
    file_id: str
    file_unique_id: str
    file_name: str | None
    mime_type: str | None
    data: bytes
    file_path: str

    def to_api(self) -> JSON:
        data: JSON = {
            "file_id": self.file_id,
            "file_unique_id": self.file_unique_id,
            "file_size": len(self.data),
        }
        if self.file_name:
            data["file_name"] = self.file_name
        if self.mime_type:
            data["mime_type"] = self.mime_type
        return data


@dataclass(eq=False)
class Message:
    """A message in a chat, with its current content and full edit history.

    ``text``/``plain_text`` hold the caption for documents; service messages have ``None``.
    """

    chat: Chat
    message_id: int
    sender: User
    date: int
    text: str | None = None
    plain_text: str | None = None
    entities: list[JSON] = field(default_factory=list)
    parse_mode: str | None = None
    reply_markup: JSON | None = None
    reply_to: Message | None = None
    document: StoredFile | None = None
    disable_notification: bool = False
    link_preview_options: JSON | None = None
    deleted: bool = False
    edit_date: int | None = None
    history: list[MessageVersion] = field(default_factory=list)
    service: JSON = field(default_factory=dict)  # e.g. {"pinned_message": ...}
    sender_chat: Chat | None = None  # sent on behalf of a chat (a channel, an anonymous admin)
    topic: int | None = None  # the forum topic it is in (message_thread_id); None: General

    @property
    def from_bot(self) -> bool:
        return self.sender.is_bot

    @property
    def buttons(self) -> list[Button]:
        return buttons_of(self.reply_markup)

    @property
    def callback_data(self) -> list[str]:
        return [b.callback_data for b in self.buttons if b.callback_data is not None]

    def button(self, text: str) -> Button:
        """The button whose text equals (or else contains) ``text``."""
        buttons = self.buttons
        for button in buttons:
            if button.text == text:
                return button
        for button in buttons:
            if text in button.text:
                return button
        raise LookupError(
            f"no button {text!r} in message {self.message_id}: {[b.text for b in buttons]}"
        )

    def snapshot(self) -> MessageVersion:
        return MessageVersion(
            self.text,
            self.plain_text,
            tuple(self.entities),
            self.reply_markup,
            self.edit_date or self.date,
        )

    def to_api(self, *, with_reply: bool = True) -> JSON:
        data: JSON = {
            "message_id": self.message_id,
            "from": self.sender.to_api(),
            "chat": self.chat.to_api(),
            "date": self.date,
        }
        if self.sender_chat is not None:
            data["sender_chat"] = self.sender_chat.to_api()
        text_key, entities_key = (
            ("caption", "caption_entities") if self.document else ("text", "entities")
        )
        if self.plain_text is not None:
            data[text_key] = self.plain_text
            if self.entities:
                data[entities_key] = list(self.entities)
        if self.document is not None:
            data["document"] = self.document.to_api()
        if self.edit_date is not None:
            data["edit_date"] = self.edit_date
        if self.reply_markup and "inline_keyboard" in self.reply_markup:
            data["reply_markup"] = self.reply_markup
        if self.topic is not None:
            data["message_thread_id"] = self.topic
            data["is_topic_message"] = True
        if with_reply and self.reply_to is not None:
            data["reply_to_message"] = self.reply_to.to_api(with_reply=False)
            if self.topic is None:  # a reply outside topics names its thread, as Telegram does
                data["message_thread_id"] = self.reply_to.message_id
        data.update(self.service)
        return data


@dataclass(frozen=True)
class ShownText:
    """A text that was visible in a chat at some point (every send and every edit)."""

    message_id: int
    plain_text: str
    raw_text: str
    button_texts: tuple[str, ...]
    from_bot: bool


@dataclass(eq=False)
class Chat:
    id: int
    type: str  # "private" | "group" | "supergroup"
    title: str | None = None
    user: User | None = None  # the other party of a private chat
    username: str | None = None
    members: dict[int, User] = field(default_factory=dict)  # humans, admins included
    admins: set[int] = field(default_factory=set)
    creator_id: int | None = None
    bot_status: str = "member"  # member | administrator | left | kicked
    members_can_pin: bool = True
    migrated_to: Chat | None = None
    messages: dict[int, Message] = field(default_factory=dict)
    shown: list[ShownText] = field(default_factory=list)
    pinned: list[int] = field(default_factory=list)
    last_action: str | None = None
    stats: RateStats = field(default_factory=RateStats)
    next_message_id: int = 1
    topics: dict[int, str] = field(default_factory=dict)  # forum topics: thread id -> name

    @property
    def is_private(self) -> bool:
        return self.type == "private"

    @property
    def is_group(self) -> bool:
        return self.type in ("group", "supergroup")

    @property
    def bot_is_admin(self) -> bool:
        return self.bot_status == "administrator"

    @property
    def bot_present(self) -> bool:
        return self.bot_status in ("member", "administrator")

    def to_api(self) -> JSON:
        data: JSON = {"id": self.id, "type": self.type}
        if self.is_private and self.user is not None:
            data.update(
                {
                    k: v
                    for k, v in self.user.to_api().items()
                    if k in ("first_name", "last_name", "username")
                }
            )
        else:
            data["title"] = self.title
            if self.topics:
                data["is_forum"] = True
            if self.username:
                data["username"] = self.username
        return data

    def allocate_message_id(self) -> int:
        message_id = self.next_message_id
        self.next_message_id += 1
        return message_id

    def message(self, message_id: int) -> Message:
        try:
            return self.messages[message_id]
        except KeyError:
            raise LookupError(f"no message {message_id} in chat {self.id}") from None

    def bot_messages(self, *, include_deleted: bool = False) -> list[Message]:
        return [
            m for m in self.messages.values() if m.from_bot and (include_deleted or not m.deleted)
        ]

    def last_bot_message(self) -> Message | None:
        for message_id in range(self.next_message_id - 1, 0, -1):
            message = self.messages.get(message_id)
            if message is not None and message.from_bot and not message.deleted:
                return message
        return None

    def texts_ever_shown(
        self, *, from_bot_only: bool = True, include_buttons: bool = False
    ) -> list[str]:
        """Every plain text ever visible in the chat, one entry per send/edit."""
        texts: list[str] = []
        for shown in self.shown:
            if from_bot_only and not shown.from_bot:
                continue
            texts.append(shown.plain_text)
            if include_buttons:
                texts.extend(shown.button_texts)
        return texts


@dataclass(frozen=True)
class CallbackAnswer:
    """What the bot passed to answerCallbackQuery."""

    text: str | None
    show_alert: bool
    url: str | None
    cache_time: int


@dataclass(eq=False)
class CallbackPress:
    """A pressed inline button; await it (or :meth:`wait`) for the bot's answer."""

    id: str
    user: User
    message: Message
    data: str
    created_at: float
    future: asyncio.Future[CallbackAnswer] = field(repr=False)
    late_answer: CallbackAnswer | None = None  # an answer refused as too late

    @property
    def answered(self) -> bool:
        return self.future.done()

    @property
    def answer(self) -> CallbackAnswer | None:
        return self.future.result() if self.future.done() else None

    async def wait(self, timeout: float = 5.0) -> CallbackAnswer:
        try:
            return await asyncio.wait_for(asyncio.shield(self.future), timeout)
        except TimeoutError:
            raise TimeoutError(
                f"callback query {self.id} ({self.data!r}) not answered within {timeout}s"
            ) from None

    def __await__(self):  # type: ignore[no-untyped-def]
        return self.wait().__await__()


@dataclass(frozen=True)
class RequestRecord:
    """One Bot API call as received by the server."""

    method: str
    params: JSON
    files: tuple[str, ...]
    status: int
    description: str | None
    at: float
    agent: str = ""  # the client's User-Agent (tests run several bot processes)
    arrived: float = 0.0  # when it came in (``at``: when it was answered; a long poll waits)
