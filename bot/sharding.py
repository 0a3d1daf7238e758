"""Which worker an update belongs to, for when one bot process is not enough.

docs/SCALING.md has the design: updates are routed to workers by a shard key,
every update of a game to the worker that owns the game's group chat, so that a
game is only ever changed in one process (its in-memory state, its timers, its
per-chat send pace stay where they are). This module is the routing function;
nothing calls it yet.

The key is the group chat's id. A group's own updates carry it (``message.chat``);
a press in a private chat (the player's panel, ``1g.<game>...``) and a deep link
(``/start j<game>``, ``/start g<game>``) carry only the game's id, which
``chat_of_game`` turns into its group's (a lookup the router keeps, from the
store's ``games`` table: a game never changes group, except when its group
becomes a supergroup). ``None`` means no game is concerned (``/help`` or
``/language`` in private, a user's own language button, a private chat blocked
or unblocked): any worker may take it.
"""

from __future__ import annotations

from collections.abc import Callable

from telegram import Update
from telegram.constants import ChatType

from . import callbacks as cb
from . import topics

#: The game's group chat id, or ``None`` for a game the router does not know.
ChatOfGame = Callable[[int], "int | None"]


def _is_group(chat_type: str | None) -> bool:
    return chat_type in (ChatType.GROUP, ChatType.SUPERGROUP)


def _deep_link_game(text: str) -> int | None:
    """The game of ``/start j<game>`` or ``/start g<game>`` (as bot/handlers.py reads it)."""
    words = text.split()
    if len(words) != 2 or words[0].split("@")[0] != "/start":
        return None
    payload = words[1]
    if payload[:1] in ("j", "g") and payload[1:].isdigit() and len(payload) < 20:
        return int(payload[1:])
    return None


def shard_key(update: Update, chat_of_game: ChatOfGame) -> int | None:
    """The group chat id whose worker must handle ``update``, or ``None`` if any may."""
    query = update.callback_query
    if query is not None:
        where = topics.pressed(query)
        here = where.chat if where is not None else None
        try:
            data = cb.decode(query.data)
        except cb.BadCallback:  # refused by whichever worker: where it was pressed
            return here.id if here is not None and _is_group(here.type) else None
        if data.kind == "g":  # a move, pressed on a private panel
            return chat_of_game(data.game_id)
        if data.kind == "o":  # a group's settings menu, or one's own language
            return here.id if here is not None and _is_group(here.type) else None
        # lobby and series buttons live on the group's messages
        if here is not None and _is_group(here.type):
            return here.id
        return chat_of_game(data.game_id)
    change = update.my_chat_member
    if change is not None:
        return change.chat.id if _is_group(change.chat.type) else None
    message = update.effective_message
    if message is None:
        return None
    if message.migrate_from_chat_id is not None:  # the new supergroup's first message
        return message.migrate_from_chat_id  # the old id's worker moves the games
    if _is_group(message.chat.type):
        return message.chat.id
    game = _deep_link_game(message.text or "")
    return None if game is None else chat_of_game(game)


class ShardKeys:
    """``shard_key(update)`` with the router's game-to-group lookup bound."""

    def __init__(self, chat_of_game: ChatOfGame) -> None:
        self._chat_of_game = chat_of_game

    def shard_key(self, update: Update) -> int | None:
        return shard_key(update, self._chat_of_game)


def shard_of(key: int | None, shards: int) -> int | None:
    """The shard (0 .. shards - 1) that owns a key; ``None``: any shard."""
    return None if key is None else key % shards
