"""Turn timers, absent players, lobby expiry, group migration, leaving a chat, history."""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from durak import Take
from durak.service import (
    AWAY_AFTER,
    DEFAULT_TURN_TIMEOUT,
    DatabaseError,
    Deadline,
    GameOver,
    GameService,
    NotInGame,
    NotRunning,
    Seat,
    UnknownGame,
)
from durak.store import Tx
from tests.dbaccess import Db, db_execute, is_pg

from .helpers import (
    CHAT,
    db_rows,
    lobby,
    play_again_all,
    play_out,
    poison,
    started,
    step,
    tx_class,
    user,
    with_service,
)

NEW = -1_001_000  # the supergroup CHAT becomes


def _stored_settings(path: Path, chat: int) -> dict[str, Any]:
    [(text,)] = db_rows(path, "SELECT settings FROM chats WHERE chat_id = ?", (chat,))
    found: dict[str, Any] = json.loads(text)
    return found


def _timers(path: Path) -> list[tuple[Any, ...]]:
    return db_rows(path, "SELECT game_id, version, deadline FROM timers ORDER BY game_id")


# ---- the turn time setting -------------------------------------------------------------


def test_turn_timeout_never_set_is_the_default_and_off_stays_off(db: Db) -> None:
    path = db
    other = CHAT - 1

    async def first(s: GameService) -> None:
        assert DEFAULT_TURN_TIMEOUT == 60
        assert (await s.chat_settings(CHAT)).turn_timeout == 60
        # Changing something else does not turn the default into a choice.
        assert (await s.set_chat_settings(CHAT, language="uk")).turn_timeout == 60
        assert (await s.set_chat_settings(CHAT, deck=24)).turn_timeout == 60
        # "Off" is a choice, and survives changes of other settings.
        assert (await s.set_chat_settings(other, turn_timeout=None)).turn_timeout is None
        assert (await s.set_chat_settings(other, deck=52)).turn_timeout is None
        assert (await s.set_chat_settings(CHAT - 2, turn_timeout=5)).turn_timeout == 5
        assert (await s.set_chat_settings(CHAT - 3, turn_timeout=86400)).turn_timeout == 86400

    with_service(path, first)
    assert "turn_timeout" not in _stored_settings(path, CHAT)
    assert _stored_settings(path, other) == {"deck": 52, "turn_timeout": None}

    async def second(s: GameService) -> None:
        assert (await s.chat_settings(CHAT)).turn_timeout == 60
        assert (await s.chat_settings(CHAT)).language == "uk"
        off = await s.chat_settings(other)
        assert off.turn_timeout is None and off.rules.deck == 52
        # An explicit 60 is stored as such (a later default change would not move it).
        await s.set_chat_settings(CHAT, turn_timeout=60)

    with_service(path, second)
    assert _stored_settings(path, CHAT)["turn_timeout"] == 60


def test_a_stored_turn_timeout_out_of_range_falls_back_alone(db: Db) -> None:
    path = db

    async def body(s: GameService) -> None:
        await s.set_chat_settings(CHAT, deck=24, language="pl")
        async with s.store.transaction() as tx:  # e.g. a week, once allowed
            text = json.dumps({"deck": 24, "turn_timeout": 604800, "language": "pl"})
            await tx.set_chat_settings(CHAT, text, time.time())
        found = await s.chat_settings(CHAT)
        assert (found.turn_timeout, found.rules.deck, found.language) == (60, 24, "pl")

    with_service(path, body)


# ---- deadlines -----------------------------------------------------------------------


