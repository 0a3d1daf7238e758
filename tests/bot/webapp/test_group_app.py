"""Issue 35 on the wire: the group's link to the Mini App, the lobby on the page, a friend
who never started the bot playing there, spectators, phrases, and each refusal (a
non-member, a full or started lobby, a spectator's move, a flood of phrases)."""

from __future__ import annotations

import asyncio
import random

import pytest

from bot.ui import callbacks as cb
from tests.fake_telegram.fixtures import async_test

from ..harness import durak_of
from .client import a_group, init_data, offered, page, play_on_page


@async_test
async def test_the_lobby_links_to_the_page_where_a_friend_who_never_started_the_bot_joins(
    make_fake_telegram, tmp_path, errors
):
    async with a_group(make_fake_telegram, tmp_path) as g:
        link, lobby_id = await g.lobby_link()
        assert link == f"https://t.me/{g.server.bot.username}?startapp={lobby_id}"
        assert cb.parse_app(link.split("startapp=")[1]) == (cb.AppLink.GAME, lobby_id)
        async with page(g.port, {"init": init_data(g.server, g.cid, str(lobby_id))}) as p:
            shown = (await p.until("lobby"))["lobby"]
            assert shown["game"] == lobby_id and shown["open"] and shown["you"] is None
            assert [s["name"] for s in shown["seats"]] == ["Ann"] and shown["seats"][0]["creator"]
            assert shown["may"] == ["join"]  # not the creator: no AI seats, cap or Start
            assert shown["name"] and shown["options"] and "Ann" in shown["status"]
            await p.send({"lobby": "join"})
            shown = (await p.until("lobby"))["lobby"]
            assert shown["you"] == 1 and shown["may"] == ["leave"]
            lobby = await g.server.wait_for(
                lambda: (m := g.table.lobby()) and "Cid" in (m.plain_text or "") and m,
                10,
                what="Cid in the group's lobby",
            )
            assert "Cid" in lobby.plain_text
            # the creator's own buttons are refused to him on the server too
            await p.send({"lobby": "start"})
            assert (await p.until("error"))["error"] == "not_allowed"
            await p.send({"lobby": "ai", "level": "easy"})
            assert (await p.until("error"))["error"] == "not_allowed"
        service = durak_of(g.app).service
        info = await service.game(lobby_id)
        assert [(s.name, s.app) for s in info.seats] == [("Ann", False), ("Cid", True)]
        assert g.private(g.cid) == []  # nothing was sent to him, not even "You joined"
        texts = " ".join(m.plain_text or "" for m in g.table.bot_messages(g.group))
        assert "cannot get their cards" not in texts and "private" not in texts
    assert not errors.records


