"""The Mini App in a real headless Chromium: two players on their pages and one on the
chat panel play a whole game through the real bot and the fake Bot API; after every
move each page shows its own hand and the counts only (no card of another hand in its DOM
or any WebSocket frame)."""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
from typing import Any

import pytest

from durak.service import RUNNING
from tests.fake_telegram import RateLimits
from tests.fake_telegram.fixtures import async_test

from ..harness import (
    SCALE,
    Played,
    Table,
    durak_of,
    free_port,
    running_bot,
    secret_cards,
    unseen_own_cards,
)
from .browser import DARK, Player, browser, open_player, url
from .client import a_game, init_data

#: Milliseconds a page may take to show the game's end once the game has ended: a guard
#: against a page that never does, not a time it is judged by (a busy machine is slow).
OVER = 60_000


async def until(player: Player, expression: str, timeout: float = 5.0) -> bool:
    """Poll ``expression`` in the page (Playwright's wait_for_function evaluates a string
    with ``new Function``, which the page's Content-Security-Policy rightly refuses)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        if await player.page.evaluate(expression):
            return True
        await asyncio.sleep(0.02)
    return False


async def shows(player: Player, version: int, timeout: float = 5.0) -> bool:
    return await until(
        player,
        f"Number(document.body.dataset.version || -1) >= {version}"
        " || document.body.dataset.state === 'over'",
        timeout,
    )


async def check(player: Player, g: Any, seat: int, played: Played) -> None:
    """Nothing on the page or in its frames that this seat may not see, now or before."""
    info = await durak_of(g.app).service.game(g.game_id)
    game = info.game
    assert game is not None
    view = game.view(seat)
    if getattr(view, "slots", None) is not None:  # blind: his own unseen cards
        secret = unseen_own_cards(game, seat)
    else:
        secret = secret_cards(game, played) - {str(c) for c in game.hand(seat)}
    dom = await player.dom_cards()
    now = await durak_of(g.app).service.game(g.game_id)
    if now.version != info.version or await player.version() != info.version:
        return  # the game moved on while the page was read: the next round checks that
    if dom & secret:
        holder = [s for s in range(game.n) if dom & {str(c) for c in game.hand(s)}]
        html = await player.page.inner_html("#app")
        raise AssertionError(
            f"seat {seat}'s page shows {dom & secret} (held by {holder}; trump"
            f" {game.view(None).trump_card}; page v{await player.version()} game v{info.version}):"
            f" {html}"
        )
    assert not player.frame_cards() & secret, f"seat {seat} got {player.frame_cards() & secret}"


async def drive(
    player: Player, g: Any, seat: int, stop: asyncio.Event, rng: random.Random, moves: list[int]
) -> None:
    """Tap what the page lights (cards mostly, buttons sometimes) until the game ends."""
    service = durak_of(g.app).service
    played = Played()
    page = player.page
    while not stop.is_set():
        info = await service.game(g.game_id)
        if info.status != RUNNING:
            return
        if not await shows(player, info.version, 3.0):
            continue
        await check(player, g, seat, played)
        if not await page.evaluate("document.body.classList.contains('my-turn')"):
            await asyncio.sleep(0.03)
            continue
        if await tap_once(player, rng):
            moves.append(seat)


async def tap_once(player: Player, rng: random.Random) -> bool:
    """A turn's tap: a lit card mostly, a button sometimes, and the attack card it should
    cover where the page asks; then the next state (or the end) is waited for. ``False``:
    nothing was lit."""
    page = player.page
    before = await player.version()
    cards = await page.query_selector_all("#hand .card.legal")
    buttons = await page.query_selector_all("#actions button")
    pool = cards if cards and (not buttons or rng.random() < 0.75) else buttons
    if not pool:
        await asyncio.sleep(0.03)
        return False
    with contextlib.suppress(Exception):
        chosen = rng.choice(pool)
        # a hand card's left edge: the next card overlaps the rest of it
        where = {"x": 6, "y": 30} if chosen in cards else None
        await chosen.click(timeout=2000, position=where)
        targets = await page.query_selector_all(".pair.target")
        if targets:
            await rng.choice(targets).click(timeout=2000)
    await until(
        player,
        f"Number(document.body.dataset.version) !== {before}"
        " || document.body.dataset.state === 'over'",
        1.5,
    )
    return True


@pytest.mark.long
@async_test
async def test_two_pages_and_a_panel_player_play_a_whole_game(make_fake_telegram, tmp_path, errors):
    async with a_game(make_fake_telegram, tmp_path, players=3, time_scale=0.5) as g:
        service = durak_of(g.app).service
        async with browser() as b:
            pages = [
                await open_player(b, url(g.port, init_data(g.server, g.users[0]), g.game_id)),
                await open_player(
                    b, url(g.port, init_data(g.server, g.users[1]), g.game_id, DARK), 1280, 800
                ),
            ]
            for p in pages:
                await p.page.wait_for_selector("body[data-state=ready]", timeout=10000)
            info = await service.game(g.game_id)
            seats = [info.seat_of(u.id) for u in g.users]
            private_before = [len(g.server.private_chat(u).shown) for u in g.users]
            stop = asyncio.Event()
            rng = random.Random(5)
            moves: list[int] = []
            tasks = [
                asyncio.create_task(drive(p, g, seats[i], stop, rng, moves))
                for i, p in enumerate(pages)
            ]
            # his loop counts the rounds he waits on the pages too: the 240 s below bound the game
            panel = g.table.play(
                g.users[2], stop, (service, g.game_id), max_presses=100_000, refused_pause=0.2
            )
            tasks.append(asyncio.create_task(panel))
            try:
                await g.server.wait_for(
                    lambda: g.table.ended() is not None, 240, what="the end of the game"
                )
            finally:
                stop.set()
                await asyncio.gather(*tasks)
            for i, p in enumerate(pages):
                await p.page.wait_for_selector("body[data-state=over]", timeout=OVER)
                status = await p.page.inner_text("#status")
                assert "durak" in status or "draw" in status, status
                await check(p, g, seats[i], Played())
                assert not [c for c in p.console if "error" in c.lower()], p.console
            private_after = [len(g.server.private_chat(u).shown) for u in g.users]
        await durak_of(g.app).outbox.idle(10)
    assert set(moves) == {seats[0], seats[1]}, "both pages played"
    edits = [a - b for a, b in zip(private_after, private_before, strict=True)]
    # the pages' players' panels are edited once at the end, not once per move
    assert edits[0] <= 2 and edits[1] <= 2, edits
    assert edits[2] > 3, edits
    assert not g.table.leaks, g.table.leaks
    assert not errors.records, [r.getMessage() for r in errors.records]


@pytest.mark.long
@pytest.mark.parametrize("rules", ["blind", "piled"])
@async_test
async def test_a_blind_and_a_pile_game_on_two_pages(rules, make_fake_telegram, tmp_path, errors):
    """blind: face-down slots, played by a tap on a slot (his own unseen cards never in
    his page); piled: the pile and Take's cost. Both players on pages, to the end."""
    async with a_game(make_fake_telegram, tmp_path, players=2, rules=rules, time_scale=0.5) as g:
        service = durak_of(g.app).service
        info = await service.game(g.game_id)
        seats = [info.seat_of(u.id) for u in g.users]
        async with browser() as b:
            pages = [
                await open_player(b, url(g.port, init_data(g.server, u), g.game_id))
                for u in g.users
            ]
            for p in pages:
                await p.page.wait_for_selector("body[data-state=ready]", timeout=10000)
            family = await pages[0].page.evaluate("document.body.dataset.family")
            if rules == "blind":
                assert await pages[0].page.query_selector_all("#hand button[data-slot]")
                assert await pages[0].page.query_selector_all("#shown .shown-hand .small-card")
                # each of the opponent's cards reads as its index: "J♥", never "J♥♥"
                shown = await pages[0].page.inner_text("#shown")
                assert shown.strip() and not re.search("[♠♥♦♣]{2}", shown.replace("\n", "")), shown
            else:
                assert family == "pile"
            stop = asyncio.Event()
            rng = random.Random(11)
            moves: list[int] = []
            tasks = [
                asyncio.create_task(drive(p, g, seats[i], stop, rng, moves))
                for i, p in enumerate(pages)
            ]
            # a pile game runs for hundreds of moves: 40 on the pages show it plays
            enough = 40 if rules == "piled" else 10_000
            try:
                await g.server.wait_for(
                    lambda: g.table.ended() is not None or len(moves) >= enough,
                    240,
                    what="the end of the game",
                )
            finally:
                stop.set()
                await asyncio.gather(*tasks)
            for i, p in enumerate(pages):
                if rules != "piled":
                    await p.page.wait_for_selector("body[data-state=over]", timeout=OVER)
                await check(p, g, seats[i], Played())
                assert not [c for c in p.console if "error" in c.lower()], p.console
            if rules == "piled":
                assert any('"takeCost"' in f for f in pages[0].frames)
    assert set(moves) == set(seats)
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_a_page_reconnects_after_the_bot_restarts(make_fake_telegram, tmp_path, errors):
    """The bot stops and starts again on the same port (a restart, or the standby taking
    over behind the proxy): the open page reconnects by itself and plays on."""
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Player{i}", started=True) for i in range(2)]
    group = server.add_group("Friends", users, admins=[users[0]])
    port = free_port()
    db = tmp_path / "durak.sqlite3"
    table = Table(server, group, users, random.Random(2))
    async with browser() as b:
        async with running_bot(server, db, webapp_port=port, time_scale=1.0) as app:
            await table.open_lobby()
            await table.join_all()
            await table.start()
            service = durak_of(app).service
            info = (await service.running_games())[0]
            actor = info.game.actors()[0]
            user = next(u for u in users if u.id == info.seats[actor].user_id)
            p = await open_player(b, url(port, init_data(server, user), info.game_id))
            await p.page.wait_for_selector("body[data-state=ready]", timeout=10000)
            before = await p.version()
        assert await until(p, "document.body.dataset.state === 'reconnecting'", 5.0)
        async with running_bot(server, db, webapp_port=port, time_scale=1.0) as app:
            assert await until(p, "document.body.dataset.state === 'ready'", 15.0)
            assert await p.version() == before
            card = (await p.page.query_selector_all("#hand .card.legal"))[0]
            await card.click(position={"x": 6, "y": 30})
            assert await until(p, f"Number(document.body.dataset.version) > {before}", 5.0)
            after = await durak_of(app).service.game(info.game_id)
            assert after.version == before + 1
            await durak_of(app).outbox.idle(10)
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_a_refusal_on_the_page_in_the_players_language(make_fake_telegram, tmp_path, errors):
    """A tap on a card while the game waits on another: the panel's refusal, in Russian
    for a player whose Telegram speaks Russian; the page's labels are Russian too."""
    from bot.ui import render
    from bot.ui.i18n import language

    async with a_game(make_fake_telegram, tmp_path, players=2, time_scale=1.0) as g:
        service = durak_of(g.app).service
        info = await service.game(g.game_id)
        idle = 1 - info.game.actors()[0]
        user = next(u for u in g.users if u.id == info.seats[idle].user_id)
        user.language_code = "ru"
        async with browser() as b:
            p = await open_player(b, url(g.port, init_data(g.server, user), g.game_id))
            await p.page.wait_for_selector("body[data-state=ready]", timeout=10000)
            card = (await p.page.query_selector_all("#hand .card"))[0]
            await card.click(position={"x": 6, "y": 30})
            await p.page.wait_for_selector("#toast:not([hidden])", timeout=3000)
            shown = await p.page.inner_text("#toast")
            with language("ru"):
                assert shown == render.refusal("not_your_turn")
            assert "Колода" in await p.page.inner_text("#deck")
            assert (await service.game(g.game_id)).version == info.version
    assert not errors.records


