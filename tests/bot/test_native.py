"""Native text (issue 11 item 8): each language's own card letters, AI seats named in
the group's language, plurals in English too, the words a native reader expects, the
record offered once, no "0 players", and a private /start that says what the bot is."""

from __future__ import annotations

import random
from types import SimpleNamespace

from bot.ui import callbacks as cb
from bot.ui import keyboards, ratings_text, render
from bot.ui.i18n import language
from durak import Game, Pass, Rules
from durak.cards import CARDS, parse_card
from durak.service import Seat
from durak.service.standings import Fools, GroupStats, RatingLine
from durak.view import Outcome
from tests.fake_telegram import RateLimits
from tests.fake_telegram.fixtures import async_test

from .harness import SCALE, Table, durak_of, friends_and_admin, running_bot
from .test_render import positions
from .textcards import cards_in

ALL = [c for c in CARDS if c is not None]


def _card(text: str, lang: str) -> str:
    with language(lang):
        return render.card(parse_card(text))


def test_face_cards_in_each_language_letters_numbers_stay():
    assert [_card(c, "ru") for c in ("JH", "QS", "KD", "AC", "10H", "7S")] == [
        "В♥", "Д♠", "К♦", "Т♣", "10♥", "7♠"
    ]  # fmt: skip
    assert [_card(c, "uk") for c in ("JH", "QS", "KD", "AC")] == ["В♥", "Д♠", "К♦", "Т♣"]
    assert [_card(c, "pl") for c in ("JH", "QS", "KD", "AC", "10D")] == [
        "W♥", "D♠", "K♦", "A♣", "10♦"
    ]  # fmt: skip
    assert [_card(c, "en") for c in ("JH", "QS", "KD", "AC")] == ["J♥", "Q♠", "K♦", "A♣"]
    assert render.card(parse_card("QH"), "ru") == "Д♥"  # the reader's language given


def test_the_leak_parser_reads_every_language_letters():
    """Every card written for every reader reads back as itself: a native-lettered
    card in a group text is seen by the leak watchers, not missed."""
    for lang in ("en", "ru", "uk", "pl"):
        with language(lang):
            for c in ALL:
                assert cards_in(f"x {render.card(c)}, y") == {str(c)}, (lang, c)
    assert cards_in("Д♥ Т♠ W♣ В♦ 10♦") == {"QH", "AS", "JC", "JD", "10D"}


def test_the_harness_watcher_catches_a_russian_lettered_card_in_a_group_text():
    table = Table(None, None, [], random.Random(1))  # type: ignore[arg-type]
    entry = SimpleNamespace(message_id=7, plain_text="Ход: Д♠", button_texts=["Т♥"])
    table._found([entry], {"QS", "AH", "7C"}, "the group")
    assert len(table.leaks) == 1 and "'AH', 'QS'" in table.leaks[0]


def test_panel_buttons_read_native_letters_and_keep_the_engine_callbacks():
    for game in positions(10):
        view = game.view(game.view(None).attacker)
        with language("en"):
            english = keyboards.panel(9, 3, view)["inline_keyboard"]
        with language("ru"):
            russian = keyboards.panel(9, 3, view)["inline_keyboard"]
        data = [[b["callback_data"] for b in row] for row in english]
        assert data == [[b["callback_data"] for b in row] for row in russian]
        for c in view.hand:
            tap = cb.move(9, None, cb.Tap(c))
            label = next(b["text"] for row in russian for b in row if b["callback_data"] == tap)
            assert render.card(c, "ru") in label
            if c.rank.text in "JQKA":
                assert c.rank.text not in label  # Д, not Q


def test_the_public_table_writes_cards_in_the_group_language():
    rules = Rules()
    game = Game.from_seed(rules, ["A", "B"], 3)
    trump = game.view(None).trump_card
    assert trump is not None
    seats = tuple(Seat(i, 100 + i, n) for i, n in enumerate("AB"))
    with language("ru"):
        text = render.table_text(render.Table(1, 1, "Друзья", seats, game.view(None)))
    assert render.card(trump, "ru") in text and "Отбой" not in text.split("·")[0]


def test_ai_seats_are_named_in_the_language():
    with language("ru"):
        assert render.ai_name("easy").format(n=1) == "Бот 1 (лёгкий)"
    with language("uk"):
        assert render.ai_name("normal").format(n=2) == "Бот 2 (середній)"
    with language("pl"):
        assert render.ai_name("hard").format(n=1) == "Bot 1 (trudny)"
    with language("en"):
        assert render.ai_name("easy").format(n=1) == "Bot 1 (easy)"


