"""Headless Chromium (Debian's ``chromium``) driven by Playwright, opening the Mini App as
Telegram would: initData and themeParams in the URL fragment, Telegram's
``telegram-web-app.js`` replaced by a small stand-in (no internet in tests), every other
request outside 127.0.0.1 refused. Without chromium or playwright the tests skip with the
reason; with ``CI=true`` they fail instead."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote

import pytest

from ..harness import WEBAPP_PATH

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LIGHT = {
    "bg_color": "#ffffff",
    "secondary_bg_color": "#f1f1f4",
    "text_color": "#000000",
    "hint_color": "#707579",
    "link_color": "#2481cc",
    "button_color": "#2481cc",
    "button_text_color": "#ffffff",
}
DARK = {
    "bg_color": "#17212b",
    "secondary_bg_color": "#0e1621",
    "section_bg_color": "#17212b",
    "text_color": "#f5f5f5",
    "hint_color": "#708499",
    "link_color": "#6ab3f3",
    "button_color": "#5288c1",
    "button_text_color": "#ffffff",
}

#: Telegram's script as far as the page uses it (Bot API 9.0's, or an older client's with
#: ``tgWebAppVersion`` in the fragment): it records what the page asked of it in
#: ``window.__tg`` (haptics, calls) and lets a test fire Telegram's events
#: (``window.__tg.fire("deactivated")``).
STAND_IN = """
(function () {
  const hash = new URLSearchParams(location.hash.slice(1));
  let theme = {};
  try { theme = JSON.parse(hash.get("tgWebAppThemeParams") || "{}"); } catch (e) {}
  const version = hash.get("tgWebAppVersion") || "9.0";
  const at = (v) => {
    const a = version.split(".").map(Number), b = String(v).split(".").map(Number);
    for (let i = 0; i < 2; i++) {
      if ((a[i] || 0) !== (b[i] || 0)) return (a[i] || 0) > (b[i] || 0);
    }
    return true;
  };
  const haptics = [];
  const calls = [];
  const handlers = {};
  const storage = {};
  const record = (name) => (...args) => { calls.push(name); };
  const button = () => ({ setText() {}, onClick() {}, offClick() {}, show() {}, hide() {} });
  window.__haptics = haptics;
  window.__tg = {
    calls, storage,
    fire(event) { for (const h of handlers[event] || []) h(); },
    back: [],
  };
  const app = {
    initData: hash.get("tgWebAppData") || "",
    version,
    isVersionAtLeast: at,
    themeParams: theme,
    colorScheme: (theme.bg_color || "#fff").toLowerCase() === "#17212b" ? "dark" : "light",
    platform: "unknown",
    ready() { window.__ready = true; },
    expand() {},
    onEvent(event, handler) { (handlers[event] = handlers[event] || []).push(handler); },
    offEvent() {},
    MainButton: button(),
    HapticFeedback: {
      impactOccurred(s) { haptics.push("impact:" + s); },
      notificationOccurred(s) { haptics.push("notification:" + s); },
      selectionChanged() { haptics.push("select"); },
    },
  };
  if (at("6.1")) {
    app.setHeaderColor = record("setHeaderColor");
    app.setBackgroundColor = record("setBackgroundColor");
    app.BackButton = {
      isVisible: false,
      onClick(h) { window.__tg.back.push(h); },
      offClick() {},
      show() { this.isVisible = true; calls.push("BackButton.show"); },
      hide() { this.isVisible = false; calls.push("BackButton.hide"); },
    };
  }
  if (at("6.9")) {
    app.CloudStorage = {
      setItem(k, v, cb) {
        storage[k] = v; calls.push("CloudStorage.setItem"); if (cb) cb(null, true);
      },
      getItem(k, cb) { cb(null, storage[k] || ""); },
    };
  }
  if (at("7.7")) {
    app.disableVerticalSwipes = record("disableVerticalSwipes");
    app.enableVerticalSwipes = record("enableVerticalSwipes");
  }
  if (at("7.10")) {
    app.setBottomBarColor = record("setBottomBarColor");
    app.SecondaryButton = button();
  }
  window.Telegram = { WebApp: app };
})();
"""


def chromium() -> str:
    """Chromium's executable, or a skip (a failure with ``CI=true``) saying what is missing."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    reason = None
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        reason = "playwright is not installed (pip install -e '.[test]')"
    if found is None:
        reason = "chromium is not installed (apt-get install chromium)"
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    assert found is not None
    return found


def url(
    port: int,
    init_data: str,
    game: int | None = None,
    theme: dict[str, str] | None = None,
    version: str | None = None,
) -> str:
    query = f"?game={game}" if game is not None else ""
    fragment = "tgWebAppData=" + quote(init_data, safe="")
    fragment += "&tgWebAppThemeParams=" + quote(json.dumps(theme or LIGHT), safe="")
    if version is not None:
        fragment += "&tgWebAppVersion=" + version
    return f"http://127.0.0.1:{port}{WEBAPP_PATH}{query}#{fragment}"


@asynccontextmanager
async def browser() -> AsyncIterator[Any]:
    executable = chromium()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        b = await pw.chromium.launch(executable_path=executable, args=ARGS, headless=True)
        try:
            yield b
        finally:
            await b.close()


CARD = re.compile(r'"((?:10|[2-9JQKA])[SHDC])"')


class Player:
    """One page of the Mini App and every WebSocket frame it received."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.frames: list[str] = []
        self.sent: list[str] = []
        self.console: list[str] = []
        page.on("websocket", self._socket)
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))

    def _socket(self, ws: Any) -> None:
        ws.on("framereceived", lambda payload: self.frames.append(str(payload)))
        ws.on("framesent", lambda payload: self.sent.append(str(payload)))

    def frame_cards(self) -> set[str]:
        return {m for f in self.frames for m in CARD.findall(f)}

    async def dom_cards(self) -> set[str]:
        return set(
            await self.page.evaluate(
                "[...document.querySelectorAll('[data-card]')].map(e => e.dataset.card)"
            )
        )

    async def version(self) -> int | None:
        v = await self.page.evaluate("document.body.dataset.version || null")
        return None if v is None else int(v)


async def open_player(
    b: Any,
    link: str,
    width: int = 390,
    height: int = 780,
    motion: str = "no-preference",
    socket: Any = None,
) -> Player:
    """A page as Telegram opens it; ``socket``: a Playwright WebSocket route handler that
    stands between the page and the bot (or stands in for the bot)."""
    context = await b.new_context(
        viewport={"width": width, "height": height}, reduced_motion=motion, has_touch=False
    )

    async def route(r: Any) -> None:
        target = r.request.url
        if target.startswith("https://telegram.org/js/telegram-web-app.js"):
            await r.fulfill(status=200, content_type="text/javascript", body=STAND_IN)
        elif target.startswith("http://127.0.0.1") or target.startswith("ws://127.0.0.1"):
            await r.continue_()
        else:
            await r.abort()

    await context.route("**/*", route)
    page = await context.new_page()
    player = Player(page)
    if socket is not None:
        await page.route_web_socket("**/ws", socket)
    await page.goto(link)
    return player