@pytest.mark.long
@async_test
async def test_three_friends_and_a_panel_player_play_a_whole_game_and_play_again(
    make_fake_telegram, tmp_path, errors
):
    """Ann (the creator) and Cid (who never started the bot) on the page, Bob on the chat's
    panels: one table. Ann seats an AI and starts it from the page; the group's table names
    Cid like anyone; nothing is sent to Cid; the end and Play again are on the page."""
    async with a_group(make_fake_telegram, tmp_path) as g:
        _link, lobby_id = await g.lobby_link()
        start = str(lobby_id)
        table = g.table
        table.users = [g.bob]
        async with (
            page(g.port, {"init": init_data(g.server, g.ann, start)}) as ann,
            page(g.port, {"init": init_data(g.server, g.cid, start)}) as cid,
        ):
            await cid.until("lobby")
            await cid.send({"lobby": "join"})
            await table.join_all()  # Bob, with the group's button
            mine = (await ann.until("lobby"))["lobby"]
            while len(mine["seats"]) < 3:
                mine = (await ann.until("lobby"))["lobby"]
            assert mine["you"] == 0 and {"start", "ai"} <= set(mine["may"])
            await ann.send({"lobby": "ai", "level": "normal"})
            while len(mine["seats"]) < 4:
                mine = (await ann.until("lobby"))["lobby"]
            assert mine["seats"][3]["ai"]
            await ann.send({"lobby": "start"})
            first = await cid.state()
            info = await durak_of(g.app).service.game(lobby_id)
            seat = info.seat_of(g.cid.id)
            assert first["you"] == seat and first["game"] == lobby_id
            assert first["hand"] == [str(c) for c in info.game.hand(seat)]
            stop = asyncio.Event()
            players = [
                asyncio.create_task(play_on_page(ann, random.Random(1), stop)),
                asyncio.create_task(play_on_page(cid, random.Random(2), stop)),
            ]
            # (his loop counts the rounds he waits on the pages too: the timeout bounds it)
            ended = await table.play_to_the_end(timeout=120, max_presses=100_000)
            stop.set()
            last = await asyncio.gather(*players)
            assert ended is not None
            texts = [m.plain_text or "" for m in table.bot_messages(g.group)]
            tables = [t for t in texts if "Cid" in t and "Bob" in t and "Ann" in t]
            assert tables, "the group's table names Cid like anyone"
            assert not any("cannot get their cards" in t for t in texts)
            assert g.private(g.cid) == []
            # the end on the page; Play again from it: every page follows to the new lobby
            over = last[1]
            while not over.get("over"):  # (his page may still have states of before the end)
                over = await cid.state(timeout=30)
            await cid.send({"again": True})
            again = (await cid.until("lobby"))["lobby"]
            assert again["again"] and again["you"] is not None and again["game"] != lobby_id
            seen = (await ann.until("lobby"))["lobby"]
            assert seen["game"] == again["game"] and "confirm" in seen["may"]
            await ann.send({"lobby": "confirm"})
            await table.confirm_again(g.bob, again["game"])  # Bob: "I'm in" in the group
            dealt = await cid.state()
            assert dealt["game"] == again["game"] and not dealt["over"]
        assert g.private(g.cid) == []
    assert not errors.records


async def _a_game_on_pages(g, *users, ai: int = 0, rules: str = ""):
    """A lobby by Ann (``rules``: ``/newgame`` words) that ``users`` join from the page and
    Ann starts there, with ``ai`` AI seats; their open pages (Ann's first) and its id."""
    from contextlib import AsyncExitStack

    if rules:
        await g.ann.send(g.group, f"/newgame {rules}")
        lobby = await g.server.wait_for(lambda: g.table.lobby(), 10, what="a lobby")
        link = next(b.url for b in lobby.buttons if b.url and "startapp=" in b.url)
        lobby_id = int(link.split("startapp=")[1])
    else:
        _link, lobby_id = await g.lobby_link()
    stack = AsyncExitStack()
    pages = []
    for user in (g.ann, *users):
        p = await stack.enter_async_context(
            page(g.port, {"init": init_data(g.server, user, str(lobby_id))})
        )
        await p.until("lobby")
        if user is not g.ann:
            await p.send({"lobby": "join"})
            while (await p.until("lobby"))["lobby"]["you"] is None:
                pass
        pages.append(p)
    for _ in range(ai):
        await pages[0].send({"lobby": "ai", "level": "easy"})
    seated = 1 + len(users) + ai
    while len((await pages[0].until("lobby"))["lobby"]["seats"]) < seated:
        pass
    await pages[0].send({"lobby": "start"})
    for p in pages:
        await p.state()
    return stack, pages, lobby_id


