"""The group's memory in the chat (issue 28): /stats within Telegram's 4,096
characters with 64-character names and 50 players, in every language; the end
message's recap (and its /settings switch); /history's rating changes; /stats a
minute later is a new message."""

from __future__ import annotations

import random

import pytest

from bot.flows import info as info_flow
from bot.ui import ratings_text
from bot.ui.i18n import SUPPORTED, language
from durak.service import Seat
from durak.service.ratings import FEATS
from durak.service.standings import (
    Fools,
    GameRatings,
    GroupStats,
    Meeting,
    PlayerRecord,
    RatingChange,
    RatingLine,
)
from durak.service.summary import Bout, Summary
from tests.fake_telegram.fixtures import async_test
from tests.service.bench_ratings import history_before_the_option

from .harness import Table, durak_of, friends_and_admin, running_bot

WORST = "&" * 64  # 64 characters that each become five in HTML


def lines(n: int, name: str = WORST) -> list[RatingLine]:
    return [RatingLine(1000 + k, "", name, 1999 - k, 1234, 567, 89, 12, 34) for k in range(n)] + [
        RatingLine(0, level, "", 1500, 99, 9, 0, 1, 5) for level in ("easy", "normal", "hard")
    ]


@pytest.mark.parametrize("lang", SUPPORTED)
def test_stats_texts_fit_a_message_with_50_long_names(lang: str) -> None:
    table = lines(50)
    everyone = Fools(tuple(table), 3)
    stats = GroupStats(tuple(table), everyone, everyone, Fools(tuple(table[:50]), 34))
    record = PlayerRecord(table[0], tuple(Meeting(x, 1234, 56, 78) for x in table[1:]), FEATS)
    with language(lang):
        group = ratings_text.group_stats_text(stats, WORST)
        player = ratings_text.player_text(record)
    assert len(group) <= ratings_text.LIMIT and len(player) <= ratings_text.LIMIT
    assert group.count("\n") > 20  # most of the table, names shortened
    assert "1999" in group and "&amp;" in group


def test_stats_shows_everything_when_it_fits() -> None:
    table = lines(5, "Ann")
    stats = GroupStats(tuple(table), Fools(table[:2], 2), Fools(table[:1], 4), Fools(table[:1], 7))
    with language("en"):
        text = ratings_text.group_stats_text(stats, "Friends")
    assert "1. Ann — <b>1999</b> · 1234 games · 567× durak · 🔥12 · 🚪 left 7%" in text
    assert "Fool of the week: Ann, Ann (2 times)" in text
    assert "Longest run without being the durak: Ann, 7 games" in text
    assert "🤖 Bot (hard)" in text


def test_the_recap_is_two_short_lines() -> None:
    seats = (Seat(0, 1, "Ann"), Seat(1, 2, "Bob"), Seat(2, -1, "Bot 1 (hard)", "ai", "hard"))
    summary = Summary(((0,), (2,)), (3, 9, 0), Bout(1, 7, 2, 2), ())
    rated = GameRatings(
        (
            RatingChange(1, "", 0, False, 1000, 1042),
            RatingChange(0, "hard", 1, False, 1000, 1011),
            RatingChange(2, "", 2, True, 1000, 958),
        ),
        ((1, "hard_ai"),),
    )
    with language("en"):
        got = ratings_text.recap_lines(seats, summary, rated)
    assert got == [
        "⚡ Bob took 7 cards after a transfer · 📥 Ann 3, Bob 9, Bot 1 (hard) 0",
        "📈 Ann +42, 🤖 Bot 1 (hard) +11, Bob −42 · Ann: 🦾 Beat the hard bot",
    ]
    assert ratings_text.recap_lines(seats, None, None) == []
    # the recap off: the achievements are still announced, once, in their game's end
    with language("en"):
        assert ratings_text.feats_lines(seats, rated) == ["🏅 Ann: 🦾 Beat the hard bot"]


