"""A crowd of Mini App connections from another process (as an attacker's, or a crowd of
real pages, would come): ``python -m tests.bot.webapp.crowd '<json>'``.

The JSON names the ``port``, how many connections (``count``), and what each does:

- ``"silent"``: the WebSocket upgrade, then nothing (no initData) until the bot closes it;
- ``"pages"``: initData signed with ``token`` for the ``users`` in turn (``[id, name]``),
  ``start`` as its start_param, and then it stays open, reading what it is sent.

``spread``: each connection from an address of its own (127.1.x.y: all of 127/8 is this
machine's loopback), as a crowd of many clients comes; ``source``: all from this one
(``127.0.0.9``), not the test's own 127.0.0.1. ``header``: a header sent with each
connection (``X-Forwarded-For``), its value an address of its own (``10.x.y.z``), as a
proxy in front of the bot would set it.

Each connection is made once and not made again when closed; with ``again``, it is made
again that many seconds after it ended (an attacker that keeps at it). One JSON line once
every connection was tried and has its first answer (``{"ready": ...}``), another when
stdin closes (``{"done": ...}``): the counts of upgrades, refused upgrades, pages that got a
state, errors by code, and connections the bot closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bot.webapp import sign_init_data

PATH = "/durak/app/ws"


async def one(spec: dict[str, Any], n: int, first: Counter[str], later: Counter[str]) -> None:
    """Connection ``n``: its first answer counted in ``first``, those of the connections
    made again (``again``) in ``later``."""
    local = (f"127.1.{n // 254}.{n % 254 + 1}", 0) if spec.get("spread") else None
    if spec.get("source"):
        local = (spec["source"], 0)
    connector = aiohttp.TCPConnector(limit=0, force_close=True, local_addr=local)
    async with aiohttp.ClientSession(connector=connector) as session:
        await _one(session, spec, n, first)
        while spec.get("again") is not None:
            await asyncio.sleep(spec["again"])
            await _one(session, spec, n, later)


async def _one(
    session: aiohttp.ClientSession, spec: dict[str, Any], n: int, counts: Counter[str]
) -> None:
    headers = {}
    if spec.get("header"):
        headers[spec["header"]] = f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}"
    url = f"http://127.0.0.1:{spec['port']}{PATH}"
    settled = False

    def settle(what: str) -> None:
        nonlocal settled
        counts[what] += 1
        if not settled:
            settled = True
            counts["settled"] += 1

    try:
        async with session.ws_connect(url, headers=headers, heartbeat=None) as ws:
            counts["upgraded"] += 1
            if spec["mode"] == "pages":
                uid, name = spec["users"][n % len(spec["users"])]
                user = {"id": uid, "first_name": name, "language_code": "en"}
                init = sign_init_data(spec["token"], user, start_param=spec.get("start"))
                await ws.send_str(json.dumps({"init": init}))
            else:
                settle("silent")
            shown = False
            async for msg in ws:
                if msg.type != aiohttp.WSMsgType.TEXT:
                    break
                data = json.loads(msg.data)
                if "state" in data and not shown:  # (a page in: counted once)
                    shown = True
                    settle("state")
                elif "error" in data:
                    settle("error:" + data["error"])
            settle("closed")
    except (aiohttp.ClientError, OSError):
        settle("refused")


async def main(spec: dict[str, Any]) -> None:
    counts: Counter[str] = Counter()
    later: Counter[str] = Counter()
    tasks = [asyncio.create_task(one(spec, n, counts, later)) for n in range(spec["count"])]
    while counts["settled"] < spec["count"]:
        await asyncio.sleep(0.05)
    print(json.dumps({"ready": counts}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    print(json.dumps({"done": counts, "again": later}), flush=True)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


@contextlib.asynccontextmanager
async def crowd(**spec: Any) -> AsyncIterator[Crowd]:
    """The crowd running in a process of its own until the block ends; ``ready``: its
    counts once every connection had its first answer (a hang guard of a minute)."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.bot.webapp.crowd", json.dumps(spec),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert child.stdin is not None and child.stdout is not None
    running = Crowd()
    try:
        line = await asyncio.wait_for(child.stdout.readline(), 60)
        running.ready = Counter(json.loads(line)["ready"])
        yield running
        child.stdin.close()
        line = await asyncio.wait_for(child.stdout.readline(), 30)
        running.done = Counter(json.loads(line)["done"])
        running.again = Counter(json.loads(line)["again"])
    finally:
        if child.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
        await child.wait()


@dataclass
class Crowd:
    ready: Counter[str] = field(default_factory=Counter)
    done: Counter[str] = field(default_factory=Counter)
    again: Counter[str] = field(default_factory=Counter)  # the connections made again


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
