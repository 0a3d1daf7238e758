"""Heuristic play over card masks: the greedy baseline and the normal player.

Both are pure functions of a :class:`~durak.ai.seen.Seen`. The normal player is
also the search's rollout policy, so it must stay cheap: no allocation beyond a
few small lists, no search.

VARIANTS.md: covers use the rules' beating table (``Seen.beaters``:
``japanese``, ``damka``); English openings are the cheapest pair (one card on
a single lead); ``damka`` openings are one suit, and its uncoverable queen of
spades is led as soon as it is held; a ``return_card`` is always taken (the
attacker, with no cards, would otherwise leave); under ``partial_defence`` a
defender who cannot cover everything still covers what is cheap before taking
(the covered pairs go to the discard). ``blind`` has its own player
(:mod:`durak.ai.blind`): the seat cannot see its own cards.
"""

from __future__ import annotations

from ..actions import EXCHANGE_TRUMP, PASS, RETURN_CARD, TAKE, Action, Attack, Defend, ShowTrump
from ..cards import RANK_LANES, card_of, ranks_of, suit_mask
from .masks import by_worth, cheapest, ids, low_bit, worth
from .seen import Seen

#: Damka's queen of spades (VARIANTS.md 7.2): nothing covers it as an attack card.
QUEEN_OF_SPADES = 12

#: Rank ceilings are counted from the deck's lowest rank (6 in 36 cards).
PAIR_CEILING = 3  # open a pair of plain cards together up to this rank (9)
JUNK_CEILING = 4  # give a taker plain cards up to this rank (10) while the stock lasts


def attack(cards: list[int]) -> Attack:
    """An attack of these card ids, in the engine's (ascending) order."""
    return Attack(tuple(card_of(c) for c in sorted(cards)))


def uncovered(s: Seen) -> list[int]:
    return [a for a, c in zip(s.table, s.covers, strict=True) if c < 0]


def cover_plan(s: Seen) -> list[tuple[int, int]] | None:
    """The cheapest cover for every uncovered card, hardest card first, or
    ``None`` if one of them cannot be covered."""
    trump, beaters = s.trump, s.beaters
    todo = sorted(uncovered(s), key=lambda a: -worth(a, trump))
    avail, plan = s.hand, []
    for a in todo:
        b = cheapest(avail & beaters[a], s.trumps)
        if b < 0:
            return None
        avail &= ~(1 << b)
        plan.append((a, b))
    return plan


def defend(a: int, b: int) -> Defend:
    return Defend(card_of(a), card_of(b))


def hardest_uncovered(s: Seen) -> int:
    return max(uncovered(s), key=lambda a: worth(a, s.trump))


# ---- the greedy baseline ---------------------------------------------------


def greedy(s: Seen) -> Action:
    """Open with the lowest plain card, cover with the cheapest card that beats,
    throw in the lowest matching plain card, take when it cannot cover."""
    if not s.table:
        if s.rules.english and not s.single_lead:
            return english_pair(s)
        return attack([cheapest(s.hand, s.trumps)])
    if s.me == s.defender:
        plan = cover_plan(s)
        return TAKE if plan is None else defend(*plan[0])
    if len(s.table) < s.limit:
        c = cheapest(s.hand & (s.table_ranks * RANK_LANES) & ~s.trumps, s.trumps)
        if c >= 0:
            return attack([c])
    return PASS


# ---- the normal player --------------------------------------------------------


def normal(s: Seen) -> Action:
    """A good heuristic player: see the module docstring of each part."""
    if not s.table:
        return _open(s)
    if s.me == s.defender:
        return _defend(s)
    return _throw(s)


def english_pair(s: Seen) -> Attack:
    """English: the pair of least worth (the engine only lets a seat lead when
    it holds a pair the bout's limit allows)."""
    hand, trump = s.hand, s.trump
    best: list[int] = []
    best_worth = 1 << 30
    ranks = ranks_of(hand)
    while ranks:
        low = ranks & -ranks
        ranks ^= low
        group = by_worth(hand & (low * RANK_LANES), trump)
        if len(group) >= 2:
            value = worth(group[0], trump) + worth(group[1], trump)
            if value < best_worth:
                best, best_worth = group[:2], value
    return attack(best)


def _damka_open(s: Seen) -> Action:
    """Damka: the queen of spades first (nothing covers it), else the cheapest
    card with the other low plain cards of its suit."""
    hand, trumps = s.hand, s.trumps
    if hand >> QUEEN_OF_SPADES & 1:
        return attack([QUEEN_OF_SPADES])
    first = cheapest(hand, trumps)
    if first >> 4 == s.trump:
        return attack([first])
    same = [
        c for c in ids(hand & suit_mask(first >> 4)) if c == first or c & 15 <= s.low + PAIR_CEILING
    ]
    return attack(same[: s.limit])


