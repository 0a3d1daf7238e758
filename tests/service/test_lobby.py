"""Lobby life cycle: create, join, leave, start, cancel, permissions, limits."""

from __future__ import annotations

import random

import pytest

from durak import Game, Rules, to_snapshot
from durak.service import (
    AlreadyJoined,
    BadPlayerCount,
    GameRunning,
    GameService,
    LobbyExists,
    LobbyFull,
    NoLobby,
    NotAllowed,
    NotEnoughPlayers,
    NotInGame,
)
from tests.dbaccess import Db

from .helpers import CHAT, NAMES, lobby, play_out, user, with_service


def test_create_join_start(db: Db) -> None:
    async def body(s: GameService) -> None:
        info = await s.create_lobby(CHAT, user(0), "Ann", "Chat")
        assert info.status == "lobby" and info.creator_id == user(0) and info.game is None
        assert [(x.seat, x.user_id, x.name) for x in info.seats] == [(0, user(0), "Ann")]
        info = await s.join(CHAT, user(1), "Bob")
        assert await s.lobby(CHAT) == info
        info = await s.start(CHAT, user(0), seed=42)
        assert info.status == "running" and info.version == 0 and info.seed == "42"
        assert info.game is not None
        # The stored seed reproduces the deal exactly.
        same = Game.from_seed(Rules(), ["Ann", "Bob"], "42")
        assert to_snapshot(info.game) == to_snapshot(same)
        assert await s.lobby(CHAT) is None
        active = await s.active_game(CHAT)
        assert active is not None and active.game_id == info.game_id

    with_service(db, body)


def test_one_open_lobby_or_game_per_chat(db: Db) -> None:
    async def body(s: GameService) -> None:
        await lobby(s, 2)
        with pytest.raises(LobbyExists) as e:
            await s.create_lobby(CHAT, user(5), "Eve")
        assert e.value.code == "lobby_exists"
        await s.start(CHAT, user(0))
        with pytest.raises(GameRunning) as e2:
            await s.create_lobby(CHAT, user(5), "Eve")
        assert e2.value.code == "game_running" and isinstance(e2.value, LobbyExists)
        with pytest.raises(GameRunning):
            await s.join(CHAT, user(5), "Eve")
        # Another chat is independent.
        other = await s.create_lobby(CHAT - 1, user(5), "Eve")
        assert other.chat_id == CHAT - 1

    with_service(db, body)


def test_join_refusals(db: Db) -> None:
    async def body(s: GameService) -> None:
        with pytest.raises(NoLobby):
            await s.join(CHAT, user(1), "Bob")
        await lobby(s, 1)
        with pytest.raises(AlreadyJoined):
            await s.join(CHAT, user(0), "Ann again")

    with_service(db, body)


@pytest.mark.parametrize(("deck", "most"), [(24, 4), (36, 6), (52, 8)])
def test_start_limits_per_deck(db: Db, deck: int, most: int) -> None:
    async def body(s: GameService) -> None:
        info = await lobby(s, 1, deck=deck)
        assert info.rules.deck == deck
        with pytest.raises(NotEnoughPlayers):
            await s.start(CHAT, user(0))
        for k in range(1, most):
            await s.join(CHAT, user(k), NAMES[k])
        with pytest.raises(LobbyFull) as e:
            await s.join(CHAT, user(most), "One too many")
        assert e.value.code == "lobby_full"
        info = await s.start(CHAT, user(0))
        assert len(info.seats) == most and info.game is not None and info.game.n == most

    with_service(db, body)


def test_teams_need_four_or_six(db: Db) -> None:
    async def body(s: GameService) -> None:
        await lobby(s, 3, teams=True)
        with pytest.raises(BadPlayerCount) as e:
            await s.start(CHAT, user(0))
        assert e.value.code == "bad_player_count"
        await s.join(CHAT, user(3), "Dan")
        info = await s.start(CHAT, user(0))
        assert info.rules.teams and info.game is not None

    with_service(db, body)


def test_only_creator_or_admin_starts_and_cancels(db: Db) -> None:
    async def body(s: GameService) -> None:
        await lobby(s, 3)
        with pytest.raises(NotAllowed) as e:
            await s.start(CHAT, user(1))
        assert e.value.code == "not_allowed"
        with pytest.raises(NotAllowed):
            await s.cancel(CHAT, user(2))
        info = await s.start(CHAT, user(9), is_admin=True)  # an admin who does not play
        assert info.status == "running"
        with pytest.raises(NotAllowed):
            await s.cancel(CHAT, user(1))
        ended = await s.cancel(CHAT, user(9), is_admin=True)
        assert ended.status == "cancelled" and ended.ending is not None
        assert ended.ending.reason == "cancelled" and ended.ending.by_user == user(9)
        with pytest.raises(NoLobby):
            await s.cancel(CHAT, user(0))

    with_service(db, body)


def test_leave_lobby_passes_creator_and_closes_when_empty(db: Db) -> None:
    async def body(s: GameService) -> None:
        await lobby(s, 3)
        result = await s.leave(CHAT, user(0))
        assert result.outcome == "left"
        assert result.info.creator_id == user(1)
        assert [(x.seat, x.user_id) for x in result.info.seats] == [(0, user(1)), (1, user(2))]
        with pytest.raises(NotAllowed):
            await s.start(CHAT, user(0))
        with pytest.raises(NotInGame):
            await s.leave(CHAT, user(0))
        await s.leave(CHAT, user(2))
        result = await s.leave(CHAT, user(1))
        assert result.outcome == "closed" and result.info.status == "cancelled"
        assert await s.active_game(CHAT) is None
        with pytest.raises(NoLobby):
            await s.leave(CHAT, user(1))
        # The chat is free again.
        again = await s.create_lobby(CHAT, user(1), "Bob")
        assert again.game_id != result.info.game_id

    with_service(db, body)


