"""The messages a front end posted for a game and edits later (the table, a lobby,
a player's panel): remembered so that a restart still finds them."""

from __future__ import annotations

from dataclasses import replace

from .core import Core
from .errors import UnknownGame
from .types import MessageRef


class Messages:
    """A game's posted messages, by kind and chat."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def set_message(
        self, game_id: int, kind: str, chat_id: int, message_id: int | None
    ) -> None:
        """Remember (or with ``None`` forget) a message posted for this game, so it
        can be edited after a restart: e.g. ``("table", group)``, ``("panel", user)``."""
        async with self._core.game_lock(game_id):  # no other change to the game meanwhile
            if not await self._core.store.put_message(game_id, kind, chat_id, message_id):
                raise UnknownGame(f"no game {game_id}")
            live = self._core.live.get(game_id)
            if live is not None and live.info is not None:
                # the store's list after the write, in the store's order (kind, then chat)
                kept = [m for m in live.info.messages if (m.kind, m.chat_id) != (kind, chat_id)]
                if message_id is not None:
                    kept.append(MessageRef(kind, chat_id, message_id))
                kept.sort(key=lambda m: (m.kind, m.chat_id))
                live.info = replace(live.info, messages=tuple(kept))

    async def message(self, game_id: int, kind: str, chat_id: int) -> int | None:
        async with self._core.store.reading() as tx:
            for m in await tx.messages(game_id):
                if m.kind == kind and m.chat_id == chat_id:
                    return m.message_id
        return None

    async def messages(self, game_id: int) -> tuple[MessageRef, ...]:
        async with self._core.store.reading() as tx:
            return tuple(await tx.messages(game_id))
