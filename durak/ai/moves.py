"""The actions a search considers, generated straight from a simulated game.

``Podkidnoy.legal_actions`` lists every multi-card combination (thousands for a big
hand in a 52-card game) and caches them by hand: fine for real games, but a
search over many random deals would fill that cache with hands nobody holds.
This generator lists only what is worth searching: single cards, whole
same-rank groups, covers of the hardest uncovered card, take, pass and the
variants' moves. Each is legal by the engine's own predicates.

VARIANTS.md: English openings are the engine's own list (pairs, few);
``damka`` openings are each card alone and each suit's cards together (as
many as fit, cheapest first); covers follow the rules' beating table; the
defender may ``return_card`` when the engine's predicate allows it.
"""

from __future__ import annotations

from itertools import combinations

from ..actions import (
    EXCHANGE_TRUMP,
    PASS,
    RETURN_CARD,
    TAKE,
    Action,
    Attack,
    Defend,
    ShowTrump,
    Transfer,
)
from ..cards import RANK_LANES, card_of, lowest_rank, ranks_of, suit_mask
from ..games.podkidnoy import Podkidnoy
from ..games.podkidnoy.bout import exchange_room, may_return, transfer_target, variant_openings
from .masks import beaters_for, by_worth, ids, worth


def _groups(mask: int, room: int) -> list[Action]:
    """Each card alone, and each rank's cards together (as many as fit)."""
    acts: list[Action] = [Attack((card_of(c),)) for c in ids(mask)]
    ranks = ranks_of(mask)
    while ranks:
        low = ranks & -ranks
        ranks ^= low
        group = [card_of(c) for c in ids(mask & (low * RANK_LANES))]
        if len(group) > 1 and room > 1:
            acts += [Attack(combo) for combo in combinations(group, min(len(group), room))]
    return acts


def _suits(mask: int, room: int, trump: int) -> list[Action]:
    """Damka: each card alone, and each suit's cards together, the cheapest
    that fit."""
    acts: list[Action] = [Attack((card_of(c),)) for c in ids(mask)]
    for suit in range(4):
        group = by_worth(mask & suit_mask(suit), trump)[:room]
        if len(group) > 1:
            acts.append(Attack(tuple(card_of(c) for c in sorted(group))))
    return acts


def transfers(game: Podkidnoy, seat: int) -> list[Transfer | ShowTrump]:
    """The defender's legal transfers now (the variants' rules)."""
    table = game.table
    if not game.rules.transfer or game.taking or not table or game.open != len(table):
        return []
    rank = table[0] & 15
    if any(c & 15 != rank for c in table):
        return []
    same = game.hands[seat] & (RANK_LANES << rank)
    if not same:
        return []
    out: list[Transfer | ShowTrump] = []
    if transfer_target(game, seat, 1) is not None:
        out += [Transfer(card_of(c)) for c in ids(same)]
    if game.rules.transfer_by_showing_trump:
        show = same & suit_mask(game.trump) & ~game.shown
        if show and transfer_target(game, seat, 0) is not None:
            out += [ShowTrump(card_of(c)) for c in ids(show)]
    return out


def search_moves(game: Podkidnoy, seat: int) -> list[Action]:
    """What ``seat`` (one of ``game.actors()``) may usefully do now."""
    hand = game.hands[seat]
    rules = game.rules
    if not game.table:
        if rules.english:
            return variant_openings(game, hand)
        acts = _suits(hand, game.limit, game.trump) if rules.damka else _groups(hand, game.limit)
        low = game.trump * 16 + int(lowest_rank(rules.deck))
        if rules.trump_exchange and exchange_room(game) >= 2 and hand >> low & 1:
            acts.append(EXCHANGE_TRUMP)
        return acts
    if seat == game.defender and not game.taking and game.open:
        trump = game.trump
        hardest, best = -1, -1
        for a, c in zip(game.table, game.covers, strict=True):
            if c < 0 and worth(a, trump) > best:
                hardest, best = a, worth(a, trump)
        attack = card_of(hardest)
        beaters = beaters_for(rules, trump)
        acts = [Defend(attack, card_of(b)) for b in ids(hand & beaters[hardest])]
        acts.append(TAKE)
        if rules.return_last_card and may_return(game):
            acts.append(RETURN_CARD)
        acts += transfers(game, seat)
        return acts
    room = game.limit - len(game.table)
    acts = _groups(hand & (game.table_ranks * RANK_LANES), room)
    acts.append(PASS)
    return acts