def test_duplicate_and_empty_names_become_distinct(db: Db) -> None:
    async def body(s: GameService) -> None:
        await s.create_lobby(CHAT, user(0), "Ann")
        await s.join(CHAT, user(1), "Ann")
        await s.join(CHAT, user(2), "  ")
        info = await s.start(CHAT, user(0), seed=3)
        assert [x.name for x in info.seats] == ["Ann", "Ann (2)", "Player 3"]
        assert info.game is not None and info.game.players == ("Ann", "Ann (2)", "Player 3")

    with_service(db, body)


def test_ai_seats(db: Db) -> None:
    async def body(s: GameService) -> None:
        await lobby(s, 1)
        with pytest.raises(NotAllowed):
            await s.add_ai(CHAT, "easy", by_user=user(5))
        info = await s.add_ai(CHAT, "easy", by_user=user(0))
        info = await s.add_ai(CHAT, "hard", by_user=user(0))
        ais = [x for x in info.seats if x.is_ai]
        assert [(x.user_id, x.level, x.kind) for x in ais] == [
            (-1, "easy", "ai"),
            (-2, "hard", "ai"),
        ]
        info = await s.start(CHAT, user(0), seed=1)
        assert info.game is not None and info.game.n == 3
        # The human leaving a lobby full of AIs closes it; here the game runs, so
        # the AI can act through the same apply call as anyone.
        game = info.game
        seat = game.actors()[0]
        action = game.legal_actions(seat)[0]
        result = await s.apply(info.game_id, info.seats[seat].user_id, action, 0)
        assert result.version == 1

    with_service(db, body)


def test_last_human_leaving_closes_lobby_with_ais(db: Db) -> None:
    async def body(s: GameService) -> None:
        await lobby(s, 1)
        await s.add_ai(CHAT, "easy", by_user=user(0))
        result = await s.leave(CHAT, user(0))
        assert result.outcome == "closed"

    with_service(db, body)


def test_games_of_user(db: Db) -> None:
    async def body(s: GameService) -> None:
        await lobby(s, 2, chat=1)
        await lobby(s, 2, chat=2)
        await s.start(2, user(0))
        mine = await s.games_of_user(user(1))
        assert sorted((g.chat_id, g.status) for g in mine) == [(1, "lobby"), (2, "running")]
        await s.cancel(1, user(0))
        assert [g.chat_id for g in await s.games_of_user(user(1))] == [2]
        assert len(await s.games_of_user(user(1), include_ended=True)) == 2
        assert await s.games_of_user(user(7)) == []

    with_service(db, body)


def test_cap_refusals_and_a_full_lobby_starts_itself(db: Db) -> None:
    async def body(s: GameService) -> None:
        await lobby(s, 2)
        with pytest.raises(NotAllowed):
            await s.set_cap(CHAT, user(1), 3)
        with pytest.raises(BadPlayerCount):
            await s.set_cap(CHAT, user(0), 7)  # 36 cards seat at most 6
        with pytest.raises(BadPlayerCount):
            await s.set_cap(CHAT, user(0), 1)
        capped = await s.set_cap(CHAT, user(0), 3)
        assert capped.status == "lobby" and capped.room == 3
        full = await s.join(CHAT, user(2), NAMES[2])
        assert full.status == "running" and len(full.seats) == 3
        assert not any(x.ready for x in full.seats)

    with_service(db, body)


def test_a_left_seat_stays_with_the_ai(db: Db) -> None:
    """hand_over: the seat is away for good; pressing a button does not bring him back."""

    async def body(s: GameService) -> None:
        await lobby(s, 3)
        info = await s.start(CHAT, user(0), seed=3)
        after = await s.hand_over(info.game_id, user(1))
        assert after.status == "running" and after.seats[1].left and after.seats[1].away
        assert await s.mark_present(info.game_id, user(1)) is False
        assert (await s.game(info.game_id)).seats[1].away
        with pytest.raises(NotInGame):
            await s.hand_over(info.game_id, user(1))

    with_service(db, body)

    # a fresh service (from the store) knows it too
    async def again(s: GameService) -> None:
        running = (await s.running_games())[0]
        assert running.seats[1].left and running.seats[1].away
        assert await s.mark_present(running.game_id, user(1)) is False

    with_service(db, again)


def test_a_seat_joined_from_the_mini_app_is_kept_through_the_game_and_play_again(db: Db) -> None:
    """``Seat.app``: joined from the page by a player the bot cannot write to; stored with
    the seat (a restart still knows), dealt with it, carried into Play again's lobby."""

    async def body(s: GameService) -> None:
        await s.create_lobby(CHAT, user(0), "Ann")
        info = await s.join(CHAT, user(1), "Bob", app=True)
        assert [x.app for x in info.seats] == [False, True]
        running = await s.start(CHAT, user(0), seed=3)
        assert [x.app for x in running.seats] == [False, True]
        assert [x.app for x in (await s.game(running.game_id)).seats] == [False, True]
        await play_out(s, running, random.Random(3))
        again = await s.play_again(running.game_id, user(0))
        assert [(x.user_id, x.app) for x in again.seats] == [(user(0), False), (user(1), True)]

    with_service(db, body)
