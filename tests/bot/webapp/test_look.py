"""The page as players see it: a 4-player table at 360 px and at desktop width, light
and dark (Telegram's themeParams). The screenshots in docs/webapp/ are made by this test
(``DURAK_SCREENSHOTS=docs/webapp``); without it they go to a temporary folder."""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from durak import Attack, Defend
from tests.fake_telegram.fixtures import async_test

from ..harness import durak_of
from .browser import DARK, LIGHT, browser, open_player, url
from .client import a_game, init_data


async def some_moves(g, count: int = 3) -> None:
    """A bout under way: an attack, a cover, a throw-in (where the cards allow)."""
    service = durak_of(g.app).service
    for _ in range(count):
        info = await service.game(g.game_id)
        game = info.game
        seat = game.actors()[0]
        legal = game.legal_actions(seat)
        action = next((a for a in legal if isinstance(a, Defend)), None) or next(
            (a for a in legal if isinstance(a, Attack) and len(a.cards) == 1), legal[0]
        )
        await service.apply(g.game_id, info.seats[seat].user_id, action)


@async_test
async def test_a_four_player_table_in_both_themes_and_widths(make_fake_telegram, tmp_path, errors):
    folder = Path(os.environ.get("DURAK_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    async with a_game(make_fake_telegram, tmp_path, players=4, time_scale=1.0) as g:
        await some_moves(g)
        async with browser() as b:
            for width, height, name in ((360, 760, "360"), (1280, 800, "desktop")):
                for theme, tname in ((LIGHT, "light"), (DARK, "dark")):
                    link = url(g.port, init_data(g.server, g.users[1]), g.game_id, theme)
                    p = await open_player(b, link, width, height)
                    await p.page.wait_for_selector("body[data-state=ready]", timeout=10000)
                    # the theme's colours are the page's
                    bg = await p.page.evaluate(
                        "getComputedStyle(document.documentElement).getPropertyValue('--bg')"
                    )
                    assert bg.strip().lower() == theme["bg_color"], bg
                    scheme = await p.page.evaluate("document.documentElement.dataset.scheme")
                    assert scheme == ("dark" if theme is DARK else "light")
                    # nothing wider than the screen; every card of the hand on it
                    assert await p.page.evaluate("document.documentElement.scrollWidth") <= width
                    boxes = await p.page.eval_on_selector_all(
                        "#hand .card",
                        "els => els.map(e => { const r = e.getBoundingClientRect();"
                        " return [r.left, r.right]; })",
                    )
                    assert boxes and all(left >= 0 and right <= width for left, right in boxes)
                    assert len(await p.page.query_selector_all("#seats .seat")) == 3
                    await p.page.screenshot(path=str(folder / f"table-{name}-{tname}.png"))
                    await p.page.context.close()
    assert not errors.records


async def _screencast(page: Any, folder: Path, name: str) -> Any:
    """Chromium's own screencast of the page (Playwright's recorder needs its own ffmpeg
    build): frames with their times, made into a .webm by Debian's ffmpeg at the end."""
    cdp = await page.context.new_cdp_session(page)
    frames: list[tuple[float, bytes]] = []
    acks: set[asyncio.Task[Any]] = set()

    def frame(params: dict[str, Any]) -> None:
        frames.append((params["metadata"]["timestamp"], base64.b64decode(params["data"])))
        ack = asyncio.ensure_future(
            cdp.send("Page.screencastFrameAck", {"sessionId": params["sessionId"]})
        )
        acks.add(ack)
        ack.add_done_callback(acks.discard)

    cdp.on("Page.screencastFrame", frame)
    await cdp.send("Page.startScreencast", {"format": "png", "everyNthFrame": 1})

    async def stop() -> None:
        await cdp.send("Page.stopScreencast")
        with tempfile.TemporaryDirectory() as temporary:
            encode(Path(temporary))

    def encode(work: Path) -> None:
        lines = []
        for k, (at, data) in enumerate(frames):
            (work / f"{k:05}.png").write_bytes(data)
            last = frames[k + 1][0] if k + 1 < len(frames) else at + 1.0
            lines += [f"file '{work / f'{k:05}.png'}'", f"duration {max(last - at, 0.001):.4f}"]
        (work / "list.txt").write_text("\n".join(lines) + "\n")
        subprocess.run(
            [
                "ffmpeg",
                "-y",
                "-loglevel",
                "error",
                "-f",
                "concat",
                "-safe",
                "0",
                "-i",
                str(work / "list.txt"),
                "-vf",
                "fps=30",
                "-c:v",
                "libvpx-vp9",
                "-b:v",
                "0",
                "-crf",
                "38",
                "-pix_fmt",
                "yuv420p",
                str(folder.resolve() / f"{name}.webm"),
            ],
            check=True,
        )

    return stop


@async_test
async def test_a_bout_as_it_moves(tmp_path):
    """A bout at 360 px with every kind of move the page animates: Bob's attack flies in
    from his seat, Ann covers (her card lands on his), Bob throws in and she covers again,
    the bout is beaten off to the discard, both refill from the stock, Ann attacks and
    Bob takes (the table sweeps to his seat). With DURAK_SCREENSHOTS (and ffmpeg) it is
    recorded: docs/webapp/bout-360.webm."""
    from .scripted import page_server, scripted
    from .test_page import centre, hand_card, until

    folder = os.environ.get("DURAK_SCREENSHOTS")
    record = folder is not None and shutil.which("ffmpeg") is not None
    stock = ["9H", "6C", "10S", "QD", "KH", "8C", "9S", "JC"]
    table = scripted(
        {"Ann": ["7S", "8D", "9C", "10D", "QC", "KS"], "Bob": ["6S", "6D", "7C", "8S", "9D", "JD"]},
        attacker="Bob",
        stock=stock,
        trump_card="AH",
    )
    pause = 0.9 if record else 0.0
    async with page_server() as port, browser() as b:
        p = await open_player(b, link_for(port), 360, 740, socket=table.handler)
        await p.page.wait_for_selector("body[data-state=ready]", timeout=10000)
        await asyncio.sleep(0.6 if record else 0)
        stop = await _screencast(p.page, Path(folder), "bout-360") if record else None
        await asyncio.sleep(pause)
        table.apply(1, {"do": "attack", "cards": ["6S"]})
        await until(p.page, "document.querySelectorAll('#table .pair').length === 1")
        await asyncio.sleep(pause)
        await p.page.mouse.click(*await centre(hand_card(p, "7S")))
        await until(p.page, "document.querySelectorAll('#table .cover').length === 1")
        await asyncio.sleep(pause)
        table.apply(1, {"do": "attack", "cards": ["7C"]})
        await until(p.page, "document.querySelectorAll('#table .pair').length === 2")
        await asyncio.sleep(pause)
        await p.page.mouse.click(*await centre(hand_card(p, "9C")))
        await until(p.page, "document.querySelectorAll('#table .cover').length === 2")
        await asyncio.sleep(pause)
        table.apply(1, {"do": "pass"})
        await until(p.page, "document.querySelectorAll('#hand button.card').length === 6")
        await asyncio.sleep(pause * 1.5)
        await p.page.mouse.click(*await centre(hand_card(p, "8D")))
        await until(p.page, "document.querySelectorAll('#table .pair').length === 1")
        await asyncio.sleep(pause)
        table.apply(1, {"do": "take"})
        await until(p.page, "document.querySelectorAll('#table .pair').length === 0")
        await asyncio.sleep(pause * 1.5)
        if stop is not None:
            await stop()
        assert [m["do"] for m in table.moves()] == ["defend", "defend", "attack"]
        assert not [c for c in p.console if "error" in c.lower()], p.console


def link_for(port: int, theme: dict[str, str] | None = None) -> str:
    from .scripted import link

    return link(port, theme)


@async_test
async def test_a_24_card_hand_at_three_sizes(tmp_path):
    """24 cards in hand at 360x740, 740x360 and desktop width, a card asking which six
    it covers (docs/webapp/hand-24-*.png with DURAK_SCREENSHOTS)."""
    from .scripted import ALL, page_server, scripted
    from .test_page import VIEWPORTS, centre, check_hand, hand_card, until

    folder = Path(os.environ.get("DURAK_SCREENSHOTS") or tmp_path)
    ann = [c for c in ALL if c not in ("6S", "6H", "7C", "8C", "9D", "JD")][:24]
    assert "7H" in ann
    async with page_server() as port, browser() as b:
        for view, (width, height) in VIEWPORTS.items():
            table = scripted(
                {"Ann": ann, "Bob": ["6S", "6H", "7C", "8C", "9D", "JD"]}, attacker="Bob"
            )
            theme = DARK if view == "landscape" else LIGHT
            p = await open_player(b, link_for(port, theme), width, height, socket=table.handler)
            await p.page.wait_for_selector("body[data-state=ready]", timeout=10000)
            table.apply(1, {"do": "attack", "cards": ["6S", "6H"]})
            await until(p.page, "document.querySelectorAll('#table .pair').length === 2")
            await p.page.mouse.click(*await centre(hand_card(p, "7H")))
            await until(p.page, "document.querySelectorAll('#table .pair.target').length === 2")
            await check_hand(p.page, width, height, 24)
            await p.page.evaluate("Promise.all(document.getAnimations().map(a => a.finished))")
            await p.page.screenshot(path=str(folder / f"hand-24-{view}.png"))
            await p.page.context.close()
