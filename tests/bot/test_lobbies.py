"""Issue 11 items 3, 4 and 10 through the real bot: Play again is a lobby, leaving
and cancelling are confirmed in private, /notify_me, the lobby's cap."""

from __future__ import annotations

import random

from bot.ui import callbacks as cb
from tests.fake_telegram.fixtures import async_test

from .harness import Table, durak_of, friends_and_admin, running_bot


def data_of(message, kind: str) -> str:
    return next(b for b in message.callback_data if b[1] == kind)


def private(table: Table, user):
    return table.bot_messages(table.server.private_chat(user))


async def question(table: Table, user, kind: str):
    """The newest private message with confirmation buttons of ``kind`` (v / w)."""
    prefix = f"1{kind}."

    def find():
        for m in reversed(private(table, user)):
            if any(d.startswith(prefix) for d in m.callback_data):
                return m
        return None

    return await table.server.wait_for(find, 10, what="a confirmation")


def answer_data(message, yes: bool) -> str:
    end = ".y" if yes else ".n"
    return next(d for d in message.callback_data if d.endswith(end))


async def again_lobby(table: Table, service):
    def message():
        for m in reversed(table.bot_messages(table.group)):
            if any(d.startswith("1a.") for d in m.callback_data):
                return m
        return None

    return await table.server.wait_for(message, 10, what="the Play-again lobby")


@async_test
async def test_play_again_is_a_lobby_each_confirms_ai_kept_dealer_by_series(
    make_fake_telegram, tmp_path, errors
):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=3)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        service = durak_of(app).service
        table = Table(server, group, users, random.Random(5))
        lobby = await table.open_lobby()
        await table.join_all()
        await table.press(
            users[0], table.lobby() or lobby, cb.lobby("x", (await service.lobby(group.id)).game_id)
        )
        await server.wait_for(lambda: "Bot 1" in (table.lobby().plain_text or ""), 10, what="AI")
        await table.start()
        first = (await service.running_games())[0]
        ended = await table.play_to_the_end(timeout=120)
        done = await service.game(first.game_id)
        series = done.game.next_game()
        # one tap opens a lobby, it deals nobody a game
        answer = await table.press(users[1], ended, data_of(ended, "r"))
        assert "next game" in answer
        assert await service.running_games() == []
        lobby = await again_lobby(table, service)
        text = lobby.plain_text or ""
        assert "✅ Player1" in text and "⏳ Player0" in text and "⏳ Player2" in text
        assert "✅ 🤖 Bot 1" in text  # the AI seat carries over, confirmed
        await table.press(users[0], lobby, data_of(lobby, "a"))
        assert await service.running_games() == []
        # the last confirmation starts it: same seats, the series' dealer deals
        answer = await table.press(users[2], lobby, data_of(lobby, "a"))
        assert "Dealt" in answer
        second = (await service.running_games())[0]
        assert [s.user_id for s in second.seats] == [s.user_id for s in first.seats]
        names = [s.name for s in second.seats]
        want = series.dealer if series.dealer is not None else series.previous_loser
        assert second.game.dealer == names.index(want)

        # the next time: one leaves the lobby, the creator starts without the unconfirmed
        table.since = ended.message_id
        ended = await table.play_to_the_end(timeout=120)
        await table.press(users[2], ended, data_of(ended, "r"))
        lobby = await again_lobby(table, service)
        await table.press(users[1], lobby, data_of(lobby, "l"))
        await server.wait_for(
            lambda: "Player1" not in (again_lobby_now(table) or ""), 10, what="Player1 gone"
        )
        answer = await table.press(users[0], lobby, data_of(lobby, "s"))
        assert "Dealt" in answer
        third = (await service.running_games())[0]
        assert [s.name for s in third.seats] == ["Player0", "Player2", "Bot 1 (easy)"]
    assert not errors.records, [r.getMessage() for r in errors.records]


def again_lobby_now(table: Table) -> str | None:
    for m in reversed(table.bot_messages(table.group)):
        if any(d.startswith("1a.") for d in m.callback_data):
            return m.plain_text
    return None


@async_test
async def test_leave_is_confirmed_in_private_and_hands_the_seat_to_the_ai(
    make_fake_telegram, tmp_path, errors
):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=3)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        service = durak_of(app).service
        table = Table(server, group, users, random.Random(7))
        await table.open_lobby()
        await table.join_all()
        await table.start()
        info = (await service.running_games())[0]
        before = len(table.bot_messages(group))
        await users[1].send(group, "/leave")
        ask = await question(table, users[1], "v")
        assert "reliability" in (ask.plain_text or "")  # what leaving costs (issue 28)
        used = answer_data(ask, True)  # (read now: the answer below edits the buttons away)
        # declined: he stays
        assert "stay" in await table.press(users[1], ask, answer_data(ask, False))
        assert not (await service.game(info.game_id)).seats[1].left
        replayed = await table.press(users[1], ask, used, check=False)
        assert "no longer open" in replayed  # a used token is refused
        await users[1].send(group, "/leave")
        await server.wait_for(
            lambda: (
                len([m for m in private(table, users[1]) if "1v." in str(m.callback_data)]) >= 1
                and answer_data(private_last_question(table, users[1]), True) != used
            ),
            10,
            what="a new question",
        )
        ask = private_last_question(table, users[1])
        forged = answer_data(ask, True).rsplit(".", 2)[0] + ".zzzz.y"
        assert "no longer open" in await table.press(
            users[0], ask, answer_data(ask, True), check=False
        )
        assert "no longer open" in await table.press(users[1], ask, forged, check=False)
        assert "AI plays" in await table.press(users[1], ask, answer_data(ask, True))
        seat = (await service.game(info.game_id)).seats[1]
        assert seat.left and seat.away
        assert (await service.game(info.game_id)).status == "running"
        await users[1].send(group, "/leave")  # once more: no surrender, no new question
        await server.wait_for_bot_message(server.private_chat(users[1]), contains="You left this")
        assert (await service.game(info.game_id)).ending is None
        # nothing of it in the group but the table's edits, which mark his seat
        assert len(table.bot_messages(group)) == before
        await server.wait_for(
            lambda: any(
                "Player1" in line and "left: the AI plays" in line
                for m in table.bot_messages(group)
                for line in (m.plain_text or "").splitlines()
            ),
            10,
            what="the table marking the seat left",
        )
        # the others play on; the AI plays his seat to the end
        rest = Table(server, group, [users[0], users[2]], random.Random(8))
        await rest.play_to_the_end(timeout=120)
        done = await service.game(info.game_id)
        lost = 1 in (done.ending.losers if done.ending else ())
        tally = await service.tally(group.id, users[1].id)
        assert (tally.played, tally.losses) == (1, int(lost))
    assert not errors.records, [r.getMessage() for r in errors.records]


