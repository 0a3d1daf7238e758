"""Cards, ranks, suits and the compact card sets the engine computes with.

A card has an integer id ``suit * 16 + rank`` (rank 2..14), so a set of cards is
one int bitmask with a 16-bit lane per suit: "every card of rank r" and "every
card of suit s above rank r" are single mask operations.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache


class Suit(enum.IntEnum):
    SPADES = 0
    HEARTS = 1
    DIAMONDS = 2
    CLUBS = 3

    @property
    def letter(self) -> str:
        return "SHDC"[self]

    @property
    def symbol(self) -> str:
        return "♠♥♦♣"[self]


class Rank(enum.IntEnum):
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def text(self) -> str:
        return _RANK_TEXT[self]


_RANK_TEXT = {r: str(int(r)) for r in Rank if r <= 10} | {
    Rank.JACK: "J",
    Rank.QUEEN: "Q",
    Rank.KING: "K",
    Rank.ACE: "A",
}


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One playing card; the 52 instances are interned in ``CARDS``."""

    suit: Suit
    rank: Rank
    #: ``suit * 16 + rank``: the card's bit in a card mask (stored, it is hot).
    id: int = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", int(self.suit) * 16 + int(self.rank))

    @property
    def bit(self) -> int:
        return 1 << self.id

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle as the interned card: a mypyc-compiled frozen dataclass cannot
        be restored field by field (AI decisions run in worker processes)."""
        return (card_of, (self.id,))

    def __str__(self) -> str:
        """The record form: ``10H``."""
        return TEXTS[self.id]

    def __repr__(self) -> str:
        return f"Card({self})"

    @property
    def display(self) -> str:
        """The display form: ``10♥``."""
        return self.rank.text + self.suit.symbol


#: Every card by id (``None`` in the unused slots).
CARDS: tuple[Card | None, ...] = tuple(
    Card(Suit(i // 16), Rank(i % 16)) if 2 <= i % 16 <= 14 else None for i in range(64)
)


#: Every card's record form (``10H``) by id (``""`` in the unused slots): made once,
#: as snapshots and records write every card of a game on every action.
TEXTS: tuple[str, ...] = tuple(
    _RANK_TEXT[Rank(i % 16)] + "SHDC"[i // 16] if 2 <= i % 16 <= 14 else "" for i in range(64)
)


def card_of(card_id: int) -> Card:
    card = CARDS[card_id]
    assert card is not None
    return card


DECK_SIZES = (24, 36, 52)
_LOWEST_RANK = {24: Rank.NINE, 36: Rank.SIX, 52: Rank.TWO}


def lowest_rank(deck_size: int) -> Rank:
    return _LOWEST_RANK[deck_size]


@cache
def deck(deck_size: int) -> tuple[Card, ...]:
    """The deck in a fixed order: suits S H D C, ranks ascending."""
    low = _LOWEST_RANK[deck_size]
    return tuple(card_of(int(s) * 16 + int(r)) for s in Suit for r in Rank if r >= low)


@cache
def deck_mask(deck_size: int) -> int:
    return mask_of(deck(deck_size))


# ---- parsing and formatting -------------------------------------------------

_SUIT_BY_TEXT = {
    "S": Suit.SPADES,
    "H": Suit.HEARTS,
    "D": Suit.DIAMONDS,
    "C": Suit.CLUBS,
    "♠": Suit.SPADES,
    "♥": Suit.HEARTS,
    "♦": Suit.DIAMONDS,
    "♣": Suit.CLUBS,
    "♤": Suit.SPADES,
    "♡": Suit.HEARTS,
    "♢": Suit.DIAMONDS,
    "♧": Suit.CLUBS,
}
_RANK_BY_TEXT = {r.text: r for r in Rank} | {"T": Rank.TEN}


def parse_card(text: object) -> Card:
    """Parse ``10H``, ``th``, ``10♥``; raise ``ValueError`` on anything else."""
    if not isinstance(text, str):
        raise ValueError(f"not a card: {text!r}")
    t = text.strip().replace("\ufe0f", "").upper()
    if len(t) < 2 or len(t) > 3:
        raise ValueError(f"not a card: {text!r}")
    rank = _RANK_BY_TEXT.get(t[:-1])
    suit = _SUIT_BY_TEXT.get(t[-1])
    if rank is None or suit is None:
        raise ValueError(f"not a card: {text!r}")
    return card_of(int(suit) * 16 + int(rank))


def parse_suit(text: object) -> Suit:
    if not isinstance(text, str):
        raise ValueError(f"not a suit: {text!r}")
    suit = _SUIT_BY_TEXT.get(text.strip().replace("\ufe0f", "").upper())
    if suit is None:
        raise ValueError(f"not a suit: {text!r}")
    return suit


def parse_cards(texts: Iterable[str] | str) -> tuple[Card, ...]:
    """Parse a list of card texts, or one string of them separated by spaces."""
    if isinstance(texts, str):
        texts = texts.replace(",", " ").split()
    return tuple(parse_card(t) for t in texts)


def format_cards(cards: Iterable[Card], display: bool = True) -> str:
    return " ".join(c.display if display else str(c) for c in cards)


# ---- masks -------------------------------------------------------------------

RANK_LANES = 0x0001_0001_0001_0001  # one bit per suit lane
SUIT_LANE = 0xFFFF


def mask_of(cards: Iterable[Card]) -> int:
    m = 0
    for c in cards:
        m |= 1 << (int(c.suit) * 16 + int(c.rank))
    return m


def ids_of(mask: int) -> Iterator[int]:
    """Card ids in a mask, ascending (suit-major)."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def cards_of(mask: int) -> tuple[Card, ...]:
    return tuple(CARDS[i] for i in ids_of(mask))  # type: ignore[misc]


def ranks_of(mask: int) -> int:
    """The 16-bit set of ranks present in a card mask."""
    return (mask | mask >> 16 | mask >> 32 | mask >> 48) & SUIT_LANE


def of_ranks(ranks: int) -> int:
    """Every card (all suits) of the ranks in a 16-bit rank set."""
    return ranks * RANK_LANES


def suit_mask(suit: int) -> int:
    return SUIT_LANE << (16 * suit)


def _beaters(card_id: int, trump: int) -> int:
    suit, rank = card_id >> 4, card_id & 15
    higher = ((SUIT_LANE << (rank + 1)) & SUIT_LANE) << (16 * suit)
    if suit == trump:
        return higher
    return higher | (SUIT_LANE << (16 * trump))


#: ``BEATERS[trump][card_id]``: every card that beats the card (a table: it is hot).
BEATERS = tuple(tuple(_beaters(i, t) for i in range(64)) for t in range(4))


def beaters_mask(card_id: int, trump: int) -> int:
    """Every card that beats ``card_id``: a higher one of its suit, or any trump."""
    return BEATERS[trump][card_id]


def sort_key(card: Card, trump: Suit | None) -> tuple[int, int, int]:
    """Hand order for display: plain suits first, trumps last, low to high."""
    return (1 if card.suit == trump else 0, int(card.suit), int(card.rank))
