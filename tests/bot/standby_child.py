"""``python -m tests.bot.standby_child``: ``python -m bot`` with the tests' clock.

The same start as :mod:`bot.__main__` (settings from the environment, the same
application, long polling, PTB's signal handling and shutdown), but with
Telegram's limits and the turn clock 20 times faster (:data:`tests.bot.harness.SCALE`),
as the fake Bot API server of the test runs them, so that whole games take
seconds. The standby test runs two of these on one PostgreSQL database, each with its
own ``DURAK_TEST_AGENT`` (the User-Agent of its requests, which the fake server notes).
"""

from __future__ import annotations

import os
import sys

from bot.app import ALLOWED_UPDATES, build_application, setup_logging
from bot.config import ConfigError, from_env
from bot.transport.outbox import SendLimits

from .harness import SCALE, durak_of


def main() -> int:
    try:
        config = from_env()
    except ConfigError as e:
        print(f"durak-bot: {e}", file=sys.stderr)
        return 2
    setup_logging(config.log_level)
    app = build_application(config, SendLimits().scaled(SCALE))
    bot = durak_of(app)
    bot.time_scale = SCALE
    bot.away_delay = 0.02
    bot.ai_pause = 0.02
    bot.hard_budget_ms = 50
    bot.sweep_every = 0.2
    agent = os.environ.get("DURAK_TEST_AGENT")
    if agent:  # the fake Bot API tells the processes' requests apart by it
        for http in bot.http:
            http.USER_AGENT = agent
    app.run_polling(allowed_updates=ALLOWED_UPDATES, poll_interval=0, timeout=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
