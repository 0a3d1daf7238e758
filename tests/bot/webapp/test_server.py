"""The Mini App's server against hostile pages: each refusal is clear and changes nothing."""

from __future__ import annotations

import asyncio
import json

import aiohttp

from bot.webapp import sign_init_data
from tests.fake_telegram.fixtures import async_test

from ..harness import WEBAPP_PATH, durak_of
from .client import a_game, init_data, offered, page

OTHER_TOKEN = "999999:ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ"


async def version(g) -> int:
    return (await durak_of(g.app).service.game(g.game_id)).version


@async_test
async def test_a_seated_player_sees_his_own_hand_only(make_fake_telegram, tmp_path, errors):
    async with a_game(make_fake_telegram, tmp_path, players=2) as g:
        service = durak_of(g.app).service
        game = (await service.game(g.game_id)).game
        async with page(g.port, {"init": init_data(g.server, g.users[0], str(g.game_id))}) as p:
            texts = await p.until("texts")
            assert texts["texts"]["back"] and texts["texts"]["lang"] == "en"
            assert texts["texts"]["cards"]["ranks"]["10"] == "ten"
            state = await p.state()
            assert state["you"] == 0 and state["game"] == g.game_id
            assert state["hand"] == [str(c) for c in game.hand(0)]
            other = {str(c) for c in game.hand(1)}
            assert not other & set("".join(p.frames).replace('"', " ").replace(",", " ").split())
            assert state["seats"][1]["cards"] == len(game.hand(1))
    assert not errors.records


@async_test
async def test_a_spectator_gets_the_public_view_and_a_stranger_nothing(
    make_fake_telegram, tmp_path, errors
):
    async with a_game(make_fake_telegram, tmp_path, players=2) as g:
        start = str(g.game_id)
        async with page(g.port, {"init": init_data(g.server, g.outsider, start)}) as p:
            state = await p.state()
            assert state["you"] is None and state["hand"] == [] and offered(state) == []
            await p.send({"move": {"do": "take"}, "version": state["version"]})
            refusal = await p.until("error")
            assert refusal["error"] == "not_in_game"
        stranger = g.server.add_user("Stranger", started=True)
        async with page(g.port, {"init": init_data(g.server, stranger, start)}) as p:
            assert (await p.next())["error"] == "not_member"
            assert "closed" in await p.next()
        async with page(g.port, {"init": init_data(g.server, stranger)}) as p:
            assert (await p.next())["error"] == "no_game"
    assert not errors.records


@async_test
async def test_forged_foreign_tampered_and_expired_init_data(make_fake_telegram, tmp_path, errors):
    async with a_game(make_fake_telegram, tmp_path, players=2) as g:
        user = g.users[0]
        me = {"id": user.id, "first_name": user.first_name}
        good = init_data(g.server, user)
        tampered = good.replace(f"%22id%22%3A{user.id}", f"%22id%22%3A{g.users[1].id}")
        assert tampered != good
        attempts = [
            {"init": "user=%7B%22id%22%3A1%7D&auth_date=1&hash=" + "0" * 64},  # forged
            {"init": sign_init_data(OTHER_TOKEN, me)},  # another bot's
            {"init": tampered},  # the user changed
            {"init": sign_init_data(g.server.token, me, auth_date=1_000_000)},  # expired
            {"move": {"do": "take"}, "version": 0},  # no init first
            "not json",
        ]
        before = await version(g)
        for first in attempts:
            async with page(g.port, first) as p:
                assert await p.next() == {"error": "unauthorized", "text": await p_text()}
                closed = await p.next()
                assert closed["code"] == 4401, closed
        assert await version(g) == before
    assert not errors.records


async def p_text() -> str:
    from bot.webapp import protocol

    return protocol.error("unauthorized", "en")["text"]


