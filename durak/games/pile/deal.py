"""Starting a pile game: the first dealer and the suit-choosing order, the deal of
a deck order (PILE-GAMES.md 2.3-2.5, 3.2-3.3, 4.2-4.3, record form 6.3), and a
game set up from a record's position (6.4)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...cards import Card, card_of, deck_mask, parse_card, parse_suit
from ...errors import MalformedRecord
from ..base import AFTER_LOSS, FIRST, SERIES
from . import own_trumps, piled
from .play import ANSWER, LEAD, settle

if TYPE_CHECKING:
    from .game import PileGame

POSITION_KEYS = frozenset(
    ("trump", "trumps", "trump_card", "stock", "hands", "pile", "discard", "turn", "phase")
)
#: Podkidnoy's position fields (RECORDS.md, VARIANTS.md): malformed in a pile game.
PODKIDNOY_KEYS = frozenset(("attacker", "first_bout", "second_trump_card", "match", "return_used"))


def first_dealer(players: Sequence[str], seed: int | str) -> int:
    """The first dealer of a series, drawn from the seed (rule 1.3). Its own stream,
    so a lobby can know it before the deck is shuffled."""
    return random.Random(f"durak:dealer:{seed}").randrange(len(players))


def dealer_and_choosing_order(
    players: Sequence[str], seed: int | str
) -> tuple[str, tuple[str, ...]]:
    """Own trumps (rule 2.2): the first dealer :meth:`Game.from_seed` will use for
    this seed, and the order in which players choose their suits (clockwise from the
    dealer's left neighbour): a lobby asks them in this order before dealing."""
    names = tuple(players)
    dealer = first_dealer(names, seed)
    n = len(names)
    return names[dealer], tuple(names[(dealer + k) % n] for k in range(1, n + 1))


def deal(
    g: PileGame,
    order: Sequence[Card],
    dealer: int,
    series: str,
    previous_loser: int | None,
    suits: dict[int, int] | None = None,
    swap_draws: dict[int, int] | None = None,
    rng: random.Random | None = None,
) -> None:
    """Deal a deck order (top card first) from the dealer's left, and set who leads.
    Own trumps needs ``suits``; its swap draws come from ``swap_draws`` (a record)
    or ``rng``. ``ValueError`` if anything does not fit."""
    n, game = g.n, g.rules.game
    ids = [c.id for c in order]
    if len(ids) != 36 or sum(1 << i for i in set(ids)) != deck_mask(36):
        raise ValueError("the deck order must list each of the 36 cards once")
    if not 0 <= dealer < n:
        raise ValueError("no such dealer")
    if series not in SERIES:
        raise ValueError(f"series must be one of {SERIES}")
    if series == AFTER_LOSS and previous_loser != dealer:
        raise ValueError("after a loss the previous loser deals")
    g.dealer = dealer
    count = 3 * n if game == "piled" else (35 if n == 5 else 36)
    for pos in range(count):
        g.hands[(dealer + 1 + pos) % n] |= 1 << ids[pos]
    leader = (dealer + 1) % n
    start: dict[str, Any] = {
        "deck_order": [str(c) for c in order],
        "dealer": g.players[dealer],
        "series": series,
        "previous_loser": None if previous_loser is None else g.players[previous_loser],
    }
    if game == "own_trumps":
        if suits is None or sorted(suits) != list(range(n)) or len(set(suits.values())) != n:
            raise ValueError("own trumps needs a different suit for every player")
        g.suits = [suits[s] for s in range(n)]
        made = own_trumps.swap(g, swap_draws, rng)
        start["trumps"] = {g.players[s]: "SHDC"[g.suits[s]] for s in range(n)}
        start["swap_draws"] = {g.players[r]: str(card_of(c)) for r, c in sorted(made.items())}
    else:
        if suits is not None or swap_draws:
            raise ValueError("trumps and swap_draws belong to own trumps")
        g.trump_card = ids[35] if game == "road" else ids[count]
        g.trump = g.trump_card >> 4
        g.suits = [g.trump] * n
        if game == "road" and n == 5:
            g.out_of_play = ids[35]
        if game == "piled":
            g.stock = [ids[count], *reversed(ids[count + 1 :])]
            if series != AFTER_LOSS:
                holder = piled.lowest_trump_holder(g)
                leader = holder if holder >= 0 else leader
    g.turn, g.phase = leader, LEAD
    g.start = start


def read_suits(g: PileGame, value: Any) -> dict[int, int]:
    """A record's ``trumps``: every player's suit, all different."""
    if not isinstance(value, dict):
        raise MalformedRecord("trumps must map every player to a suit")
    suits = {}
    for name, letter in value.items():
        if name not in g.players:
            raise MalformedRecord(f"trumps name an unknown player {name!r}")
        suits[g.players.index(name)] = int(parse_suit(letter))
    if len(suits) != g.n or len(set(suits.values())) != g.n:
        raise MalformedRecord("trumps must give every player a different suit")
    return suits


def read_deck_start(g: PileGame, start: dict[str, Any]) -> None:
    """The record's deck-order form (6.3)."""
    allowed = {"deck_order", "dealer", "series", "previous_loser"}
    if g.rules.game == "own_trumps":
        allowed |= {"trumps", "swap_draws"}
    extra = set(start) - allowed
    if extra:
        raise MalformedRecord(f"{g.rules.game} deck start does not take {sorted(extra)}")
    names = list(g.players)
    order = [parse_card(c) for c in start["deck_order"]]
    dealer = names.index(start["dealer"])
    series = start.get("series", FIRST)
    loser = start.get("previous_loser")
    suits = draws = None
    if g.rules.game == "own_trumps":
        suits = read_suits(g, start.get("trumps"))
        raw = start.get("swap_draws") or {}
        if not isinstance(raw, dict):
            raise MalformedRecord("swap_draws must be an object")
        draws = {}
        for name, card in raw.items():
            if name not in names:
                raise MalformedRecord(f"swap_draws name an unknown player {name!r}")
            draws[names.index(name)] = parse_card(card).id
    deal(g, order, dealer, series, None if loser is None else names.index(loser), suits, draws)
    if g.rules.game == "own_trumps":
        g.start["swap_draws"] = dict(start.get("swap_draws") or {})


def _cards(value: Any, what: str) -> list[int]:
    if not isinstance(value, list):
        raise MalformedRecord(f"{what} must be a list of cards")
    return [parse_card(c).id for c in value]


def read_position(g: PileGame, start: dict[str, Any]) -> None:
    """The record's position form (6.4): the state between two actions."""
    game = g.rules.game
    bad = set(start) & PODKIDNOY_KEYS
    if bad:
        raise MalformedRecord(f"{sorted(bad)} are podkidnoy fields")
    extra = set(start) - POSITION_KEYS
    if extra:
        raise MalformedRecord(f"a pile-game position does not take {sorted(extra)}")
    seen: list[int] = []
    if game == "own_trumps":
        if "trump" in start or start.get("trump_card") is not None:
            raise MalformedRecord("own trumps gives trumps, not trump or trump_card")
        suits = read_suits(g, start.get("trumps"))
        g.suits = [suits[s] for s in range(g.n)]
    else:
        if "trumps" in start:
            raise MalformedRecord("trumps belongs to own trumps")
        g.trump = int(parse_suit(start["trump"]))
        g.suits = [g.trump] * g.n
        tc = start.get("trump_card")
        if tc is not None:
            g.trump_card = parse_card(tc).id
            if g.trump_card >> 4 != g.trump:
                raise MalformedRecord("the trump card is not of the trump suit")
            seen.append(g.trump_card)
            if game == "road":
                if g.n != 5:
                    raise MalformedRecord("road has a card out of play only with 5 players")
                g.out_of_play = g.trump_card
    stock = _cards(start.get("stock", []), "stock")
    if stock and game != "piled":
        raise MalformedRecord("only piled has a stock")
    if stock and g.trump_card < 0:
        raise MalformedRecord("a non-empty stock needs its trump card")
    seen += stock
    if game == "piled" and g.trump_card >= 0:
        g.stock = [g.trump_card, *reversed(stock)]
    hands = start.get("hands", {})
    if not isinstance(hands, dict):
        raise MalformedRecord("hands must be an object")
    for name, cards in hands.items():
        if name not in g.players:
            raise MalformedRecord(f"hands name an unknown player {name!r}")
        ids = _cards(cards, "hand")
        seen += ids
        g.hands[g.players.index(name)] = sum(1 << i for i in set(ids))
    g.pile = _cards(start.get("pile", []), "pile")
    seen += g.pile
    discard = start.get("discard", [])
    if isinstance(discard, list):
        ids = _cards(discard, "discard")
        seen += ids
        g.discard, g.discard_mask = len(ids), sum(1 << i for i in set(ids))
    elif type(discard) is int and discard >= 0:
        g.discard = discard
    else:
        raise MalformedRecord("discard must be a list of cards or a count")
    if g.discard and game != "road":
        raise MalformedRecord("only road has a discard")
    if len(set(seen)) != len(seen):
        raise MalformedRecord("a card appears twice")
    if any(not deck_mask(36) >> i & 1 for i in seen):
        raise MalformedRecord("a card is not in the deck")
    if len(seen) - g.discard_mask.bit_count() + g.discard > 36:
        raise MalformedRecord("more cards than the deck holds")
    if g.stock and any(h.bit_count() < piled.HAND for h in g.hands):
        raise MalformedRecord("with cards left to draw every hand holds at least 3")
    g.out = [h == 0 for h in g.hands]
    turn = start.get("turn")
    if turn not in g.players:
        raise MalformedRecord(f"unknown player on turn {turn!r}")
    phase = start.get("phase")
    natural = ANSWER if g.pile else LEAD
    if phase is None:
        if game != "road" and g.pile:
            raise MalformedRecord("with cards on the pile the phase must be given")
        phase = natural
    if phase not in (LEAD, ANSWER):
        raise MalformedRecord(f"phase must be lead or answer, not {phase!r}")
    if game == "road" and phase != natural:
        raise MalformedRecord("in road the phase follows from the pile")
    if phase == ANSWER and not g.pile:
        raise MalformedRecord("answer with an empty pile")
    seat = g.players.index(turn)
    if g.out[seat]:
        if phase == ANSWER:
            raise MalformedRecord("the player on turn to answer holds no cards")
        seat = g.next_player(seat)
    g.turn, g.phase = seat, phase
    g.start = dict(start)
    if seat < 0:
        g.turn = -1
    settle(g)
