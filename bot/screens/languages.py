"""Who reads which language: a user's own choice (/language), else his Telegram
language; a group's setting (/settings), else the language of the game's
creator. Looked up once, then kept in memory (the store stays the truth)."""

from __future__ import annotations

from telegram import User

from durak.service import ChatSettings, GameService

from ..ui.i18n import DEFAULT, pick


class Languages:
    def __init__(self, service: GameService) -> None:
        self._service = service
        self._telegram: dict[int, str] = {}
        self._chosen: dict[int, str | None] = {}
        self._groups: dict[int, ChatSettings] = {}

    def note(self, user: User | None) -> None:
        """Remember the language a user's Telegram app runs in."""
        if user is not None and user.language_code:
            self._telegram[user.id] = pick(user.language_code)

    async def of_user(self, user_id: int) -> str:
        if user_id not in self._chosen:
            self._chosen[user_id] = (await self._service.user_settings(user_id)).language
        return self._chosen[user_id] or self._telegram.get(user_id) or DEFAULT

    async def choose(self, user_id: int, language: str | None) -> None:
        await self._service.set_user_language(user_id, language)
        self._chosen[user_id] = language

    async def chat_settings(self, chat_id: int) -> ChatSettings:
        """A group's settings, read once (every change goes through ``changed``)."""
        found = self._groups.get(chat_id)
        if found is None:
            found = self._groups[chat_id] = await self._service.chat_settings(chat_id)
        return found

    def changed(self, settings: ChatSettings) -> None:
        self._groups[settings.chat_id] = settings

    def forget(self, chat_id: int) -> None:
        self._groups.pop(chat_id, None)

    async def of_group(self, chat_id: int, creator_id: int | None = None) -> str:
        chosen = (await self.chat_settings(chat_id)).language
        if chosen:
            return chosen
        if creator_id is not None:
            return await self.of_user(creator_id)
        return DEFAULT
