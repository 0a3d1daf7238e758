"""``python -m bot`` / ``durak-bot``: run the bot with long polling."""

from __future__ import annotations

import logging
import sys

from .config import ConfigError, from_env, parse_args


def main(argv: list[str] | None = None) -> int:
    parse_args(sys.argv[1:] if argv is None else argv)
    try:
        config = from_env()
    except ConfigError as e:
        print(f"durak-bot: {e}", file=sys.stderr)
        return 2
    from .app import ALLOWED_UPDATES, build_application, setup_logging, use_fast_event_loop

    setup_logging(config.log_level)
    fast = use_fast_event_loop()
    app = build_application(config)
    log = logging.getLogger(__name__)
    log.info("event loop: %s", "uvloop" if fast else "asyncio")
    if config.webhook_url:
        log.info("starting with a webhook on %s:%d", config.webhook_listen, config.webhook_port)
        app.run_webhook(
            listen=config.webhook_listen,
            port=config.webhook_port,
            url_path=config.webhook_path,
            secret_token=config.webhook_secret,
            webhook_url=config.webhook_url,
            allowed_updates=ALLOWED_UPDATES,
        )
    else:
        log.info("starting with long polling; database %s", config.db_path)
        app.run_polling(allowed_updates=ALLOWED_UPDATES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
