"""Small card-mask helpers the heuristics and the search share.

A card's worth for the heuristics is its rank, plus 13 for a trump: the lowest
trump outranks every plain ace, which is what "keep your trumps" means.
"""

from __future__ import annotations

from ..cards import RANK_LANES, ranks_of

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
