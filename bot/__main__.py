"""``python -m bot`` / ``durak-bot``: run the bot with long polling."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

from . import dbguard
from .config import ConfigError, check_database, from_env, parse_args


def main(argv: list[str] | None = None) -> int:
    parse_args(sys.argv[1:] if argv is None else argv)
    try:
        config = from_env()
        check_database(config)
        dbguard.hold(config)
        dbguard.check_usable(config)
    except ConfigError as e:
        dbguard.release_all()
        print(f"durak-bot: {e}", file=sys.stderr)
        return 2
    from .app import build_application, setup_logging, use_fast_event_loop

    setup_logging(config.log_level, secrets=(config.token,))
    fast = use_fast_event_loop()
    app = build_application(config)
    log = logging.getLogger(__name__)
    log.info("event loop: %s", "uvloop" if fast else "asyncio")
    log.info(
        "starting with %s; database %s",
        "a webhook" if config.webhook_url else "long polling",
        config.db_path,
    )
    from .transport.runner import StartError

    try:
        asyncio.run(_run(app, config))
    except StartError as e:
        print(f"durak-bot: {e}", file=sys.stderr)
        return 2
    if app.bot_data["durak"].db_trouble is not None:  # said in one ERROR line
        return dbguard.TROUBLE_EXIT_CODE
    return 0


#: However the stop goes, the process ends this long after the first stop signal.
STOP_DEADLINE = 9.5


async def _run(app, config) -> None:  # type: ignore[no-untyped-def]
    from .app import DurakBot
    from .transport.runner import serve

    log = logging.getLogger(__name__)
    stop = asyncio.Event()
    hurry = asyncio.Event()
    durak = app.bot_data["durak"]
    assert isinstance(durak, DurakBot)
    durak.hurry = hurry
    durak.stop = stop
    loop = asyncio.get_running_loop()

    def on_signal(sig: signal.Signals) -> None:
        if not stop.is_set():
            log.info("%s: stopping (the outbox is drained for at most %g s)", sig.name, 5.0)
            stop.set()
            _watchdog(STOP_DEADLINE)
        else:  # PTB's own handler raised SystemExit here, in the middle of the shutdown
            log.info("%s: already stopping; the outbox is not drained any further", sig.name)
            hurry.set()

    with stop_signals(loop, on_signal):
        await serve(app, config, stop)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def stop_signals(
    loop: asyncio.AbstractEventLoop, on_signal: Callable[[signal.Signals], None]
) -> Iterator[None]:
    """Call ``on_signal`` in the loop for every SIGINT/SIGTERM; ignore them after.

    Not ``loop.add_signal_handler``: removing the loop's handler puts the default one
    back (a KeyboardInterrupt, with a traceback, for a signal in that instant), and so
    does closing the loop. These handlers are ours alone, and one call each swaps them
    for SIG_IGN, so no late signal kills the interpreter while it winds down.
    """

    def on_os_signal(signum: int, _frame: object) -> None:
        # Runs in the main thread between two bytecodes, as asyncio's own SIGINT handler.
        loop.call_soon_threadsafe(on_signal, signal.Signals(signum))

    for sig in STOP_SIGNALS:
        signal.signal(sig, on_os_signal)
    try:
        yield
    finally:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)


def _watchdog(seconds: float) -> None:
    """The last resort: end the process if stopping hangs (a stuck thread, a bug)."""

    def expire() -> None:
        logging.getLogger(__name__).error("stopping took over %g s: exiting now", seconds)
        logging.shutdown()
        os._exit(1)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()


if __name__ == "__main__":
    sys.exit(main())