def test_deadlines_are_kept_for_the_running_version_only(db: Db) -> None:
    path = db

    async def first(s: GameService) -> int:
        info = await started(s, 2, seed=4)
        g = info.game_id
        assert await s.deadlines() == []
        assert await s.set_deadline(g, 0, 1000.5) is True
        assert await s.deadlines() == [Deadline(g, CHAT, 0, 1000.5)]
        # A deadline for a state that is not the game's now is not stored.
        assert await s.set_deadline(g, 1, 2000.0) is False
        assert await s.deadlines() == [Deadline(g, CHAT, 0, 1000.5)]
        result = await step(s, info, random.Random(4), 0)
        assert result.version == 1
        assert await s.set_deadline(g, 0, 3000.0) is False  # too late for version 0
        assert await s.set_deadline(g, 1, 4000.0) is True  # replaces it
        assert _timers(path) == [(g, 1, 4000.0)]
        # Lobbies and unknown games.
        other = await lobby(s, 2, chat=CHAT - 1)
        assert await s.set_deadline(other.game_id, 0, 5000.0) is False
        with pytest.raises(UnknownGame):
            await s.set_deadline(424242, 0, 5000.0)
        with pytest.raises(ValueError):
            await s.set_deadline(g, 1, float("nan"))
        return g

    g = with_service(path, first)

    async def second(s: GameService) -> None:
        assert await s.deadlines() == [Deadline(g, CHAT, 1, 4000.0)]  # survives a restart
        assert await s.set_deadline(g, 1, None) is True
        assert await s.deadlines() == []

    with_service(path, second)
    assert _timers(path) == []


def test_every_ending_drops_the_timer_with_it(db: Db) -> None:
    path = db

    async def body(s: GameService) -> None:
        # The last action.
        info = await started(s, 2, seed=2)
        await s.set_deadline(info.game_id, 0, 1.0)
        await play_out(s, info, random.Random(2))
        assert _timers(path) == []
        # A surrender.
        info = await started(s, 2, seed=3, chat=CHAT - 1)
        await s.set_deadline(info.game_id, 0, 2.0)
        await s.surrender(info.game_id, user(1))
        assert _timers(path) == []
        # A cancel, and the bot leaving a chat.
        info = await started(s, 2, seed=4, chat=CHAT - 2)
        await s.set_deadline(info.game_id, 0, 3.0)
        await s.cancel(CHAT - 2, user(0))
        info = await started(s, 2, seed=5, chat=CHAT - 3)
        await s.set_deadline(info.game_id, 0, 4.0)
        kept = await started(s, 2, seed=6, chat=CHAT - 4)
        await s.set_deadline(kept.game_id, 0, 5.0)
        await s.close_chat(CHAT - 3)
        assert _timers(path) == [(kept.game_id, 0, 5.0)]
        assert await s.deadlines() == [Deadline(kept.game_id, CHAT - 4, 0, 5.0)]
        # A row left behind by some other writer is never handed out for an ended game.
        db_execute(path, "INSERT INTO timers VALUES (?, 0, 6.0)", (info.game_id,))
        assert await s.deadlines() == [Deadline(kept.game_id, CHAT - 4, 0, 5.0)]

    with_service(path, body)


def test_a_failed_surrender_keeps_its_timer(db: Db, monkeypatch: pytest.MonkeyPatch) -> None:
    """The timer goes in the ending's own transaction: not before, not without it."""
    path = db
    real = tx_class(db).end_game

    async def end_then_poison(self: Tx, *args: Any) -> bool:
        done = await real(self, *args)
        await poison(db, self)
        return done

    async def body(s: GameService) -> None:
        info = await started(s, 2, seed=3)
        await s.set_deadline(info.game_id, 0, 7.0)
        monkeypatch.setattr(tx_class(db), "end_game", end_then_poison)
        with pytest.raises(DatabaseError):
            await s.surrender(info.game_id, user(1))
        monkeypatch.undo()
        assert (await s.game(info.game_id)).status == "running"
        assert await s.deadlines() == [Deadline(info.game_id, CHAT, 0, 7.0)]

    with_service(path, body)


# ---- timeouts and presence -------------------------------------------------------------


