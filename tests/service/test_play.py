"""Playing through the service: durable actions, refusals, endings, series, tallies."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from durak import Attack, Game, Rules, Take, export_record, to_snapshot
from durak.selfplay import random_step
from durak.service import (
    RUNNING,
    BadAction,
    GameInfo,
    GameOver,
    GameService,
    IllegalMove,
    NotAllowed,
    NotInGame,
    NotRunning,
    StaleVersion,
    UnknownGame,
)
from tests.dbaccess import Db

from .helpers import (
    CHAT,
    NAMES,
    db_rows,
    find_seed,
    lobby,
    play_again_all,
    play_out,
    started,
    stored_replay,
    user,
    with_service,
)


def _log(path: Path, game_id: int) -> list[tuple[int, int, str]]:
    return db_rows(
        path,
        "SELECT version, seat, step FROM actions WHERE game_id = ? ORDER BY version",
        (game_id,),
    )


def test_apply_is_durable_and_versioned(db: Db) -> None:
    path = db

    async def body(s: GameService) -> None:
        info = await started(s, 3, seed=7)
        game = info.game
        assert game is not None
        reference = Game.from_seed(Rules(), NAMES[:3], "7")
        rng = random.Random(7)
        for expected in range(1, 21):
            seat = rng.choice(game.actors())
            action = rng.choice(game.legal_actions(seat))
            result = await s.apply(info.game_id, user(seat), action, expected - 1)
            reference.apply(seat, action)
            assert result.version == expected and result.seat == seat and not result.finished
            assert result.game is game
            # Each acknowledged action is already on disk, with the snapshot and version.
            assert len(_log(path, info.game_id)) == expected
            (version,) = db_rows(
                path, "SELECT version FROM games WHERE game_id = ?", (info.game_id,)
            )[0]
            assert version == expected
            assert to_snapshot(stored_replay(path, info.game_id)) == to_snapshot(reference)
        assert to_snapshot(game) == to_snapshot(reference)
        assert (await s.game(info.game_id)).version == 20

    with_service(path, body)


def test_apply_accepts_record_steps(db: Db) -> None:
    async def body(s: GameService) -> None:
        info = await started(s, 2, seed=11)
        assert info.game is not None
        seat = info.game.actors()[0]
        action = info.game.legal_actions(seat)[0]
        result = await s.apply(info.game_id, user(seat), action.step(), 0)
        assert result.action == action
        with pytest.raises(BadAction) as e:
            await s.apply(info.game_id, user(0), {"do": "fly"})
        assert e.value.code == "bad_action"
        with pytest.raises(BadAction):
            await s.apply(info.game_id, user(0), {"do": "attack", "cards": []})
        with pytest.raises(BadAction):
            await s.apply(info.game_id, user(0), "take")  # type: ignore[arg-type]

    with_service(db, body)


def test_refusals_change_nothing(db: Db) -> None:
    path = db

    async def body(s: GameService) -> None:
        info = await started(s, 3, seed=5)
        game = info.game
        assert game is not None
        before = to_snapshot(game)
        stored_before = db_rows(path, "SELECT version, snapshot FROM games")
        opener = game.actors()[0]
        other = (opener + 1) % 3
        with pytest.raises(IllegalMove) as e:
            await s.apply(info.game_id, user(other), Take(), 0)
        assert e.value.code in ("not_your_turn", "cannot_take")
        assert isinstance(e.value, IllegalMove) and e.value.engine_error.code == e.value.code
        with pytest.raises(IllegalMove) as e:
            missing = next(c for c in _all_cards(game) if c not in game.hand(opener))
            await s.apply(info.game_id, user(opener), Attack((missing,)), 0)
        assert e.value.code == "not_in_hand"
        with pytest.raises(NotInGame) as e2:
            await s.apply(info.game_id, user(77), Take(), 0)
        assert e2.value.code == "not_in_game"
        with pytest.raises(UnknownGame) as e3:
            await s.apply(999, user(0), Take(), 0)
        assert e3.value.code == "unknown_game"
        assert to_snapshot(game) == before
        assert db_rows(path, "SELECT version, snapshot FROM games") == stored_before
        assert _log(path, info.game_id) == []
        # The same action as a stale click, after someone else moved.
        action = game.legal_actions(opener)[0]
        await s.apply(info.game_id, user(opener), action, 0)
        with pytest.raises(StaleVersion) as e4:
            await s.apply(info.game_id, user(opener), action, 0)
        assert e4.value.code == "stale_version" and e4.value.current == 1
        assert len(_log(path, info.game_id)) == 1

    with_service(path, body)


def _all_cards(game: Game) -> list:  # type: ignore[type-arg]
    from durak.cards import deck

    return list(deck(game.rules.deck))


def test_apply_to_lobby_and_finished_game(db: Db) -> None:
    async def body(s: GameService) -> None:
        info = await lobby(s, 2)
        with pytest.raises(NotRunning) as e:
            await s.apply(info.game_id, user(0), Take())
        assert e.value.code == "not_running"
        with pytest.raises(NotRunning):
            await s.view(info.game_id, user(0))
        info = await s.start(CHAT, user(0), seed=2)
        last = await play_out(s, info, random.Random(2))
        assert last.finished and last.ending is not None and last.ending.reason == "played"
        with pytest.raises(GameOver) as e2:
            await s.apply(info.game_id, user(0), Take(), last.version)
        assert e2.value.code == "game_over"
        with pytest.raises(GameOver):
            await s.surrender(info.game_id, user(0))
        done = await s.game(info.game_id)
        assert done.status == "finished" and done.ending == last.ending
        assert done.game is not None and done.game.result is not None
        assert to_snapshot(done.game) == to_snapshot(last.game)

    with_service(db, body)


def test_loss_tally_and_play_again_loser_deals(db: Db) -> None:
    path = db
    rules = Rules()
    seed = find_seed(rules, 3, lambda g: g.result is not None and not g.result.draw)

    async def body(s: GameService) -> None:
        info = await started(s, 3, seed=seed)
        last = await play_out(s, info, random.Random(seed))
        assert last.ending is not None
        loser = last.ending.loser
        assert loser is not None
        for k in range(3):
            t = await s.tally(CHAT, user(k))
            assert (t.played, t.losses, t.draws) == (1, int(k == loser), 0)
            assert t.name == NAMES[k]
        board = await s.leaderboard(CHAT)
        assert [t.user_id for t in board][-1] == user(loser)
        with pytest.raises(NotInGame):
            await s.play_again(info.game_id, user(9))
        nxt = await play_again_all(s, info.game_id, user((loser + 1) % 3))
        assert nxt.status == "running" and nxt.previous_game_id == info.game_id
        assert [x.user_id for x in nxt.seats] == [x.user_id for x in info.seats]
        assert nxt.game is not None and nxt.game.dealer == loser
        assert nxt.game.start["series"] == "after_loss"
        assert nxt.game.start["previous_loser"] == NAMES[loser]
        # A second click on "play again" gets the same next game, not a new one.
        again = await play_again_all(s, info.game_id, user(loser))
        assert again.game_id == nxt.game_id
        assert db_rows(path, "SELECT count(*) FROM games")[0][0] == 2

    with_service(path, body)


def test_draw_tally_and_dealer_stays(db: Db) -> None:
    rules = Rules()
    seed = find_seed(rules, 2, lambda g: g.result is not None and g.result.draw)

    async def body(s: GameService) -> None:
        info = await started(s, 2, seed=seed)
        assert info.game is not None
        dealer = info.game.dealer
        last = await play_out(s, info, random.Random(seed))
        assert last.ending is not None and last.ending.draw and last.ending.losers == ()
        for k in range(2):
            t = await s.tally(CHAT, user(k))
            assert (t.played, t.losses, t.draws) == (1, 0, 1)
        nxt = await play_again_all(s, info.game_id, user(0))
        assert nxt.game is not None and nxt.game.dealer == dealer
        assert nxt.game.start["series"] == "after_draw"

    with_service(db, body)


def test_team_loss_counts_for_both_partners(db: Db) -> None:
    rules = Rules(teams=True)
    seed = find_seed(rules, 4, lambda g: g.result is not None and len(g.result.losers) == 2)

    async def body(s: GameService) -> None:
        info = await started(s, 4, seed=seed, teams=True)
        last = await play_out(s, info, random.Random(seed))
        assert last.ending is not None
        losers = set(last.ending.losers)
        assert len(losers) == 2 and len({x % 2 for x in losers}) == 1
        for k in range(4):
            t = await s.tally(CHAT, user(k))
            assert (t.played, t.losses) == (1, int(k in losers))
        nxt = await play_again_all(s, info.game_id, user(0))
        assert nxt.game is not None
        expected_dealer = last.game.seat_of(last.game.next_game().dealer)
        assert nxt.game.dealer == expected_dealer and expected_dealer in losers

    with_service(db, body)


def test_surrender_ends_with_the_leaver_as_loser(db: Db) -> None:
    path = db

    async def body(s: GameService) -> None:
        info = await started(s, 3, seed=9)
        rng = random.Random(9)
        game = info.game
        assert game is not None
        for v in range(5):
            seat = rng.choice(game.actors())
            await s.apply(info.game_id, user(seat), rng.choice(game.legal_actions(seat)), v)
        result = await s.leave(CHAT, user(2))  # leaving a running game is a surrender
        assert result.outcome == "surrendered"
        ended = result.info
        assert ended.status == "finished" and ended.version == 5
        assert ended.ending is not None and ended.ending.reason == "surrender"
        assert ended.ending.losers == (2,) and ended.ending.by_user == user(2)
        for k in range(3):
            t = await s.tally(CHAT, user(k))
            assert (t.played, t.losses, t.draws) == (1, int(k == 2), 0)
        assert await s.active_game(CHAT) is None
        nxt = await play_again_all(s, info.game_id, user(0))
        assert nxt.game is not None and nxt.game.dealer == 2
        assert nxt.game.start == {**nxt.game.start, "series": "after_loss", "previous_loser": "Cid"}
        record = await s.export_record(info.game_id)
        assert len(record["steps"]) == 5 and "surrendered" in record["name"]
        ended_row = db_rows(
            path, "SELECT status, end_reason, losers FROM games WHERE game_id = ?", (info.game_id,)
        )
        assert ended_row == [("finished", "surrender", "[2]")]

    with_service(path, body)


def test_surrender_with_teams_loses_alone(db: Db) -> None:
    async def body(s: GameService) -> None:
        info = await started(s, 4, seed=1, teams=True)
        ended = await s.surrender(info.game_id, user(1))
        assert ended.ending is not None and ended.ending.losers == (1,)
        assert [(await s.tally(CHAT, user(k))).losses for k in range(4)] == [0, 1, 0, 0]

    with_service(db, body)


def test_cancel_running_game_changes_no_tally(db: Db) -> None:
    async def body(s: GameService) -> None:
        info = await started(s, 2, seed=4)
        assert info.game is not None
        seat = info.game.actors()[0]
        await s.apply(info.game_id, user(seat), info.game.legal_actions(seat)[0], 0)
        ended = await s.cancel(CHAT, user(0))
        assert ended.status == "cancelled" and ended.version == 1 and ended.game is not None
        for k in range(2):
            t = await s.tally(CHAT, user(k))
            assert (t.played, t.losses, t.draws) == (0, 0, 0)
        assert await s.leaderboard(CHAT) == []
        with pytest.raises(GameOver):
            await s.apply(info.game_id, user(0), Take())
        with pytest.raises(NotAllowed):
            await s.play_again(info.game_id, user(0))
        record = await s.export_record(info.game_id)
        assert len(record["steps"]) == 1

    with_service(db, body)


def test_views_show_only_own_hand(db: Db) -> None:
    async def body(s: GameService) -> None:
        info = await started(s, 3, seed=8)
        assert info.game is not None
        for k in range(3):
            view = await s.view(info.game_id, user(k))
            assert view.seat == k and view.hand == info.game.hand(k)
            assert [x.cards for x in view.seats] == [6, 6, 6]
        public = await s.public_view(info.game_id)
        assert public.seat is None and public.hand == () and public.legal == ()
        with pytest.raises(NotInGame):
            await s.view(info.game_id, user(5))
        with pytest.raises(UnknownGame):
            await s.public_view(12345)

    with_service(db, body)


def test_export_record_is_read_from_the_store(db: Db) -> None:
    async def body(s: GameService) -> None:
        info = await started(s, 4, seed=13)
        last = await play_out(s, info, random.Random(13))
        record = await s.export_record(info.game_id)
        assert record == export_record(last.game, name=record["name"])
        assert record["format"] == "durak-record/1"
        nxt = await play_again_all(s, info.game_id, user(0))
        assert nxt.game is not None
        seat = nxt.game.actors()[0]
        await s.apply(nxt.game_id, user(seat), nxt.game.legal_actions(seat)[0], 0)
        # Tamper with memory: the export must still show what is on disk.
        nxt.game.history.append(nxt.game.history[0])
        record = await s.export_record(nxt.game_id)
        assert len(record["steps"]) == 1

    with_service(db, body)


def test_messages_are_remembered(db: Db) -> None:
    path = db

    async def first(s: GameService) -> int:
        info = await started(s, 2, seed=1)
        await s.set_message(info.game_id, "table", CHAT, 501)
        await s.set_message(info.game_id, "panel", user(0), 11)
        await s.set_message(info.game_id, "panel", user(1), 12)
        await s.set_message(info.game_id, "panel", user(1), 13)  # replaced
        with pytest.raises(UnknownGame):
            await s.set_message(999, "table", CHAT, 1)
        return info.game_id

    game_id = with_service(path, first)

    async def second(s: GameService) -> None:
        assert await s.message(game_id, "table", CHAT) == 501
        assert await s.message(game_id, "panel", user(1)) == 13
        assert await s.message(game_id, "lobby", CHAT) is None
        info = await s.game(game_id)
        assert info.message("panel", user(0)) == 11 and len(info.messages) == 3
        await s.set_message(game_id, "panel", user(0), None)
        assert await s.message(game_id, "panel", user(0)) is None

    with_service(path, second)


def test_reading_a_running_game_from_memory_matches_the_store(db: Db) -> None:
    """``game()`` answers a running game from memory (the bot reads one on every press):
    after every kind of write it must equal what a fresh service reads from the file."""
    path = db

    async def fresh(game_id: int) -> GameInfo:
        other = await GameService.open(path)
        try:
            return await other.game(game_id)
        finally:
            await other.close()

    def same(a: GameInfo, b: GameInfo) -> None:
        assert replace(a, game=None) == replace(b, game=None)
        assert a.game is not None and b.game is not None
        assert to_snapshot(a.game) == to_snapshot(b.game)

    async def body(service: GameService) -> None:
        rng = random.Random(5)
        info = await started(service, 3, seed=11, turn_timeout=60)
        game_id = info.game_id
        writes = ["apply", "apply", "message", "timeout", "present", "deadline", "apply"] * 30
        for n, write in enumerate(writes):
            info = await service.game(game_id)
            if info.status != RUNNING:
                break
            assert info.game is not None
            seat, action = random_step(info.game, rng)
            if write == "apply":
                await service.apply(game_id, info.seats[seat].user_id, action, info.version)
            elif write == "message":
                kind = "panel" if n % 2 else "table"
                await service.set_message(game_id, kind, user(n % 3), None if n % 4 == 3 else n)
            elif write == "timeout":
                await service.record_timeout(game_id, n % 3)
            elif write == "present":
                await service.mark_present(game_id, user(n % 3))
            else:
                await service.set_deadline(game_id, info.version, 1e9 + n)
            same(await service.game(game_id), await fresh(game_id))
        await service.migrate_chat(CHAT, CHAT - 1)
        same(await service.game(game_id), await fresh(game_id))

        # and the point of it: once read, a press's reads and writes take no read transaction
        info = await started(service, 2, seed=3, chat=CHAT - 7)
        await service.game(info.game_id)
        reads = []
        original = service.store.reading
        service.store.reading = lambda: reads.append(1) or original()  # type: ignore[method-assign]
        for n in range(10):
            info = await service.game(info.game_id)
            assert info.game is not None
            seat, action = random_step(info.game, rng)
            await service.apply(info.game_id, info.seats[seat].user_id, action, info.version)
            await service.set_message(info.game_id, "panel", user(n % 2), n)
        assert reads == []

    with_service(path, body)


def test_a_play_again_lobby_starts_when_the_only_unconfirmed_player_leaves(db: Db) -> None:
    """Two of three confirmed; the third leaves the lobby instead: nobody is left to
    wait for, so it starts with the two (as the last confirmation would have)."""
    rules = Rules()
    seed = find_seed(rules, 3, lambda g: g.result is not None)

    async def body(s: GameService) -> None:
        info = await started(s, 3, seed=seed)
        await play_out(s, info, random.Random(seed))
        lobby = await s.play_again(info.game_id, user(0))
        lobby = await s.confirm(lobby.game_id, user(1))
        assert lobby.status == "lobby"
        result = await s.leave(CHAT, user(2))
        assert result.outcome == "left" and result.info.status == "running"
        assert [x.user_id for x in result.info.seats] == [user(0), user(1)]
        assert (await s.active_game(CHAT)) is not None
        running = await s.running_games()
        assert [g.game_id for g in running] == [lobby.game_id]  # in memory too

    with_service(db, body)
