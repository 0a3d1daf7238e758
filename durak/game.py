"""The rules engine: one game of podkidnoy durak, pure and deterministic.

Callers only send decisions (``apply``); dealing, refilling, clearing the table,
players leaving and the end of the game happen inside. Every refusal is an
:class:`IllegalAction`, raised before anything changes. ``legal_actions`` and
``apply`` decide with the same predicates (``_may_throw``, ``_can_throw``,
``_transfer_target``...), so they cannot disagree.

Seats are ints in clockwise order; names are for records and views only.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

from .actions import (
    EXCHANGE_TRUMP,
    PASS,
    TAKE,
    Action,
    Attack,
    Defend,
    ExchangeTrump,
    Pass,
    ShowTrump,
    Take,
    Transfer,
)
from .cards import (
    BEATERS,
    RANK_LANES,
    Card,
    Suit,
    beaters_mask,
    card_of,
    cards_of,
    deck,
    deck_mask,
    lowest_rank,
    of_ranks,
    parse_card,
    parse_suit,
    ranks_of,
    sort_key,
    suit_mask,
)
from .errors import IllegalAction, MalformedRecord
from .rules import Rules
from .view import Outcome, SeatInfo, View

SERIES = ("first", "after_loss", "after_draw")

# Why the first bout's attacker opens (shown on the table).
OPENER_LOWEST_TRUMP = "lowest_trump"
OPENER_NO_TRUMP = "no_trump"
OPENER_LOSER_DEALS = "loser_deals"
OPENER_ATTACK_LOSER = "attack_loser"
OPENER_POSITION = "position"


def _popcount(mask: int) -> int:
    return mask.bit_count()


class Game:
    """One game: the rules, the seats, the deal, and the actions applied."""

    __slots__ = (
        "attacker",
        "covers",
        "dealer",
        "defender",
        "discard",
        "discard_mask",
        "first_bout",
        "hands",
        "history",
        "limit",
        "n",
        "open",
        "opener",
        "opener_card",
        "opener_reason",
        "out",
        "passed",
        "players",
        "primary_passed",
        "result",
        "rules",
        "shown",
        "start",
        "stock",
        "table",
        "table_ranks",
        "taking",
        "throwers",
        "trump",
        "trump_card",
    )

    rules: Rules
    players: tuple[str, ...]
    n: int
    trump: int
    trump_card: int  # the face-up card of the deal (-1 if unknown); stays known once drawn
    hands: list[int]  # card masks
    stock: list[int]  # bottom first: stock[0] is the trump card while the stock has cards
    discard: int
    discard_mask: int  # the discarded cards this game saw (a position may give only a count)
    out: list[bool]
    attacker: int  # -1 once the game is over
    defender: int
    table: list[int]  # attack cards in play order
    covers: list[int]  # the cover of each attack card, -1 while uncovered
    open: int  # how many attack cards are uncovered
    table_ranks: int  # 16-bit rank set of every card on the table
    limit: int
    taking: bool
    passed: int  # seat bitmask: throwers whose pass holds
    primary_passed: bool  # the primary attacker passed explicitly in this bout
    throwers: int  # seat bitmask of who may throw in this bout (the primary attacker included)
    shown: int  # trumps shown for a transfer in this bout
    first_bout: bool
    result: Outcome | None
    history: list[tuple[int, Action]]
    start: dict[str, Any]
    dealer: int
    opener: int
    opener_reason: str
    opener_card: int

    def __init__(self, rules: Rules, players: Sequence[str]) -> None:
        """Use a constructor: :meth:`from_seed`, :meth:`from_deck` or :meth:`from_position`."""
        names = tuple(players)
        if len(set(names)) != len(names) or not all(isinstance(p, str) and p for p in names):
            raise ValueError("player names must be distinct non-empty strings")
        rules.check_players(len(names))
        self.rules = rules
        self.players = names
        self.n = len(names)
        self.hands = [0] * self.n
        self.stock = []
        self.discard = 0
        self.discard_mask = 0
        self.out = [False] * self.n
        self.attacker = self.defender = -1
        self.table, self.covers = [], []
        self.open = self.table_ranks = 0
        self.limit = 0
        self.taking = self.primary_passed = False
        self.passed = self.throwers = self.shown = 0
        self.first_bout = True
        self.result = None
        self.history = []
        self.start = {}
        self.dealer = self.opener = self.opener_card = self.trump_card = -1
        self.opener_reason = OPENER_POSITION
        self.trump = 0

    # ---- construction ---------------------------------------------------------

    @classmethod
    def from_seed(
        cls,
        rules: Rules,
        players: Sequence[str],
        seed: int | str,
        series: str = "first",
        previous_loser: int | None = None,
        dealer: int | None = None,
    ) -> Game:
        """A shuffled deal. The first game of a series draws its dealer from the seed;
        after a loss the previous loser deals; after a draw, ``dealer`` deals again."""
        rng = random.Random(f"durak:{seed}")
        cards = list(deck(rules.deck))
        rng.shuffle(cards)
        n = len(players)
        if series == "first":
            dealer = rng.randrange(n)
        elif series == "after_loss":
            if previous_loser is None:
                raise ValueError("after_loss needs previous_loser")
            dealer = previous_loser
        elif series == "after_draw":
            if dealer is None:
                raise ValueError("after_draw needs the dealer")
        else:
            raise ValueError(f"series must be one of {SERIES}")
        return cls.from_deck(rules, players, cards, dealer, series, previous_loser)

    @classmethod
    def from_deck(
        cls,
        rules: Rules,
        players: Sequence[str],
        order: Sequence[Card],
        dealer: int,
        series: str = "first",
        previous_loser: int | None = None,
    ) -> Game:
        """Deal an explicit deck order (top card first), RULES.md sections 2 and 3."""
        game = cls(rules, players)
        n = game.n
        ids = [c.id for c in order]
        if len(ids) != rules.deck or sum(1 << i for i in set(ids)) != deck_mask(rules.deck):
            raise ValueError(f"the deck order must list each of the {rules.deck} cards once")
        if not 0 <= dealer < n:
            raise ValueError("no such dealer")
        if series not in SERIES:
            raise ValueError(f"series must be one of {SERIES}")
        if series == "after_loss" and previous_loser != dealer:
            raise ValueError("after a loss the previous loser deals")
        pos = 0
        for _ in range(rules.hand_size):
            for k in range(1, n + 1):
                game.hands[(dealer + k) % n] |= 1 << ids[pos]
                pos += 1
        if pos < len(ids):
            game.trump_card = ids[pos]
            game.stock = [ids[pos], *reversed(ids[pos + 1 :])]
        else:
            game.trump_card = ids[pos - 1]  # the dealer's last card shows trump
        game.trump = game.trump_card >> 4
        game.dealer = dealer
        game.start = {
            "deck_order": [str(c) for c in order],
            "dealer": game.players[dealer],
            "series": series,
            "previous_loser": None if previous_loser is None else game.players[previous_loser],
        }
        if series == "after_loss" and rules.attack_loser:
            game.opener, game.opener_reason = (dealer - 1) % n, OPENER_ATTACK_LOSER
        elif series == "after_loss":
            game.opener, game.opener_reason = (dealer + 1) % n, OPENER_LOSER_DEALS
        else:
            low = lowest = -1
            trumps = suit_mask(game.trump)
            for seat in range(n):
                mine = game.hands[seat] & trumps
                if mine:
                    card = (mine & -mine).bit_length() - 1
                    if lowest < 0 or card < lowest:
                        lowest, low = card, seat
            if low >= 0:
                game.opener, game.opener_reason, game.opener_card = low, OPENER_LOWEST_TRUMP, lowest
            else:
                game.opener, game.opener_reason = (dealer + 1) % n, OPENER_NO_TRUMP
        game._begin_bout(game.opener)
        return game

    @classmethod
    def from_position(cls, rules: Rules, players: Sequence[str], start: dict[str, Any]) -> Game:
        """Set up a position between bouts (the record's position form)."""
        game = cls(rules, players)
        try:
            game._read_position(start)
        except MalformedRecord:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise MalformedRecord(f"bad position: {e}") from None
        return game

    def clone(self, with_history: bool = False) -> Game:
        """An independent copy of the state, for search: an AI plays thousands of
        simulated continuations on copies. The history is left empty unless asked
        for (a simulation does not need it); ``start`` is shared (never mutated)."""
        game = Game(self.rules, self.players)
        game.trump, game.trump_card = self.trump, self.trump_card
        game.hands, game.stock = list(self.hands), list(self.stock)
        game.discard, game.discard_mask = self.discard, self.discard_mask
        game.out = list(self.out)
        game.attacker, game.defender = self.attacker, self.defender
        game.table, game.covers = list(self.table), list(self.covers)
        game.open, game.table_ranks, game.limit = self.open, self.table_ranks, self.limit
        game.taking, game.passed = self.taking, self.passed
        game.primary_passed, game.throwers = self.primary_passed, self.throwers
        game.shown, game.first_bout, game.result = self.shown, self.first_bout, self.result
        game.history = list(self.history) if with_history else []
        game.start = self.start
        game.dealer, game.opener = self.dealer, self.opener
        game.opener_reason, game.opener_card = self.opener_reason, self.opener_card
        return game

    def _read_position(self, start: dict[str, Any]) -> None:
        if not isinstance(start, dict):
            raise MalformedRecord("start must be an object")
        self.trump = int(parse_suit(start["trump"]))
        tc = start.get("trump_card")
        stock = [parse_card(c).id for c in _list(start.get("stock", []), "stock")]
        seen = list(stock)
        if tc is not None:
            tcid = parse_card(tc).id
            if tcid >> 4 != self.trump:
                raise MalformedRecord("the trump card is not of the trump suit")
            self.trump_card = tcid
            seen.append(tcid)
            self.stock = [tcid, *reversed(stock)]
        elif stock:
            raise MalformedRecord("a non-empty stock needs its trump card")
        hands = start.get("hands", {})
        if not isinstance(hands, dict):
            raise MalformedRecord("hands must be an object")
        for name, cards in hands.items():
            if name not in self.players:
                raise MalformedRecord(f"hands name an unknown player {name!r}")
            ids = [parse_card(c).id for c in _list(cards, "hand")]
            seen += ids
            self.hands[self.players.index(name)] = sum(1 << i for i in set(ids))
        discard = start.get("discard", [])
        if isinstance(discard, list):
            ids = [parse_card(c).id for c in discard]
            seen += ids
            self.discard, self.discard_mask = len(ids), sum(1 << i for i in set(ids))
        elif type(discard) is int and discard >= 0:
            self.discard = discard
        else:
            raise MalformedRecord("discard must be a list of cards or a count")
        if len(set(seen)) != len(seen):
            raise MalformedRecord("a card appears twice")
        full = deck_mask(self.rules.deck)
        if any(not (full >> i) & 1 for i in seen):
            raise MalformedRecord("a card is not in this deck")
        if len(seen) - self.discard_mask.bit_count() + self.discard > self.rules.deck:
            raise MalformedRecord("more cards than the deck holds")
        first = start.get("first_bout", False)
        if type(first) is not bool:
            raise MalformedRecord("first_bout must be true or false")
        self.first_bout = first
        attacker = start.get("attacker")
        if attacker not in self.players:
            raise MalformedRecord(f"unknown attacker {attacker!r}")
        if self.stock:
            if not all(self.hands):
                raise MalformedRecord("with cards in the stock every player holds cards")
        else:
            self.out = [h == 0 for h in self.hands]
        self.start = dict(start)
        seat = self.players.index(attacker)
        self.opener = seat
        if self._finished():
            return
        if self.out[seat]:
            seat = self._next_active(seat)
        self.opener = seat
        self._begin_bout(seat)

    # ---- seats -------------------------------------------------------------------

    def _next_active(self, seat: int) -> int:
        n, out = self.n, self.out
        for k in range(1, n + 1):
            s = (seat + k) % n
            if not out[s]:
                return s
        return -1

    def _defender_for(self, attacker: int) -> int:
        """The next active player clockwise; with teams, the next active opponent."""
        n, out = self.n, self.out
        teams = self.rules.teams
        for k in range(1, n):
            s = (attacker + k) % n
            if not out[s] and not (teams and (s - attacker) % 2 == 0):
                return s
        return -1

    def _throwers_for(self, attacker: int, defender: int) -> int:
        teams = self.rules.teams
        if self.rules.throw_in == "all":
            mask = 0
            for s in range(self.n):
                if not self.out[s] and s != defender and not (teams and (s - defender) % 2 == 0):
                    mask |= 1 << s
            return mask
        left = self._next_active(defender)
        mask = 1 << attacker
        if left != defender and not (teams and (left - defender) % 2 == 0):
            mask |= 1 << left
        return mask

    def team_of(self, seat: int) -> int | None:
        return seat % 2 if self.rules.teams else None

    # ---- the bout ---------------------------------------------------------------

    def _limit_for(self, defender: int) -> int:
        held = self.hands[defender].bit_count()
        cap = 6
        if not self.stock and not self.rules.six_cap_after_stock:
            cap = held
        if self.first_bout:
            cap = min(cap, self.rules.first_bout_limit)
        return min(cap, held)

    def _begin_bout(self, attacker: int) -> None:
        self.attacker = attacker
        self.defender = defender = self._defender_for(attacker)
        self.throwers = self._throwers_for(attacker, defender)
        self.limit = self._limit_for(defender)
        self.table, self.covers = [], []
        self.open = self.table_ranks = 0
        self.taking = self.primary_passed = False
        self.passed = self.shown = 0

    def _can_throw(self, seat: int) -> bool:
        """Whether ``seat`` holds a legal throw-in now (rights aside)."""
        return len(self.table) < self.limit and self.hands[seat] & of_ranks(self.table_ranks) != 0

    def _may_throw(self, seat: int) -> bool:
        """Whether ``seat`` has the right to throw in now: a thrower whose pass does
        not hold, and either the primary attacker or allowed by his priority."""
        if not self.table or not (self.throwers >> seat) & 1 or (self.passed >> seat) & 1:
            return False
        a = self.attacker
        return seat == a or self.primary_passed or not self._can_throw(a)

    def _transfer_target(self, seat: int, extra: int) -> tuple[int, int] | None:
        """The new defender and limit if ``seat`` transfers adding ``extra`` attack
        cards, or ``None`` if the situation does not allow it."""
        if not self.table or self.open != len(self.table):
            return None
        if ranks_of(sum(1 << c for c in self.table)).bit_count() != 1:
            return None
        target = self._defender_for(seat)
        if target < 0:
            return None
        limit = self._limit_for(target)
        if len(self.table) + extra > limit:
            return None
        return target, limit

    def _settle(self) -> None:
        """Close the bout once nobody can add a card (RULES.md section 4)."""
        if not self.taking and self.open:
            return
        throwers, passed = self.throwers, self.passed
        if len(self.table) < self.limit:
            ranks = of_ranks(self.table_ranks)
            hands = self.hands
            s = 0
            while throwers:
                if throwers & 1 and not (passed >> s) & 1 and hands[s] & ranks:
                    return
                throwers >>= 1
                s += 1
        self._close_bout()

    def _close_bout(self) -> None:
        attacker, defender = self.attacker, self.defender
        cards = 0
        for c in self.table:
            cards |= 1 << c
        for c in self.covers:
            if c >= 0:
                cards |= 1 << c
        taken = self.taking
        if taken:
            self.hands[defender] |= cards
        else:
            self.discard += len(self.table) + len(self.covers)
            self.discard_mask |= cards
        self.table, self.covers = [], []
        self.open = 0
        self.first_bout = False
        hands, stock, n = self.hands, self.stock, self.n
        if stock:
            order = [attacker]
            for k in range(1, n):
                s = (attacker + k) % n
                if s != defender and not self.out[s]:
                    order.append(s)
            if defender != attacker:
                order.append(defender)
            size = self.rules.hand_size
            for s in order:
                need = size - hands[s].bit_count()
                while need > 0 and stock:
                    hands[s] |= 1 << stock.pop()
                    need -= 1
        if not stock:
            for s in range(n):
                if not hands[s]:
                    self.out[s] = True
        if self._finished():
            return
        if taken:
            nxt = self._next_active(defender)
        else:
            nxt = defender if not self.out[defender] else self._next_active(defender)
        self._begin_bout(nxt)

    def _finished(self) -> bool:
        holding = [s for s in range(self.n) if not self.out[s]]
        if self.rules.teams:
            teams = {s % 2 for s in holding}
            if len(teams) > 1:
                return False
            losers = tuple(s for s in range(self.n) if teams and s % 2 in teams)
        else:
            if len(holding) > 1:
                return False
            losers = tuple(holding)
        self.result = Outcome(losers=losers, draw=not losers)
        self.attacker = self.defender = -1
        self.limit = 0
        self.throwers = self.passed = 0
        self.taking = False
        return True

    # ---- deciding ----------------------------------------------------------------

    def _check_turn(self, seat: int) -> None:
        if self.result is not None:
            raise IllegalAction("game_over", "the game is over")
        if not 0 <= seat < self.n:
            raise IllegalAction("not_your_turn", f"there is no seat {seat}")
        if self.out[seat]:
            raise IllegalAction("not_your_turn", f"{self.players[seat]} has left the game")

    def _hand_mask(self, seat: int, cards: Sequence[Card]) -> int:
        mask = 0
        for c in cards:
            bit = 1 << c.id
            if mask & bit or not self.hands[seat] & bit:
                raise IllegalAction("not_in_hand", f"{self.players[seat]} does not hold {c}")
            mask |= bit
        return mask

    def _verify_attack(self, seat: int, action: Attack) -> int:
        cards = action.cards
        self._check_turn(seat)
        if not cards:
            raise ValueError("an attack needs at least one card")
        if not self.table:
            if seat != self.attacker:
                raise IllegalAction("not_your_turn", f"{self.players[self.attacker]} opens")
            mask = self._hand_mask(seat, cards)
            if ranks_of(mask).bit_count() != 1:
                raise IllegalAction("mixed_ranks", "an opening is one card or cards of one rank")
        else:
            if not self._may_throw(seat):
                raise IllegalAction("not_your_turn", f"{self.players[seat]} may not throw in now")
            mask = self._hand_mask(seat, cards)
            if ranks_of(mask) & ~self.table_ranks:
                raise IllegalAction("rank_not_on_table", "that rank is not on the table")
        if len(self.table) + len(cards) > self.limit:
            raise IllegalAction("limit", f"this bout allows at most {self.limit} attack cards")
        return mask

    def _do_attack(self, seat: int, action: Attack, mask: int) -> None:
        self.hands[seat] &= ~mask
        for c in action.cards:
            self.table.append(c.id)
            self.covers.append(-1)
        self.open += len(action.cards)
        self.table_ranks |= 1 << (action.cards[0].id & 15)
        self.passed = 0

    def _verify_defend(self, seat: int, action: Defend) -> int:
        self._check_turn(seat)
        if seat != self.defender or self.taking or not self.table:
            raise IllegalAction("not_your_turn", f"{self.players[seat]} is not defending now")
        attack, card = action.attack, action.card
        self._hand_mask(seat, (card,))
        try:
            index = self.table.index(attack.id)
        except ValueError:
            index = -1
        if index < 0 or self.covers[index] != -1:
            raise IllegalAction("not_on_table", f"{attack} is not an uncovered attack card")
        if not beaters_mask(attack.id, self.trump) >> card.id & 1:
            raise IllegalAction("cannot_beat", f"{card} does not beat {attack}")
        return index

    def _do_defend(self, seat: int, action: Defend, index: int) -> None:
        card = action.card.id
        self.hands[seat] &= ~(1 << card)
        self.covers[index] = card
        self.open -= 1
        self.table_ranks |= 1 << (card & 15)
        self.passed = 0

    def _verify_take(self, seat: int, action: Take) -> None:
        self._check_turn(seat)
        if seat != self.defender:
            raise IllegalAction("not_your_turn", f"{self.players[seat]} is not defending")
        if self.taking or not self.open:
            raise IllegalAction("cannot_take", "nothing to take: no uncovered card, or taking")

    def _do_take(self, seat: int, action: Take, _: None) -> None:
        self.taking = True
        self.passed = 0

    def _verify_pass(self, seat: int, action: Pass) -> None:
        self._check_turn(seat)
        if not self._may_throw(seat) or not self._can_throw(seat):
            raise IllegalAction("not_your_turn", f"{self.players[seat]} has nothing to pass on")

    def _do_pass(self, seat: int, action: Pass, _: None) -> None:
        self.passed |= 1 << seat
        if seat == self.attacker:
            self.primary_passed = True

    def _verify_transfer(self, seat: int, action: Transfer | ShowTrump) -> tuple[int, int]:
        self._check_turn(seat)
        if seat != self.defender or self.taking or not self.table:
            raise IllegalAction("not_your_turn", f"{self.players[seat]} is not defending now")
        shown = isinstance(action, ShowTrump)
        if not self.rules.transfer or (shown and not self.rules.transfer_by_showing_trump):
            raise IllegalAction("variant_off", "these rules have no such transfer")
        card = action.card
        self._hand_mask(seat, (card,))
        if card.id & 15 != self.table[0] & 15:
            raise IllegalAction("cannot_transfer", f"{card} is not of the attack rank")
        if shown and (card.id >> 4 != self.trump or (self.shown >> card.id) & 1):
            raise IllegalAction("cannot_transfer", f"{card} is not a trump that may be shown")
        target = self._transfer_target(seat, 0 if shown else 1)
        if target is None:
            raise IllegalAction("cannot_transfer", "the defence cannot be passed on now")
        return target

    def _do_transfer(
        self, seat: int, action: Transfer | ShowTrump, target: tuple[int, int]
    ) -> None:
        card = action.card.id
        if isinstance(action, Transfer):
            self.hands[seat] &= ~(1 << card)
            self.table.append(card)
            self.covers.append(-1)
            self.open += 1
        else:
            self.shown |= 1 << card
        self.defender, self.limit = target
        self.attacker = seat
        self.throwers = self._throwers_for(seat, self.defender)
        self.passed = 0
        self.primary_passed = False

    def _lowest_trump(self) -> int:
        return self.trump * 16 + int(lowest_rank(self.rules.deck))

    def _verify_exchange(self, seat: int, action: ExchangeTrump) -> None:
        self._check_turn(seat)
        if seat != self.attacker or self.table:
            raise IllegalAction("not_your_turn", "only the opener, before he opens")
        if not self.rules.trump_exchange:
            raise IllegalAction("variant_off", "these rules have no trump exchange")
        self._hand_mask(seat, (card_of(self._lowest_trump()),))
        if len(self.stock) < 2:
            raise IllegalAction("cannot_exchange", "the stock is too small to exchange the trump")

    def _do_exchange(self, seat: int, action: ExchangeTrump, _: None) -> None:
        low, old = self._lowest_trump(), self.stock[0]
        self.hands[seat] = (self.hands[seat] & ~(1 << low)) | (1 << old)
        self.stock[0] = self.trump_card = low

    def verify(self, seat: int, action: Action) -> None:
        """Raise :class:`IllegalAction` unless ``seat`` may apply ``action`` now."""
        _handler(action)[0](self, seat, action)

    def can_apply(self, seat: int, action: Action) -> bool:
        try:
            _handler(action)[0](self, seat, action)
        except IllegalAction:
            return False
        return True

    def apply(self, seat: int, action: Action) -> None:
        """Apply ``seat``'s decision, or raise :class:`IllegalAction` and change nothing."""
        verify, do = _handler(action)
        do(self, seat, action, verify(self, seat, action))
        self.history.append((seat, action))
        if self.table:
            self._settle()

    # ---- asking ------------------------------------------------------------------

    def actors(self) -> list[int]:
        """The seats that may act now (each has at least one legal action)."""
        if self.result is not None:
            return []
        if not self.table:
            return [self.attacker]
        seats = []
        if not self.taking and self.open:
            seats.append(self.defender)
        throwers, s = self.throwers, 0
        while throwers:
            if throwers & 1 and self._may_throw(s) and self._can_throw(s):
                seats.append(s)
            throwers >>= 1
            s += 1
        return sorted(seats)

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may apply now, multi-card openings and throw-ins included."""
        if self.result is not None or not 0 <= seat < self.n or self.out[seat]:
            return []
        hand = self.hands[seat]
        acts: list[Action] = []
        if not self.table:
            if seat != self.attacker:
                return acts
            ranks, limit = ranks_of(hand), self.limit
            while ranks:
                low = ranks & -ranks
                acts.extend(_attacks(hand & (low * RANK_LANES), limit, None))
                ranks ^= low
            if (
                self.rules.trump_exchange
                and len(self.stock) >= 2
                and hand >> self._lowest_trump() & 1
            ):
                acts.append(EXCHANGE_TRUMP)
            return acts
        if seat == self.defender:
            if not self.taking and self.open:
                trump = self.trump
                beaters = BEATERS[trump]
                for a, c in zip(self.table, self.covers, strict=True):
                    if c == -1:
                        acts.extend(_defends(a, hand & beaters[a]))
                acts.append(TAKE)
                if self.rules.transfer:
                    same = hand & of_ranks(1 << (self.table[0] & 15))
                    if same and self._transfer_target(seat, 1) is not None:
                        acts.extend(Transfer(c) for c in cards_of(same))
                    if self.rules.transfer_by_showing_trump:
                        show = same & suit_mask(trump) & ~self.shown
                        if show and self._transfer_target(seat, 0) is not None:
                            acts.extend(ShowTrump(c) for c in cards_of(show))
            return acts
        if self._may_throw(seat) and self._can_throw(seat):
            room = self.limit - len(self.table)
            acts.extend(_attacks(hand & of_ranks(self.table_ranks), room, PASS))
        return acts

    def legal_by_seat(self) -> list[tuple[int, Sequence[Action]]]:
        """``(seat, legal_actions(seat))`` for every seat in ``actors()``, in one pass:
        what a simulation asks at every step, so it shares the work between seats."""
        if self.result is not None:
            return []
        if not self.table:
            return [(self.attacker, self.legal_actions(self.attacker))]
        moves: list[tuple[int, Sequence[Action]]] = []
        if not self.taking and self.open:
            moves.append((self.defender, self.legal_actions(self.defender)))
        room = self.limit - len(self.table)
        if room > 0:
            ranks = self.table_ranks * RANK_LANES
            hands, a = self.hands, self.attacker
            everyone = self.primary_passed or not hands[a] & ranks
            free, s = self.throwers & ~self.passed, 0
            while free:
                if free & 1:
                    mine = hands[s] & ranks
                    if mine and (everyone or s == a):
                        moves.append((s, _attacks(mine, room, PASS)))
                free >>= 1
                s += 1
        return moves

    def seat_of(self, name: str) -> int:
        try:
            return self.players.index(name)
        except ValueError:
            raise KeyError(f"no player {name!r}") from None

    @property
    def over(self) -> bool:
        return self.result is not None

    def hand(self, seat: int) -> tuple[Card, ...]:
        trump = Suit(self.trump)
        return tuple(sorted(cards_of(self.hands[seat]), key=lambda c: sort_key(c, trump)))

    def hand_sizes(self) -> list[int]:
        return [h.bit_count() for h in self.hands]

    def next_limit(self) -> int | None:
        """The current bout's limit (between bouts: the limit the next bout gets)."""
        return None if self.result is not None else self.limit

    def view(self, seat: int | None = None) -> View:
        """What ``seat`` may see (its own hand and legal actions, counts of the
        others); ``seat=None`` is the public view for a group message."""
        trump = Suit(self.trump)
        over = self.result is not None
        return View(
            seat=seat,
            hand=self.hand(seat) if seat is not None else (),
            legal=tuple(self.legal_actions(seat)) if seat is not None else (),
            seats=tuple(
                SeatInfo(
                    s, self.players[s], self.hands[s].bit_count(), self.out[s], self.team_of(s)
                )
                for s in range(self.n)
            ),
            trump=trump,
            trump_card=card_of(self.trump_card) if self.trump_card >= 0 else None,
            trump_card_in_stock=bool(self.stock),
            stock=len(self.stock),
            discard=self.discard,
            table=tuple(
                (card_of(a), card_of(c) if c >= 0 else None)
                for a, c in zip(self.table, self.covers, strict=True)
            ),
            attacker=None if over else self.attacker,
            defender=None if over else self.defender,
            throwers=tuple(s for s in range(self.n) if (self.throwers >> s) & 1),
            limit=self.next_limit(),
            taking=self.taking,
            waiting_for=tuple(self.actors()),
            opener=self.opener if self.opener >= 0 else None,
            opener_reason=self.opener_reason,
            opener_card=card_of(self.opener_card) if self.opener_card >= 0 else None,
            first_bout=self.first_bout,
            dealer=self.dealer if self.dealer >= 0 else None,
            outcome=self.result,
            moves=len(self.history),
        )

    # ---- the next game of a series ---------------------------------------------

    def next_game(self) -> tuple[str, int | None, int | None]:
        """``(series, dealer, previous_loser)`` for the next game of the series.

        After a loss the loser deals (with teams: the losing team's member who held
        the most cards, ties to the first clockwise from this game's dealer); after
        a draw the dealer does not change.
        """
        if self.result is None:
            raise ValueError("the game is not over")
        if self.result.draw:
            return "after_draw", self.dealer if self.dealer >= 0 else 0, None
        losers = self.result.losers
        if len(losers) == 1:
            return "after_loss", losers[0], losers[0]
        base = self.dealer if self.dealer >= 0 else 0
        ordered = sorted(losers, key=lambda s: (s - base - 1) % self.n)
        most = max(self.hands[s].bit_count() for s in ordered)
        dealer = next(s for s in ordered if self.hands[s].bit_count() == most)
        return "after_loss", dealer, dealer


# Action values are immutable, so the generator hands out shared instances:
# building frozen dataclasses is most of the cost of listing legal actions.
_ATTACK_CACHE: dict[tuple[int, int, Pass | None], tuple[Action, ...]] = {}
_DEFEND_CACHE: dict[int, tuple[Defend, ...]] = {}
_CACHE_CAP = 250_000


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


_Verify = Callable[[Game, int, Any], Any]
_Do = Callable[[Game, int, Any, Any], None]
_HANDLERS: dict[type, tuple[_Verify, _Do]] = {
    Attack: (Game._verify_attack, Game._do_attack),
    Defend: (Game._verify_defend, Game._do_defend),
    Take: (Game._verify_take, Game._do_take),
    Pass: (Game._verify_pass, Game._do_pass),
    Transfer: (Game._verify_transfer, Game._do_transfer),
    ShowTrump: (Game._verify_transfer, Game._do_transfer),
    ExchangeTrump: (Game._verify_exchange, Game._do_exchange),
}


def _handler(action: Action) -> tuple[_Verify, _Do]:
    try:
        return _HANDLERS[type(action)]
    except KeyError:
        raise TypeError(f"not an action: {action!r}") from None


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise MalformedRecord(f"{what} must be a list")
    return value