@async_test
async def test_malformed_oversized_and_another_seats_move(make_fake_telegram, tmp_path, errors):
    async with a_game(make_fake_telegram, tmp_path, players=2) as g:
        service = durak_of(g.app).service
        info = await service.game(g.game_id)
        game = info.game
        actor = game.actors()[0]
        idle = 1 - actor
        other_move = game.legal_actions(actor)[0].step()
        async with page(g.port, {"init": init_data(g.server, g.users[idle])}) as p:
            state = await p.state()
            before = state["version"]
            for bad in [
                "[1]",
                "{}",
                '{"move": 1, "version": 0}',
                '{"slot": "x", "version": 0}',
                '{"move": {"do": "take", "evil": 1}, "version": 0}',
                '{"move": {"do": "attack", "cards": ["ZZ"]}, "version": 0}',
                '{"sync": "5"}',
                '{"sync": 5, "version": 5}',
                '{"sync": 10000000000}',
                '{"sync": [[[[[]]]]]}',
            ]:
                await p.send(bad)
                assert (await p.until("error"))["error"] == "bad_message", bad
            await p.send(json.dumps({"move": {"do": "take"}, "version": before, "pad": "x" * 5000}))
            assert (await p.until("error"))["error"] == "too_large"
            await p.send({"sync": 0})  # a page back from the background: the state now
            assert (await p.state())["version"] == before
            # the other seat's legal move, sent from this seat: the game refuses it
            await p.send({"move": other_move, "version": before})
            refusal = await p.until("error")
            assert refusal["error"] in ("not_your_turn", "not_in_hand", "cannot_play"), refusal
            assert refusal["text"]
            # a move on an old state: not applied, the state now is sent again
            await p.send({"move": {"do": "take"}, "version": before + 7})
            assert (await p.until("error"))["error"] == "stale_version"
            assert (await p.state())["version"] == before
        assert await version(g) == before
    assert not errors.records


@async_test
async def test_flood_and_too_many_pages(make_fake_telegram, tmp_path, errors):
    async with a_game(make_fake_telegram, tmp_path, players=2) as g:
        user = g.users[0]
        async with page(g.port, {"init": init_data(g.server, user)}) as p:
            await p.state()
            for _ in range(40):
                await p.send("{}")
            data = await p.until("error")
            while data.get("error") == "bad_message":
                data = await p.until("error")
            assert data["error"] == "flood"
            assert "closed" in await p.next()
        opened = []
        try:
            for _ in range(3):
                cm = page(g.port, {"init": init_data(g.server, user)})
                p = await cm.__aenter__()
                opened.append(cm)
                await p.state()
            async with page(g.port, {"init": init_data(g.server, user)}) as extra:
                assert (await extra.next())["error"] == "too_many_connections"
        finally:
            for cm in opened:
                await cm.__aexit__(None, None, None)
    assert not errors.records


@async_test
async def test_headers_and_cache(make_fake_telegram, tmp_path, errors):
    async with a_game(make_fake_telegram, tmp_path, players=2) as g:
        base = f"http://127.0.0.1:{g.port}{WEBAPP_PATH}"
        async with aiohttp.ClientSession() as s:
            async with s.get(base) as r:
                html = await r.text()
                csp = r.headers["Content-Security-Policy"]
                assert "script-src 'self' https://telegram.org" in csp
                assert "unsafe-inline" not in csp
                assert r.headers["X-Content-Type-Options"] == "nosniff"
                assert r.headers["Cache-Control"] == "no-cache"
            assert "<script>" not in html and "onclick" not in html  # no inline script
            app_js = html.split('src="')[2].split('"')[0]
            assert app_js.startswith(WEBAPP_PATH + "/static/app.js?v=")
            async with s.get(f"http://127.0.0.1:{g.port}{app_js}") as r:
                body = await r.text()
                assert "immutable" in r.headers["Cache-Control"]
                assert r.headers["Content-Type"].startswith("text/javascript")
                assert "./cards.js?v=" in body  # its imports carry their hashes too
            async with s.get(base + "/static/app.js?v=old") as r:
                assert r.headers["Cache-Control"] == "no-cache"
            async with s.get(base + "/static/..%2Fserver.py") as r:
                assert r.status == 404
    assert not errors.records


@async_test
async def test_no_init_data_in_the_log(make_fake_telegram, tmp_path, errors, caplog):
    import logging

    caplog.set_level(logging.DEBUG)
    async with a_game(make_fake_telegram, tmp_path, players=2) as g:
        data = init_data(g.server, g.users[0])
        async with page(g.port, {"init": data}) as p:
            await p.state()
        async with page(g.port, {"init": data + "x"}) as p:
            await p.next()
        await asyncio.sleep(0.1)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert data.split("hash=")[1] not in text and "query_id" not in text
    assert "refused a connection" in text


