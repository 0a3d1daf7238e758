"""The games by name in the chat: /settings' game list, forbidden combinations
refused with their reason, ``/newgame road``, and /rules in the group's language."""

from __future__ import annotations

import random
import re

import pytest

from bot.locales import catalogs
from bot.ui import callbacks as cb
from bot.ui import games_menu, games_text, render
from bot.ui import settings_menu as menu
from bot.ui.i18n import _, language
from durak import Rules
from durak.rules import FORBIDDEN
from durak.service import ChatSettings
from tests.fake_telegram.fixtures import async_test

from .harness import Table, durak_of, friends_and_admin, running_bot
from .test_i18n import english_phrases, labels

LANGS = catalogs.languages()


def settings(**options) -> ChatSettings:
    return ChatSettings(1, Rules(**options))


# ---- choosing a game -----------------------------------------------------------------


@pytest.mark.parametrize("choice", games_text.CHOICES, ids=lambda c: c.code)
def test_every_game_of_the_list_is_playable_rules_and_names_itself(choice):
    for house in (Rules(), Rules(deck=52, throw_in="all", trump_exchange=True, teams=True)):
        chosen = games_text.choose(choice, house)
        assert games_text.choice_of(chosen.rules) == choice
        assert chosen.rules.game == choice.rules_game
        with language("en"):
            assert games_text.game_name(chosen.rules).startswith(choice.name)


def test_a_game_keeps_the_house_rules_that_fit_and_says_what_it_switched_off():
    house = Rules(deck=52, throw_in="all", transfer=True, trump_exchange=True, damka=True)
    blind = games_text.choose(games_text.BY_CODE["blind"], house)
    assert blind.rules.blind and not blind.rules.damka  # one game at a time
    assert blind.rules.deck == 52 and blind.rules.throw_in == "all"
    assert not blind.rules.transfer and not blind.rules.trump_exchange
    assert dict(blind.dropped) == {
        "transfer": "blind is one card against one card",
        "trump_exchange": "blind is one card against one card",
    }
    with language("en"):
        text = games_text.dropped_text(blind)
    assert text.count("one card against one card") == 2 and "Transfer is off" in text

    sprint = games_text.choose(games_text.BY_CODE["sprint"], Rules(transfer=True))
    assert sprint.rules.sprint and sprint.rules.transfer and not sprint.dropped

    road = games_text.choose(games_text.BY_CODE["road"], house)
    assert road.rules == Rules(game="road")
    with language("ru"):
        assert "подкидного" in games_text.dropped_text(road)
    back = games_text.choose(games_text.BY_CODE["perevodnoy"], road.rules)
    assert back.rules == Rules(transfer=True) and not back.dropped


def test_own_trumps_keeps_its_take_and_the_view_option_survives_a_change():
    rules = Rules(game="own_trumps", own_trumps_take="pile", show_last_discard=True)
    again = games_text.choose(games_text.BY_CODE["own_trumps"], rules)
    assert again.rules == rules
    road = games_text.choose(games_text.BY_CODE["road"], rules)
    assert road.rules == Rules(game="road", show_last_discard=True)


@pytest.mark.parametrize(
    ("option", "other", "why"),
    [(option, other, why) for option, others, why in FORBIDDEN for other in others],
)
def test_every_forbidden_pair_is_refused_with_its_reason_in_every_language(option, other, why):
    value = {"japanese": "H"}.get(option, True)
    base = ChatSettings(1, Rules(**{option: value}))
    turn_on = {other: True}
    if other == "transfer_by_showing_trump":
        turn_on["transfer"] = True
    for lang in ("en", *LANGS):
        with language(lang):
            refusal = games_menu.why_not(base, turn_on, None)
            assert refusal is not None, (option, other)
            assert _(games_text.REASONS[why]) in refusal
            if lang != "en":
                assert why not in refusal, f"{lang}: the reason is not translated"
    # the pair the other way round (the option switched on last) is refused too
    reverse = ChatSettings(1, Rules(**turn_on))
    with language("en"):
        assert games_menu.why_not(reverse, {option: value}, None) is not None


def test_a_game_too_small_for_the_lobby_is_refused_saying_so():
    with language("en"):
        refusal = games_menu.why_not(settings(), {"blind": True}, seated=3)
        assert refusal == "Blind: 2 players; the lobby already seats 3."
        assert games_menu.why_not(settings(), {"blind": True}, seated=2) is None
        road = games_menu.why_not(settings(), {"game": "road"}, seated=2)
        assert road is None  # a lobby may wait for its third player
        own = games_menu.why_not(settings(), {"game": "own_trumps"}, seated=5)
        assert own == "Own trumps: 3 to 4 players; the lobby already seats 5."


