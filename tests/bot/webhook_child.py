"""``python -m tests.bot.webhook_child``: ``python -m bot`` in webhook mode with the tests'
clock.

The same start as :mod:`bot.__main__` (settings from the environment, the webhook's server
with the Mini App beside it, the same signals and stop), with Telegram's limits and the
turn clock 20 times faster (:data:`tests.bot.harness.SCALE`), as the fake Bot API server of
the test runs them. ``DURAK_TEST_WEBAPP_AUTH``: the Mini App's seconds for initData (the
bot's 3 s otherwise), so that a test's crowd is still waiting while it presses.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import replace

from bot.__main__ import _run
from bot.app import build_application, setup_logging
from bot.config import ConfigError, from_env
from bot.transport.outbox import SendLimits
from bot.webapp import LIMITS

from .harness import SCALE, durak_of


def main() -> int:
    try:
        config = from_env()
    except ConfigError as e:
        print(f"durak-bot: {e}", file=sys.stderr)
        return 2
    setup_logging(config.log_level, secrets=(config.token,))
    app = build_application(config, SendLimits().scaled(SCALE))
    bot = durak_of(app)
    bot.time_scale = SCALE
    bot.away_delay = 0.02
    bot.ai_pause = 0.02
    bot.hard_budget_ms = 50
    bot.sweep_every = 0.2
    auth = os.environ.get("DURAK_TEST_WEBAPP_AUTH")
    if auth:
        bot.webapp_limits = replace(LIMITS, auth=float(auth))
    asyncio.run(_run(app, config))
    return 0


if __name__ == "__main__":
    sys.exit(main())