@async_test
async def test_each_refusal_a_stranger_a_full_lobby_a_started_one_and_a_spectators_move(
    make_fake_telegram, tmp_path, errors
):
    async with a_group(make_fake_telegram, tmp_path) as g:
        _link, lobby_id = await g.lobby_link()
        start = str(lobby_id)
        async with page(g.port, {"init": init_data(g.server, g.eve, start)}) as p:
            assert (await p.next())["error"] == "not_member"  # a stranger sees nothing
            assert "closed" in await p.next()
        for hostile in ("x1", "-5", "0", "r", "1" * 16, f"r{lobby_id}x", "j" + start):
            async with page(g.port, {"init": init_data(g.server, g.dan, hostile)}) as p:
                assert (await p.next())["error"] == "no_game", hostile
        async with (
            page(g.port, {"init": init_data(g.server, g.ann, start)}) as ann,
            page(g.port, {"init": init_data(g.server, g.dan, start)}) as dan,
        ):
            await ann.until("lobby")
            await dan.until("lobby")
            for _ in range(5):  # 36 cards seat 6 at most: full
                await ann.send({"lobby": "ai", "level": "easy"})
            while len((shown := (await dan.until("lobby"))["lobby"])["seats"]) < 6:
                pass
            assert shown["may"] == []  # no seat left for him
            await dan.send({"lobby": "join"})
            assert (await dan.until("error"))["error"] == "lobby_full"
            await ann.send({"lobby": "start"})
            watching = await dan.state()  # the page that showed the lobby shows the game
            assert watching["you"] is None and watching["hand"] == []
            await dan.send({"lobby": "join"})  # a lobby that started
            assert (await dan.until("error"))["error"] == "no_lobby"
            await dan.send({"move": {"do": "take"}, "version": watching["version"]})
            assert (await dan.until("error"))["error"] == "not_in_game"
            await dan.send({"say": "hurry"})
            assert (await dan.until("error"))["error"] == "not_in_game"
            await dan.send({"again": True})
            assert (await dan.until("error"))["error"] == "not_in_game"
            await dan.send({"deal": 0})  # no replay of a running game: its hands are secret
            assert (await dan.until("error"))["error"] == "no_replay"
            for bad in (
                '{"lobby": "fly"}',
                '{"lobby": "ai", "level": "god"}',
                '{"say": "boo"}',
                '{"lobby": "cap", "players": 99}',
                '{"deal": -1}',
                '{"again": 1}',
            ):
                await dan.send(bad)
                assert (await dan.until("error"))["error"] == "bad_message", bad
    assert not errors.records


@async_test
async def test_spectators_see_no_hand_and_the_players_see_how_many_watch(
    make_fake_telegram, tmp_path, errors
):
    async with a_group(make_fake_telegram, tmp_path) as g:
        stack, (ann, cid), game_id = await _a_game_on_pages(g, g.cid)
        async with stack:
            info = await durak_of(g.app).service.game(game_id)
            hands = {str(c) for s in range(info.game.n) for c in info.game.hand(s)}
            async with page(g.port, {"init": init_data(g.server, g.dan, str(game_id))}) as dan:
                state = await dan.state()
                assert state["you"] is None and state["hand"] == [] and offered(state) == []
                assert (await ann.until("watchers")) == {"watchers": 1}
                assert (await cid.until("watchers")) == {"watchers": 1}
                words = set("".join(dan.frames).replace('"', " ").replace(",", " ").split())
                assert not hands & words
            assert (await ann.until("watchers")) == {"watchers": 0}
    assert not errors.records


@async_test
async def test_a_phrase_shows_on_every_page_at_most_one_each_3_seconds_never_in_the_group(
    make_fake_telegram, tmp_path, errors
):
    async with a_group(make_fake_telegram, tmp_path) as g:
        g.cid.language_code = "ru"
        stack, (ann, cid), game_id = await _a_game_on_pages(g, g.cid)
        async with stack, page(g.port, {"init": init_data(g.server, g.dan, str(game_id))}) as dan:
            await dan.state()
            seat = (await durak_of(g.app).service.game(game_id)).seat_of(g.ann.id)
            await ann.send({"say": "take"})
            assert (await cid.until("said"))["said"] == {
                "seat": seat,
                "phrase": "take",
                "text": "Беру",
            }
            assert (await dan.until("said"))["said"]["text"] == "I take"
            assert (await ann.until("said"))["said"]["phrase"] == "take"
            await g.clock.forward(2.9)
            await ann.send({"say": "hurry"})  # a flood: the second within 3 s
            assert (await ann.until("error"))["error"] == "too_fast"
            await g.clock.forward(0.1)
            await ann.send({"say": "thumbs"})
            assert (await cid.until("said"))["said"]["text"] == "👍"
            texts = " ".join(m.plain_text or "" for m in g.table.bot_messages(g.group))
            assert "Беру" not in texts and "I take" not in texts and "👍" not in texts
    assert not errors.records


