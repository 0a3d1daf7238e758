"""The deal and who opens (RULES.md sections 2 and 3), and a game set up from a
record's position instead of a deal (RECORDS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...cards import Card, deck_mask, parse_card, parse_suit, suit_mask
from ...errors import MalformedRecord
from ..base import AFTER_LOSS, SERIES
from . import after, blind, bout, english
from . import match as matches

if TYPE_CHECKING:
    from .game import Podkidnoy

# Why the first bout's attacker opens (shown on the table).
OPENER_LOWEST_TRUMP = "lowest_trump"
OPENER_NO_TRUMP = "no_trump"
OPENER_LOSER_DEALS = "loser_deals"
OPENER_ATTACK_LOSER = "attack_loser"
OPENER_POSITION = "position"
#: sprint, blind and english: the dealer's left neighbour opens, always.
OPENER_DEALER_LEFT = "dealer_left"
OPENER_SPRINT = OPENER_DEALER_LEFT


def deal(
    g: Podkidnoy,
    order: Sequence[Card],
    dealer: int,
    series: str,
    previous_loser: int | None,
) -> None:
    """Deal an explicit deck order (top card first) and begin the first bout."""
    rules, n = g.rules, g.n
    ids = [c.id for c in order]
    if len(ids) != rules.deck or sum(1 << i for i in set(ids)) != deck_mask(rules.deck):
        raise ValueError(f"the deck order must list each of the {rules.deck} cards once")
    if not 0 <= dealer < n:
        raise ValueError("no such dealer")
    if series not in SERIES:
        raise ValueError(f"series must be one of {SERIES}")
    if series == AFTER_LOSS and previous_loser != dealer:
        raise ValueError("after a loss the previous loser deals")
    pos = 0
    for _ in range(rules.hand_size):
        for k in range(1, n + 1):
            g.hands[(dealer + k) % n] |= 1 << ids[pos]
            pos += 1
    if rules.sprint or rules.japanese or rules.trump_change:
        lay_rest(g, ids[pos:])
    elif pos < len(ids):
        g.trump_card = ids[pos]
        g.stock = [ids[pos], *reversed(ids[pos + 1 :])]
    else:
        g.trump_card = ids[pos - 1]  # the dealer's last card shows trump
    if not rules.japanese:
        g.trump = g.trump_card >> 4
    g.dealer = dealer
    g.start = {
        "deck_order": [str(c) for c in order],
        "dealer": g.players[dealer],
        "series": series,
        "previous_loser": None if previous_loser is None else g.players[previous_loser],
    }
    if g.slots is not None:
        blind.dealt(g, ids, dealer)
    if rules.sprint:
        sprint_start(g)
    else:
        choose_opener(g, series)
    first_bout(g, g.opener, -1)


def first_bout(g: Podkidnoy, designated: int, taker: int) -> None:
    """Begin the game's first bout; with ``english`` the pair rule picks its
    opener (and ``g.opener`` names him)."""
    if g.varied and g.rules.english:
        english.start_bout(g, designated, taker)
        if g.result is None:
            g.opener = g.attacker
        return
    bout.begin(g, designated)


def lay_rest(g: Podkidnoy, rest: list[int]) -> None:
    """The cards after the deal under VARIANTS.md's options. ``japanese``: no card
    is turned, the trump is the option's suit (8.2). ``sprint``: the rest is out
    of play, its top card shows trump (2.1). ``trump_change``: the second trump
    card face down, the trump card on it, then the stock (1.1); the stock list
    holds both at its bottom, so "stock empty" means all three are gone (1.2)."""
    rules = g.rules
    if rules.japanese:
        g.trump = int(parse_suit(rules.japanese))
    elif rest:
        g.trump_card = rest[1] if rules.trump_change else rest[0]
    if rules.sprint:
        g.out_of_play = sum(1 << c for c in rest)
    elif rules.trump_change:
        g.second_trump = rest[0]
        g.stock = [rest[0], rest[1], *reversed(rest[2:])]
    else:
        g.stock = list(reversed(rest))


def sprint_start(g: Podkidnoy) -> None:
    """VARIANTS.md 2.2 and 12.2: the dealer's left neighbour opens every deal with
    any card; the start names the match, not the RULES series."""
    g.opener, g.opener_reason = (g.dealer + 1) % g.n, OPENER_SPRINT
    del g.start["series"], g.start["previous_loser"]
    g.start["match"] = g.match.to_json()


def choose_opener(g: Podkidnoy, series: str) -> None:
    """RULES.md section 3: the lowest trump in the first game and after a draw,
    the dealer's left neighbour after a loss (the loser's right with
    ``attack_loser``)."""
    n, dealer = g.n, g.dealer
    if g.rules.blind or g.rules.english:
        # VARIANTS.md 3.3 and 5.5: nobody looks for the lowest trump
        g.opener, g.opener_reason = (dealer + 1) % n, OPENER_DEALER_LEFT
        return
    if series == AFTER_LOSS and g.rules.attack_loser:
        g.opener, g.opener_reason = (dealer - 1) % n, OPENER_ATTACK_LOSER
        return
    if series == AFTER_LOSS:
        g.opener, g.opener_reason = (dealer + 1) % n, OPENER_LOSER_DEALS
        return
    low = lowest = -1
    trumps = suit_mask(g.trump)
    for seat in range(n):
        mine = g.hands[seat] & trumps
        if mine:
            card = (mine & -mine).bit_length() - 1
            if lowest < 0 or card < lowest:
                lowest, low = card, seat
    if low >= 0:
        g.opener, g.opener_reason, g.opener_card = low, OPENER_LOWEST_TRUMP, lowest
    else:
        g.opener, g.opener_reason = (dealer + 1) % n, OPENER_NO_TRUMP


def read_position(g: Podkidnoy, start: dict[str, Any]) -> None:
    """Set up the record's position form (between bouts) and begin its bout."""
    if not isinstance(start, dict):
        raise MalformedRecord("start must be an object")
    g.trump = int(parse_suit(start["trump"]))
    tc = start.get("trump_card")
    stock = [parse_card(c).id for c in _list(start.get("stock", []), "stock")]
    seen = list(stock)
    check_variant_position(g, start)
    if tc is not None:
        tcid = parse_card(tc).id
        if tcid >> 4 != g.trump:
            raise MalformedRecord("the trump card is not of the trump suit")
        g.trump_card = tcid
        seen.append(tcid)
        g.stock = [tcid, *reversed(stock)]
    elif stock and not g.rules.japanese:
        raise MalformedRecord("a non-empty stock needs its trump card")
    else:
        g.stock = list(reversed(stock))
    read_second_trump(g, start, seen)
    hands = start.get("hands", {})
    if not isinstance(hands, dict):
        raise MalformedRecord("hands must be an object")
    orders: list[tuple[int, list[int]]] = []
    for name, cards in hands.items():
        if name not in g.players:
            raise MalformedRecord(f"hands name an unknown player {name!r}")
        ids = [parse_card(c).id for c in _list(cards, "hand")]
        seen += ids
        g.hands[g.players.index(name)] = sum(1 << i for i in set(ids))
        orders.append((g.players.index(name), ids))
    discard = start.get("discard", [])
    if isinstance(discard, list):
        ids = [parse_card(c).id for c in discard]
        seen += ids
        g.discard, g.discard_mask = len(ids), sum(1 << i for i in set(ids))
    elif type(discard) is int and discard >= 0:
        g.discard = discard
    else:
        raise MalformedRecord("discard must be a list of cards or a count")
    if len(set(seen)) != len(seen):
        raise MalformedRecord("a card appears twice")
    full = deck_mask(g.rules.deck)
    if any(not (full >> i) & 1 for i in seen):
        raise MalformedRecord("a card is not in this deck")
    if len(seen) - g.discard_mask.bit_count() + g.discard > g.rules.deck:
        raise MalformedRecord("more cards than the deck holds")
    first = start.get("first_bout", False)
    if type(first) is not bool:
        raise MalformedRecord("first_bout must be true or false")
    g.first_bout = first
    attacker = start.get("attacker")
    if attacker not in g.players:
        raise MalformedRecord(f"unknown attacker {attacker!r}")
    if g.stock:
        if not all(g.hands):
            raise MalformedRecord("with cards in the stock every player holds cards")
    else:
        g.out = [h == 0 for h in g.hands]
    taker = read_variant_fields(g, start)
    blind.start_slots(g, orders)
    g.start = dict(start)
    read_match(g, start)
    seat = g.players.index(attacker)
    g.opener = seat
    if after.finished(g):
        return
    if g.out[seat]:
        seat = g.next_active(seat)
    g.opener = seat
    if g.rules.blind and not g.hands[g.defender_for(seat)]:
        raise MalformedRecord("blind: the player who must answer holds no card")
    first_bout(g, seat, taker)


