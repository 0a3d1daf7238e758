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
"""

from __future__ import annotations

from contextvars import ContextVar

from telegram import Message, Update

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
        return of_message(update.callback_query.message)
    return of_message(update.effective_message)


def here() -> int:
    """The topic of the update being handled."""
    return current.get()
