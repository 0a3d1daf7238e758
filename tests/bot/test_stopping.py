"""Stopping ``python -m bot``: any number of SIGTERM/SIGINT end it, cleanly, in time."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from bot.__main__ import STOP_SIGNALS, stop_signals
from tests.fake_telegram.fixtures import async_test

ROOT = Path(__file__).resolve().parents[2]
#: A hang guard, not a speed: the bot must end well before it (its own deadline is 9.5 s).
GUARD = 20.0


async def start_bot(server, db: Path) -> asyncio.subprocess.Process:
    env = {
        **os.environ,
        "DURAK_BOT_TOKEN": server.token,
        "DURAK_API_URL": server.base_url,
        "DURAK_DB": str(db),
        "DURAK_LOG_LEVEL": "INFO",
    }
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,  # a process group of its own, as `timeout` signals one
    )


@pytest.mark.parametrize("signals", [(signal.SIGTERM, signal.SIGTERM), (signal.SIGINT,) * 3])
@async_test
async def test_repeated_stop_signals_stop_the_bot_cleanly(make_fake_telegram, tmp_path, signals):
    server = await make_fake_telegram()
    ann = server.add_user("Ann", started=True)
    group = server.add_group("Friends", [ann])
    bot = await start_bot(server, tmp_path / "db.sqlite3")
    try:
        # (not getUpdates: a long poll is counted when it ends, and an empty one wakes no
        # waiter, so that wait ran out its whole guard: 20 s a test)
        await server.wait_for(lambda: server.request_count("getMe") > 0, GUARD, what="getMe")
        for _ in range(4):  # a group gets one send per 3.1 s: some of these stay queued
            await ann.send(group, "/help")
        await server.wait_for(lambda: len(server.messages(group)) > 4, GUARD, what="a reply")
        for sig in signals:
            os.killpg(bot.pid, sig)
            await asyncio.sleep(0.01)
        async with asyncio.timeout(GUARD):
            output, _ = await bot.communicate()
    finally:
        if bot.returncode is None:
            os.killpg(bot.pid, signal.SIGKILL)
            await bot.wait()
    log = output.decode()
    assert bot.returncode == 0, log
    assert "database closed" in log
    assert "outbox: unsent at stop" in log or "everything queued was sent" in log
    assert "Traceback" not in log and "exiting now" not in log


def test_a_stop_signal_is_never_left_to_the_default_handler(monkeypatch):
    """From the first handler on, a SIGINT/SIGTERM is ours or ignored, at every instant.

    The bot once removed the loop's handlers at the end, which put Python's default ones
    back for an instant: a third SIGINT 10 ms after the second landed there and ended the
    bot with a KeyboardInterrupt traceback and exit code -2 (CI, 2026-12-02).
    """
    installed: list[tuple[int, object]] = []
    real = signal.signal

    def recording(sig, handler):
        installed.append((sig, handler))
        return real(sig, handler)

    saved = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    monkeypatch.setattr(signal, "signal", recording)
    seen: list[signal.Signals] = []

    async def main() -> None:
        with stop_signals(asyncio.get_running_loop(), seen.append):
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGINT)
            async with asyncio.timeout(GUARD):
                while len(seen) < 2:
                    await asyncio.sleep(0.001)

    try:
        with asyncio.Runner(loop_factory=asyncio.SelectorEventLoop) as runner:
            runner.run(main())
        ends = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    finally:
        for sig, handler in saved.items():
            real(sig, handler)
    assert seen == [signal.SIGTERM, signal.SIGINT]
    assert ends == {sig: signal.SIG_IGN for sig in STOP_SIGNALS}
    ours = [(sig, handler) for sig, handler in installed if sig in STOP_SIGNALS]
    first = next(i for i, (_, handler) in enumerate(ours) if callable(handler))
    defaults = (signal.SIG_DFL, signal.default_int_handler)
    assert not [pair for pair in ours[first:] if pair[1] in defaults], ours
