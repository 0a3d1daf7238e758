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
    from .app import build_application, setup_logging

    setup_logging(config.log_level)
    app = build_application(config)
    logging.getLogger(__name__).info("starting; database %s", config.db_path)
    app.run_polling(allowed_updates=["message", "callback_query", "my_chat_member"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
