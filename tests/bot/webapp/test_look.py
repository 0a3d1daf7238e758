"""The page as players see it: a 4-player table at 360 px and at desktop width, light
and dark (Telegram's themeParams). The screenshots in docs/webapp/ are made by this test
(``DURAK_SCREENSHOTS=docs/webapp``); without it they go to a temporary folder."""

from __future__ import annotations

import os
from pathlib import Path

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
