"""/settings in few taps (issue 11 item 7), end to end through the fake Bot API:
an option opens the list of its values with one line explaining it, the list
offers only what the rules allow with the other settings, the menu is drawn in
the group's language whoever taps, a non-admin's /settings is answered privately,
and value buttons' data is checked like any other callback data."""

from __future__ import annotations

import random

from bot.ui import callbacks as cb
from bot.ui import render
from bot.ui import settings_menu as menu
from bot.ui.i18n import language
from tests.fake_telegram.fixtures import async_test

from .harness import Table, durak_of, friends_and_admin, running_bot


def _refusal(code: str) -> str:
    with language("en"):
        return render.refusal(code)


@async_test
async def test_an_option_opens_its_values_in_the_groups_language(
    make_fake_telegram, tmp_path, errors
):
    server, users, boss, group = await friends_and_admin(make_fake_telegram, players=2)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        await bot.service.set_chat_settings(group.id, language="ru")
        table = Table(server, group, users, random.Random(3))

        # a non-admin: told privately, in his own language; the group reads nothing
        before = len(table.bot_messages(group))
        await users[0].send(group, "/settings")
        private = server.private_chat(users[0])
        refused = await server.wait_for_bot_message(private, contains="admins", timeout=10)
        assert refused.plain_text == _refusal("admins_only")
        await bot.outbox.idle(10)
        assert len(table.bot_messages(group)) == before

        # the admin speaks English; the menu is Russian, the group's language
        await boss.send(group, "/settings")
        shown = await server.wait_for_bot_message(group, contains="Настройки новых игр", timeout=10)
        mid = shown.message_id
        assert await table.press(boss, shown, cb.setting("dk")) == ""
        await server.wait_for(
            lambda: cb.setting("dk", 2) in server.message(group, mid).callback_data,
            10,
            what="the deck's values",
        )
        values = server.message(group, mid)
        text = values.plain_text or ""
        assert "Колода: 24 карты (с девяток), 36 (с шестёрок) или 52 (с двоек)." in text
        assert [b.text for b in values.buttons] == ["✅ 36 карт", "52 карты", "24 карты", "↩ Назад"]
        assert values.callback_data == [
            cb.setting("dk", 0),
            cb.setting("dk", 1),
            cb.setting("dk", 2),
            cb.setting(menu.BACK),
        ]
        # a non-admin cannot choose either, and is told in his own language
        assert "admins" in await table.press(users[0], values, cb.setting("dk", 1))
        assert (await bot.service.chat_settings(group.id)).rules.deck == 36

        # one tap chooses: 24 cards, and the menu (still Russian) is back
        assert await table.press(boss, values, cb.setting("dk", 2)) == ""
        assert (await bot.service.chat_settings(group.id)).rules.deck == 24
        await server.wait_for(
            lambda: "Настройки новых игр" in (server.message(group, mid).plain_text or ""),
            10,
            what="the menu again",
        )
        assert "Колода: 24 карты" in (server.message(group, mid).plain_text or "")

        # the turn time, seven values, is two taps too; Back leaves a list unchanged
        assert await table.choose_setting(boss, mid, "tt", 4) == ("", "")
        assert (await bot.service.chat_settings(group.id)).turn_timeout is None
        assert await table.press(boss, server.message(group, mid), cb.setting("ti")) == ""
        await server.wait_for(
            lambda: cb.setting(menu.BACK) in server.message(group, mid).callback_data, 10
        )
        assert await table.press(boss, server.message(group, mid), cb.setting(menu.BACK)) == ""
        await server.wait_for(
            lambda: cb.setting("ti") in server.message(group, mid).callback_data, 10
        )
        assert (await bot.service.chat_settings(group.id)).rules.throw_in == "neighbours"
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_the_value_list_offers_only_what_the_rules_allow(
    make_fake_telegram, tmp_path, errors
):
    server, users, boss, group = await friends_and_admin(make_fake_telegram, players=5)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        table = Table(server, group, users, random.Random(4))
        await table.open_lobby()
        await table.join_all()  # five seated: 24 cards would deal to four at most
        await boss.send(group, "/settings")
        shown = await server.wait_for_bot_message(
            group, contains="Settings for new games", timeout=10
        )
        mid = shown.message_id
        assert await table.press(boss, shown, cb.setting("dk")) == ""
        await server.wait_for(
            lambda: cb.setting(menu.BACK) in server.message(group, mid).callback_data, 10
        )
        values = server.message(group, mid)
        assert values.callback_data == [
            cb.setting("dk", 0),
            cb.setting("dk", 1),
            cb.setting(menu.BACK),
        ]
        # the hidden value, pressed anyway (an old list, a forged client): refused, why
        answer = await table.press(boss, values, cb.setting("dk", 2), check=False)
        assert answer.endswith("the lobby already seats 5."), answer
        assert (await bot.service.chat_settings(group.id)).rules.deck == 36
        assert await table.press(boss, values, cb.setting(menu.BACK)) == ""

        # sprint forbids trump exchange: no list with one value, a toast saying why
        await bot.service.set_chat_settings(group.id, sprint=True)
        answer = await table.press(boss, server.message(group, mid), cb.setting("te"), check=False)
        assert answer == "Sprint cannot be played with trump exchange: there is no stock."
        assert not (await bot.service.chat_settings(group.id)).rules.trump_exchange

        # hostile data: a value out of range, a value for a button without values,
        # a value for the language picker of a private chat, a malformed index
        for data in ("1o.dk.3", "1o.dk.99", "1o.gm.1", "1o.x.0", "1o.ob.1", "1o.zz.0"):
            answer = await table.press(boss, server.message(group, mid), data, check=False)
            assert answer == _refusal("bad_callback"), data
        for data in ("1o.dk.01", "1o.dk.-1", "1o.dk.100", "1o.dk.", "1o.dk.a"):
            answer = await table.press(boss, server.message(group, mid), data, check=False)
            assert answer == _refusal("bad_callback"), data
        answer = await table.press(users[0], server.message(group, mid), "1o.uru.1", check=False)
        assert answer == _refusal("bad_callback")
        assert (await bot.service.chat_settings(group.id)).rules.deck == 36
    assert not errors.records, [r.getMessage() for r in errors.records]


def test_every_option_of_the_menu_is_explained():
    assert set(menu.EXPLAIN) == {name for _code, name, _values in menu.OPTIONS}


@async_test
async def test_the_lobby_shows_the_rules_in_force_in_one_line(make_fake_telegram, tmp_path, errors):
    """Issue 11 item 10: the game, the deck, who throws in and the variants, on one
    line of the lobby (in the group's language); /rules keeps the long form."""
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=2)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        await bot.service.set_chat_settings(group.id, language="ru", transfer=True, deck=52)
        table = Table(server, group, users, random.Random(5))
        lobby = await table.open_lobby()
        lines = (lobby.plain_text or "").splitlines()
        rules = [line for line in lines if "Игра:" in line or "колод" in line.lower()]
        assert len(rules) == 1, lines
        line = rules[0]
        assert line.startswith("📜 ") and "52" in line and "перевод" in line.lower()
        assert line.index("Игра:") < line.index("колод") < line.index("Подкидывают")
    assert not errors.records, [r.getMessage() for r in errors.records]
