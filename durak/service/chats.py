"""Chats and settings: a group that becomes a supergroup, ``/notify_me``, a chat's
rules, turn time and language, a user's language.

Turn time: a chat that never chose one gets ``DEFAULT_TURN_TIMEOUT`` (60 s); a
stored ``None`` means no limit. Settings store only the keys a chat chose, so the
two stay apart. Databases from schema 1 stored every key on each change: their
``null`` stays "no limit" (what those chats' menus showed)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..rules import Rules
from .codec import (
    RULE_NAMES,
    check_language,
    check_recap,
    check_timeout,
    json_text,
    read_settings,
    rules_json,
    settings_of,
)
from .core import Core
from .errors import InvalidSetting
from .types import CANCELLED, LOBBY, RUNNING, ChatSettings, Ending, UserSettings

if TYPE_CHECKING:
    from ..store.base import GameRow


class Chats:
    """What belongs to a chat (or a user) rather than to one game."""

    def __init__(self, core: Core) -> None:
        self._core = core

    async def migrate_chat(self, old_chat_id: int, new_chat_id: int) -> None:
        """The group became a supergroup with a new id: move its settings, games,
        tallies (added to any the new id has) and group messages there, in one
        transaction; a running game plays on under the new id. Idempotent.

        If both ids hold an open game, the old chat's is cancelled, unless it is
        running and the new chat's is only a lobby (then the lobby is)."""
        if old_chat_id == new_chat_id:
            return
        core = self._core
        async with core.locked(chats=(old_chat_id, new_chat_id)):
            async with core.store.reading() as tx:
                old_open = await tx.open_game_in_chat(old_chat_id)
                new_open = await tx.open_game_in_chat(new_chat_id)
            ids = [r.game_id for r in (old_open, new_open) if r is not None]
            async with core.locked(games=ids), core.write(repair=ids) as w:
                now = time.time()
                if old_open is not None and new_open is not None:
                    keep_old = old_open.status == RUNNING and new_open.status == LOBBY
                    dropped: GameRow = new_open if keep_old else old_open
                    ending = Ending(CANCELLED)
                    if await w.tx.end_game(dropped.game_id, dropped.status, CANCELLED, ending, now):
                        w.after(lambda: core.forget(dropped.game_id))
                    # else it ended meanwhile: nothing in the way
                await w.tx.migrate_chat(old_chat_id, new_chat_id, now)
                w.after(lambda: self._moved(old_chat_id, new_chat_id))

    def _moved(self, old_chat_id: int, new_chat_id: int) -> None:
        for live in self._core.live.values():
            if live.chat_id == old_chat_id:
                live.chat_id = new_chat_id
                live.info = None

    # ---- /notify_me ---------------------------------------------------------------

    async def toggle_notify(self, chat_id: int, user_id: int) -> bool:
        """``/notify_me``: subscribe to the chat's new lobbies, or unsubscribe; ``True``
        if he is subscribed now."""
        async with self._core.write() as w:
            return await w.tx.toggle_notify(chat_id, user_id, time.time())

    async def subscribers(self, chat_id: int) -> list[int]:
        async with self._core.store.reading() as tx:
            return await tx.subscribers(chat_id)

    async def drop_subscriber(self, user_id: int) -> int:
        """A subscriber who blocked the bot leaves every chat's list (quietly)."""
        async with self._core.write() as w:
            return await w.tx.drop_subscriber(user_id)

    # ---- settings -------------------------------------------------------------------

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        async with self._core.store.reading() as tx:
            return settings_of(chat_id, await tx.chat_settings(chat_id))

    async def set_chat_settings(self, chat_id: int, **changes: Any) -> ChatSettings:
        """Change rule options (RULES.md names), ``turn_timeout`` (seconds or
        ``None``) or ``language``; an open lobby takes the new rules too (rules are
        picked before a game starts, never during one)."""
        unknown = sorted(set(changes) - RULE_NAMES - {"turn_timeout", "language", "recap"})
        if unknown:
            raise InvalidSetting(f"unknown setting(s): {', '.join(unknown)}")
        async with self._core.write(chat=chat_id) as w:
            current, chosen = read_settings(chat_id, await w.tx.chat_settings(chat_id))
            merged = {
                **current.rules.to_dict(),
                **{k: v for k, v in changes.items() if k in RULE_NAMES},
            }
            try:
                rules = Rules.from_dict(merged)
            except (ValueError, TypeError) as e:
                raise InvalidSetting(str(e)) from None
            timeout = changes.get("turn_timeout", current.turn_timeout)
            language = changes.get("language", current.language)
            recap = changes.get("recap", current.recap)
            check_timeout(timeout)
            check_language(language)
            check_recap(recap)
            # Only what the chat chose is stored: no turn_timeout key means "the
            # default", a null one means "no limit".
            stored: dict[str, Any] = rules.changed()
            chosen_now = (("turn_timeout", timeout), ("language", language), ("recap", recap))
            for key, value in chosen_now:
                if key in changes or key in chosen:
                    stored[key] = value
            now = time.time()
            await w.tx.set_chat_settings(chat_id, json_text(stored), now)
            row = await w.tx.open_game_in_chat(chat_id)
            if row is not None and row.status == LOBBY:
                seated = len(await w.tx.seats(row.game_id))
                if seated > rules.max_players:
                    raise InvalidSetting(
                        f"the open lobby seats {seated}; {rules.deck} cards allow"
                        f" {rules.max_players}"
                    )
                await w.tx.update_lobby(row.game_id, now, rules=rules_json(rules))
            return ChatSettings(chat_id, rules, timeout, language, recap)

    async def user_settings(self, user_id: int) -> UserSettings:
        async with self._core.store.reading() as tx:
            return UserSettings(user_id, await tx.user_language(user_id))

    async def set_user_language(self, user_id: int, language: str | None) -> UserSettings:
        check_language(language)
        async with self._core.write() as w:
            await w.tx.set_user_language(user_id, language, time.time())
        return UserSettings(user_id, language)
