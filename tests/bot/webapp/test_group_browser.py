"""Issue 35 as people use it, in headless Chromium through the fake Bot API: friends join
from the group's link (one never started the bot), play a whole game beside a player on the
chat's panels and play again on the page, while a member watches and a stranger is
refused; a game everyone plays on the page (the group's table edits counted), then replayed
step by step to its end and compared with its record.

Screenshots: ``DURAK_SCREENSHOTS=docs/webapp python -m pytest
tests/bot/webapp/test_group_browser.py`` writes them there (the README's); without it, to
the test's own folder."""

from __future__ import annotations

import asyncio
import os
import random
from pathlib import Path
from typing import Any

import pytest

from durak.actions import action_from_step
from durak.records import game_from_record
from durak.service import RUNNING
from tests.fake_telegram.fixtures import async_test

from ..harness import Played, durak_of, secret_cards
from .browser import DARK, Player, browser, open_player, url
from .client import a_group, init_data
from .test_browser import tap_once, until


def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("DURAK_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def leaks(player: Player, service: Any, game_id: int, user_id: int) -> set[str]:
    """The cards of other hands, never seen face up, that the page shows or was sent. The
    page is read first, the game after it: a card secret in the later state was secret
    when the page had it (secrets only shrink), so what is found is a leak."""
    dom = await player.dom_cards()
    sent = player.frame_cards()
    info = await service.game(game_id)
    if info.status != RUNNING or info.game is None:
        return set()
    seat = info.seat_of(user_id)
    secret = secret_cards(info.game, Played())
    if seat is not None:
        secret -= {str(c) for c in info.game.hand(seat)}
    found = (dom | sent) & secret
    if not found:
        return set()
    frames = [f for f in player.frames if any(c in f for c in found)]
    holders = [s for s in range(info.game.n) if found & {str(c) for c in info.game.hand(s)}]
    return {f"seat {seat} saw {sorted(found)} of seats {holders}: {frames[:2]}"}


async def tap_along(
    player: Player, stop: asyncio.Event, rng: random.Random, taps: list[str]
) -> None:
    """A person on his page: whenever it is his turn, a lit card (or a button) is tapped,
    and the attack card it should cover where the page asks."""
    page = player.page
    while not stop.is_set():
        if await page.evaluate("document.body.dataset.state === 'over'"):
            return
        if not await page.evaluate("document.body.classList.contains('my-turn')"):
            await asyncio.sleep(0.03)
            continue
        if await tap_once(player, rng):
            taps.append(page.url)


async def lobby_shows(player: Player, what: str, timeout: float = 10.0) -> None:
    assert await until(player, what, timeout), await player.page.inner_text("#lobby")


@pytest.mark.long
@async_test
async def test_friends_join_from_the_groups_link_play_and_play_again_while_a_member_watches(
    make_fake_telegram, tmp_path, errors
):
    folder = shots(tmp_path)
    async with a_group(make_fake_telegram, tmp_path, time_scale=0.5) as g:
        service = durak_of(g.app).service
        _link, lobby_id = await g.lobby_link()
        start = str(lobby_id)
        async with browser() as b:
            ann, bob, cid = [
                await open_player(b, url(g.port, init_data(g.server, u, start), theme=theme), w, h)
                for u, theme, w, h in (
                    (g.ann, None, 360, 740),
                    (g.bob, DARK, 360, 740),
                    (g.cid, None, 390, 780),
                )
            ]
            for p in (ann, bob, cid):
                await p.page.wait_for_selector("body[data-view=lobby]", timeout=10000)
            # a stranger to the group: refused, shown nothing of it
            eve = await open_player(b, url(g.port, init_data(g.server, g.eve, start)))
            await eve.page.wait_for_selector("body[data-state=refused]", timeout=10000)
            assert "another group" in await eve.page.inner_text("#toast")
            assert "Ann" not in await eve.page.inner_text("body")
            # Bob and Cid (who never started the bot) join on the page, Fay in the chat
            for p in (bob, cid):
                await p.page.click("#lobby-buttons button[data-do=join]")
            table = g.table
            table.users = [g.fay]
            await table.join_all()
            await lobby_shows(ann, "document.querySelectorAll('#lobby-seats li').length === 4")
            await cid.page.screenshot(path=str(folder / "lobby-360-light.png"))
            await ann.page.screenshot(path=str(folder / "lobby-creator-360-light.png"))
            assert await cid.page.query_selector("#lobby-buttons button[data-do=start]") is None
            await ann.page.click("#lobby-buttons button[data-do=start]")
            for p in (ann, bob, cid):
                await p.page.wait_for_selector(
                    "body[data-view=table][data-state=ready]", timeout=10000
                )
            # a member who does not play watches; the players see that one watches
            dan = await open_player(b, url(g.port, init_data(g.server, g.dan, start)), 360, 740)
            await dan.page.wait_for_selector(
                "body[data-view=table][data-state=ready]", timeout=10000
            )
            assert await dan.page.query_selector_all("#hand .card") == []
            assert await until(ann, "document.body.dataset.watchers === '1'")
            assert await ann.page.inner_text("#watchers") == "👀 1"
            # Cid says a word: on his seat on every page, never in the group
            await cid.page.click("#talk-open")
            await cid.page.click("#talk button[data-phrase=good]")
            for p in (ann, dan):
                await p.page.wait_for_selector(".said:not([hidden])", timeout=5000)
                assert await p.page.inner_text(".said") == "Well played"
            await ann.page.screenshot(path=str(folder / "table-phrase-360-light.png"))
            stop = asyncio.Event()
            taps: list[str] = []
            tasks = [
                asyncio.create_task(tap_along(p, stop, random.Random(k), taps))
                for k, p in enumerate((ann, bob, cid))
            ]
            panel = table.play(g.fay, stop, max_presses=100_000, refused_pause=0.2)
            tasks.append(asyncio.create_task(panel))
            seen: set[str] = set()
            try:
                while table.ended() is None:
                    for p, u in ((ann, g.ann), (bob, g.bob), (cid, g.cid), (dan, g.dan)):
                        seen |= await leaks(p, service, lobby_id, u.id)
                    await asyncio.sleep(0.2)
                    assert len(taps) < 3000
            finally:
                stop.set()
                await asyncio.gather(*tasks)
            assert not seen, f"another hand on a page: {seen}"
            assert {t.split("#")[0] for t in taps}  # the pages played
            for p in (ann, bob, cid, dan):
                await p.page.wait_for_selector("body[data-state=over]", timeout=10000)
            await p.page.wait_for_selector("#after button[data-do=replay]", timeout=5000)
            assert await dan.page.query_selector("#after button[data-do=again]") is None
            await cid.page.screenshot(path=str(folder / "end-360-light.png"))
            texts = " ".join(m.plain_text or "" for m in table.bot_messages(g.group))
            assert "Cid" in texts and "Well played" not in texts
            assert "cannot get their cards" not in texts
            # Play again from Cid's page: every page follows to the lobby; each confirms
            await cid.page.click("#after button[data-do=again]")
            for p in (ann, bob, cid, dan):
                await p.page.wait_for_selector("body[data-view=lobby]", timeout=10000)
            for p in (ann, bob):
                await p.page.click("#lobby-buttons button[data-do=confirm]")
            again = int(await cid.page.evaluate("document.body.dataset.lobby"))
            assert again != lobby_id
            await table.confirm_again(g.fay, again)
            for p in (ann, bob, cid):
                await p.page.wait_for_selector(
                    "body[data-view=table][data-state=ready]", timeout=10000
                )
            assert int(await cid.page.evaluate("document.body.dataset.version")) >= 0
            for p in (ann, bob, cid, dan, eve):
                assert not [c for c in p.console if "error" in c.lower()], p.console
        await durak_of(g.app).outbox.idle(10)
        assert g.private(g.cid) == []  # the whole time: nothing private to him
        info = await service.game(again)
        assert info.status == RUNNING and info.seats[info.seat_of(g.cid.id)].app
    assert not errors.records, [r.getMessage() for r in errors.records]


@pytest.mark.long
@async_test
async def test_a_page_only_game_paces_the_groups_table_and_replays_to_its_end(
    make_fake_telegram, tmp_path, errors
):
    """Ann and Cid play with an AI seat, both on the page: the group's table is edited for
    the start, the players going out and the end only (the test's clock stands still).
    Then Dan opens its replay from /history and steps through it to the end: every step's
    hands and table on his page are the record's."""
    folder = shots(tmp_path)
    async with a_group(make_fake_telegram, tmp_path, time_scale=0.5) as g:
        service = durak_of(g.app).service
        _link, lobby_id = await g.lobby_link()
        start = str(lobby_id)
        async with browser() as b:
            ann = await open_player(b, url(g.port, init_data(g.server, g.ann, start)), 360, 740)
            cid = await open_player(b, url(g.port, init_data(g.server, g.cid, start)), 360, 740)
            for p in (ann, cid):
                await p.page.wait_for_selector("body[data-view=lobby]", timeout=10000)
            await cid.page.click("#lobby-buttons button[data-do=join]")
            await lobby_shows(ann, "document.querySelectorAll('#lobby-seats li').length === 2")
            await ann.page.click("#lobby-ai-buttons button[data-do=easy]")
            await lobby_shows(ann, "document.querySelectorAll('#lobby-seats li').length === 3")
            await ann.page.click("#lobby-buttons button[data-do=start]")
            for p in (ann, cid):
                await p.page.wait_for_selector(
                    "body[data-view=table][data-state=ready]", timeout=10000
                )
            link = durak_of(g.app).presenter.app_link(lobby_id)
            message = await g.said("live in the Mini App", "the table, live in the Mini App")
            assert any(e.get("url") == link for e in message.entities)
            stop = asyncio.Event()
            tasks = [
                asyncio.create_task(tap_along(p, stop, random.Random(k), []))
                for k, p in enumerate((ann, cid))
            ]
            try:
                await g.server.wait_for(lambda: g.table.ended() is not None, 240, what="the end")
            finally:
                stop.set()
                await asyncio.gather(*tasks)
        info = await service.game(lobby_id)
        out = sum(s.out for s in info.game.view(None).seats)
        edits = len(message.history) - 1
        assert edits <= out + 1, (edits, out)  # each going out (perhaps coalesced), the end
        record = await service.export_record(lobby_id)
        assert sum(1 for s in record["steps"] if "do" in s) > 3 * (edits + 1)
        # /history's link opens the replay; Dan steps through it to the end
        await g.dan.send(g.group, "/history")
        history = await g.said("Recent games", "/history")
        replay = next(
            e["url"] for e in history.entities if e.get("url", "").endswith(f"r{lobby_id}")
        )
        async with browser() as b:
            dan = await open_player(
                b, url(g.port, init_data(g.server, g.dan, replay.split("startapp=")[1])), 360, 740
            )
            await dan.page.wait_for_selector("body[data-view=replay]", timeout=10000)
            game = game_from_record(record)
            steps = [s for s in record["steps"] if "do" in s]
            for k in range(len(steps) + 1):
                if k:
                    step = steps[k - 1]
                    game.apply(game.seat_of(step["player"]), action_from_step(step))
                    await dan.page.click("#replay-controls button[data-do=forward]")
                assert await until(dan, f"document.body.dataset.step === '{k}'")
                for seat in range(game.n):
                    shown = await dan.page.evaluate(
                        "[...document.querySelectorAll("
                        f"'.replay-seat[data-seat=\"{seat}\"] .hand [data-card]')]"
                        ".map(e => e.dataset.card)"
                    )
                    assert shown == [str(c) for c in game.hand(seat)], (k, seat)
                on_table = await dan.page.evaluate(
                    "[...document.querySelectorAll('#replay-table [data-card]')]"
                    ".map(e => e.dataset.card)"
                )
                view = game.view(None)
                assert on_table == [str(c) for pair in view.table for c in pair if c is not None]
                if k == 8:
                    await dan.page.screenshot(path=str(folder / "replay-360-light.png"))
            assert game.result is not None
            assert (await dan.page.inner_text("#replay-status")).startswith("🏁")
            # back one step, and playing on at the fastest speed reaches the end again
            await dan.page.click("#replay-controls button[data-do=back]")
            assert await until(dan, f"document.body.dataset.step === '{len(steps) - 1}'")
            await dan.page.select_option("#replay-speed", "4")
            await dan.page.click("#replay-controls button[data-do=play]")
            assert await until(dan, f"document.body.dataset.step === '{len(steps)}'", 10)
            assert not [c for c in dan.console if "error" in c.lower()], dan.console
    assert not errors.records, [r.getMessage() for r in errors.records]