def _seat_state(path: Path, game_id: int) -> list[tuple[Any, ...]]:
    return db_rows(
        path, "SELECT seat, timeouts, away FROM seats WHERE game_id = ? ORDER BY seat", (game_id,)
    )


def test_timeouts_make_a_player_away_until_he_acts(db: Db) -> None:
    path = db

    async def first(s: GameService) -> int:
        info = await started(s, 3, seed=5)
        g = info.game_id
        assert AWAY_AFTER == 2  # from the second timeout in a row (issue 11)
        seen = [await s.record_timeout(g, 1) for _ in range(4)]
        states = [(x.timeouts, x.away) for x in seen]
        assert states == [(1, False), (2, True), (3, True), (4, True)]
        assert seen[-1] == Seat(1, user(1), "Bob", timeouts=4, away=True)
        again = await s.game(g)
        assert [(x.timeouts, x.away) for x in again.seats] == [(0, False), (4, True), (0, False)]
        await s.record_timeout(g, 2)
        return g

    g = with_service(path, first)
    assert _seat_state(path, g) == [(0, 0, 0), (1, 4, 1), (2, 1, 0)]

    async def second(s: GameService) -> None:
        # Loaded with the game: memory knows who is away without asking the store.
        assert [x.away for x in (await s.game(g)).seats] == [False, True, False]
        assert await s.mark_present(g, user(0)) is False
        assert await s.mark_present(g, user(1)) is True
        assert await s.mark_present(g, user(1)) is False
        assert await s.mark_present(g, user(2)) is True  # one timeout is enough to clear
        # Consecutive: after he acted, counting starts again from one.
        assert (await s.record_timeout(g, 1)).timeouts == 1

    with_service(path, second)
    assert _seat_state(path, g) == [(0, 0, 0), (1, 1, 0), (2, 0, 0)]

    async def third(s: GameService) -> None:
        # /skip's majority: away at once, stored, and cleared by a press like a timeout's
        seat = await s.hand_to_ai(g, 2)
        assert seat.away and seat.seat == 2
        assert (await s.game(g)).seats[2].away
        assert await s.mark_present(g, user(2)) is True
        assert not (await s.game(g)).seats[2].away

    with_service(path, third)
    assert _seat_state(path, g) == [(0, 0, 0), (1, 1, 0), (2, 0, 0)]


def test_timeout_and_presence_refusals(db: Db) -> None:
    async def body(s: GameService) -> None:
        info = await started(s, 2, seed=5)
        with pytest.raises(NotInGame):
            await s.record_timeout(info.game_id, 2)
        with pytest.raises(NotInGame):
            await s.mark_present(info.game_id, user(7))
        waiting = await lobby(s, 2, chat=CHAT - 1)
        with pytest.raises(NotRunning):
            await s.record_timeout(waiting.game_id, 0)
        with pytest.raises(UnknownGame):
            await s.record_timeout(424242, 0)
        with pytest.raises(UnknownGame):
            await s.mark_present(424242, user(0))
        # Nothing was counted by the refusals.
        assert all(x.timeouts == 0 for x in (await s.game(info.game_id)).seats)

    with_service(db, body)


