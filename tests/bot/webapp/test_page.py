"""The page as a person plays it, in Chromium at 360x740, 740x360 and desktop width,
against a table the test controls (tests/bot/webapp/scripted.py: the real engine and the
real protocol behind the page's WebSocket): a 24-card hand tapped card by card, a 36-card
hand that fits, a state that comes mid-drag, a double tap, a refusal and then one's turn,
keyboard play of a whole bout, contrast measured from the computed styles, Telegram's
platform (and an older client without it), the four-colour deck, the cards' moves."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from durak import Rules
from tests.fake_telegram.fixtures import async_test

from .browser import DARK, LIGHT, browser, open_player
from .scripted import ALL, Scripted, link, page_server, scripted

VIEWPORTS = {"portrait": (360, 740), "landscape": (740, 360), "desktop": (1280, 800)}
#: A 52-card deck's cards, the low ones first (a 36-card hand of the 52-card game)
FULL = [f"{r}{s}" for s in "SHDC" for r in ("2", "3", "4", "5", "6", "7", "8", "9", "10")]
FULL += [f"{r}{s}" for s in "SHDC" for r in ("J", "Q", "K", "A")]
ANN = ["7S", "8D", "9C", "10D", "QC", "KS"]
BOB = ["6S", "6H", "7C", "8C", "9D", "JD"]


async def until(page: Any, expression: str, timeout: float = 5.0) -> Any:
    """Poll ``expression`` in the page until it is true (the page's CSP refuses
    Playwright's wait_for_function)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        value = await page.evaluate(expression)
        if value:
            return value
        await asyncio.sleep(0.02)
    raise AssertionError(f"never true: {expression}")


async def opened(b: Any, port: int, table: Scripted, view: str, **kw: Any) -> Any:
    width, height = VIEWPORTS[view]
    address = link(port, kw.pop("theme", LIGHT), kw.pop("version", None))
    p = await open_player(b, address, width, height, socket=table.handler, **kw)
    await p.page.wait_for_selector("body[data-state=ready]", timeout=10000)
    return p


#: Each hand card: its button's box, the point a finger taps (the middle of the part of
#: it no other card covers), what is at that point, and its index's box.
CARDS = """
[...document.querySelectorAll('#hand button.card')].map(b => {
  const r = b.getBoundingClientRect();
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const hit = document.elementFromPoint(x, y);
  const rank = b.querySelector('.rank').getBoundingClientRect();
  const suit = b.querySelector('.index .suit').getBoundingClientRect();
  return {card: b.dataset.card, left: r.left, right: r.right, top: r.top, bottom: r.bottom,
          x, y, hit: hit ? (hit.closest('button.card') || {}).dataset?.card || null : null,
          label: b.getAttribute('aria-label'), tag: b.tagName,
          index: [Math.min(rank.left, suit.left), Math.min(rank.top, suit.top),
                  Math.max(rank.right, suit.right), Math.max(rank.bottom, suit.bottom)]};
})
"""


async def check_hand(page: Any, width: int, height: int, count: int) -> list[dict[str, Any]]:
    """Every card on the screen, its own part tappable, its index ("10♥") inside that part:
    readable whole; nothing wider than the screen, nothing to scroll to."""
    cards = await page.evaluate(CARDS)
    assert len(cards) == count
    assert await page.evaluate("document.documentElement.scrollWidth") <= width
    assert await page.evaluate("document.documentElement.scrollHeight") <= height
    for c in cards:
        assert c["tag"] == "BUTTON" and c["label"], c
        assert c["left"] >= 0 and c["top"] >= 0, c
        assert c["right"] <= width and c["bottom"] <= height, c
        assert c["hit"] == c["card"], f"the middle of {c['card']} hits {c['hit']}"
        left, top, right, bottom = c["index"]
        assert c["left"] - 0.5 <= left and right <= c["right"] + 0.5, (
            f"{c['card']}'s index is cut: {c}"
        )
        assert c["top"] - 12 <= top and bottom <= c["bottom"] + 0.5, (
            f"{c['card']}'s index is cut: {c}"
        )
    return cards


@pytest.mark.parametrize("view", VIEWPORTS)
@async_test
async def test_every_card_of_a_24_card_hand_is_tapped_once(view: str) -> None:
    table = scripted({"Ann": ALL[:24], "Bob": ALL[24:30]})

    def again(t: Scripted, message: dict[str, Any]) -> None:
        t.version += 1  # the same table again: every card may open, the tap counted
        t.push()

    table.respond = again
    width, height = VIEWPORTS[view]
    async with page_server() as port, browser() as b:
        p = await opened(b, port, table, view)
        cards = await check_hand(p.page, width, height, 24)
        for k, c in enumerate(cards):
            before = await p.version()
            await p.page.mouse.click(c["x"], c["y"])
            await until(p.page, f"Number(document.body.dataset.version) > {before}")
            assert len(table.moves()) == k + 1
        assert [m["cards"] for m in table.moves()] == [[c["card"]] for c in cards]
        assert sorted(c["card"] for c in cards) == sorted(ALL[:24])
        assert not [c for c in p.console if "error" in c.lower()], p.console


@pytest.mark.parametrize("view", VIEWPORTS)
@async_test
async def test_a_36_card_hand_fits_in_both_themes(view: str) -> None:
    table = scripted({"Ann": FULL[:36], "Bob": FULL[36:42]}, Rules(deck=52))
    width, height = VIEWPORTS[view]
    async with page_server() as port, browser() as b:
        for theme in (LIGHT, DARK):
            p = await opened(b, port, table, view, theme=theme)
            await check_hand(p.page, width, height, 36)
            await p.page.context.close()


def hand_card(p: Any, card: str) -> Any:
    return p.page.locator(f'#hand button[data-card="{card}"]')


async def centre(locator: Any) -> tuple[float, float]:
    box = await locator.bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


@pytest.mark.parametrize("view", VIEWPORTS)
@async_test
async def test_a_state_that_comes_mid_drag_waits_for_the_drop(view: str) -> None:
    """Bob attacks; Ann drags 7♠ to cover his 6♠; while her finger is down Bob throws in
    6♥: the page keeps the table she is dragging over, then on the drop shows the new one
    and covers 6♠: the move is sent, no copy of the card is left on the page."""
    table = scripted({"Ann": ANN, "Bob": BOB}, attacker="Bob")
    async with page_server() as port, browser() as b:
        p = await opened(b, port, table, view)
        table.apply(1, {"do": "attack", "cards": ["6S"]})
        await until(p.page, "document.querySelectorAll('#table .pair').length === 1")
        x, y = await centre(hand_card(p, "7S"))
        tx, ty = await centre(p.page.locator('#table .pair[data-attack="6S"] button'))
        await p.page.mouse.move(x, y)
        await p.page.mouse.down()
        await p.page.mouse.move(x, y - 30, steps=3)
        await p.page.mouse.move((x + tx) / 2, (y + ty) / 2, steps=3)
        version = await p.version()
        table.apply(1, {"do": "attack", "cards": ["6H"]})  # a state mid-drag
        await asyncio.sleep(0.3)
        assert await p.version() == version, "the table changed under the finger"
        assert await p.page.evaluate("document.querySelectorAll('#table .pair').length") == 1
        await p.page.mouse.move(tx, ty, steps=3)
        await p.page.mouse.up()
        await until(p.page, f"Number(document.body.dataset.version) >= {version + 2}")
        assert table.moves() == [{"do": "defend", "attack": "6S", "card": "7S"}]
        await p.page.evaluate("Promise.all(document.getAnimations().map(a => a.finished))")
        assert await p.page.evaluate("document.querySelectorAll('.flyer, .dragging').length") == 0
        assert (
            await p.page.evaluate("document.querySelectorAll('#table [data-face=\"7S\"]').length")
            == 1
        )
        assert (
            await p.page.evaluate("document.querySelectorAll('#hand [data-card=\"7S\"]').length")
            == 0
        )
        assert await p.page.evaluate("document.querySelectorAll('#table .pair').length") == 2


@pytest.mark.parametrize("view", VIEWPORTS)
@async_test
async def test_a_double_tap_sends_one_move(view: str) -> None:
    """Two taps before the bot answers: one move; the second waits for the next state."""
    table = scripted({"Ann": ALL[:6], "Bob": ALL[24:30]})
    held: list[dict[str, Any]] = []
    table.respond = lambda t, message: held.append(message)
    async with page_server() as port, browser() as b:
        p = await opened(b, port, table, view)
        x, y = await centre(hand_card(p, "6S"))
        await p.page.mouse.click(x, y)
        await p.page.mouse.click(x, y)  # the second tap of a double tap
        nx, ny = await centre(hand_card(p, "8S"))
        await p.page.mouse.click(nx, ny)  # and a card beside it
        await until(p.page, "document.body.dataset.lock === '1'")
        await asyncio.sleep(0.2)
        assert len(table.moves()) == 1 and table.moves()[0] == {"do": "attack", "cards": ["6S"]}
        table.apply(0, held[0]["move"])
        await until(p.page, "document.body.dataset.lock === undefined")
        assert len(table.moves()) == 1


@pytest.mark.parametrize("view", VIEWPORTS)
@async_test
async def test_a_refusal_then_ones_turn(view: str) -> None:
    """A tap while Bob is to open: the refusal is said at the top, out of the hand's way
    and taking no taps; Bob attacks: it goes at once, and the next tap covers."""
    table = scripted({"Ann": ANN, "Bob": BOB}, attacker="Bob")
    async with page_server() as port, browser() as b:
        p = await opened(b, port, table, view)
        x, y = await centre(hand_card(p, "7S"))
        await p.page.mouse.click(x, y)
        await p.page.wait_for_selector("#toast:not([hidden])")
        assert await p.page.inner_text("#toast") == "It is not your turn for that."
        toast = await p.page.locator("#toast").bounding_box()
        hand = await p.page.locator("#hand").bounding_box()
        assert toast["y"] + toast["height"] <= hand["y"], (toast, hand)
        assert (
            await p.page.evaluate(
                "getComputedStyle(document.getElementById('toast')).pointerEvents"
            )
            == "none"
        )
        table.apply(1, {"do": "attack", "cards": ["6S"]})
        await until(p.page, "document.getElementById('toast').hidden")
        assert await p.page.evaluate("document.body.classList.contains('my-turn')")
        await p.page.mouse.click(*await centre(hand_card(p, "7S")))
        await until(p.page, "document.querySelectorAll('#table .cover').length === 1")
        assert table.moves() == [{"do": "defend", "attack": "6S", "card": "7S"}]


@pytest.mark.parametrize("view", VIEWPORTS)
@async_test
async def test_keyboard_play_of_a_whole_bout(view: str) -> None:
    """Bob attacks with two sixes; Ann covers both with the keyboard alone (a card that
    can cover either asks which, as the panel does); Bob passes; the bout is beaten off."""
    table = scripted({"Ann": ["7S", "7H", "8H", "10C", "QC", "AS"], "Bob": BOB}, attacker="Bob")
    async with page_server() as port, browser() as b:
        p = await opened(b, port, table, view)
        table.apply(1, {"do": "attack", "cards": ["6S", "6H"]})
        await until(p.page, "document.querySelectorAll('#table .pair').length === 2")

        async def focus(selector: str) -> None:
            for _ in range(80):
                await p.page.keyboard.press("Tab")
                found = f"document.activeElement?.matches({selector!r})"
                if await p.page.evaluate(f"Boolean({found})"):
                    return
            raise AssertionError(f"Tab never reached {selector}")

        await focus('#hand button[data-card="7H"]')  # 7♥ (a trump) covers either six: it asks
        label = await p.page.evaluate("document.activeElement.getAttribute('aria-label')")
        assert label == "seven of hearts"
        await p.page.keyboard.press("Enter")
        await until(p.page, "document.querySelectorAll('#actions button').length >= 2")
        await focus('#actions button[data-do="option:0"]')
        said = await p.page.evaluate("document.activeElement.textContent")
        assert said.startswith("Cover"), said
        await p.page.keyboard.press("Enter")
        await until(p.page, "document.querySelectorAll('#table .cover').length === 1")
        first = table.moves()[0]
        # the other six: 8♥ covers 6♥, 7♠ covers 6♠, each the one thing that card may do
        await focus(
            '#hand button[data-card="8H"]'
            if first["attack"] == "6S"
            else '#hand button[data-card="7S"]'
        )
        await p.page.keyboard.press("Enter")
        await until(p.page, "document.querySelectorAll('#table .cover').length === 2")
        table.apply(1, {"do": "pass"})
        await until(p.page, "Number(document.querySelector('#discard .num').textContent) === 4")
        assert [m["do"] for m in table.moves()] == ["defend", "defend"]


#: Every piece of text on the page that a person sees, with the colour it is drawn in and
#: the colour behind it (the first ancestor with a background; the felt's two shades where
#: the felt is behind it): the contrast WCAG asks for, 4.5:1, is measured on each.
CONTRAST = r"""
(() => {
  const parse = (c) => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const [r, g, b, a] = m[1].split(',').map(Number);
    return {r, g, b, a: a === undefined ? 1 : a};
  };
  const lum = ({r, g, b}) => {
    const f = (x) => {
      x /= 255;
      return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const ratio = (a, b) => {
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
  const over = (top, under) => ({
    r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a),
    b: top.b * top.a + under.b * (1 - top.a), a: 1});
  const root = getComputedStyle(document.documentElement);
  const hex = (h) => {
    const n = parseInt(h.trim().slice(1), 16);
    return {r: n >> 16, g: (n >> 8) & 255, b: n & 255, a: 1};
  };
  const felt = [hex(root.getPropertyValue('--felt')), hex(root.getPropertyValue('--felt-edge'))];
  const behind = (el) => {
    const layers = [];
    for (let n = el; n; n = n.parentElement) {
      const flat = (base) => layers.reduceRight((acc, l) => over(l, acc), base);
      if (n.id === 'middle') return felt.map(flat);
      const bg = parse(getComputedStyle(n).backgroundColor);
      if (bg && bg.a > 0) {
        layers.push(bg);
        if (bg.a >= 1) return [layers.reduceRight((acc, l) => over(l, acc), bg)];
      }
    }
    const page = parse(getComputedStyle(document.body).backgroundColor);
    return [layers.reduceRight((acc, l) => over(l, acc), page)];
  };
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let t = walker.nextNode(); t; t = walker.nextNode()) {
    const text = t.textContent.replace(/\p{Extended_Pictographic}|\uFE0F|\u200D/gu, '').trim();
    if (!text) continue;
    const el = t.parentElement;
    const style = getComputedStyle(el);
    const box = el.getBoundingClientRect();
    if (!box.width || style.visibility === 'hidden') continue;
    if (el.closest('[hidden], #art, #flyers')) continue;
    if (style.display === 'none') continue;
    const fg = parse(style.color);
    for (const bg of behind(el)) {
      const where = el.className || el.id;
      found.push({text, ratio: ratio(over(fg, bg), bg), size: style.fontSize, where});
    }
  }
  return found;
})()
"""


@pytest.mark.parametrize("view", VIEWPORTS)
@async_test
async def test_text_contrast_in_both_themes(view: str) -> None:
    table = scripted({"Ann": ANN, "Bob": BOB}, attacker="Bob")
    async with page_server() as port, browser() as b:
        for theme in (LIGHT, DARK):
            p = await opened(b, port, table, view, theme=theme)
            # a refusal's toast and a bout on the table: their text is measured too
            await p.page.mouse.click(*await centre(hand_card(p, "7S")))
            await p.page.wait_for_selector("#toast:not([hidden])")
            found = await p.page.evaluate(CONTRAST)
            texts = {f["text"] for f in found}
            assert "Friends" in texts and "7" in texts and any("Trump" in t for t in texts), texts
            low = [f for f in found if f["ratio"] < 4.5]
            assert not low, low
            await p.page.context.close()


@async_test
async def test_telegrams_platform_is_used_where_the_client_has_it() -> None:
    """Bot API 9.0's client: swipes off while playing, the theme's header, background and
    bottom bar colours, the BackButton while a card asks what to do (pressing it closes
    the question), a haptic on one's turn; an old client (6.0) has none of these and plays
    the same."""
    for version in ("9.0", "6.0"):
        table = scripted({"Ann": ["7S", "7H", "8H", "10C", "QC", "AS"], "Bob": BOB}, attacker="Bob")
        async with page_server() as port, browser() as b:
            p = await opened(b, port, table, "portrait", version=version)
            table.apply(1, {"do": "attack", "cards": ["6S", "6H"]})
            await until(p.page, "document.body.classList.contains('my-turn')")
            await p.page.mouse.click(*await centre(hand_card(p, "7H")))  # it asks which six
            await until(p.page, "document.querySelectorAll('#table .pair.target').length === 2")
            calls = await p.page.evaluate("window.__tg.calls")
            haptics = await p.page.evaluate("window.__haptics")
            if version == "9.0":
                assert "disableVerticalSwipes" in calls
                assert {"setHeaderColor", "setBackgroundColor", "setBottomBarColor"} <= set(calls)
                assert calls[-1] == "BackButton.show"
                assert "notification:success" in haptics  # his turn
                await p.page.evaluate("window.__tg.back.forEach(h => h())")  # Telegram's Back
                await until(p.page, "document.querySelectorAll('#table .pair.target').length === 0")
                assert (await p.page.evaluate("window.__tg.calls"))[-1] == "BackButton.hide"
                await p.page.mouse.click(*await centre(hand_card(p, "7H")))
                await until(p.page, "document.querySelectorAll('#table .pair.target').length")
            else:
                assert calls == [] and haptics == []
            target = p.page.locator('#table .pair[data-attack="6H"] button').first
            await target.click()
            await until(p.page, "document.querySelectorAll('#table .cover').length === 1")
            assert table.moves() == [{"do": "defend", "attack": "6H", "card": "7H"}]
            assert not [c for c in p.console if "error" in c.lower()], p.console


@async_test
async def test_the_four_colour_deck_is_kept_where_the_client_keeps_settings() -> None:
    """Telegram's CloudStorage where the client has it (6.9+), else the browser's own
    storage: the setting survives the page opened again."""
    table = scripted({"Ann": ["7S", "8D", "9C", "10D", "QC", "KS"], "Bob": BOB}, attacker="Bob")
    colour = "getComputedStyle(document.querySelector('#hand [data-face=\"8D\"] .rank')).color"
    async with page_server() as port, browser() as b:
        for version in ("9.0", "6.0"):
            p = await opened(b, port, table, "portrait", version=version)
            assert await p.page.evaluate(colour) == "rgb(198, 40, 40)"  # red diamonds
            await p.page.click("#settings-button")
            await p.page.check("#four")
            assert await p.page.evaluate(colour) == "rgb(21, 83, 182)"  # blue diamonds
            if version == "9.0":
                assert await p.page.evaluate("window.__tg.storage.four_colours") == "1"
            else:
                await p.page.reload()
                await p.page.wait_for_selector("body[data-state=ready]")
                assert await p.page.evaluate(colour) == "rgb(21, 83, 182)"
            await p.page.context.close()


@async_test
async def test_spoken_labels_language_and_zoom() -> None:
    """A Russian player: <html lang="ru">, each card a button named as a Russian says it,
    the seats named with their counts; the page may be zoomed."""
    table = scripted({"Ann": ["10H", "QS", "6D", "AC", "7S", "9H"], "Bob": BOB}, attacker="Bob")
    table.lang = "ru"
    async with page_server() as port, browser() as b:
        p = await opened(b, port, table, "portrait")
        assert await p.page.evaluate("document.documentElement.lang") == "ru"
        labels = await p.page.evaluate(
            "[...document.querySelectorAll('#hand button.card')]"
            ".map(b => b.getAttribute('aria-label'))"
        )
        assert "десятка червей" in labels and "дама пик" in labels and "туз треф" in labels
        assert "шестёрка бубён" in labels, labels
        seat = await p.page.evaluate(
            "document.querySelector('#seats .seat').getAttribute('aria-label')"
        )
        assert seat == "Bob: 6 карт", seat
        viewport = await p.page.evaluate("document.querySelector('meta[name=viewport]').content")
        assert "user-scalable" not in viewport and "maximum-scale" not in viewport
        # the card's text is its index alone: "10♥", never the suit twice
        assert await p.page.inner_text('#hand button[data-card="10H"]') == "10\n♥"
        # a court card is drawn as one: its figure from court.svg (CC0), put in the page
        await until(p.page, "Boolean(document.querySelector('#art symbol#court-QS'))")
        figure = await p.page.evaluate(
            "document.querySelector('#hand [data-card=\"QS\"] svg.art use').getAttribute('href')"
        )
        assert figure == "#court-QS"
        drawn = await p.page.evaluate(
            "document.querySelector('#hand [data-card=\"QS\"] svg.art use').getBBox().width"
        )
        assert drawn > 100, drawn  # the symbol's figure is there to draw


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
@async_test
async def test_cards_move_between_150_and_350_ms_and_not_at_all_under_reduced_motion(
    motion: str,
) -> None:
    """A throw-in flies from Bob's seat, a cover from Ann's hand onto its card, the
    beaten-off cards to the discard: each move's duration as the page asks the browser
    for it (Element.animate, recorded), none with prefers-reduced-motion."""
    table = scripted({"Ann": ANN, "Bob": BOB}, attacker="Bob")
    record = """
      window.__moves = [];
      const animate = Element.prototype.animate;
      Element.prototype.animate = function (frames, options) {
        window.__moves.push({what: this.className, ms: options && options.duration});
        return animate.call(this, frames, options);
      };
      true;
    """
    async with page_server() as port, browser() as b:
        p = await opened(b, port, table, "portrait", motion=motion)
        await p.page.evaluate(record)
        assert await p.page.evaluate("document.getElementById('bout').hidden")  # no bout yet
        table.apply(1, {"do": "attack", "cards": ["6S"]})
        await until(p.page, "document.querySelectorAll('#table .pair').length === 1")
        assert await p.page.inner_text("#bout") == "1/6"  # a bout on: its count
        await p.page.mouse.click(*await centre(hand_card(p, "7S")))
        await until(p.page, "document.querySelectorAll('#table .cover').length === 1")
        table.apply(1, {"do": "pass"})
        await until(p.page, "Number(document.querySelector('#discard .num').textContent) === 2")
        assert await p.page.evaluate("document.getElementById('bout').hidden")  # over: no 1/6
        flown = len([m for m in await p.page.evaluate("window.__moves") if "flyer" in m["what"]])
        # Ann opens the next bout, Bob takes: the table sweeps to his seat
        await p.page.mouse.click(*await centre(hand_card(p, "8D")))
        await until(p.page, "document.querySelectorAll('#table .pair').length === 1")
        table.apply(1, {"do": "take"})
        await until(p.page, "document.querySelectorAll('#table .pair').length === 0")
        moves = await p.page.evaluate("window.__moves")
        declared = await p.page.evaluate(
            "getComputedStyle(document.documentElement).getPropertyValue('--move-ms')"
        )
        if motion == "reduce":
            assert moves == [] and declared.strip() == "0ms"
        else:
            assert flown >= 2, moves  # the cover and its attack card to the discard
            assert len([m for m in moves if "flyer" in m["what"]]) > flown  # the take
            assert len(moves) >= 5, moves
            assert all(150 <= m["ms"] <= 350 for m in moves), moves


@async_test
async def test_reconnects_wait_a_randomised_backoff() -> None:
    """After a drop the page waits 300 ms doubling to 5 s, each wait drawn between half
    and one and a half of that: pages that lost the bot together do not return together."""
    table = scripted({"Ann": ANN, "Bob": BOB})
    async with page_server() as port, browser() as b:
        p = await opened(b, port, table, "portrait")
        waits = await p.page.evaluate(
            """import(document.body.dataset.base + '/static/net.js').then(m => ({
              low: [1, 2, 3, 8].map(r => m.backoff(r, () => 0)),
              high: [1, 2, 3, 8].map(r => m.backoff(r, () => 0.999999)),
              drawn: Array.from({length: 20}, () => m.backoff(4)),
            }))"""
        )
        assert waits["low"] == [150, 300, 600, 2500]
        assert waits["high"] == [450, 900, 1800, 7500]
        assert all(1200 <= w <= 3600 for w in waits["drawn"])
        assert len(set(waits["drawn"])) > 5  # drawn, not fixed


@async_test
async def test_english_pairs_on_the_page_as_on_the_panel() -> None:
    """English: no single card may open. A tap on a card of a pair asks, with the very
    buttons the panel's choice shows for that tap; a card of no pair is refused with the
    panel's words; the chosen pair is played."""
    from bot.ui import keyboards
    from durak import parse_card

    table = scripted(
        {"Ann": ["7H", "7S", "9C", "9D", "QC", "KS"], "Bob": ["6S", "6H", "8C", "8D", "10D", "JD"]},
        Rules(english=True),
    )
    view = table.game.view(0)
    async with page_server() as port, browser() as b:
        p = await opened(b, port, table, "portrait")
        lit = await p.page.evaluate(
            "[...document.querySelectorAll('#hand button.card.legal')].map(b => b.dataset.card)"
        )
        assert sorted(lit) == ["7H", "7S", "9C", "9D"]
        await p.page.mouse.click(*await centre(hand_card(p, "7H")))
        await until(p.page, "document.querySelector('#hand .armed')")
        shown = await p.page.evaluate(
            "[...document.querySelectorAll('#actions button')].map(b => b.textContent)"
        )
        panel = keyboards.choice(7, 0, keyboards.card_actions(view, parse_card("7H")))
        assert shown == [row[0]["text"] for row in panel["inline_keyboard"]], shown
        await p.page.mouse.click(*await centre(hand_card(p, "QC")))  # not a pair's: a no
        await p.page.wait_for_selector("#toast:not([hidden])")
        assert await p.page.inner_text("#toast") == "That card cannot be played now."
        await p.page.click("#actions button[data-do='option:0']")
        await until(p.page, "document.querySelectorAll('#table .pair').length === 2")
        assert table.moves() == [{"do": "attack", "cards": ["7S", "7H"]}]


@async_test
async def test_a_new_state_patches_the_page_in_place() -> None:
    """The page is not rebuilt per state: a card, a seat and a button that are still
    there after a move are the very elements they were (keyed, patched in place)."""
    table = scripted({"Ann": ANN, "Bob": BOB}, attacker="Bob")
    mark = """
      for (const sel of ['#hand [data-card="9C"]', '#seats .seat', '#deck .stock', '#status'])
        document.querySelector(sel).__kept = sel;
      true;
    """
    kept = """['#hand [data-card="9C"]', '#seats .seat', '#deck .stock', '#status']
      .filter(sel => document.querySelector(sel).__kept === sel)"""
    async with page_server() as port, browser() as b:
        p = await opened(b, port, table, "portrait")
        await p.page.evaluate(mark)
        table.apply(1, {"do": "attack", "cards": ["6S"]})
        await until(p.page, "document.querySelectorAll('#table .pair').length === 1")
        await p.page.mouse.click(*await centre(hand_card(p, "7S")))
        await until(p.page, "document.querySelectorAll('#table .cover').length === 1")
        assert len(await p.page.evaluate(kept)) == 4
        attack = "document.querySelector('#table [data-card=\"6S\"]')"
        await p.page.evaluate(f"{attack}.__kept = 'table'; true")
        table.apply(1, {"do": "attack", "cards": ["6H"]})
        await until(p.page, "document.querySelectorAll('#table .pair').length === 2")
        assert await p.page.evaluate(f"{attack}.__kept") == "table"


@pytest.mark.parametrize("view", VIEWPORTS)
@async_test
async def test_six_players_fit_with_every_count_in_sight(view: str) -> None:
    """Five others in a row: long names cut with an ellipsis, each seat's count of cards
    inside its box, the page no wider and no taller than the screen."""
    names = ["Ann", "Bob", "Cid", "Dora the Explorer", "Eve", "Феофан Прокопович"]
    table = scripted({n: ALL[i * 6 : (i + 1) * 6] for i, n in enumerate(names)}, attacker="Bob")
    width, height = VIEWPORTS[view]
    async with page_server() as port, browser() as b:
        p = await opened(b, port, table, view)
        table.apply(1, {"do": "attack", "cards": ["6H"]})
        await until(p.page, "document.querySelectorAll('#table .pair').length === 1")
        assert await p.page.evaluate("document.documentElement.scrollWidth") <= width
        assert await p.page.evaluate("document.documentElement.scrollHeight") <= height
        counts = await p.page.evaluate(
            """[...document.querySelectorAll('#seats .seat')].map(s => {
              const c = s.querySelector('.count').getBoundingClientRect();
              const r = s.getBoundingClientRect();
              return [s.querySelector('.count').textContent,
                      c.left >= r.left && c.right <= r.right && c.bottom <= r.bottom];
            })"""
        )
        assert counts == [["5", True]] + [["6", True]] * 4, counts  # Bob played one
        await check_hand(p.page, width, height, 6)