@async_test
async def test_panels_rest_while_the_pages_are_open(make_fake_telegram, tmp_path, errors):
    """Both players play on their pages: every move reaches both pages, their private
    panels are not edited; the one who closes his page gets his panel edited once."""
    import random

    async with a_game(make_fake_telegram, tmp_path, players=2, time_scale=1.0) as g:
        service = durak_of(g.app).service
        outbox = durak_of(g.app).outbox
        await outbox.idle(10)
        chats = [g.server.private_chat(u) for u in g.users]
        info = await service.game(g.game_id)
        seat_of = {u.id: info.seat_of(u.id) for u in g.users}
        rng = random.Random(3)
        async with (
            page(g.port, {"init": init_data(g.server, g.users[0])}) as a,
            page(g.port, {"init": init_data(g.server, g.users[1])}) as b,
        ):
            pages = {g.users[0].id: a, g.users[1].id: b}
            states = {uid: await p.state() for uid, p in pages.items()}
            before = [len(c.shown) for c in chats]
            for _ in range(12):
                mover = next(
                    (uid for uid, s in states.items() if offered(s) and not s["over"]), None
                )
                if mover is None:
                    break
                state = states[mover]
                step = rng.choice(offered(state))
                await pages[mover].send({"move": step, "version": state["version"]})
                for uid, p in pages.items():  # one new state on every page
                    states[uid] = await p.state()
                    assert states[uid]["version"] == state["version"] + 1
                    assert states[uid]["you"] == seat_of[uid]
            await outbox.idle(10)
            during = [len(c.shown) for c in chats]
            assert during == before, (before, during)
            await b.ws.close()
            await g.server.wait_for(lambda: len(chats[1].shown) > during[1], 10, what="a panel")
            await asyncio.sleep(0.5)
            await outbox.idle(10)
            assert len(chats[1].shown) == during[1] + 1
            assert len(chats[0].shown) == during[0]
    assert not errors.records


@async_test
async def test_the_panel_opens_the_page_and_the_table_links_to_the_main_app(
    make_fake_telegram, tmp_path, errors
):
    """The private panel's web_app button names the game; with the bot's main Mini App
    (or DURAK_WEBAPP_SHORT_NAME) the group's table links to t.me/<bot>?startapp=<game>."""
    from ..harness import WEBAPP_URL

    async with a_game(make_fake_telegram, tmp_path, players=2) as g:
        panel = g.table.panel(g.users[0])
        assert panel is not None
        opener = next(b for b in panel.buttons if "web_app" in b.raw)
        assert opener.raw["web_app"]["url"] == f"{WEBAPP_URL}?game={g.game_id}"
        assert "Open the table" in opener.text
        presenter = durak_of(g.app).presenter
        assert presenter.app_link(g.game_id) is None  # the fake bot has no main app
        presenter.webapp_link = f"https://t.me/{presenter.username}"
        await presenter.changed(await durak_of(g.app).service.game(g.game_id))
        link = f"https://t.me/{presenter.username}?startapp={g.game_id}"
        await g.server.wait_for(
            lambda: any(b.url == link for m in g.table.bot_messages(g.group) for b in m.buttons),
            10,
            what="the table's link to the Mini App",
        )
    assert not errors.records


@async_test
async def test_a_page_move_takes_the_panels_step(make_fake_telegram, tmp_path, errors):
    """A move on the page takes the panel's one step (bot/flows/moves.py): a seat the AI
    played while he was away is his again with his move, and a seat whose player left is
    refused with the panel's own words."""
    from bot.ui import render

    async with a_game(make_fake_telegram, tmp_path, players=2, time_scale=1.0) as g:
        service = durak_of(g.app).service
        info = await service.game(g.game_id)
        actor = info.game.actors()[0]
        user = next(u for u in g.users if u.id == info.seats[actor].user_id)
        await service.hand_to_ai(g.game_id, actor)
        assert (await service.game(g.game_id)).seats[actor].away
        async with page(g.port, {"init": init_data(g.server, user)}) as p:
            state = await p.state()
            await p.send({"move": offered(state)[0], "version": state["version"]})
            while (now := await p.state())["version"] == state["version"]:
                pass  # his return is shown first (the 🤖 mark dropped), then his move
            assert now["version"] == state["version"] + 1
            assert not (await service.game(g.game_id)).seats[actor].away
            await service.hand_over(g.game_id, user.id)  # (the flow would show it: not here)
            await p.send({"move": {"do": "take"}, "version": state["version"]})
            refusal = await p.until("error")
            assert refusal == {"error": "left_game", "text": render.refusal("left_game")}
            assert refusal["text"] == "You left this game: the AI plays your seat."
            await p.send({"move": {"do": "fly"}, "version": state["version"]})
            assert (await p.until("error"))["error"] in ("bad_message", "bad_action")
    assert not errors.records