def test_a_knock_outs_recap_and_history_name_the_players_of_earlier_deals() -> None:
    """The final of a knock-out seats Cid and Eve; Ann went out in an earlier deal:
    the changes name her too, by the seat of hers they come with (issue 33 item 3)."""
    final = (Seat(0, 103, "Cid"), Seat(1, 105, "Eve"))
    rated = GameRatings(
        (
            RatingChange(103, "", 0, False, 1000, 1110),
            RatingChange(105, "", 1, False, 1000, 1082),
            RatingChange(101, "", 2, True, 1000, 907),
        ),
        ((101, "streak5"),),
        (Seat(2, 101, "Ann"),),
    )
    with language("en"):
        recap = ratings_text.recap_lines(final, None, rated)
        history = ratings_text.history_suffix(final, rated)
        feats = ratings_text.feats_lines(final, rated)
    assert recap == [
        "📈 Cid +110, Eve +82, Ann −93 · Ann: 🔥 Five games in a row without being the durak"
    ]
    assert history == "\n   📈 Cid +110, Eve +82, Ann −93"
    assert feats == ["🏅 Ann: 🔥 Five games in a row without being the durak"]


@async_test
async def test_the_end_message_recaps_and_history_shows_the_changes(
    make_fake_telegram, tmp_path, errors
):
    server, users, boss, group = await friends_and_admin(make_fake_telegram, players=3)
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        table = Table(server, group, users, random.Random(3))
        await table.open_lobby()
        await table.join_all()
        await table.start()
        running = (await service.running_games())[0].game_id
        ended = await table.play_to_the_end(watch=(service, running))
        text = ended.plain_text or ""
        assert "📈 " in text
        rated = (await service.game_ratings([running]))[running]
        assert {c.user_id for c in rated.changes} == {u.id for u in users}
        await users[0].send(group, "/history")
        history = await server.wait_for_bot_message(group, contains="Recent games")
        assert "📈 " in (history.plain_text or "")

        # /stats in reply to a player: his record against the others; /stats @name and
        # /stats Name within the minute edit that one message
        users[2].username = "player_two"
        said = await users[1].send(group, "hello")
        await users[2].send(group, "/stats", reply_to=said)
        record = await server.wait_for_bot_message(group, contains="Head to head")
        assert (record.plain_text or "").startswith("👤 Player1")
        assert "vs Player0: 1 game together" in (record.plain_text or "")

        def shown(text: str):  # type: ignore[no-untyped-def]
            m = server.message(group, record.message_id)
            return m if text in (m.plain_text or "") else None

        await users[0].send(group, "/stats @Player_Two")
        await server.wait_for(lambda: shown("👤 Player2"))
        await users[1].send(group, "/stats player0")
        await server.wait_for(lambda: shown("👤 Player0"))
        await users[1].send(group, "/stats")  # the same member again: ignored for a minute
        await boss.send(group, "/stats Nobody")
        await server.wait_for(lambda: shown("Nobody has no rated game"))

        # the recap off: the next game's end says who is the durak, and no more
        await service.set_chat_settings(group.id, recap=False)
        await table.play_again(ended)
        table.since = ended.message_id  # the next end message is a new one
        second = (await service.running_games())[0].game_id
        ended = await table.play_to_the_end(watch=(service, second))
        assert "📈 " not in (ended.plain_text or "") and "🏁" in (ended.plain_text or "")
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_history_from_before_no_progress_draw_is_whole(make_fake_telegram, tmp_path, errors):
    """A database of the schema before ratings, its group's games stored before
    ``no_progress_draw`` existed, one of them a table that took 114 times in a row
    (issue 33 item 1): the bot migrates it as it starts, and /history lists every game
    with its rating changes (before: "game 2 is damaged", and no answer)."""
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=4)
    db = tmp_path / "durak.sqlite3"
    people = [(u.id, u.first_name) for u in users]
    stored = await history_before_the_option(db, group.id, people, running=False)
    async with running_bot(server, db):
        await users[0].send(group, "/history")
        history = await server.wait_for_bot_message(group, contains="Recent games")
    text = history.plain_text or ""
    assert [f"#{g.game_id} " in text for g in stored] == [True] * 3
    assert text.count("📈 ") == 3 and "damaged" not in text
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_stats_a_minute_later_is_a_new_message(make_fake_telegram, tmp_path, monkeypatch):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=2)
    monkeypatch.setattr(info_flow, "STATS_EDIT_WINDOW", 0.0)  # every minute is over at once
    async with running_bot(server, tmp_path / "durak.sqlite3"):
        await users[0].send(group, "/stats")
        first = await server.wait_for_bot_message(group, contains="No rated games")
        await users[1].send(group, "/stats")
        second = await server.wait_for_bot_message(
            group, after=first.message_id, contains="No rated games"
        )
        assert second.message_id != first.message_id
