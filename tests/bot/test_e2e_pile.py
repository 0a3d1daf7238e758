"""Whole pile games (PILE-GAMES.md) through the real bot and the fake Bot API: own
trumps with its suit choice in the lobby (each player taps a free suit; one who
does not in time gets the first free one), piled and road, and a restart of the
bot in the middle of a road game. Watched as every game is: after each press no
group text shows a card from a hand. No AI seats (humans only)."""

from __future__ import annotations

import asyncio
import random

import pytest

from bot.ui import callbacks as cb
from durak import replay
from durak.service import GameService
from tests.fake_telegram import FakeTelegram, RateLimits
from tests.fake_telegram.fixtures import async_test
from tests.fake_telegram.models import Button, Chat, Message, User

from .harness import SCALE, Table, durak_of, running_bot, secret_cards
from .test_e2e import finished_game, friends
from .textcards import cards_in

SUIT_SIGNS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def suit_message(table: Table) -> Message | None:
    for m in reversed(table.bot_messages(table.group)):
        if any((b.callback_data or "").startswith("1c.") for b in m.buttons):
            return m
    return None


async def press_start(table: Table) -> str:
    lobby = table.lobby()
    assert lobby is not None
    start = next(b for b in lobby.buttons if b.callback_data and b.callback_data[1] == "s")
    return await table.press(table.users[0], lobby, start.callback_data or "")


async def wait_panels(table: Table) -> None:
    await table.server.wait_for(
        lambda: all(table.panel(u) is not None for u in table.users), 10, what="every panel"
    )


def plays_cards(_user: User, buttons: list[Button]) -> Button | None:
    """A player who leads or beats when a card can (random otherwise, Take among the
    rest): random presses of Take make a pile game run for thousands of presses."""
    cards = [b for b in buttons if cards_in(b.text) and not b.text.startswith("(")]
    return random.Random(len(buttons) * 7919 + len(cards)).choice(cards) if cards else None


def public_of(record: dict) -> set[str]:
    """Cards that were face up at some time in the game: played, or shown."""
    seen: set[str] = set()
    for step in record["steps"]:
        seen.update(step.get("cards", []))
        if "card" in step:
            seen.add(step["card"])
    end = replay(record)
    every = {str(c) for s in range(end.n) for c in end.hand(s)}
    return seen | ({str(c) for c in every} - secret_cards(end))


def only_public(server: FakeTelegram, group: Chat, record: dict) -> None:
    shown: set[str] = set()
    for text in server.texts_ever_shown(group, include_buttons=True):
        shown |= cards_in(text)
    start = replay({**record, "steps": []})
    public = public_of(record) | {str(c) for c in (start.view(None).trump_card,) if c}
    assert shown <= public, f"a group message showed {sorted(shown - public)}"


async def tallied(service: GameService, group: Chat, record: dict, table: Table) -> None:
    board = {t.name: t for t in await service.leaderboard(group.id, limit=50)}
    result = record["steps"][-1]["expect"]["result"]
    names = [u.first_name for u in table.users]
    assert sorted(board) == sorted(names) and all(t.played == 1 for t in board.values())
    if "draw" in result:
        assert all(t.draws == 1 for t in board.values())
    else:
        assert {n: t.losses for n, t in board.items()} == {
            n: int(n == result["loser"]) for n in names
        }


def clean(table: Table, server: FakeTelegram, errors) -> None:
    assert not table.leaks, table.leaks
    assert not server.unanswered_callbacks()
    assert server.limit_violations() == 0
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_own_trumps_chooses_suits_in_the_lobby_then_plays(
    make_fake_telegram, tmp_path, errors
):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users, group = friends(server, 3)
    table = Table(server, group, users, random.Random(31))
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        await service.set_chat_settings(group.id, game="own_trumps", turn_timeout=None)
        await table.open_lobby()
        await table.join_all()
        assert "Choose your suits" in await press_start(table)
        lobby = await service.lobby(group.id)
        assert lobby is not None and lobby.suit_choice is not None
        order = lobby.suit_choice.order
        chosen: dict[str, str] = {}
        for k, seat in enumerate(order):  # each in turn taps a free suit: the last one
            await server.wait_for(
                lambda k=k: (m := suit_message(table)) is not None and len(m.buttons) == 4 - k,
                10,
                what=f"{4 - k} free suits",
            )
            message = suit_message(table)
            assert message is not None and "tap a free suit" in (message.plain_text or "")
            user = next(u for u in users if u.id == lobby.seats[seat].user_id)
            if k == 0:  # out of turn: refused
                other = next(u for u in users if u is not user)
                refused = await table.press(other, message, message.buttons[0].callback_data)
                assert refused and "Dealt" not in refused
            button = message.buttons[-1]
            letter = (button.callback_data or "")[-1]
            await table.press(user, message, button.callback_data or "")
            chosen[user.first_name] = letter
        await wait_panels(table)
        info = (await service.running_games())[0]
        view = info.game.view(None)
        trumps = {info.seats[s].name: t.letter for s, t in enumerate(view.trumps) if t}
        assert trumps == chosen
        await table.play_to_the_end(
            watch=(service, info.game_id), timeout=600, prefer=plays_cards, max_presses=20000
        )
        _, record = await finished_game(table, app)
        assert record["rules"]["game"] == "own_trumps"
        await tallied(service, group, record, table)
        await durak_of(app).outbox.idle(10)
    lines = [line for x in server.texts_ever_shown(group) for line in x.splitlines()]
    for name, letter in chosen.items():  # the table shows each player's own trump
        assert any(f"{name} {SUIT_SIGNS[letter]}:" in line for line in lines), name
    only_public(server, group, record)
    clean(table, server, errors)