def _open(s: Seen) -> Action:
    """Lead the lowest plain rank, a low pair together; keep trumps. With the
    stock gone, lead what the defender cannot beat (counted from the unseen
    cards), or the whole lowest rank."""
    if s.can_exchange:
        return EXCHANGE_TRUMP
    rules = s.rules
    if rules.english:
        return attack([cheapest(s.hand, s.trumps)]) if s.single_lead else english_pair(s)
    if rules.damka:
        return _damka_open(s)
    hand, trumps, limit = s.hand, s.trumps, s.limit
    if not s.stock:
        return _open_endgame(s)
    plain = hand & ~trumps
    if not plain:
        return attack([low_bit(hand)])
    rank = low_bit(ranks_of(plain))
    group = ids(plain & (RANK_LANES << rank))
    if len(group) >= 2 and rank <= s.low + PAIR_CEILING:
        return attack(group[:limit])
    return attack(group[:1])


def _open_endgame(s: Seen) -> Action:
    """The whole hand if it is one rank and fits (out if it holds), else the
    cheapest card. Leading what the defender cannot beat, or whole groups,
    measured worse: the taker gathers cards to beat us with later."""
    hand = s.hand
    ranks = ranks_of(hand)
    if ranks & (ranks - 1) == 0 and hand.bit_count() <= s.limit:
        return attack(ids(hand))
    return attack([cheapest(hand, s.trumps)])


def _defend(s: Seen) -> Action:
    """Transfer when it is cheap, cover with the cheapest cards, take when a
    cover would spend high or several trumps while the stock is still deep."""
    if s.can_return:
        return RETURN_CARD
    plan = cover_plan(s)
    if s.transfers:
        for t in s.transfers:
            if isinstance(t, ShowTrump):
                return t  # free: the card stays in the hand
        best = min(s.transfers, key=lambda t: worth(t.card.id, s.trump))
        card = best.card.id
        if plan is None or card >> 4 != s.trump or worth(card, s.trump) <= _plan_worth(s, plan):
            return best
    if plan is None:
        if s.rules.partial_defence:
            return _partial(s)
        return TAKE
    if s.stock and _too_costly(s, plan):
        return TAKE
    return defend(*plan[0])


def _partial(s: Seen) -> Action:
    """``partial_defence``, when not everything can be covered: cover one card
    with a cheap plain card (the pair will be discarded), else take."""
    beaters, trumps = s.beaters, s.trumps
    for a in sorted(uncovered(s), key=lambda a: -worth(a, s.trump)):
        b = cheapest(s.hand & beaters[a] & ~trumps, trumps)
        if b >= 0:
            return defend(a, b)
    return TAKE


def _plan_worth(s: Seen, plan: list[tuple[int, int]]) -> int:
    return sum(worth(b, s.trump) for _, b in plan)


def _too_costly(s: Seen, plan: list[tuple[int, int]]) -> bool:
    """Whether covering would spend a high trump (jack or better in 36 cards)
    or two trumps, on fewer than four attack cards, with a stock deeper than
    one card per player: then taking is cheaper in the long run."""
    trump = s.trump
    spent = [b for _, b in plan if b >> 4 == trump]
    if not spent or len(s.table) >= 4 or s.counts[s.me] + len(s.table) > 8:
        return False
    if s.stock <= s.n:
        return False
    high = max(b & 15 for b in spent)
    plain_table = all(a >> 4 != trump for a in s.table)
    return plain_table and (high >= s.low + 5 or len(spent) >= 2)


def _throw(s: Seen) -> Action:
    """Throw in the cheapest matching plain card; to a taker, junk only while
    the stock lasts; with the stock gone, anything (trumps too): every card
    thrown is one less to get rid of."""
    room = s.limit - len(s.table)
    mine = s.hand & (s.table_ranks * RANK_LANES)
    if room <= 0 or not mine:
        return PASS
    trump, trumps = s.trump, s.trumps
    if s.taking:
        if s.stock:
            cards = [c for c in by_worth(mine & ~trumps, trump) if c & 15 <= s.low + JUNK_CEILING]
        else:
            cards = by_worth(mine, trump)
        return attack(cards[:room]) if cards else PASS
    if not s.stock:
        return attack([cheapest(mine, trumps)])
    c = cheapest(mine & ~trumps, trumps)
    return attack([c]) if c >= 0 else PASS
