"""Reading cards back out of message texts, for checks on what a chat showed.

Cards are written in the reader's own letters (``render.RANK_LETTERS``: ``Д♥`` in
Russian, ``W♠`` in Polish), so the parser reads every language's letters: a watcher
that knew only ``J Q K A`` would go blind in a Russian group.
"""

from __future__ import annotations

import re

from bot.ui.render import RANK_LETTERS
from durak.cards import parse_card

#: Each language's face letter back to the engine's rank (``Д`` -> ``Q``).
NATIVE = {native: rank for letters in RANK_LETTERS.values() for rank, native in letters.items()}
_LETTERS = "".join(sorted(set("JQKA") | set(NATIVE)))
CARD = re.compile(rf"(10|[2-9{_LETTERS}])([♠♥♦♣])")


def cards_in(text: str) -> set[str]:
    """Every card written in display form (``10♥``, ``Д♥``) in a text, as ``10H``/``QH``."""
    return {str(parse_card(NATIVE.get(rank, rank) + suit)) for rank, suit in CARD.findall(text)}
