"""A bout (RULES.md section 4): its limit, who may throw in, every decision made
in it, and the moment it closes.

Each decision has a ``verify_x`` (raise :class:`IllegalAction`, change nothing;
return what ``do_x`` needs) and a ``do_x``; :func:`legal` lists actions with the
same predicates (``may_throw``, ``can_throw``, ``transfer_target``), so the list
and ``apply`` cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Any

from ...actions import (
    EXCHANGE_TRUMP,
    PASS,
    RETURN_CARD,
    TAKE,
    Action,
    Attack,
    Defend,
    ExchangeTrump,
    Pass,
    ReturnCard,
    ShowTrump,
    Take,
    Transfer,
)
from ...cards import (
    BEATERS,
    RANK_LANES,
    SUIT_LANE,
    Card,
    beaters_mask,
    card_of,
    cards_of,
    deck_mask,
    lowest_rank,
    of_ranks,
    ranks_of,
    suit_mask,
)
from ...errors import IllegalAction
from . import after

if TYPE_CHECKING:
    from .game import Podkidnoy


# ---- the bout's shape ------------------------------------------------------------------


def limit_for(g: Podkidnoy, defender: int) -> int:
    """``L = min(cap, cards in the defender's hand)`` (RULES.md section 4)."""
    held = g.hands[defender].bit_count()
    if g.varied and g.rules.blind:
        return min(1, held)  # VARIANTS.md 3.4: one card against one
    cap = g.rules.bout_limit  # VARIANTS.md section 10: 6, or 5
    if not g.stock and not g.rules.six_cap_after_stock:
        cap = held
    if g.first_bout:
        cap = min(cap, g.rules.first_bout_limit)
    return min(cap, held)


def plain_beaters(g: Podkidnoy) -> tuple[int, ...]:
    """``table[card]``: every card that beats ``card`` by the rules of beating. With
    ``japanese`` a club is beaten only by a higher club (VARIANTS.md 8.3)."""
    return (JAPANESE_BEATERS if g.rules.japanese else BEATERS)[g.trump]


def _japanese_beaters(card: int, trump: int) -> int:
    if card >> 4 == CLUBS:
        return ((SUIT_LANE << ((card & 15) + 1)) & SUIT_LANE) << (16 * CLUBS)
    return beaters_mask(card, trump)


CLUBS = 3
JAPANESE_BEATERS = tuple(tuple(_japanese_beaters(i, t) for i in range(64)) for t in range(4))


def begin(g: Podkidnoy, attacker: int) -> None:
    """Start a bout opened by ``attacker`` against his defender."""
    g.attacker = attacker
    g.defender = defender = g.defender_for(attacker)
    g.throwers = g.throwers_for(attacker, defender)
    g.limit = limit_for(g, defender)
    g.table, g.covers = [], []
    g.open = g.table_ranks = 0
    g.taking = g.primary_passed = False
    g.passed = g.shown = 0
    g.transferred = False


def can_throw(g: Podkidnoy, seat: int) -> bool:
    """Whether ``seat`` holds a legal throw-in now (rights aside)."""
    return len(g.table) < g.limit and g.hands[seat] & of_ranks(g.table_ranks) != 0


def may_throw(g: Podkidnoy, seat: int) -> bool:
    """Whether ``seat`` has the right to throw in now: a thrower whose pass does
    not hold, and either the primary attacker or allowed by his priority."""
    if not g.table or not (g.throwers >> seat) & 1 or (g.passed >> seat) & 1:
        return False
    a = g.attacker
    return seat == a or g.primary_passed or not can_throw(g, a)


def transfer_target(g: Podkidnoy, seat: int, extra: int) -> tuple[int, int] | None:
    """The new defender and limit if ``seat`` transfers adding ``extra`` attack
    cards, or ``None`` if the situation does not allow it."""
    if not g.table or g.open != len(g.table):
        return None
    if ranks_of(sum(1 << c for c in g.table)).bit_count() != 1:
        return None
    target = g.defender_for(seat)
    if target < 0:
        return None
    limit = limit_for(g, target)
    if len(g.table) + extra > limit:
        return None
    return target, limit


def settle(g: Podkidnoy) -> None:
    """Close the bout once nobody can add a card (RULES.md section 4)."""
    if not g.taking and g.open:
        return
    throwers, passed = g.throwers, g.passed
    if len(g.table) < g.limit:
        ranks = of_ranks(g.table_ranks)
        hands = g.hands
        s = 0
        while throwers:
            if throwers & 1 and not (passed >> s) & 1 and hands[s] & ranks:
                return
            throwers >>= 1
            s += 1
    after.close_bout(g)


# ---- deciding --------------------------------------------------------------------------


def check_turn(g: Podkidnoy, seat: int) -> None:
    if g.result is not None:
        raise IllegalAction("game_over", "the game is over")
    if not 0 <= seat < g.n:
        raise IllegalAction("not_your_turn", f"there is no seat {seat}")
    if g.out[seat]:
        raise IllegalAction("not_your_turn", f"{g.players[seat]} has left the game")


def hand_mask(g: Podkidnoy, seat: int, cards: Sequence[Card]) -> int:
    mask = 0
    for c in cards:
        bit = 1 << c.id
        if mask & bit or not g.hands[seat] & bit:
            raise IllegalAction("not_in_hand", f"{g.players[seat]} does not hold {c}")
        mask |= bit
    return mask


def verify_attack(g: Podkidnoy, seat: int, action: Attack) -> int:
    cards = action.cards
    check_turn(g, seat)
    if not cards:
        raise ValueError("an attack needs at least one card")
    if not g.table:
        if seat != g.attacker:
            raise IllegalAction("not_your_turn", f"{g.players[g.attacker]} opens")
        mask = hand_mask(g, seat, cards)
        if g.varied:
            check_opening(g, mask, len(cards))
        elif ranks_of(mask).bit_count() != 1:
            raise IllegalAction("mixed_ranks", "an opening is one card or cards of one rank")
    else:
        if not may_throw(g, seat):
            raise IllegalAction("not_your_turn", f"{g.players[seat]} may not throw in now")
        mask = hand_mask(g, seat, cards)
        if ranks_of(mask) & ~g.table_ranks:
            raise IllegalAction("rank_not_on_table", "that rank is not on the table")
    if len(g.table) + len(cards) > g.limit:
        raise IllegalAction("limit", f"this bout allows at most {g.limit} attack cards")
    return mask


def check_opening(g: Podkidnoy, mask: int, size: int) -> None:
    """An opening's shape under VARIANTS.md (12.6: ``opening_size``, then
    ``mixed_ranks`` or ``mixed_suits``; the limit is checked after)."""
    rules = g.rules
    if rules.blind and size != 1:
        raise IllegalAction("opening_size", "blind: an opening is exactly one card")
    if rules.english and size != (1 if g.single_lead else 2):
        if g.single_lead:
            raise IllegalAction("opening_size", "nobody can open with a pair: lead one card")
        raise IllegalAction("opening_size", "an opening is exactly two cards of one rank")
    if rules.damka:
        if sum(1 for s in range(4) if mask & suit_mask(s)) != 1:
            raise IllegalAction("mixed_suits", "damka: an opening is cards of one suit")
    elif ranks_of(mask).bit_count() != 1:
        raise IllegalAction("mixed_ranks", "an opening is one card or cards of one rank")


def do_attack(g: Podkidnoy, seat: int, action: Attack, mask: int) -> None:
    g.hands[seat] &= ~mask
    for c in action.cards:
        g.table.append(c.id)
        g.covers.append(-1)
    g.open += len(action.cards)
    g.table_ranks |= 1 << (action.cards[0].id & 15)
    if g.varied:
        g.table_ranks |= ranks_of(mask)  # damka: an opening may hold several ranks
    g.passed = 0


def verify_defend(g: Podkidnoy, seat: int, action: Defend) -> int:
    check_turn(g, seat)
    if seat != g.defender or g.taking or not g.table:
        raise IllegalAction("not_your_turn", f"{g.players[seat]} is not defending now")
    attack, card = action.attack, action.card
    hand_mask(g, seat, (card,))
    try:
        index = g.table.index(attack.id)
    except ValueError:
        index = -1
    if index < 0 or g.covers[index] != -1:
        raise IllegalAction("not_on_table", f"{attack} is not an uncovered attack card")
    if g.varied:
        if not g.rules.blind and not covers(g, attack.id, card.id):
            raise IllegalAction("cannot_beat", f"{card} does not beat {attack}")
        return index
    if not beaters_table(g)[attack.id] >> card.id & 1:
        raise IllegalAction("cannot_beat", f"{card} does not beat {attack}")
    return index


#: The queen of spades (VARIANTS.md 7.2, ``damka``: nothing covers it).
QUEEN_OF_SPADES = 12


def covers(g: Podkidnoy, attack: int, card: int) -> bool:
    """Whether ``card`` beats ``attack`` (RULES.md section 4, ``japanese``'s clubs;
    with ``damka`` the queen of spades as an attack card is beaten by nothing)."""
    if attack == QUEEN_OF_SPADES and g.rules.damka:
        return False
    return bool(plain_beaters(g)[attack] >> card & 1)


def beaters_table(g: Podkidnoy) -> Sequence[int]:
    """Per attack card, the cards that may answer it (``legal``'s and ``verify``'s
    table): the rules of beating, with ``damka``'s queen of spades, or under
    ``blind`` any card."""
    if not g.varied:
        return plain_beaters(g)
    if g.rules.blind:
        return _ANY_CARD
    beaters = plain_beaters(g)
    if g.rules.damka:
        key = (g.trump, g.rules.japanese is not None)
        damka = _DAMKA.get(key)
        if damka is None:
            damka = _DAMKA[key] = (*beaters[:QUEEN_OF_SPADES], 0, *beaters[QUEEN_OF_SPADES + 1 :])
        return damka
    return beaters


_DAMKA: dict[tuple[int, bool], tuple[int, ...]] = {}  # damka's tables, by trump and japanese


_ANY_CARD = (deck_mask(52),) * 64


def do_defend(g: Podkidnoy, seat: int, action: Defend, index: int) -> None:
    card = action.card.id
    g.hands[seat] &= ~(1 << card)
    g.covers[index] = card
    g.open -= 1
    g.table_ranks |= 1 << (card & 15)
    g.passed = 0
    if g.varied and g.rules.blind and not covers(g, action.attack.id, card):
        g.taking = True  # VARIANTS.md 3.5: a failed answer; he takes both cards


def verify_take(g: Podkidnoy, seat: int, action: Take) -> None:
    check_turn(g, seat)
    if seat != g.defender:
        raise IllegalAction("not_your_turn", f"{g.players[seat]} is not defending")
    if g.varied and g.rules.blind:
        raise IllegalAction("cannot_take", "blind: the defender answers with a card, never takes")
    if g.taking or not g.open:
        raise IllegalAction("cannot_take", "nothing to take: no uncovered card, or taking")


def do_take(g: Podkidnoy, seat: int, action: Take, _: None) -> None:
    g.taking = True
    g.passed = 0


def verify_pass(g: Podkidnoy, seat: int, action: Pass) -> None:
    check_turn(g, seat)
    if not may_throw(g, seat) or not can_throw(g, seat):
        raise IllegalAction("not_your_turn", f"{g.players[seat]} has nothing to pass on")


def do_pass(g: Podkidnoy, seat: int, action: Pass, _: None) -> None:
    g.passed |= 1 << seat
    if seat == g.attacker:
        g.primary_passed = True


def verify_transfer(g: Podkidnoy, seat: int, action: Transfer | ShowTrump) -> tuple[int, int]:
    check_turn(g, seat)
    if seat != g.defender or g.taking or not g.table:
        raise IllegalAction("not_your_turn", f"{g.players[seat]} is not defending now")
    shown = isinstance(action, ShowTrump)
    if not g.rules.transfer or (shown and not g.rules.transfer_by_showing_trump):
        raise IllegalAction("variant_off", "these rules have no such transfer")
    card = action.card
    hand_mask(g, seat, (card,))
    if card.id & 15 != g.table[0] & 15:
        raise IllegalAction("cannot_transfer", f"{card} is not of the attack rank")
    if shown and (card.id >> 4 != g.trump or (g.shown >> card.id) & 1):
        raise IllegalAction("cannot_transfer", f"{card} is not a trump that may be shown")
    target = transfer_target(g, seat, 0 if shown else 1)
    if target is None:
        raise IllegalAction("cannot_transfer", "the defence cannot be passed on now")
    return target


def do_transfer(
    g: Podkidnoy, seat: int, action: Transfer | ShowTrump, target: tuple[int, int]
) -> None:
    card = action.card.id
    if isinstance(action, Transfer):
        g.hands[seat] &= ~(1 << card)
        g.table.append(card)
        g.covers.append(-1)
        g.open += 1
    else:
        g.shown |= 1 << card
    g.defender, g.limit = target
    g.attacker = seat
    g.transferred = True
    g.throwers = g.throwers_for(seat, g.defender)
    g.passed = 0
    g.primary_passed = False


def may_return(g: Podkidnoy) -> bool:
    """VARIANTS.md 6.1: the situation allows ``return_card`` (the defender's
    right to act aside): two active players, nothing to draw, the attacker's
    hand empty, nothing covered, no transfer in this bout, no return yet."""
    return (
        not g.stock
        and not g.hands[g.attacker]
        and g.open == len(g.table)
        and not g.return_used
        and not g.transferred
        and g.out.count(False) == 2
    )


def verify_return(g: Podkidnoy, seat: int, action: ReturnCard) -> None:
    check_turn(g, seat)
    if seat != g.defender or g.taking or not g.table:
        raise IllegalAction("not_your_turn", f"{g.players[seat]} is not defending now")
    if not g.rules.return_last_card:
        raise IllegalAction("variant_off", "these rules have no return_card")
    if not may_return(g):
        raise IllegalAction("cannot_return", "the cards on the table may not be returned now")


def do_return(g: Podkidnoy, seat: int, action: ReturnCard, _: None) -> None:
    after.return_bout(g)


def lowest_trump(g: Podkidnoy) -> int:
    return g.trump * 16 + int(lowest_rank(g.rules.deck))


def verify_exchange(g: Podkidnoy, seat: int, action: ExchangeTrump) -> None:
    check_turn(g, seat)
    if seat != g.attacker or g.table:
        raise IllegalAction("not_your_turn", "only the opener, before he opens")
    if not g.rules.trump_exchange:
        raise IllegalAction("variant_off", "these rules have no trump exchange")
    hand_mask(g, seat, (card_of(lowest_trump(g)),))
    if exchange_room(g) < 2:
        raise IllegalAction("cannot_exchange", "the stock is too small to exchange the trump")


def can_exchange(g: Podkidnoy, hand: int) -> bool:
    """Whether the opener holding ``hand`` may exchange the trump now (``legal``'s
    side of :func:`verify_exchange`, with the same conditions)."""
    return g.rules.trump_exchange and exchange_room(g) >= 2 and bool(hand >> lowest_trump(g) & 1)


def exchange_room(g: Podkidnoy) -> int:
    """The stock and the trump card, not ``trump_change``'s second trump card under
    them (VARIANTS.md 1.5): the exchange concerns the face-up card."""
    return len(g.stock) - g.second_hidden()


def do_exchange(g: Podkidnoy, seat: int, action: ExchangeTrump, _: None) -> None:
    at = int(g.second_hidden())  # the trump card lies on the second trump card
    low, old = lowest_trump(g), g.stock[at]
    g.hands[seat] = (g.hands[seat] & ~(1 << low)) | (1 << old)
    g.stock[at] = g.trump_card = low


def refuse_other_game(g: Podkidnoy, seat: int, action: Action) -> None:
    """A pile game's action (``lead``, ``beat``): PILE-GAMES.md 6.6."""
    check_turn(g, seat)
    raise IllegalAction("variant_off", f"{action.words().split()[0]} belongs to the pile games")


def _nothing(g: Podkidnoy, seat: int, action: Action, _: None) -> None:
    raise AssertionError("a refused action is never applied")


_Verify = Callable[[Any, int, Any], Any]
_Do = Callable[[Any, int, Any, Any], None]
HANDLERS: dict[type, tuple[_Verify, _Do]] = {
    Attack: (verify_attack, do_attack),
    Defend: (verify_defend, do_defend),
    Take: (verify_take, do_take),
    Pass: (verify_pass, do_pass),
    Transfer: (verify_transfer, do_transfer),
    ShowTrump: (verify_transfer, do_transfer),
    ExchangeTrump: (verify_exchange, do_exchange),
    ReturnCard: (verify_return, do_return),
}


def handler(action: Action) -> tuple[_Verify, _Do]:
    try:
        return HANDLERS[type(action)]
    except KeyError:
        if isinstance(action, Action):
            return refuse_other_game, _nothing
        raise TypeError(f"not an action: {action!r}") from None


# ---- asking ----------------------------------------------------------------------------


def actors(g: Podkidnoy) -> list[int]:
    """The seats that may act now (each has at least one legal action)."""
    if g.result is not None:
        return []
    if not g.table:
        return [g.attacker]
    seats = []
    if not g.taking and g.open:
        seats.append(g.defender)
    throwers, s = g.throwers, 0
    while throwers:
        if throwers & 1 and may_throw(g, s) and can_throw(g, s):
            seats.append(s)
        throwers >>= 1
        s += 1
    return sorted(seats)


def legal(g: Podkidnoy, seat: int) -> list[Action]:
    """Every action ``seat`` may apply now, multi-card openings and throw-ins included."""
    if g.result is not None or not 0 <= seat < g.n or g.out[seat]:
        return []
    hand = g.hands[seat]
    acts: list[Action] = []
    if not g.table:
        if seat != g.attacker:
            return acts
        if g.varied and (g.rules.blind or g.rules.english or g.rules.damka):
            return variant_openings(g, hand)
        ranks, limit = ranks_of(hand), g.limit
        while ranks:
            low = ranks & -ranks
            acts.extend(_attacks(hand & (low * RANK_LANES), limit, None))
            ranks ^= low
        if can_exchange(g, hand):
            acts.append(EXCHANGE_TRUMP)
        return acts
    if seat == g.defender:
        if not g.taking and g.open:
            trump = g.trump
            beaters = beaters_table(g)
            for a, c in zip(g.table, g.covers, strict=True):
                if c == -1:
                    acts.extend(_defends(a, hand & beaters[a]))
            if not g.varied:
                acts.append(TAKE)
            else:
                acts.extend(variant_defender_extras(g))
            if g.rules.transfer:
                same = hand & of_ranks(1 << (g.table[0] & 15))
                if same and transfer_target(g, seat, 1) is not None:
                    acts.extend(Transfer(c) for c in cards_of(same))
                if g.rules.transfer_by_showing_trump:
                    show = same & suit_mask(trump) & ~g.shown
                    if show and transfer_target(g, seat, 0) is not None:
                        acts.extend(ShowTrump(c) for c in cards_of(show))
        return acts
    if may_throw(g, seat) and can_throw(g, seat):
        room = g.limit - len(g.table)
        acts.extend(_attacks(hand & of_ranks(g.table_ranks), room, PASS))
    return acts


def variant_openings(g: Podkidnoy, hand: int) -> list[Action]:
    """The openings of ``blind`` (one card), ``english`` (a pair, or one card
    when nobody can open with a pair) and ``damka`` (cards of one suit), with
    the same shapes :func:`check_opening` accepts."""
    rules, limit = g.rules, g.limit
    acts: list[Action] = []
    if rules.blind or (rules.english and g.single_lead):
        acts.extend(Attack((c,)) for c in cards_of(hand))
    elif rules.english:
        ranks = ranks_of(hand)
        while ranks:
            low = ranks & -ranks
            group = hand & (low * RANK_LANES)
            if group.bit_count() >= 2 and limit >= 2:
                acts.extend(
                    a
                    for a in _attacks(group, 2, None)
                    if isinstance(a, Attack) and len(a.cards) == 2
                )
            ranks ^= low
    else:  # damka
        for suit in range(4):
            mine = hand & suit_mask(suit)
            if mine:
                acts.extend(_attacks(mine, limit, None))
        if can_exchange(g, hand):
            acts.append(EXCHANGE_TRUMP)
    return acts


def variant_defender_extras(g: Podkidnoy) -> list[Action]:
    """The defender's other choices: ``take`` (never under ``blind``) and
    ``return_card`` when :func:`may_return` allows it."""
    rules = g.rules
    acts: list[Action] = [] if rules.blind else [TAKE]
    if rules.return_last_card and may_return(g):
        acts.append(RETURN_CARD)
    return acts


def legal_by_seat(g: Podkidnoy) -> list[tuple[int, Sequence[Action]]]:
    """``(seat, legal(g, seat))`` for every seat in ``actors``, in one pass:
    what a simulation asks at every step, so it shares the work between seats."""
    if g.result is not None:
        return []
    if not g.table:
        return [(g.attacker, legal(g, g.attacker))]
    moves: list[tuple[int, Sequence[Action]]] = []
    if not g.taking and g.open:
        moves.append((g.defender, legal(g, g.defender)))
    room = g.limit - len(g.table)
    if room > 0:
        ranks = g.table_ranks * RANK_LANES
        hands, a = g.hands, g.attacker
        everyone = g.primary_passed or not hands[a] & ranks
        free, s = g.throwers & ~g.passed, 0
        while free:
            if free & 1:
                mine = hands[s] & ranks
                if mine and (everyone or s == a):
                    moves.append((s, _attacks(mine, room, PASS)))
            free >>= 1
            s += 1
    return moves


# Action values are immutable, so the generator hands out shared instances:
# building frozen dataclasses is most of the cost of listing legal actions.
# Each cache is cleared when full: at 250,000 entries (60 B to 1 KiB each) a
# long-running bot's memory rose for hours (issue 26 item 8: +27 MiB in 13 minutes
# of 200 games, still rising; at 16,384 the caches were still filling after 30
# minutes). 2,000 random games fill 7,700 and 42,000 keys, and their CPU time is the
# same within the noise at 4,096, 16,384 or 250,000 (2.0-2.5 s each).
_ATTACK_CACHE: dict[tuple[int, int, Pass | None], tuple[Action, ...]] = {}
_DEFEND_CACHE: dict[int, tuple[Defend, ...]] = {}
_CACHE_CAP = 4_096


def _attacks(mask: int, room: int, then: Pass | None) -> tuple[Action, ...]:
    """Every attack of 1..room cards out of ``mask`` (all of one rank, or all
    of ranks already on the table: the caller passes only such cards), and
    ``then`` after them if given."""
    key = (mask, room, then)
    acts = _ATTACK_CACHE.get(key)
    if acts is None:
        if len(_ATTACK_CACHE) > _CACHE_CAP:
            _ATTACK_CACHE.clear()
        group = cards_of(mask)
        attacks: list[Action] = [
            Attack(combo)
            for size in range(1, min(len(group), room) + 1)
            for combo in combinations(group, size)
        ]
        if then is not None:
            attacks.append(then)
        acts = _ATTACK_CACHE[key] = tuple(attacks)
    return acts


def _defends(attack: int, beaters: int) -> tuple[Defend, ...]:
    """Every cover of ``attack`` by one of the cards in ``beaters``."""
    key = beaters << 6 | attack
    acts = _DEFEND_CACHE.get(key)
    if acts is None:
        if len(_DEFEND_CACHE) > _CACHE_CAP:
            _DEFEND_CACHE.clear()
        card = card_of(attack)
        acts = _DEFEND_CACHE[key] = tuple(Defend(card, c) for c in cards_of(beaters))
    return acts
