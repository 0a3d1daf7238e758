"""Per-chat and per-user settings, and the default database path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from durak import Rules
from durak.service import DEFAULT_PATH, GameService, InvalidSetting
from tests.dbaccess import Db, db_execute, db_rows

from .helpers import CHAT, lobby, run, user, with_service


def test_chat_settings_round_trip(db: Db) -> None:
    path = db

    async def first(s: GameService) -> None:
        default = await s.chat_settings(CHAT)
        assert default.rules == Rules() and default.turn_timeout == 60 and default.language is None
        changed = await s.set_chat_settings(
            CHAT, deck=24, transfer=True, throw_in="all", turn_timeout=90, language="uk"
        )
        assert changed.rules == Rules(deck=24, transfer=True, throw_in="all")
        assert (changed.turn_timeout, changed.language) == (90, "uk")
        # Partial change keeps the rest.
        changed = await s.set_chat_settings(CHAT, turn_timeout=None)
        assert (
            changed.rules.deck == 24 and changed.turn_timeout is None and changed.language == "uk"
        )
        assert changed.to_dict()["transfer"] is True

    with_service(path, first)

    async def second(s: GameService) -> None:
        stored = await s.chat_settings(CHAT)
        assert stored.rules == Rules(deck=24, transfer=True, throw_in="all")
        assert stored.language == "uk"
        assert stored.turn_timeout is None  # "off" stays off, not the default
        info = await s.create_lobby(CHAT, user(0), "Ann")
        assert info.rules == stored.rules  # a new lobby takes the chat's rules
        assert (await s.chat_settings(CHAT - 5)).rules == Rules()  # other chats untouched

    with_service(path, second)


def test_settings_saved_before_no_progress_draw_play_with_it(db: Db) -> None:
    """A group's settings name only what it changed; a group that saved its settings
    before ``no_progress_draw`` existed never chose against it: its next game has it,
    as its /settings menu shows, and that game's stored rules name it (RULES-NOTES.md
    78), so a later change of the default leaves the game as it was played."""
    with_service(db, lambda s: s.chat_settings(CHAT))  # the schema
    db_execute(
        db,
        "INSERT INTO chats (chat_id, title, settings, updated_at) VALUES (?, 't', ?, 0)",
        (CHAT, '{"transfer": true, "turn_timeout": 90}'),
    )

    async def body(s: GameService):  # type: ignore[no-untyped-def]
        settings = await s.chat_settings(CHAT)
        info = await s.create_lobby(CHAT, user(0), "Ann")
        return settings, info

    settings, info = with_service(db, body)
    assert settings.rules == Rules(transfer=True) and settings.rules.no_progress_draw
    assert settings.turn_timeout == 90
    assert info.rules.no_progress_draw
    stored = db_rows(db, "SELECT rules FROM games WHERE game_id = ?", (info.game_id,))
    assert '"no_progress_draw":true' in stored[0][0]


@pytest.mark.parametrize(
    "change",
    [
        {"deck": 40},
        {"throw_in": "everyone"},
        {"first_bout_limit": 4},
        {"transfer_by_showing_trump": True},  # needs transfer
        {"teams": "yes"},
        {"turn_timeout": 0},
        {"turn_timeout": 4},
        {"turn_timeout": 86401},
        {"turn_timeout": 90.0},
        {"turn_timeout": True},
        {"turn_timeout": "60"},
        {"language": "english please"},
        {"colour": "red"},
    ],
)
def test_invalid_settings_are_refused_and_change_nothing(db: Db, change: dict) -> None:  # type: ignore[type-arg]
    async def body(s: GameService) -> None:
        await s.set_chat_settings(CHAT, deck=52, language="pl")
        with pytest.raises(InvalidSetting) as e:
            await s.set_chat_settings(CHAT, **{"turn_timeout": 30, **change})
        assert e.value.code == "invalid_setting" and str(e.value)
        stored = await s.chat_settings(CHAT)
        assert stored.rules == Rules(deck=52) and stored.turn_timeout == 60  # never set

    with_service(db, body)


def test_open_lobby_takes_new_rules_unless_too_many_seated(db: Db) -> None:
    async def body(s: GameService) -> None:
        await lobby(s, 5)
        info = await s.set_chat_settings(CHAT, first_bout_limit=5)
        assert info.rules.first_bout_limit == 5
        assert (await s.lobby(CHAT)).rules.first_bout_limit == 5  # type: ignore[union-attr]
        with pytest.raises(InvalidSetting):
            await s.set_chat_settings(CHAT, deck=24)  # 5 seated, 24 cards seat 4
        current = await s.lobby(CHAT)
        assert current is not None and current.rules.deck == 36
        assert (await s.chat_settings(CHAT)).rules.deck == 36
        # A running game keeps its rules; the settings wait for the next lobby.
        await s.start(CHAT, user(0))
        await s.set_chat_settings(CHAT, transfer=True)
        running = await s.active_game(CHAT)
        assert running is not None and not running.rules.transfer

    with_service(db, body)


def test_user_language(db: Db) -> None:
    path = db

    async def first(s: GameService) -> None:
        assert (await s.user_settings(user(0))).language is None
        await s.set_user_language(user(0), "ru")
        await lobby(s, 1)  # joining updates the name, keeps the language
        with pytest.raises(InvalidSetting):
            await s.set_user_language(user(0), "r")
        assert (await s.user_settings(user(0))).language == "ru"

    with_service(path, first)

    async def second(s: GameService) -> None:
        assert (await s.user_settings(user(0))).language == "ru"
        await s.set_user_language(user(0), None)
        assert (await s.user_settings(user(0))).language is None

    with_service(path, second)


def test_default_path_is_in_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    async def body() -> None:
        service = await GameService.open()
        await service.close()

    run(body())
    assert DEFAULT_PATH == "durak.sqlite3"
    assert os.path.exists(tmp_path / "durak.sqlite3")