@async_test
async def test_own_trumps_gives_the_first_free_suit_when_time_runs_out(
    make_fake_telegram, tmp_path, errors
):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users, group = friends(server, 3)
    table = Table(server, group, users, random.Random(32))
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        await service.set_chat_settings(group.id, game="own_trumps", turn_timeout=20)
        await table.open_lobby()
        await table.join_all()
        await press_start(table)
        lobby = await service.lobby(group.id)
        assert lobby is not None and lobby.suit_choice is not None
        first = next(u for u in users if u.id == lobby.seats[lobby.suit_choice.order[0]].user_id)
        message = await server.wait_for(lambda: suit_message(table), 10, what="the suits")
        hearts = next(b for b in message.buttons if (b.callback_data or "").endswith(".H"))
        await table.press(first, message, hearts.callback_data or "")
        # nobody else chooses: each in turn gets the first free suit (S, then D)
        await wait_panels(table)
        info = (await service.running_games())[0]
        view = info.game.view(None)
        by_order = [view.trumps[s].letter for s in lobby.suit_choice.order]
        assert by_order == ["H", "S", "D"]
        await durak_of(app).outbox.idle(10)
    clean(table, server, errors)


async def whole_game(make_fake_telegram, tmp_path, errors, game: str, players: int, seed: int):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users, group = friends(server, players)
    table = Table(server, group, users, random.Random(seed))
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        await service.set_chat_settings(group.id, game=game)
        await table.open_lobby()
        await table.join_all()
        await table.start()
        running = (await service.running_games())[0].game_id
        await table.play_to_the_end(
            watch=(service, running), timeout=600, prefer=plays_cards, max_presses=20000
        )
        _, record = await finished_game(table, app)
        assert record["rules"]["game"] == game
        await tallied(service, group, record, table)
        await durak_of(app).outbox.idle(10)
    only_public(server, group, record)
    clean(table, server, errors)
    return server, table, record


@pytest.mark.long
@async_test
async def test_a_whole_piled_game(make_fake_telegram, tmp_path, errors):
    server, table, _record = await whole_game(make_fake_telegram, tmp_path, errors, "piled", 3, 33)
    texts = server.texts_ever_shown(table.group)
    assert any("Stock:" in x for x in texts)
    panels = [x for u in table.users for x in server.texts_ever_shown(server.private_chat(u))]
    assert any("Your turn: lead any card." in x for x in panels)
    assert any("(tap a card that beats it), or take." in x for x in panels)


@async_test
async def test_a_whole_road_game(make_fake_telegram, tmp_path, errors):
    server, table, _record = await whole_game(make_fake_telegram, tmp_path, errors, "road", 4, 34)
    panels = [
        x
        for u in table.users
        for x in server.texts_ever_shown(server.private_chat(u), include_buttons=True)
    ]
    assert any("Take the bottom card" in x for x in panels)


@async_test
async def test_restart_in_the_middle_of_a_road_game(make_fake_telegram, tmp_path, errors):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users, group = friends(server, 3)
    db = tmp_path / "durak.sqlite3"
    table = Table(server, group, users, random.Random(35))
    async with running_bot(server, db) as app:
        service = durak_of(app).service
        await service.set_chat_settings(group.id, game="road")
        await table.open_lobby()
        await table.join_all()
        await table.start()
        watch = (service, (await service.running_games())[0].game_id)
        stop = asyncio.Event()
        players = [asyncio.create_task(table.play(u, stop, watch)) for u in users]
        await server.wait_for(lambda: table.presses >= 30, 60, what="30 presses")
        stop.set()
        await asyncio.gather(*players)
        before = (await service.running_games())[0]
    async with running_bot(server, db) as app:
        service = durak_of(app).service
        info = (await service.running_games())[0]
        assert info.game_id == before.game_id and info.version == before.version
        assert info.game.view(None) == before.game.view(None)
        await table.play_to_the_end(
            watch=(service, info.game_id), timeout=600, prefer=plays_cards, max_presses=20000
        )
        _, record = await finished_game(table, app)
        assert len([s for s in record["steps"] if "do" in s]) > before.version
        assert cb.decode(table.ended().buttons[0].callback_data).game_id == info.game_id
    only_public(server, group, record)
    clean(table, server, errors)
