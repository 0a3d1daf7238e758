"""Benchmark and cross-check of the rendering path without Telegram: random games of
every family (variants and pile games included), and at every state the group's
table and every seat's panel (as sent and as Refresh shows it) in two languages,
plus the snapshot the service stores per action.

    python -m tests.bot.bench_render [--steps 300]

Prints how many states it rendered and a SHA-256 of everything rendered: two trees
that render alike print the same digest (the check that a speed-up changed no
text, button or snapshot; the digest quoted is at the default ``--steps``). Time it
with ``/usr/bin/time -f %U`` (docs/benchmarks-log.md, "Issue 10 item 1: one view per
state, rendering once").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random

from bot.screens import presenter
from bot.ui import events, render
from durak import Game, Rules
from durak.selfplay import NAMES, random_step
from durak.service import Seat
from durak.service.codec import snapshot_text as _snapshot_text

RULES = [
    Rules(),
    Rules(transfer=True, transfer_by_showing_trump=True, trump_exchange=True),
    Rules(blind=True),
    Rules(english=True),
    Rules(partial_defence=True, deck=24),
    Rules(return_last_card=True, damka=True),
    Rules(trump_change=True, show_last_discard=True),
    Rules(sprint=True),
    Rules(game="own_trumps"),
    Rules(game="piled"),
    Rules(game="road", show_last_discard=True),
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bot.bench_render")
    parser.add_argument("--steps", type=int, default=300, help="actions at most per game")
    steps = parser.parse_args(argv).steps
    digest = hashlib.sha256()
    count = 0
    for gi, rules in enumerate(RULES):
        for k in (2, 3, 4):
            low, high = rules.player_range()
            n = min(max(k, low), high)
            game_id = gi * 10 + k
            g = Game.from_seed(rules, NAMES[:n], game_id)
            seats = tuple(Seat(i, 100 + i, name) for i, name in enumerate(g.players))
            rng = random.Random(k)
            for _step in range(steps):
                story = events.story(game_id, g)
                t = render.Table(
                    game_id, len(g.history), "Chat", seats, g.view(None), None, 20, story, ()
                )
                for lang in ("en", "ru"):
                    parts: list[object] = [presenter._table_content(lang, t, g, "bot", False)]
                    for s in range(n):
                        parts.append(presenter._panel_content(lang, t, g, s, False))
                        parts.append(presenter._panel_content(lang, t, g, s, False, True))
                    digest.update(json.dumps(parts, ensure_ascii=False).encode())
                digest.update(_snapshot_text(g).encode())
                count += 1
                if g.result is not None:
                    break
                g.apply(*random_step(g, rng))
    print(count, digest.hexdigest())


if __name__ == "__main__":
    main()
