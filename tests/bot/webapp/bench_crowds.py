"""Benchmark: presses by webhook while a crowd holds Mini App connections on the same
listener (issue 36 item 1), through the real bot and the fake Bot API on loopback.

    python -m tests.bot.webapp.bench_crowds [--mode silent|pages] [--crowd 800]
        [--cap 768] [--seconds 20] [--again 0.2]

``--cap``: the listener's connection cap (768 is the bot's at the usual 1,024 open
files). ``silent``: WebSocket upgrades that never send initData, each from an address of
its own, made again ``--again`` seconds after the bot closes them; ``pages``: signed-in
spectator pages (three per group member). Meanwhile, for ``--seconds``, the game's two
players press their panels' buttons by turns, one every 0.25 s. Printed: presses answered
within 10 s, the time from a press to its answer, the webhook's POSTs the bot did not
answer 2xx, and the pages held.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bot.transport import listener
from tests.fake_telegram import FakeTelegram

from .bench_webapp import percentile
from .client import a_game
from .crowd import crowd


async def run(args: argparse.Namespace) -> dict[str, Any]:
    listener.connection_cap = lambda: args.cap  # (this process only: a benchmark)
    servers: list[FakeTelegram] = []

    async def make(**kwargs: Any) -> FakeTelegram:
        server = await FakeTelegram(**kwargs).start()
        servers.append(server)
        return server

    members = args.crowd // 3 if args.mode == "pages" else 0
    out: dict[str, Any] = {"waits": [], "unanswered": 0}
    try:
        with tempfile.TemporaryDirectory() as folder:
            async with a_game(make, Path(folder), webhook=True, members=members) as g:
                spec: dict[str, Any] = {"port": g.port, "count": args.crowd, "mode": args.mode}
                spec["spread"] = True
                if args.mode == "pages":
                    spec |= {
                        "token": g.server.token,
                        "users": [[m.id, m.first_name] for m in g.members],
                        "start": str(g.game_id),
                    }
                else:
                    spec["again"] = args.again
                async with crowd(**spec) as c:
                    out["ready"] = dict(c.ready)
                    await presses(g, args.seconds, out)
                    webapp = g.app.bot_data["durak"].webapp
                    gate = getattr(webapp, "gate", None)  # (none before issue 36)
                    out["held"] = None if gate is None else (gate.count, gate.cap)
                assert g.server.webhook is not None
                out["failed"] = g.server.webhook.failed
                out["again"] = dict(c.again)
    finally:
        for server in servers:
            await server.stop()
    return out


async def presses(g: Any, seconds: float, out: dict[str, Any]) -> None:
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end and g.table.ended() is None:
        await asyncio.sleep(0.25)
        n += 1
        user = g.users[n % len(g.users)]
        panel = g.table.panel(user)
        if panel is None:
            continue
        data = [b.callback_data for b in panel.buttons if b.callback_data]
        began = time.perf_counter()
        press = await user.press(panel, g.table.rng.choice(data))
        try:
            await press.wait(10)
        except TimeoutError:
            out["unanswered"] += 1
            continue
        out["waits"].append(time.perf_counter() - began)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bot.webapp.bench_crowds")
    parser.add_argument("--mode", choices=("silent", "pages"), default="silent")
    parser.add_argument("--crowd", type=int, default=800)
    parser.add_argument("--cap", type=int, default=768)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--again", type=float, default=0.2)
    args = parser.parse_args(argv)
    out = asyncio.run(run(args))
    waits = out["waits"]
    print(f"{args.mode}: {args.crowd} connections, listener cap {args.cap}")
    print(f"crowd at first: {out['ready']}; made again: {out['again']}")
    print(f"pages held / their cap: {out['held']}")
    print(
        f"presses answered within 10 s: {len(waits)} of {len(waits) + out['unanswered']};"
        f" press -> answer p50 {percentile(waits, 0.5) * 1000:.0f} ms,"
        f" p95 {percentile(waits, 0.95) * 1000:.0f} ms, max {max(waits, default=0) * 1000:.0f} ms"
    )
    print(f"webhook POSTs not answered 2xx: {out['failed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
