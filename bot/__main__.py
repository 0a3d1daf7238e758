"""``python -m bot`` / ``durak-bot``: run the bot with long polling."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading

from . import dbguard
from .config import ConfigError, check_database, from_env, parse_args


def main(argv: list[str] | None = None) -> int:
    parse_args(sys.argv[1:] if argv is None else argv)
    try:
        config = from_env()
        check_database(config)
        dbguard.hold(config)
        dbguard.check_writable(config)
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
    from .runner import StartError

    try:
        asyncio.run(_run(app, config))
    except StartError as e:
        print(f"durak-bot: {e}", file=sys.stderr)
        return 2
    return 0


#: However the stop goes, the process ends this long after the first stop signal.
STOP_DEADLINE = 9.5


async def _run(app, config) -> None:  # type: ignore[no-untyped-def]
    from .app import DurakBot
    from .runner import serve

    log = logging.getLogger(__name__)
    stop = asyncio.Event()
    hurry = asyncio.Event()
    durak = app.bot_data["durak"]
    assert isinstance(durak, DurakBot)
    durak.hurry = hurry
    loop = asyncio.get_running_loop()

    def on_signal(sig: signal.Signals) -> None:
        if not stop.is_set():
            log.info("%s: stopping (the outbox is drained for at most %g s)", sig.name, 5.0)
            stop.set()
            _watchdog(STOP_DEADLINE)
        else:  # PTB's own handler raised SystemExit here, in the middle of the shutdown
            log.info("%s: already stopping; the outbox is not drained any further", sig.name)
            hurry.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal, sig)
    try:
        await serve(app, config, stop)
    finally:
        # Stopped: a late signal must not kill the interpreter while it winds down
        # (the loop's handlers go with the loop, and the default one would).
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
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