def test_mark_present_of_a_present_player_touches_no_sql(db: Db) -> None:
    calls: list[str] = []

    async def body(s: GameService) -> None:
        info = await started(s, 2, seed=6)
        if is_pg(db):  # every way to SQL goes through asyncpg's pool
            pool = s.store._pool

            class Counted:
                def __getattr__(self, name: str) -> Any:
                    calls.append(name)
                    return getattr(pool, name)

            s.store._pool = Counted()
        else:  # or through aiosqlite's connection
            conn = s.store._conn
            for name in ("execute", "execute_fetchall", "_execute"):
                real = getattr(conn, name)

                def counted(*args: Any, _real: Any = real, _name: str = name) -> Any:
                    calls.append(_name)
                    return _real(*args)

                setattr(conn, name, counted)
            real_batch = s.store._run_batch  # the hot writes' own way, on the loop's thread

            def batch(jobs: Any) -> Any:
                calls.append("_run_batch")
                return real_batch(jobs)

            s.store._run_batch = batch  # type: ignore[method-assign]
        for _ in range(50):
            assert await s.mark_present(info.game_id, user(0)) is False
        assert calls == []
        # Nor waits for the game's lock (an action in flight): memory answers.
        async with s._core.game_lock(info.game_id):
            found = await asyncio.wait_for(s.mark_present(info.game_id, user(1)), 1.0)
        assert found is False
        # After a timeout, memory knows the player is not present any more.
        await s.record_timeout(info.game_id, 0)
        calls.clear()
        assert await s.mark_present(info.game_id, user(0)) is True
        assert calls  # that one went to the store
        calls.clear()
        assert await s.mark_present(info.game_id, user(0)) is False
        assert calls == []

    with_service(db, body)


def test_a_finished_game_takes_its_last_timeout_and_the_next_starts_present(
    db: Db,
) -> None:
    path = db

    async def body(s: GameService) -> None:
        info = await started(s, 2, seed=7)
        for _ in range(AWAY_AFTER):
            await s.record_timeout(info.game_id, 1)
        result = await play_out(s, info, random.Random(7))
        assert result.finished
        # The bot records the timeout of the action that ended the game.
        assert (await s.record_timeout(info.game_id, 1)).timeouts == AWAY_AFTER + 1
        nxt = await play_again_all(s, info.game_id, user(0))
        assert [(x.timeouts, x.away) for x in nxt.seats] == [(0, False), (0, False)]
        assert await s.mark_present(nxt.game_id, user(1)) is False
        assert _seat_state(path, nxt.game_id) == [(0, 0, 0), (1, 0, 0)]
        assert _seat_state(path, info.game_id) == [(0, 0, 0), (1, AWAY_AFTER + 1, 1)]

    with_service(path, body)


# ---- lobby expiry ----------------------------------------------------------------------


def test_idle_lobbies_expire(db: Db) -> None:
    async def body(s: GameService) -> None:
        old = await lobby(s, 2, chat=CHAT)
        running = await started(s, 2, chat=CHAT - 1)
        await asyncio.sleep(0.02)
        fresh = await lobby(s, 1, chat=CHAT - 2)
        assert [x.game_id for x in await s.open_lobbies()] == [old.game_id, fresh.game_id]
        with pytest.raises(ValueError):
            await s.expire_lobbies(-1)
        cutoff = fresh.updated_at - 0.01
        expired = await s.expire_lobbies(600, now=cutoff + 600)
        assert [x.game_id for x in expired] == [old.game_id]
        assert expired[0].status == "cancelled"
        assert expired[0].ending is not None and expired[0].ending.reason == "cancelled"
        assert expired[0].ending.by_user is None
        assert [x.game_id for x in await s.open_lobbies()] == [fresh.game_id]
        assert await s.expire_lobbies(600, now=cutoff + 600) == []
        # The chat is free for a new lobby; running games never expire.
        await s.create_lobby(CHAT, user(3), "Dan")
        assert await s.expire_lobbies(0, now=time.time() + 3600) != []
        assert await s.open_lobbies() == []
        assert (await s.game(running.game_id)).status == "running"
        assert await s.expire_lobbies(0) == []

    with_service(db, body)


