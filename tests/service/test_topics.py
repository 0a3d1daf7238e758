"""Forum topics: a game belongs to the topic it was opened in, and each topic of a
group has its own open game (issue 10 item 6); tallies stay the group's."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from durak.service import GameService, LobbyExists, NoLobby
from durak.store import Store
from durak.store import sqlite as store_module
from tests.conftest import Db

from .helpers import CHAT, NAMES, play_again_all, play_out, run, user, with_service

TOPIC_A = 7
TOPIC_B = 9


def test_two_topics_of_one_group_are_two_games(db: Db) -> None:
    async def body(s: GameService) -> None:
        a = await s.create_lobby(CHAT, user(0), NAMES[0], thread_id=TOPIC_A)
        b = await s.create_lobby(CHAT, user(2), NAMES[2], thread_id=TOPIC_B)
        general = await s.create_lobby(CHAT, user(4), NAMES[4])
        assert len({a.game_id, b.game_id, general.game_id}) == 3
        assert (a.thread_id, b.thread_id, general.thread_id) == (TOPIC_A, TOPIC_B, 0)
        with pytest.raises(LobbyExists):
            await s.create_lobby(CHAT, user(5), NAMES[5], thread_id=TOPIC_A)
        await s.join(CHAT, user(1), NAMES[1], thread_id=TOPIC_A)
        await s.join(CHAT, user(3), NAMES[3], thread_id=TOPIC_B)
        assert [x.user_id for x in (await s.game(a.game_id)).seats] == [user(0), user(1)]
        assert [x.user_id for x in (await s.game(b.game_id)).seats] == [user(2), user(3)]
        assert len((await s.game(general.game_id)).seats) == 1
        # Lookups are per topic.
        found = await s.active_game(CHAT, TOPIC_B)
        assert found is not None and found.game_id == b.game_id
        assert (await s.active_game(CHAT, 3)) is None
        await s.cancel(CHAT, user(4), thread_id=0)
        assert (await s.active_game(CHAT)) is None
        assert (await s.active_game(CHAT, TOPIC_A)) is not None
        with pytest.raises(NoLobby):
            await s.start(CHAT, user(4), thread_id=0)
        # Both play to the end; the next game of a series stays in its topic.
        ga = await s.start(CHAT, user(0), seed=3, thread_id=TOPIC_A)
        gb = await s.start(CHAT, user(2), seed=4, thread_id=TOPIC_B)
        assert ga.thread_id == TOPIC_A and gb.thread_id == TOPIC_B
        await play_out(s, ga, random.Random(1))
        await play_out(s, gb, random.Random(2))
        again = await play_again_all(s, ga.game_id, user(0))
        assert again.thread_id == TOPIC_A
        # The group's tally counts both topics' games.
        board = await s.leaderboard(CHAT)
        assert {t.user_id for t in board} == {user(0), user(1), user(2), user(3)}

    with_service(db, body)


def test_a_version_2_database_upgrades_to_topics(tmp_path: Path) -> None:
    """An existing database keeps its open lobby (in no topic) and gains topics."""
    path = tmp_path / "v2.sqlite3"

    async def schema_2() -> None:
        store = await Store.open(path)
        await store.close()

    with pytest.MonkeyPatch.context() as m:
        m.setattr(store_module, "MIGRATIONS", store_module.MIGRATIONS[:2])
        m.setattr(store_module, "SCHEMA_VERSION", 2)
        run(schema_2())
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("INSERT INTO chats (chat_id, updated_at) VALUES (?, 1)", (CHAT,))
        conn.execute(
            "INSERT INTO games (chat_id, status, creator_id, rules, created_at, updated_at)"
            " VALUES (?, 'lobby', ?, '{}', 1, 1)",
            (CHAT, user(0)),
        )
        conn.execute(
            "INSERT INTO seats (game_id, seat, user_id, name) VALUES (1, 0, ?, ?)",
            (user(0), NAMES[0]),
        )
    finally:
        conn.close()

    async def body(s: GameService) -> None:
        kept = await s.lobby(CHAT)
        assert kept is not None and kept.game_id == 1 and kept.thread_id == 0
        with pytest.raises(LobbyExists):
            await s.create_lobby(CHAT, user(1), NAMES[1])
        topic = await s.create_lobby(CHAT, user(1), NAMES[1], thread_id=TOPIC_A)
        assert topic.game_id != 1

    with_service(path, body)


def test_closing_a_chat_reaches_every_topic(db: Db) -> None:
    async def body(s: GameService) -> None:
        await s.create_lobby(CHAT, user(0), NAMES[0], thread_id=TOPIC_B)
        await s.create_lobby(CHAT, user(1), NAMES[1])
        await s.create_lobby(CHAT - 1, user(2), NAMES[2], thread_id=TOPIC_A)
        assert await s.open_topics(CHAT) == [0, TOPIC_B]
        closed = await s.close_chat(CHAT, TOPIC_B)
        assert closed is not None and closed.thread_id == TOPIC_B
        assert await s.open_topics(CHAT) == [0]
        assert await s.open_topics(CHAT - 1) == [TOPIC_A]

    with_service(db, body)