def test_the_ratings_table_uses_plurals():
    lines = (
        RatingLine(5, "", "Ann", 1040, 1, 1, 0, 0, 0),
        RatingLine(6, "", "Bob", 990, 3, 2, 0, 1, 1),
    )
    stats = GroupStats(lines, Fools(lines[1:], 2), Fools(), Fools(lines[1:], 1))
    with language("en"):
        text = ratings_text.group_stats_text(stats, "Friends")
    assert "1. Ann — <b>1040</b> · 1 game · 1× durak" in text
    assert "2. Bob — <b>990</b> · 3 games · 2× durak · 🔥1" in text
    with language("ru"):
        text = ratings_text.group_stats_text(stats, "Друзья")
    assert "Bob — <b>990</b> · 3 партии" in text and "Дурак недели: Bob (2 раза)" in text


def test_native_words_for_the_discard_the_durak_and_all_covered():
    seats = (Seat(0, 1, "Аня"), Seat(1, 2, "Боря"))
    with language("ru"):
        assert render.outcome_line(seats, Outcome(losers=(1,)), None) == "Боря остался в дураках!"
    with language("uk"):
        assert render.outcome_line(seats, Outcome(losers=(1,)), None) == "Боря залишився в дурнях!"
    game = Game.from_seed(Rules(), ["A", "B"], 3)
    while game.result is None:  # play until a bout ends in a discard
        view = game.view(game.view(None).attacker)
        if view.discard:
            break
        from durak.selfplay import random_step

        game.apply(*random_step(game, random.Random(len(game.history))))
    for lang, word in (("ru", "Отбой: "), ("uk", "Відбій: ")):
        with language(lang):
            text = render.table_text(render.Table(1, 1, "x", seats, game.view(None)))
        assert word in text, (lang, text)
    # the all-covered button: Polish "Pobite"
    for game in positions(40):
        view = game.view(game.view(None).attacker)
        covered = view.table and all(c is not None for _a, c in view.table)
        if covered and any(isinstance(a, Pass) for a in view.legal):
            with language("pl"):
                labels = [
                    b["text"] for row in keyboards.panel(1, 1, view)["inline_keyboard"] for b in row
                ]
            assert "✋ Pobite" in labels
            break
    else:
        raise AssertionError("no all-covered position with a pass")


def test_the_record_is_offered_once_as_json():
    with language("en"):
        over = keyboards.table("durakbot", 4, over=True)["inline_keyboard"]
        ended = keyboards.ended("durakbot", 4)["inline_keyboard"]
    assert not [b for row in over for b in row]
    records = [b["text"] for row in ended for b in row if b["callback_data"].startswith("1h.")]
    assert records == ["📄 Game record (JSON)"]


def test_a_lobby_never_reads_zero_players():
    with language("en"):
        text = render.lobby_text((), Rules(), "Ann", closed="Everyone left.")
    assert "0 players" not in text and "Nobody has joined yet." in text
    with language("ru"):
        text = render.lobby_text((), Rules(), "Аня", closed="x")
    assert "0 игроков" not in text


@async_test
async def test_private_start_says_what_the_bot_is_and_offers_a_group(
    make_fake_telegram, tmp_path, errors
):
    server, users, _boss, _group = await friends_and_admin(make_fake_telegram, players=1)
    async with running_bot(server, tmp_path / "db.sqlite3"):
        chat = server.private_chat(users[0])
        await users[0].send(chat, "/start")
        reply = await server.wait_for_bot_message(
            chat, contains="bot for playing durak", timeout=10
        )
    urls = [b.url for b in reply.buttons]
    assert f"https://t.me/{server.bot.username}?startgroup=true" in urls
    assert any("Add me to a group" in b.text for b in reply.buttons)
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_an_ai_seat_is_named_in_the_group_language(make_fake_telegram, tmp_path, errors):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Игрок{i}", started=True, language_code="ru") for i in range(2)]
    boss = server.add_user("Admin", started=True, language_code="en")
    group = server.add_group("Друзья", [*users, boss], admins=[boss])
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        table = Table(server, group, users, random.Random(2))
        lobby = await table.open_lobby()
        easy = next(b.callback_data for b in lobby.buttons if (b.callback_data or "")[:2] == "1x")
        await table.press(boss, lobby, easy)  # an English-speaking admin seats it
        info = await bot.service.lobby(group.id)
        assert info is not None
        assert [s.name for s in info.seats if s.is_ai] == ["Бот 1 (лёгкий)"]
    assert not errors.records, [r.getMessage() for r in errors.records]
