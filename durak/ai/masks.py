"""Small card-mask helpers the heuristics and the search share.

A card's worth for the heuristics is its rank, plus 13 for a trump: the lowest
trump outranks every plain ace, which is what "keep your trumps" means.
"""

from __future__ import annotations

from ..cards import BEATERS, RANK_LANES, ranks_of
from ..games.podkidnoy.bout import JAPANESE_BEATERS, QUEEN_OF_SPADES
from ..rules import Rules

TRUMP_BONUS = 13


def worth(card: int, trump: int) -> int:
    return (card & 15) + (TRUMP_BONUS if card >> 4 == trump else 0)


def low_bit(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def ids(mask: int) -> list[int]:
    """The card ids of a mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def cheapest(mask: int, trumps: int) -> int:
    """The least worth card of ``mask`` (-1 if empty): the lowest plain card by
    rank, else the lowest trump."""
    plain = mask & ~trumps
    if plain:
        rank = low_bit(ranks_of(plain))
        return low_bit(plain & (RANK_LANES << rank))
    return low_bit(mask) if mask else -1


def by_worth(mask: int, trump: int) -> list[int]:
    return sorted(ids(mask), key=lambda c: worth(c, trump))


def beaters_for(rules: Rules, trump: int) -> tuple[int, ...]:
    """``table[card]``: the cards that beat ``card`` under ``rules`` (VARIANTS.md:
    ``japanese``'s clubs beaten only by clubs, ``damka``'s uncoverable queen of
    spades). The engine's own tables, so the heuristics and the rules agree.
    Under ``blind`` this is what *beats*, not what may be played."""
    table = JAPANESE_BEATERS[trump] if rules.japanese else BEATERS[trump]
    if rules.damka:
        key = (trump, rules.japanese is not None)
        damka = _DAMKA.get(key)
        if damka is None:
            damka = _DAMKA[key] = (
                *table[:QUEEN_OF_SPADES],
                0,
                *table[QUEEN_OF_SPADES + 1 :],
            )
        return damka
    return table


_DAMKA: dict[tuple[int, bool], tuple[int, ...]] = {}