def _frames_follow_the_record(frames: list, record: dict) -> None:
    """Each frame is the record's table after its step, every hand included."""
    from durak.actions import action_from_step
    from durak.records import game_from_record

    game = game_from_record(record)
    steps = [s for s in record["steps"] if "do" in s and "error" not in s]
    assert len(frames) == len(steps) + 1
    for k, frame in enumerate(frames):
        if k:
            step = steps[k - 1]
            game.apply(game.seat_of(step["player"]), action_from_step(step))
            assert frame["seat"] == game.seat_of(step["player"])
        assert frame["hands"] == [[str(c) for c in game.hand(s)] for s in range(game.n)]
        view = game.view(None)
        assert frame["table"] == [[str(a), c and str(c)] for a, c in view.table]
        assert (frame["stock"], frame["discard"]) == (view.stock, view.discard)
    assert game.result is not None


@pytest.mark.long
@async_test
async def test_a_finished_game_from_history_replays_step_by_step_as_its_record(
    make_fake_telegram, tmp_path, errors
):
    async with a_group(make_fake_telegram, tmp_path) as g:
        service = durak_of(g.app).service
        stack, (ann,), game_id = await _a_game_on_pages(g, ai=1)
        async with stack:
            async with page(g.port, {"init": init_data(g.server, g.dan, f"r{game_id}")}) as p:
                assert (await p.until("error"))["error"] == "no_replay"  # not while it runs
            last = await play_on_page(ann, random.Random(3), asyncio.Event())
            assert last["over"]
        await g.dan.send(g.group, "/history")
        history = await g.said("Recent games", "/history")
        links = [e["url"] for e in history.entities if e.get("type") == "text_link"]
        link = next(u for u in links if u.endswith(f"?startapp=r{game_id}"))
        start = link.split("startapp=")[1]
        async with page(g.port, {"init": init_data(g.server, g.dan, start)}) as p:
            replay = (await p.until("replay"))["replay"]
        assert replay["game"] == game_id and replay["deals"] == replay["deal"] == 1
        assert replay["players"][0] == "Ann" and replay["ai"] == [False, True]
        record = await service.export_record(game_id)  # what the record button sends
        _frames_follow_the_record(replay["frames"], record)
        assert replay["frames"][-1]["status"].startswith("🏁")
        # a member of another group sees nothing of it
        g.server.add_group("Elsewhere", [g.eve, g.ann], admins=[g.eve])
        async with page(g.port, {"init": init_data(g.server, g.eve, start)}) as p:
            assert (await p.next())["error"] == "not_member"
    assert not errors.records


@async_test
async def test_a_sprint_match_replays_deal_by_deal(make_fake_telegram, tmp_path, errors):
    from durak import Rules
    from tests.service.helpers import play_out

    async with a_group(make_fake_telegram, tmp_path) as g:
        service = durak_of(g.app).service
        await service.create_lobby(g.group.id, g.ann.id, "Ann", rules=Rules(sprint=True))
        await service.join(g.group.id, g.bob.id, "Bob")
        info = await service.start(g.group.id, g.ann.id, seed=11)
        rng = random.Random(11)
        while True:
            done = await play_out(service, info, rng)
            if done.next_game_id is None:
                break
            info = await service.game(done.next_game_id)
        document = await service.export_match(info.game_id)
        deals = len(document["deals"])
        assert deals >= 2
        start = cb.app_payload(cb.AppLink.REPLAY, info.game_id)
        async with page(g.port, {"init": init_data(g.server, g.dan, start)}) as p:
            replay = (await p.until("replay"))["replay"]
            assert (replay["deal"], replay["deals"]) == (deals, deals)
            _frames_follow_the_record(replay["frames"], document["deals"][-1])
            await p.send({"deal": 1})
            first = (await p.until("replay"))["replay"]
            assert first["deal"] == 1
            _frames_follow_the_record(first["frames"], document["deals"][0])
            await p.send({"deal": deals + 1})
            assert (await p.until("error"))["error"] == "no_replay"
            await p.send({"say": "good"})  # no table here: a replay has no seat to speak at
            assert (await p.until("error"))["error"] == "not_in_game"
    assert not errors.records


