"""Optional compiled build of the rules engine.

``DURAK_COMPILE=1 pip install --no-build-isolation .`` compiles the engine
modules with mypyc (part of mypy, already a dev tool here) for about twice the
speed: AI search and the engine benchmark want it (the AI's search modules
are compiled too, about 2.5x faster searches). Without the variable the
package is pure Python, which is what the tests and an editable install use.
"""

from __future__ import annotations

import os

from setuptools import setup

ENGINE = [
    "durak/cards.py",
    "durak/actions.py",
    "durak/errors.py",
    "durak/rules.py",
    "durak/view.py",
    "durak/games/base.py",
    "durak/games/podkidnoy/game.py",
    "durak/games/podkidnoy/deal.py",
    "durak/games/podkidnoy/bout.py",
    "durak/games/podkidnoy/after.py",
    "durak/games/podkidnoy/blind.py",
    "durak/games/podkidnoy/english.py",
    "durak/games/podkidnoy/match.py",
    "durak/games/pile/game.py",
    "durak/games/pile/deal.py",
    "durak/games/pile/play.py",
    "durak/games/pile/own_trumps.py",
    "durak/games/pile/piled.py",
    "durak/games/pile/road.py",
    "durak/selfplay.py",
    # the AI's hot path (the search and its playouts); observation.py and
    # public.py stay Python so observations pickle (for worker processes)
    "durak/ai/masks.py",
    "durak/ai/turns.py",
    "durak/ai/seen.py",
    "durak/ai/moves.py",
    "durak/ai/policy.py",
    "durak/ai/determinize.py",
    "durak/ai/endgame.py",
    "durak/ai/mcts.py",
]

ext_modules = []
if os.environ.get("DURAK_COMPILE") == "1":
    from mypyc.build import mypycify

    ext_modules = mypycify(ENGINE, opt_level="3")

setup(ext_modules=ext_modules)