def test_pile_games_offer_only_their_own_options():
    road = settings(game="road")
    codes = [b.callback_data for row in menu.menu_keyboard(road).inline_keyboard for b in row]
    assert codes == [cb.setting(c) for c in ("gm", "sd", "np", "tt", "lg", "rc", "x")]
    own = settings(game="own_trumps")
    codes = [b.callback_data for row in menu.menu_keyboard(own).inline_keyboard for b in row]
    assert cb.setting("ot") in codes and cb.setting("dk") not in codes
    classic = [
        b.callback_data for row in menu.menu_keyboard(settings()).inline_keyboard for b in row
    ]
    assert cb.setting("ot") not in classic and cb.setting("tc") in classic


@pytest.mark.parametrize(
    ("word", "code"),
    [
        ("road", "road"),
        ("Road", "road"),
        ("дорожный", "road"),
        ("Дорожній", "road"),
        ("Drogowy", "road"),
        ("own_trumps", "own_trumps"),
        ("own-trumps", "own_trumps"),
        ("Всяк свой козырь", "own_trumps"),
        ("podkidnoy", "classic"),
        ("переводной", "perevodnoy"),
        ("japanese", "japanese_h"),
        ("japanese_s", "japanese_s"),
        ("sprint", "sprint"),
        ("nonsense", None),
        ("", None),
    ],
)
def test_newgame_words_name_a_game_in_any_language(word, code):
    found = games_text.lookup(word)
    assert (found.code if found else None) == code


# ---- the texts -------------------------------------------------------------------------


def every_rules() -> list[Rules]:
    """Each game of the list, and podkidnoy with every option on that can be."""
    out = [games_text.choose(c, Rules()).rules for c in games_text.CHOICES]
    out += [
        Rules(
            transfer=True,
            transfer_by_showing_trump=True,
            partial_defence=True,
            return_last_card=True,
            trump_change=True,
            damka=True,
            bout_limit=5,
            show_last_discard=True,
            six_cap_after_stock=False,
            teams=True,
            attack_loser=True,
            throw_in="all",
        ),
        Rules(sprint=True, damka=True, partial_defence=True, japanese="D"),
        Rules(english=True, trump_change=True),
        Rules(game="own_trumps", own_trumps_take="pile"),
        Rules(game="road", show_last_discard=True),
    ]
    return out


def game_texts() -> list[str]:
    texts = []
    for rules in every_rules():
        s = ChatSettings(1, rules)
        texts += [render.rules_text(rules), menu.menu_text(s), games_menu.list_text(s)]
        texts += labels(menu.menu_keyboard(s)) + labels(games_menu.list_keyboard(s))
        texts.append(render.lobby_text((), rules, "P"))
    for choice in games_text.CHOICES:
        texts.append(games_text.dropped_text(games_text.choose(choice, every_rules()[-5])))
    for option, others, why in FORBIDDEN:
        texts += [games_text.forbidden_text(option, other, why) for other in others]
    texts.append(games_text.unknown_game_text())
    texts.append(games_menu.why_not(settings(), {"blind": True}, 4) or "")
    return texts


@pytest.mark.parametrize("lang", LANGS)
def test_the_games_speak_the_groups_language(lang):
    phrases = english_phrases()
    with language(lang):
        blob = "\n".join(game_texts())
    leftover = sorted(p for p in phrases if p in blob)
    assert not leftover, f"{lang}: English left in the texts:\n" + "\n".join(leftover)
    assert not re.search(r"\{\w*\}", blob)
    for choice in games_text.CHOICES:
        with language(lang):
            assert _(choice.name) != choice.name or choice.name in ("Sprint", "Damka")


def test_rules_describe_each_game_in_a_few_lines():
    with language("en"):
        for rules, needle in (
            (Rules(), "throw in"),
            (Rules(sprint=True), "match of 10 deals"),
            (Rules(blind=True), "face-down slot"),
            (Rules(english=True), "pair of one rank"),
            (Rules(damka=True), "queen of spades"),
            (Rules(japanese="S"), "trump ♠ is set before the game"),
            (Rules(trump_change=True), "face-down card lies under the trump card"),
            (Rules(partial_defence=True), "covered pairs go to the discard"),
            (Rules(return_last_card=True), "hand back"),
            (Rules(game="own_trumps"), "3 top cards"),
            (Rules(game="own_trumps", own_trumps_take="pile"), "takes the whole pile"),
            (Rules(game="piled"), "3 cards each"),
            (Rules(game="road"), "bottom card"),
        ):
            text = render.rules_text(rules)
            assert needle in text, (rules.changed(), needle)
            assert len(text.splitlines()) <= 14


# ---- in the chat ---------------------------------------------------------------------------


