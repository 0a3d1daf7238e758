"""``python -m bot`` / ``durak-bot``: run the bot with long polling."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys

from .config import ConfigError, from_env, parse_args


def main(argv: list[str] | None = None) -> int:
    parse_args(sys.argv[1:] if argv is None else argv)
    try:
        config = from_env()
    except ConfigError as e:
        print(f"durak-bot: {e}", file=sys.stderr)
        return 2
    from .app import build_application, setup_logging, use_fast_event_loop

    setup_logging(config.log_level)
    fast = use_fast_event_loop()
    app = build_application(config)
    log = logging.getLogger(__name__)
    log.info("event loop: %s", "uvloop" if fast else "asyncio")
    log.info(
        "starting with %s; database %s",
        "a webhook" if config.webhook_url else "long polling",
        config.db_path,
    )
    asyncio.run(_run(app, config))
    return 0


async def _run(app, config) -> None:  # type: ignore[no-untyped-def]
    from .runner import serve

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await serve(app, config, stop)


if __name__ == "__main__":
    sys.exit(main())