async def _until(predicate, timeout: float = 60.0) -> None:
    """Wait for something of the bot's own memory (no message announces it)."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


def _bout(presenter, game_id: int) -> int:
    return presenter._bouts.get(game_id, ((), False, 0))[2]


def _bouts(record: dict) -> int:
    """How many bouts the record's game had: each time its table was cleared."""
    from durak.actions import action_from_step
    from durak.records import game_from_record

    game = game_from_record(record)
    bouts, had = 0, False
    for step in record["steps"]:
        if "do" in step:
            game.apply(game.seat_of(step["player"]), action_from_step(step))
            on = bool(game.view(None).table)
            bouts += had and not on
            had = on
    return bouts


@pytest.mark.long
@async_test
async def test_a_page_only_games_table_goes_at_a_spectators_pace(
    make_fake_telegram, tmp_path, errors
):
    """Every person at the table has the page open: the group's table is edited for the
    start, each player going out and the end, and for a bout's end only when 15 s (on the
    test's clock) passed since its last edit; it says the game is live in the Mini App."""
    async with a_group(make_fake_telegram, tmp_path) as g:
        service, presenter = durak_of(g.app).service, durak_of(g.app).presenter
        stack, (ann, cid), game_id = await _a_game_on_pages(g, g.cid, ai=1)
        link = presenter.app_link(game_id)

        def table_message():
            return next(
                (
                    m
                    for m in g.table.bot_messages(g.group)
                    if any(b.url == link for b in m.buttons)
                    and "Cid" in (m.plain_text or "")
                    and "My cards" in " ".join(b.text for b in m.buttons)
                ),
                None,
            )

        message = await g.server.wait_for(table_message, 10, what="the table")
        async with stack:
            stop = asyncio.Event()
            players = [
                asyncio.create_task(play_on_page(ann, random.Random(7), stop)),
                asyncio.create_task(play_on_page(cid, random.Random(8), stop)),
            ]
            # once a bout ended unshown, 15 s on the clock show it
            await _until(lambda: presenter.pace.behind(game_id) and _bout(presenter, game_id) > 1)
            before = len(message.history)
            await g.clock.forward(15.0)
            await _until(lambda: len(message.history) > before)
            await asyncio.gather(*players)
        info = await service.game(game_id)
        assert info.status == "finished"
        out = sum(s.out for s in info.game.view(None).seats)
        edits = len(message.history) - 1
        bouts = _bouts(await service.export_record(game_id))
        # the start (sent), each going out, the end, and the one bout the clock allowed
        assert edits <= out + 2, (edits, out, bouts)
        assert bouts > edits + 2, (edits, out, bouts)
        versions = [v.plain_text or "" for v in message.history]
        assert any("live in the Mini App" in v for v in versions[:-1])
        assert any(e.get("url") == link for v in message.history for e in v.entities)
    assert not errors.records