def newest(table: Table, needle: str):
    return next(
        m for m in reversed(table.bot_messages(table.group)) if needle in (m.plain_text or "")
    )


async def game_list(table: Table, admin, message_id: int):
    """Open the game list of the settings menu and wait until it shows."""
    group = table.group
    await table.press(admin, table.server.message(group, message_id), cb.setting("gm"))
    await table.server.wait_for(
        lambda: "Choose the game" in (table.server.message(group, message_id).plain_text or ""),
        10,
        what="the game list",
    )
    return table.server.message(group, message_id)


@async_test
async def test_settings_choose_a_game_by_name_and_refuse_what_it_forbids(
    make_fake_telegram, tmp_path, errors
):
    server, users, boss, group = await friends_and_admin(make_fake_telegram, players=3)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        table = Table(server, group, users, random.Random(1))
        await boss.send(group, "/settings")
        await server.wait_for_bot_message(group, contains="Settings for new games", timeout=10)
        msg = newest(table, "Settings for new games")
        assert "Game: Classic" in (msg.plain_text or "")
        assert "admins" in await table.press(users[0], msg, cb.setting("gm"))
        shown = await game_list(table, boss, msg.message_id)
        names = [b.text for b in shown.buttons]
        for name in ("✅ Classic", "Perevodnoy", "Sprint", "Blind", "English", "Damka"):
            assert name in names
        for name in ("Japanese ♥", "Trump change", "Own trumps", "Piled", "Road"):
            assert name in names

        await table.press(boss, shown, cb.setting("gsp"))
        assert (await bot.service.chat_settings(group.id)).rules.sprint
        await server.wait_for(
            lambda: "Game: Sprint" in (server.message(group, msg.message_id).plain_text or ""),
            10,
            what="the menu with sprint",
        )
        # a forbidden combination is refused, saying why, and nothing changes
        answer = await table.press(boss, shown, cb.setting("te"))
        assert answer == "Sprint cannot be played with trump exchange: there is no stock."
        assert not (await bot.service.chat_settings(group.id)).rules.trump_exchange
        assert await table.choose_setting(boss, msg.message_id, "dm", 1) == ("", "")
        assert (await bot.service.chat_settings(group.id)).rules.damka

        await users[0].send(group, "/rules")
        rules = await server.wait_for_bot_message(group, contains="Rules in force", timeout=10)
        assert "Game: Sprint + damka" in (rules.plain_text or "")
        assert "match of 10 deals" in (rules.plain_text or "")

        # a lobby of three: blind would not seat them
        await table.open_lobby()
        await table.join_all()
        await game_list(table, boss, msg.message_id)
        answer = await table.press(boss, shown, cb.setting("gbl"))
        assert answer == "Blind: 2 players; the lobby already seats 3."
        assert not (await bot.service.chat_settings(group.id)).rules.blind
        # road fits them (the list stayed open): the lobby takes it, and the menu
        # offers road's options only
        await table.press(boss, shown, cb.setting("gro"))
        assert (await bot.service.chat_settings(group.id)).rules == Rules(game="road")
        lobby = (await bot.service.lobby(group.id)).rules
        assert lobby.game == "road"
        await server.wait_for(
            lambda: "Game: Road" in (table.lobby().plain_text or ""), 10, what="a road lobby"
        )
        now = server.message(group, msg.message_id)
        assert cb.setting("dk") not in now.callback_data
        assert cb.setting("sd") in now.callback_data
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_newgame_names_the_game_of_one_lobby_in_the_groups_language(
    make_fake_telegram, tmp_path, errors
):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=3)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        await bot.service.set_chat_settings(group.id, language="ru", transfer=True)
        table = Table(server, group, users, random.Random(2))
        await users[0].send(group, "/newgame chess")
        refused = await server.wait_for_bot_message(group, contains="/newgame road", timeout=10)
        assert "own_trumps" in (refused.plain_text or "")
        assert await bot.service.lobby(group.id) is None

        await users[0].send(group, "/newgame дорожный")
        await server.wait_for(lambda: table.lobby() is not None, 10, what="a lobby")
        assert "Игра: Дорожный" in (table.lobby().plain_text or "")
        assert (await bot.service.lobby(group.id)).rules == Rules(game="road")
        # the group's own settings stay as they were: the next /newgame plays them
        assert (await bot.service.chat_settings(group.id)).rules == Rules(transfer=True)

        await users[1].send(group, "/rules")
        rules = await server.wait_for_bot_message(group, contains="Дорожный", timeout=10)
        text = rules.plain_text or ""
        assert "нижнюю" in text and "от 3 до 6 игроков" in text
        assert "the" not in text.split()
    assert not errors.records, [r.getMessage() for r in errors.records]