@pytest.mark.long
@async_test
async def test_a_page_in_the_background_catches_up_when_it_comes_back(
    make_fake_telegram, tmp_path, errors
):
    """Telegram puts the page in the background (Bot API 8.0's ``deactivated``) and what
    the bot sends it meanwhile is lost; the other player moves. Back in front
    (``activated``) the page asks for the whole state and shows the game as it is now."""
    async with a_game(make_fake_telegram, tmp_path, players=2, time_scale=1.0) as g:
        service = durak_of(g.app).service
        presenter = durak_of(g.app).presenter
        info = await service.game(g.game_id)
        actor = info.game.actors()[0]
        idle = next(u for u in g.users if u.id != info.seats[actor].user_id)
        asleep = asyncio.Event()
        lost: list[str] = []

        def socket(ws):
            bot = ws.connect_to_server()

            def down(message):
                if asleep.is_set():
                    lost.append(message)
                else:
                    ws.send(message)

            bot.on_message(down)
            ws.on_message(lambda message: bot.send(message))

        async with browser() as b:
            p = await open_player(
                b, url(g.port, init_data(g.server, idle), g.game_id), socket=socket
            )
            await p.page.wait_for_selector("body[data-state=ready]", timeout=10000)
            before = await p.version()
            await p.page.evaluate("window.__tg.fire('deactivated')")
            asleep.set()
            game = (await service.game(g.game_id)).game
            step = game.legal_actions(actor)[0]
            await service.apply(g.game_id, info.seats[actor].user_id, step)
            await presenter.changed(await service.game(g.game_id))
            await g.server.wait_for(lambda: bool(lost), 10, what="a state the page did not get")
            assert await p.version() == before
            asleep.clear()
            await p.page.evaluate("window.__tg.fire('activated')")
            now = (await service.game(g.game_id)).version
            assert await until(p, f"Number(document.body.dataset.version) === {now}", 5.0)
            assert any('"sync"' in m for m in p.sent), p.sent
            assert not [c for c in p.console if "error" in c.lower()], p.console
    assert not errors.records
