"""Reading cards back out of message texts, for checks on what a chat showed."""

from __future__ import annotations

import re

from durak.cards import parse_card

CARD = re.compile(r"(10|[2-9JQKA])([♠♥♦♣])")


def cards_in(text: str) -> set[str]:
    """Every card written in display form (``10♥``) in a text, as ``10H``."""
    return {str(parse_card(rank + suit)) for rank, suit in CARD.findall(text)}