def private_last_question(table: Table, user):
    return next(
        m
        for m in reversed(private(table, user))
        if any(d.startswith("1v.") for d in m.callback_data)
    )


@async_test
async def test_cancel_is_confirmed_and_refused_to_a_non_admin(make_fake_telegram, tmp_path, errors):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=2)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        service = durak_of(app).service
        table = Table(server, group, users, random.Random(9))
        await table.open_lobby()
        await table.join_all()
        await table.start()
        info = (await service.running_games())[0]
        await durak_of(app).outbox.idle(10)
        before = len(table.bot_messages(group))
        await users[1].send(group, "/cancel")
        await server.wait_for_bot_message(server.private_chat(users[1]), contains="creator")
        await users[0].send(group, "/cancel")
        ask = await question(table, users[0], "w")
        assert "goes on" in await table.press(users[0], ask, answer_data(ask, False))
        assert (await service.game(info.game_id)).status == "running"
        await durak_of(app).outbox.idle(10)
        assert len(table.bot_messages(group)) == before  # refusal and question: private
        await users[0].send(group, "/cancel")
        await server.wait_for(
            lambda: (
                sum("1w." in str(m.callback_data) for m in private(table, users[0])) >= 1
                and private_question(table, users[0], "w") is not ask
            ),
            10,
            what="the second question",
        )
        ask = private_question(table, users[0], "w")
        assert "cancelled" in await table.press(users[0], ask, answer_data(ask, True))
        assert (await service.game(info.game_id)).status == "cancelled"
        await durak_of(app).outbox.idle(10)
        new = [m for m in table.bot_messages(group)][before:]
        assert len(new) == 1 and "cancelled" in (new[0].plain_text or "")
    assert not errors.records, [r.getMessage() for r in errors.records]


def private_question(table: Table, user, kind: str):
    found = [
        m for m in private(table, user) if any(d.startswith(f"1{kind}.") for d in m.callback_data)
    ]
    return found[-1] if found else None


@async_test
async def test_notify_me_on_and_off(make_fake_telegram, tmp_path, errors):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=3)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        service = durak_of(app).service
        table = Table(server, group, users, random.Random(3))
        await users[2].send(group, "/notify_me")
        await server.wait_for_bot_message(server.private_chat(users[2]), contains="I will write")
        await users[0].send(group, "/notify_me")
        await server.wait_for_bot_message(server.private_chat(users[0]), contains="I will write")
        await table.open_lobby()  # users[0] opens it: he is not told of his own lobby
        told = await server.wait_for_bot_message(
            server.private_chat(users[2]), contains="opened a game"
        )
        assert "Player0" in (told.plain_text or "")
        await durak_of(app).outbox.idle(10)
        assert not any("opened a game" in (m.plain_text or "") for m in private(table, users[0]))
        assert not any("opened a game" in (m.plain_text or "") for m in private(table, users[1]))
        # off again: the next lobby is not told
        await users[2].send(group, "/notify_me")
        await server.wait_for_bot_message(server.private_chat(users[2]), contains="No more")
        lobby = await service.lobby(group.id)
        await service.cancel(group.id, users[0].id)
        await users[1].send(group, "/newgame")
        await server.wait_for(
            lambda: (
                table.lobby() is not None
                and cb.lobby("j", lobby.game_id) not in table.lobby().callback_data
            ),
            10,
            what="the second lobby",
        )
        await durak_of(app).outbox.idle(10)
        assert sum("opened a game" in (m.plain_text or "") for m in private(table, users[2])) == 1
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_the_creator_caps_the_lobby_and_it_starts_when_full(
    make_fake_telegram, tmp_path, errors
):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=4)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        service = durak_of(app).service
        table = Table(server, group, users, random.Random(4))
        lobby = await table.open_lobby()
        game_id = (await service.lobby(group.id)).game_id
        assert cb.cap(game_id, 3) in lobby.callback_data
        refused = await table.press(users[1], lobby, cb.cap(game_id, 3))
        assert "creator" in refused
        await table.press(users[0], lobby, cb.cap(game_id, 3))
        await server.wait_for(lambda: "Up to 3" in (table.lobby().plain_text or ""), 10, what="cap")
        assert (await service.lobby(group.id)).cap == 3
        table.users = users[:3]
        await table.join_all()  # the third one fills it: no Start pressed
        await server.wait_for(
            lambda: all(table.panel(u) is not None for u in users[:3]), 10, what="panels"
        )
        running = (await service.running_games())[0]
        assert [s.user_id for s in running.seats] == [u.id for u in users[:3]]
    assert not errors.records, [r.getMessage() for r in errors.records]