def read_variant_fields(g: Podkidnoy, start: dict[str, Any]) -> int:
    """VARIANTS.md 12.3: ``return_used`` (``return_last_card`` only) and ``taker``
    (``english`` only; returned as a seat, -1 for nobody)."""
    used = start.get("return_used", False)
    if type(used) is not bool:
        raise MalformedRecord("return_used must be true or false")
    if "return_used" in start and not g.rules.return_last_card:
        raise MalformedRecord("return_used belongs to return_last_card")
    g.return_used = used
    taker = start.get("taker")
    if taker is None:
        return -1
    if not g.rules.english:
        raise MalformedRecord("taker belongs to english")
    if taker not in g.players:
        raise MalformedRecord(f"unknown taker {taker!r}")
    return g.players.index(taker)


def check_variant_position(g: Podkidnoy, start: dict[str, Any]) -> None:
    """VARIANTS.md 12.3: what ``japanese`` and ``sprint`` forbid in a position."""
    rules = g.rules
    if rules.japanese:
        if start.get("trump_card") is not None:
            raise MalformedRecord("japanese has no trump card")
        if g.trump != int(parse_suit(rules.japanese)):
            raise MalformedRecord(f"japanese {rules.japanese}: trump is {rules.japanese}")
    if rules.sprint and (start.get("trump_card") is not None or start.get("stock")):
        raise MalformedRecord("sprint has no stock and no trump card under it")
    if "match" in start and not rules.sprint:
        raise MalformedRecord("match belongs to sprint")


def read_second_trump(g: Podkidnoy, start: dict[str, Any], seen: list[int]) -> None:
    """``trump_change`` (VARIANTS.md 12.3): the face-down second trump card lies
    under the trump card, at the bottom of the stock list; ``null`` once drawn."""
    second = start.get("second_trump_card")
    if second is None:
        if g.rules.trump_change and g.trump_card >= 0:
            raise MalformedRecord("a trump card lies on the second trump card, not on nothing")
        return
    if not g.rules.trump_change:
        raise MalformedRecord("second_trump_card belongs to trump_change")
    g.second_trump = parse_card(second).id
    seen.append(g.second_trump)
    g.stock.insert(0, g.second_trump)


def read_match(g: Podkidnoy, start: dict[str, Any]) -> None:
    """``sprint``: the match before this deal, and the deal's dealer if given."""
    if not g.rules.sprint:
        return
    g.match = matches.read(start.get("match"), g.players)
    dealer = start.get("dealer")
    if dealer is not None:
        if dealer not in g.players:
            raise MalformedRecord(f"unknown dealer {dealer!r}")
        g.dealer = g.players.index(dealer)


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise MalformedRecord(f"{what} must be a list")
    return value