@async_test
async def test_a_page_only_player_who_closes_the_page_is_waited_on_in_the_table_and_timed(
    make_fake_telegram, tmp_path, errors
):
    """Cid plays only in the page and closes it when the game waits on him: the group's
    table (no longer at a spectator's pace) says it waits on him, and his turn clock plays
    for him as for anyone; still nothing is sent to him."""
    async with a_group(make_fake_telegram, tmp_path) as g:
        service = durak_of(g.app).service
        stack, (ann, cid), game_id = await _a_game_on_pages(g, g.cid, ai=1)
        async with stack:
            stop = asyncio.Event()
            annie = asyncio.create_task(play_on_page(ann, random.Random(9), stop))
            while True:  # Cid plays until it is his turn at a table that waits on him only
                state = await cid.state(timeout=30)
                waits = [s for s in state["seats"] if s["waiting"]]
                if offered(state) and len(waits) == 1:
                    break
                if offered(state):
                    await cid.send({"move": offered(state)[0], "version": state["version"]})
            stop.set()  # (Ann stops: only his clock may play now)
            await annie
            await cid.ws.close()  # his page closes while the game waits on him
            seat = (await service.game(game_id)).seat_of(g.cid.id)
            await g.server.wait_for(
                lambda: any(
                    "Waiting for" in (m.plain_text or "")
                    and "Cid" in (m.plain_text or "").split("Waiting for", 1)[1]
                    for m in g.table.bot_messages(g.group)
                ),
                10,
                what="the table waiting on Cid",
            )
            async with asyncio.timeout(30):  # his turn clock (3 s in these tests) plays
                while not (await service.game(game_id)).seats[seat].timeouts:
                    await asyncio.sleep(0.05)
            await g.server.wait_for(
                lambda: any(
                    "Cid ran out of time" in (m.plain_text or "")
                    for m in g.table.bot_messages(g.group)
                ),
                10,
                what="the timeout on the table",
            )
        assert g.private(g.cid) == []
    assert not errors.records


@async_test
async def test_a_creator_who_never_started_the_bot_plays_in_the_page_once_he_opens_it(
    make_fake_telegram, tmp_path, errors
):
    async with a_group(make_fake_telegram, tmp_path) as g:
        service = durak_of(g.app).service
        await g.cid.send(g.group, "/newgame")
        lobby = await g.server.wait_for(lambda: g.table.lobby(), 10, what="a lobby")
        link = next(b.url for b in lobby.buttons if b.url and "startapp=" in b.url)
        start = link.split("startapp=")[1]
        async with page(g.port, {"init": init_data(g.server, g.cid, start)}) as p:
            shown = (await p.until("lobby"))["lobby"]
            assert shown["you"] == 0 and "start" in shown["may"]
            assert [s.app for s in (await service.game(int(start))).seats] == [True]
            table = g.table
            table.users = [g.ann]
            await table.join_all()
            while len((await p.until("lobby"))["lobby"]["seats"]) < 2:
                pass
            await p.send({"lobby": "start"})
            assert (await p.state())["you"] == 0
            await g.server.wait_for(lambda: table.panel(g.ann), 10, what="Ann's panel")
        web = durak_of(g.app).webapp
        await _until(lambda: not web.registry.count() and not web.bridge._tasks)  # closed...
        await durak_of(g.app).outbox.idle(10)  # ...and what that queued is sent: nothing
        assert g.private(g.cid) == []
        texts = " ".join(m.plain_text or "" for m in g.table.bot_messages(g.group))
        assert "cannot get their cards" not in texts
    assert not errors.records