def test_a_lobby_joined_after_the_search_does_not_expire(
    db: Db, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each lobby is checked again in its own transaction before it is cancelled."""
    real = tx_class(db).idle_lobbies

    async def every_lobby(self: Tx, before: float) -> Any:
        return await real(self, float("inf"))  # as if read before a join touched it

    async def body(s: GameService) -> None:
        stale = await lobby(s, 1, chat=CHAT)
        await asyncio.sleep(0.02)
        busy = await lobby(s, 1, chat=CHAT - 1)
        monkeypatch.setattr(tx_class(db), "idle_lobbies", every_lobby)
        expired = await s.expire_lobbies(0, now=busy.updated_at - 0.01)
        assert [x.game_id for x in expired] == [stale.game_id]
        assert (await s.game(busy.game_id)).status == "lobby"

    with_service(db, body)


# ---- the bot leaves a chat -------------------------------------------------------------


def test_close_chat_cancels_whatever_is_open(db: Db) -> None:
    async def body(s: GameService) -> None:
        assert await s.close_chat(CHAT) is None
        waiting = await lobby(s, 2)
        closed = await s.close_chat(CHAT)
        assert closed is not None and closed.game_id == waiting.game_id
        assert closed.status == "cancelled" and closed.ending is not None
        assert closed.ending.by_user is None
        # A running game, closed by nobody in particular: no tallies.
        info = await started(s, 3, seed=9)
        await step(s, info, random.Random(9), 0)
        closed = await s.close_chat(CHAT)
        assert closed is not None and closed.game_id == info.game_id
        assert closed.status == "cancelled" and closed.game is not None
        assert await s.running_games() == [] and await s.active_game(CHAT) is None
        assert await s.leaderboard(CHAT) == []
        with pytest.raises(GameOver):
            await s.apply(info.game_id, user(0), Take())
        assert await s.close_chat(CHAT) is None

    with_service(db, body)


# ---- group to supergroup ---------------------------------------------------------------


def _dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    return {
        table: db_rows(path, f"SELECT * FROM {table} ORDER BY 1, 2")
        for table in ("chats", "games", "seats", "tallies", "messages", "timers", "actions")
    }


def test_migrate_chat_moves_everything_and_the_game_plays_on(db: Db) -> None:
    path = db

    async def first(s: GameService) -> tuple[int, int]:
        # The supergroup already has a finished game of its own: tallies to merge.
        before = await started(s, 2, seed=11, chat=NEW)
        await play_out(s, before, random.Random(11))
        # The group: its own settings, a finished game, and a running one mid-play.
        await s.set_chat_settings(CHAT, deck=24, turn_timeout=None)
        done = await started(s, 2, seed=12)
        await play_out(s, done, random.Random(12))
        nxt = await play_again_all(s, done.game_id, user(0))
        await s.set_message(nxt.game_id, "table", CHAT, 77)
        await s.set_message(nxt.game_id, "panel", user(0), 78)
        await s.set_deadline(nxt.game_id, 0, 99.0)
        assert (await s.tally(NEW, user(0))).played == 1
        assert (await s.tally(CHAT, user(0))).played == 1
        await s.migrate_chat(CHAT, NEW)
        return done.game_id, nxt.game_id

    done_id, running_id = with_service(path, first)
    assert db_rows(path, "SELECT count(*) FROM games WHERE chat_id = ?", (CHAT,)) == [(0,)]
    assert db_rows(path, "SELECT count(*) FROM chats WHERE chat_id = ?", (CHAT,)) == [(0,)]
    assert db_rows(path, "SELECT count(*) FROM tallies WHERE chat_id = ?", (CHAT,)) == [(0,)]
    assert db_rows(path, "SELECT kind, chat_id, message_id FROM messages ORDER BY kind") == [
        ("panel", user(0), 78),
        ("table", NEW, 77),
    ]

    async def second(s: GameService) -> None:
        settings = await s.chat_settings(NEW)  # the new chat had none of its own
        assert settings.rules.deck == 24 and settings.turn_timeout is None
        assert (await s.chat_settings(CHAT)).rules.deck == 36
        for k in (0, 1):
            assert (await s.tally(NEW, user(k))).played == 2
            assert (await s.tally(CHAT, user(k))).played == 0
        assert await s.deadlines() == [Deadline(running_id, NEW, 0, 99.0)]
        active = await s.active_game(NEW)
        assert active is not None and active.game_id == running_id
        assert await s.active_game(CHAT) is None
        assert [g.game_id for g in await s.recent_games(NEW)][:1] == [done_id]
        # Idempotent: the second call (Telegram reports the move twice) changes nothing.
        snapshot = _dump(path)
        await s.migrate_chat(CHAT, NEW)
        assert _dump(path) == snapshot

    with_service(path, second)

    async def third(s: GameService) -> None:
        # In memory right after the move (no restart): the game's ending counts there.
        info = await started(s, 2, seed=13, chat=CHAT - 7)
        await s.migrate_chat(CHAT - 7, CHAT - 8)
        result = await play_out(s, info, random.Random(13))
        assert result.chat_id == CHAT - 8
        assert (await s.tally(CHAT - 8, user(0))).played == 1
        assert (await s.tally(CHAT - 7, user(0))).played == 0
        # And the moved game from before the restart plays on too.
        running = await s.game(running_id)
        assert running.chat_id == NEW
        await play_out(s, running, random.Random(14))
        assert (await s.tally(NEW, user(0))).played == 3

    with_service(path, third)


def test_migrate_chat_with_an_open_game_on_both_sides(db: Db) -> None:
    async def body(s: GameService) -> None:
        # A running game in the group beats a lobby opened in the supergroup.
        running = await started(s, 2, seed=3)
        waiting = await lobby(s, 2, chat=NEW)
        await s.set_chat_settings(NEW, deck=52)  # the supergroup has its own settings
        await s.migrate_chat(CHAT, NEW)
        assert (await s.game(waiting.game_id)).status == "cancelled"
        moved = await s.active_game(NEW)
        assert moved is not None and moved.game_id == running.game_id
        assert (await s.chat_settings(NEW)).rules.deck == 52
        await step(s, moved, random.Random(3), 0)
        # Otherwise the old chat's open game gives way.
        old = await lobby(s, 2, chat=CHAT - 1)
        new = await lobby(s, 2, chat=CHAT - 2)
        await s.migrate_chat(CHAT - 1, CHAT - 2)
        assert (await s.game(old.game_id)).status == "cancelled"
        ended = await s.game(old.game_id)
        assert ended.chat_id == CHAT - 2 and ended.ending is not None
        assert ended.ending.by_user is None
        assert (await s.active_game(CHAT - 2)).game_id == new.game_id  # type: ignore[union-attr]

    with_service(db, body)


# ---- history ---------------------------------------------------------------------------


def test_recent_games_newest_first_with_endings(db: Db) -> None:
    async def body(s: GameService) -> None:
        played = await started(s, 2, seed=21)
        last = await play_out(s, played, random.Random(21))
        surrendered = await play_again_all(s, played.game_id, user(1))
        await s.surrender(surrendered.game_id, user(1))
        cancelled = await lobby(s, 2)
        await s.cancel(CHAT, user(0))
        await started(s, 2, seed=22, chat=CHAT - 1)  # another chat
        running = await started(s, 3, seed=23)  # still running: not history
        found = await s.recent_games(CHAT)
        assert [g.game_id for g in found] == [
            cancelled.game_id,
            surrendered.game_id,
            played.game_id,
        ]
        assert running.game_id not in [g.game_id for g in found]
        endings = [g.ending for g in found]
        assert [e.reason for e in endings if e is not None] == ["cancelled", "surrender", "played"]
        gone = found[1]
        assert gone.ending is not None
        assert [gone.seats[k].name for k in gone.ending.losers] == ["Bob"]
        assert found[2].ending == last.ending and found[2].game is not None
        assert [g.game_id for g in await s.recent_games(CHAT, limit=1)] == [cancelled.game_id]
        assert await s.recent_games(CHAT, limit=0) == []
        assert await s.recent_games(CHAT - 5) == []

    with_service(db, body)
