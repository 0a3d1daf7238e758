"""Forum topics: which topic of a group an update came from.

A group with topics is many rooms: each topic has its own game, and everything the
bot says for it goes there (issue 10 item 6). Telegram marks a message in a topic
with ``is_topic_message`` and its ``message_thread_id``; a message in the General
topic, or in a group without topics, has neither (a plain reply there carries the
id of the message it answers as ``message_thread_id``, which is no topic at all, so
the id counts only with ``is_topic_message``). 0 stands for "no topic" everywhere.

The topic of the update being handled is kept in a context variable, set once by
the handlers' wrapper, so that every reply of a handler reaches the topic it was
asked in without each of them passing it along.

A pressed button's message is read through :func:`pressed` only: the getUpdates answer
(and a webhook's update) hands PTB the little the bot reads of it in the callback
query's ``api_kwargs`` (:func:`slim_query`), not as a ``Message`` PTB would build.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from telegram import CallbackQuery, Chat, Message, Update

#: The forum topic of the update being handled; 0 for none.
current: ContextVar[int] = ContextVar("topic", default=0)


def of_message(message: object) -> int:
    """The topic a message is in (0: none, the General topic included)."""
    if not isinstance(message, Message) or not message.is_topic_message:
        return 0
    return int(message.message_thread_id or 0)


def of_update(update: Update) -> int:
    """The topic of a command's message, or of the message whose button was pressed."""
    if update.callback_query is not None:
        where = pressed(update.callback_query)
        return 0 if where is None else where.thread
    return of_message(update.effective_message)


#: The callback query's key (unknown to PTB, so kept in its ``api_kwargs``) that holds
#: what the bot reads of the pressed message.
PRESSED = "durak_pressed"


@dataclass(frozen=True, slots=True)
class Pressed:
    """The message whose button was pressed: its chat (id, type, title only), its id, the
    forum topic it is in (0: none), and whether the pressed button is on the message as
    Telegram holds it now (``None``: not told). ``False`` means the press was made on
    content the bot has since edited away: the press and the edit crossed."""

    chat: Chat
    message_id: int
    thread: int
    on_keyboard: bool | None = None


def slim_query(query: dict[str, Any]) -> None:
    """Replace a decoded callback query's ``message`` with :data:`PRESSED` (in place).

    Only a message of the expected shape is replaced: anything else stays for PTB to judge.
    An inaccessible message (``date`` 0, too old) has the same chat and id; it has no topic
    marks, so its topic is 0, as it was read before."""
    message = query.get("message")
    if not isinstance(message, dict):
        return
    chat = message.get("chat")
    if not isinstance(chat, dict):
        return
    chat_id, message_id, chat_type = chat.get("id"), message.get("message_id"), chat.get("type")
    if not isinstance(chat_id, int) or not isinstance(message_id, int):
        return
    if not isinstance(chat_type, str):
        return
    thread = message.get("message_thread_id") if message.get("is_topic_message") else 0
    title = chat.get("title")
    del query["message"]
    query[PRESSED] = {
        "chat_id": chat_id,
        "chat_type": chat_type,
        "title": title if isinstance(title, str) else None,
        "message_id": message_id,
        "thread": thread if isinstance(thread, int) else 0,
        "on_keyboard": _on_keyboard(message, query.get("data")),
    }


def _on_keyboard(message: dict[str, Any], data: object) -> bool | None:
    """Whether ``data`` is a button's callback data on the message's inline keyboard
    (``None``: nothing to tell by, as for an inaccessible message, whose ``date`` is 0)."""
    if not message.get("date") or not isinstance(data, str):
        return None
    markup = message.get("reply_markup")
    if markup is None:
        return False  # its keyboard was edited away
    if not isinstance(markup, dict):
        return None
    rows = markup.get("inline_keyboard")
    if not isinstance(rows, list):
        return None
    return any(
        isinstance(button, dict) and button.get("callback_data") == data
        for row in rows
        if isinstance(row, list)
        for button in row
    )


def pressed(query: CallbackQuery) -> Pressed | None:
    """Where a button was pressed (``None``: an inline message's button, no chat).

    Reads the slim form of :func:`slim_query`, else a ``message`` PTB built (an update
    made in a test, or one the slimming passed on untouched)."""
    slim = query.api_kwargs.get(PRESSED)
    if isinstance(slim, dict):
        chat = Chat(slim["chat_id"], slim["chat_type"], title=slim["title"])
        return Pressed(chat, slim["message_id"], slim["thread"], slim.get("on_keyboard"))
    message = query.message
    if message is None:
        return None
    on_keyboard = None
    if isinstance(message, Message):
        keyboard = message.reply_markup.inline_keyboard if message.reply_markup else ()
        on_keyboard = any(b.callback_data == query.data for row in keyboard for b in row)
    return Pressed(message.chat, message.message_id, of_message(message), on_keyboard)


def here() -> int:
    """The topic of the update being handled."""
    return current.get()