@async_test
async def test_a_page_only_players_leave_acts_at_once_and_his_my_cards_link_sends_him_back(
    make_fake_telegram, tmp_path, errors
):
    """/leave of a player the bot cannot ask in private hands his seat to the AI at once,
    as /leave confirmed does; should he start the bot from the table's "My cards", he is
    sent back to the Mini App, where he plays. Own trumps' suits are chosen on the page."""
    async with a_group(make_fake_telegram, tmp_path) as g:
        service = durak_of(g.app).service
        stack, (_ann, cid), game_id = await _a_game_on_pages(g, g.cid)
        async with stack:
            await g.cid.start_bot(cb.start_payload(cb.Link.CARDS, game_id))
            link = durak_of(g.app).presenter.app_link(game_id)
            answer = await g.server.wait_for(
                lambda: next(
                    (
                        m
                        for m in g.server.messages(g.server.private_chat(g.cid))
                        if m.sender.is_bot and "Mini App" in (m.plain_text or "")
                    ),
                    None,
                ),
                10,
                what="the link back to the Mini App",
            )
            assert any(e.get("url") == link for e in answer.entities)
            await g.cid.send(g.group, "/leave")
            seat = (await service.game(game_id)).seat_of(g.cid.id)
            async with asyncio.timeout(10):
                while not (await service.game(game_id)).seats[seat].left:
                    await asyncio.sleep(0.05)
            state = await cid.state()
            while not state["seats"][seat]["away"]:
                state = await cid.state()
    assert not errors.records


@async_test
async def test_own_trumps_suits_are_chosen_on_the_page(make_fake_telegram, tmp_path, errors):
    async with a_group(make_fake_telegram, tmp_path) as g:
        await g.ann.send(g.group, "/newgame own trumps")
        lobby = await g.server.wait_for(lambda: g.table.lobby(), 10, what="a lobby")
        link = next(b.url for b in lobby.buttons if b.url and "startapp=" in b.url)
        start = link.split("startapp=")[1]
        async with (
            page(g.port, {"init": init_data(g.server, g.ann, start)}) as ann,
            page(g.port, {"init": init_data(g.server, g.cid, start)}) as cid,
        ):
            await ann.until("lobby")
            await cid.until("lobby")
            await cid.send({"lobby": "join"})
            await ann.send({"lobby": "ai", "level": "easy"})  # own trumps: 3 to 4 players
            while len((await ann.until("lobby"))["lobby"]["seats"]) < 3:
                pass
            await ann.send({"lobby": "start"})
            pages = {0: ann, 1: cid}
            chosen, acted = 0, None
            while True:  # each chooses on his turn (the AI seat by itself), then the deal
                got = await ann.next(timeout=10)
                if "state" in got:
                    break
                suits = got.get("lobby", {}).get("suits")
                if not suits or suits["turn"] not in pages or suits["turn"] == acted:
                    continue
                turn = suits["turn"]
                other = pages[1 - turn]
                await other.send({"lobby": "suit", "suit": suits["free"][0]})
                assert (await other.until("error"))["error"] == "not_your_choice"
                await pages[turn].send({"lobby": "suit", "suit": suits["free"][0]})
                acted, chosen = turn, chosen + 1
            assert chosen == 2
            assert (await cid.state())["family"] == "pile"
        assert g.private(g.cid) == []
    assert not errors.records


@async_test
async def test_the_pages_leave_hands_the_seat_to_the_ai_and_he_watches_on(
    make_fake_telegram, tmp_path, errors
):
    """The page's "Leave the game" (after its own question): as /leave confirmed, the AI
    plays his seat to the end; his page goes on as a spectator's (issue 36), and he may
    not say a phrase at the table any more."""
    async with a_group(make_fake_telegram, tmp_path) as g:
        service = durak_of(g.app).service
        stack, (_ann, cid), game_id = await _a_game_on_pages(g, g.cid, ai=1)
        async with stack:
            seat = (await service.game(game_id)).seat_of(g.cid.id)
            await cid.send({"leave": True})
            async with asyncio.timeout(10):
                while not (await service.game(game_id)).seats[seat].left:
                    await asyncio.sleep(0.05)
            await cid.send({"leave": True})  # twice: refused, nothing changes
            assert (await cid.until("error"))["error"] in ("left_game", "not_in_game")
        async with page(g.port, {"init": init_data(g.server, g.cid, str(game_id))}) as p:
            state = await p.state()
            assert state["you"] is None and state["hand"] == []
            await p.send({"say": "good"})
            assert (await p.until("error"))["error"] == "not_in_game"
        assert g.private(g.cid) == []
    assert not errors.records
