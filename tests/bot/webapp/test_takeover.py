"""PostgreSQL with a standby: whichever process holds the lease serves the Mini App.
The standby does not listen while it waits; once the active one is killed, a page that
connects again (as the page's script does by itself) reaches the new holder on the
same address and plays on."""

from __future__ import annotations

import asyncio
import json
import os
import random
import time

import aiohttp

from bot.ui import callbacks as cb
from tests.fake_telegram import RateLimits
from tests.fake_telegram.fixtures import FakeTelegramFactory, async_test

from ..harness import SCALE, WEBAPP_PATH, WEBAPP_URL, free_port
from ..test_standby import Bot, PatientTable
from .client import init_data


async def first_state(url: str, data: str, game: int, timeout: float) -> dict[str, object]:
    """Connect as a page, sign in, and return the first state (retrying the connection
    until ``timeout``: the new holder needs a moment to listen)."""
    end = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < end:
        try:
            async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:
                await ws.send_str(json.dumps({"init": data, "game": game}))
                async with asyncio.timeout(5):
                    async for msg in ws:
                        got = json.loads(msg.data)
                        if "state" in got:
                            return got["state"]  # type: ignore[no-any-return]
                        if "error" in got:
                            raise AssertionError(got)
        except (aiohttp.ClientError, OSError, TimeoutError) as e:
            last = e
        await asyncio.sleep(0.1)
    raise AssertionError(f"no state from {url} within {timeout} s: {last!r}")


@async_test
async def test_the_page_reaches_the_new_holder_after_a_takeover(
    make_fake_telegram: FakeTelegramFactory, pg_db: str
) -> None:
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    port = free_port()
    env = {
        **os.environ,
        "DURAK_BOT_TOKEN": server.token,
        "DURAK_DB": pg_db,
        "DURAK_API_URL": server.base_url,
        "DURAK_LOG_LEVEL": "INFO",
        "DURAK_WEBAPP_URL": WEBAPP_URL,
        "DURAK_WEBAPP_LISTEN": "127.0.0.1",
        "DURAK_WEBAPP_PORT": str(port),
    }
    url = f"http://127.0.0.1:{port}{WEBAPP_PATH}/ws"
    active = await Bot.start("the first bot", env)
    standby: Bot | None = None
    try:
        await active.said("active: this process holds the lease", 60)
        standby = await Bot.start("the second bot", env)
        await standby.said("standby: another bot process is active", 60)
        # (had the standby tried to listen on the same port before holding the lease,
        # it would have died here: one process listens at a time)
        users = [server.add_user(f"P{i}", started=True) for i in range(2)]
        group = server.add_group("Friends", users, admins=[users[0]])
        table = PatientTable(server, group, users, random.Random(3))
        await table.open_lobby()
        await table.join_all()
        await table.start()
        panel = table.panel(users[0])
        assert panel is not None
        game = next(cb.decode(b.callback_data).game_id for b in panel.buttons if b.callback_data)
        data = init_data(server, users[0])
        before = await first_state(url, data, game, 10)
        assert before["game"] == game and before["you"] is not None

        active.proc.kill()  # kill -9: the page's connection drops with it
        await active.stop()
        await standby.said("active: this process holds the lease", 10)
        after = await first_state(url, data, game, 15)
        assert after["game"] == game and after["you"] == before["you"]
        assert after["version"] >= before["version"]  # nothing was lost

        stop = asyncio.Event()
        players = [asyncio.create_task(table.play(u, stop)) for u in users]
        await server.wait_for(lambda: table.ended() is not None, 180, what="the end")
        stop.set()
        await asyncio.gather(*players)
    finally:
        await active.stop()
        if standby is not None:
            await standby.stop()
