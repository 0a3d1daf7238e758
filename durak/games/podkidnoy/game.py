"""Podkidnoy durak: the game's state and the game interface.

Callers only send decisions (``apply``); dealing, refilling, clearing the table,
players leaving and the end of the game happen inside, in the modules that hold
each rule: :mod:`.deal` (the deal, who opens, a record's position), :mod:`.bout`
(a bout: its limit, throwing in, every decision, ``legal``) and :mod:`.after`
(the table cleared, refill, leaving, the end). Every refusal is an
:class:`IllegalAction`, raised before anything changes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ...actions import Action, Attack, Defend, Pass, Take
from ...cards import Card, Suit, card_of, cards_of, deck, parse_card, sort_key
from ...errors import MalformedRecord
from ...rules import Rules
from ...view import Outcome, SeatInfo, View
from ..base import AFTER_DRAW, AFTER_LOSS, FIRST, Game, Series, series_dealer
from . import blind, bout, deal
from . import match as matches
from . import snapshot as snapshots


class Podkidnoy(Game):
    """One game of podkidnoy (RULES.md, with VARIANTS.md's options): the rules,
    the seats, the deal, and the actions applied. The rules themselves live in
    :mod:`.deal`, :mod:`.bout` and :mod:`.after`; this class holds the state and
    answers the game interface."""

    GAMES = ("podkidnoy",)

    __slots__ = (
        "_views",
        "attacker",
        "covers",
        "dealer",
        "defender",
        "discard",
        "discard_mask",
        "end_reason",
        "first_bout",
        "hands",
        "last_discard",
        "limit",
        "match",
        "no_pair",
        "open",
        "opener",
        "opener_card",
        "opener_reason",
        "out",
        "out_of_play",
        "passed",
        "positions",
        "primary_passed",
        "return_used",
        "second_trump",
        "seen",
        "shown",
        "single_lead",
        "slots",
        "stall",
        "stock",
        "table",
        "table_ranks",
        "taker",
        "taking",
        "throwers",
        "transferred",
        "trump",
        "trump_card",
        "varied",
        "window",
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
    second_trump: int  # trump_change: the second trump card (-1 if none or unknown)
    out_of_play: int  # sprint: the cards after the deal, out of play (a mask)
    match: matches.Match  # sprint: the match before this deal
    last_discard: tuple[tuple[int, int], ...]  # show_last_discard: the latest discarded pairs
    # VARIANTS.md, the bout side
    varied: bool  # blind, partial_defence, english, return_last_card or damka is on
    slots: list[list[int]] | None  # blind: each hand in slot order (may list cards gone since)
    seen: list[int]  # blind: per seat, the cards of his own hand he has seen face up
    taker: int  # english: who took the cards of the bout just ended (-1: nobody)
    no_pair: tuple[int, ...]  # english: the seats the lead passed over (no pair)
    single_lead: bool  # english: nobody could open with a pair: one card is led
    positions: set[tuple[int, tuple[int, ...]]]  # english: (designated opener, hands) seen
    window: tuple[int, int]  # english: (discard, stock) while ``positions`` are kept
    end_reason: str | None  # "repetition" (english), "no_progress": why a draw ended it
    stall: int  # no_progress_draw: bouts ended by a take since the last progress
    return_used: bool  # return_last_card: the game's one return has been used
    transferred: bool  # a transfer or show_trump happened in this bout
    _views: dict[int | None, View]  # this state's views by seat (None: public); see view()

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
        self.opener_reason = deal.OPENER_POSITION
        self.trump = 0
        self.second_trump = -1
        self.out_of_play = 0
        self.match = matches.NO_MATCH
        self.last_discard = ()
        self.varied = (
            rules.blind
            or rules.partial_defence
            or rules.english
            or rules.return_last_card
            or rules.damka
        )
        self.slots = [[] for _ in names] if rules.blind else None
        self.seen = [0] * self.n
        self.taker = -1
        self.no_pair = ()
        self.single_lead = False
        self.positions = set()
        self.window = (-1, -1)
        self.end_reason = None
        self.stall = 0
        self.return_used = self.transferred = False
        self._views = {}

    # ---- construction ---------------------------------------------------------

    @classmethod
    def from_seed(
        cls,
        rules: Rules,
        players: Sequence[str],
        seed: int | str,
        series: Series | None = None,
    ) -> Podkidnoy:
        """A shuffled deal. The first game of a series draws its dealer from the seed;
        after a loss the previous loser deals; after a draw, the same dealer again."""
        rng = random.Random(f"durak:{seed}")
        cards = list(deck(rules.deck))
        rng.shuffle(cards)
        names = tuple(players)
        series = series or Series()
        if rules.sprint:
            return cls._sprint_deal(rules, names, cards, rng, series)
        dealer, loser = series_dealer(names, series, lambda: rng.randrange(len(names)))
        return cls.from_deck(rules, names, cards, dealer, series.kind, loser)

    @classmethod
    def _sprint_deal(
        cls,
        rules: Rules,
        names: tuple[str, ...],
        cards: list[Card],
        rng: random.Random,
        series: Series,
    ) -> Podkidnoy:
        """VARIANTS.md 2.4-2.5: a match's first deal draws its dealer from the seed;
        a later one (``series.match`` given, from the previous deal's
        :meth:`next_game`) seats ``series.players`` and is dealt by ``series.dealer``."""
        if series.match is None:
            return cls.from_deck(rules, names, cards, rng.randrange(len(names)))
        seated = series.players if series.players is not None else names
        if not set(seated) <= set(names) or series.dealer not in seated:
            raise ValueError("the next deal seats the match's players, dealt by one of them")
        match = matches.read(series.match, seated)
        return cls.from_deck(rules, seated, cards, seated.index(series.dealer), match=match)

    @classmethod
    def from_deck(
        cls,
        rules: Rules,
        players: Sequence[str],
        order: Sequence[Card],
        dealer: int,
        series: str = FIRST,
        previous_loser: int | None = None,
        match: matches.Match | None = None,
    ) -> Podkidnoy:
        """Deal an explicit deck order (top card first), RULES.md sections 2 and 3
        (with ``sprint``: VARIANTS.md section 2; ``match`` is the match so far)."""
        game = cls(rules, players)
        if rules.sprint:
            game.match = match or matches.fresh(game.players)
        deal.deal(game, order, dealer, series, previous_loser)
        return game

    @classmethod
    def from_position(
        cls, rules: Rules, players: Sequence[str], start: dict[str, Any]
    ) -> Podkidnoy:
        """Set up a position between bouts (the record's position form)."""
        game = cls(rules, players)
        try:
            deal.read_position(game, start)
        except MalformedRecord:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise MalformedRecord(f"bad position: {e}") from None
        return game

    @classmethod
    def from_start(cls, rules: Rules, players: Sequence[str], start: dict[str, Any]) -> Podkidnoy:
        if "deck_order" not in start:
            return cls.from_position(rules, players, start)
        names = list(players)
        try:
            order = [parse_card(c) for c in start["deck_order"]]
            dealer = names.index(start["dealer"])
            series = start.get("series", FIRST)
            loser = start.get("previous_loser")
            if rules.sprint:  # VARIANTS.md 12.2: series and previous_loser are not used
                match = matches.read(start.get("match"), tuple(names))
                return cls.from_deck(rules, names, order, dealer, match=match)
            if "match" in start:
                raise MalformedRecord("match belongs to sprint")
            return cls.from_deck(
                rules, names, order, dealer, series, None if loser is None else names.index(loser)
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise MalformedRecord(f"bad deal: {type(e).__name__}: {e}") from None

    @classmethod
    def restore(cls, data: dict[str, Any]) -> Podkidnoy:
        return snapshots.read(cls, data)

    def snapshot(self) -> dict[str, Any]:
        return snapshots.write(self)

    def clone(self, with_history: bool = False) -> Podkidnoy:
        """An independent copy of the state, for search: an AI plays thousands of
        simulated continuations on copies. The history is left empty unless asked
        for (a simulation does not need it); ``start`` is shared (never mutated)."""
        game = Podkidnoy(self.rules, self.players)
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
        game.second_trump = self.second_trump
        game.out_of_play = self.out_of_play
        game.match = self.match
        game.last_discard = self.last_discard
        game.stall, game.end_reason = self.stall, self.end_reason
        if self.varied:
            self._clone_variants(game)
        return game

    def _clone_variants(self, game: Podkidnoy) -> None:
        """The VARIANTS.md state of the bout side, copied (only when one is on)."""
        game.slots = None if self.slots is None else [list(s) for s in self.slots]
        game.seen = list(self.seen)
        game.taker, game.no_pair, game.single_lead = self.taker, self.no_pair, self.single_lead
        game.positions, game.window = set(self.positions), self.window
        game.end_reason = self.end_reason
        game.return_used, game.transferred = self.return_used, self.transferred

    # ---- seats -------------------------------------------------------------------

    def next_active(self, seat: int) -> int:
        n, out = self.n, self.out
        for k in range(1, n + 1):
            s = (seat + k) % n
            if not out[s]:
                return s
        return -1

    def defender_for(self, attacker: int) -> int:
        """The next active player clockwise; with teams, the next active opponent."""
        n, out = self.n, self.out
        teams = self.rules.teams
        for k in range(1, n):
            s = (attacker + k) % n
            if not out[s] and not (teams and (s - attacker) % 2 == 0):
                return s
        return -1

    def throwers_for(self, attacker: int, defender: int) -> int:
        """Seat bitmask of who may throw in (RULES.md section 4, ``throw_in``)."""
        if self.varied and self.rules.blind:
            return 0  # VARIANTS.md 3.4: nobody throws in
        teams = self.rules.teams
        if self.rules.throw_in == "all":
            mask = 0
            for s in range(self.n):
                if not self.out[s] and s != defender and not (teams and (s - defender) % 2 == 0):
                    mask |= 1 << s
            return mask
        left = self.next_active(defender)
        mask = 1 << attacker
        if left != defender and not (teams and (left - defender) % 2 == 0):
            mask |= 1 << left
        return mask

    def team_of(self, seat: int) -> int | None:
        return seat % 2 if self.rules.teams else None

    # ---- deciding ----------------------------------------------------------------

    def verify(self, seat: int, action: Action) -> None:
        """Raise :class:`IllegalAction` unless ``seat`` may apply ``action`` now."""
        bout.handler(action)[0](self, seat, action)

    def apply(self, seat: int, action: Action) -> None:
        """Apply ``seat``'s decision, or raise :class:`IllegalAction` and change nothing."""
        verify, do = bout.handler(action)
        checked = verify(self, seat, action)  # a refusal changes nothing: the views hold
        self._views.clear()  # before any change: no view of the old state stays
        do(self, seat, action, checked)
        self.history.append((seat, action))
        if self.table:
            bout.settle(self)

    def timeout_seats(self) -> list[int]:
        """Throwers first (they pass), then the defender (he covers, or takes)."""
        seats = bout.actors(self)
        if self.defender in seats:
            seats = [s for s in seats if s != self.defender] + [self.defender]
        return seats

    def timeout_action(self, seat: int) -> Action:
        """A move that makes progress and commits him least: a thrower passes, the
        defender covers a card with his cheapest card that beats it (a plain one
        before a trump) and takes only when he cannot cover, the opener plays his
        lowest card (a plain one if he has one). A defender who always took would
        keep the cards going round the table once the stock is gone, for ever
        when every seat is played by the clock (issue 27 item 6)."""
        legal = bout.legal(self, seat)
        if self.varied and (self.rules.blind or self.rules.english):
            return self._variant_timeout(seat, legal)
        if not self.table and seat == self.attacker:
            trump = Suit(self.trump)
            hand = self.hand(seat)
            plain = [c for c in hand if c.suit != trump]
            return Attack((min(plain or hand, key=lambda c: int(c.rank)),))
        return self._answer_timeout(legal)

    def _answer_timeout(self, legal: list[Action]) -> Action:
        """The cheapest cover if there is one, else take, else pass."""
        trump = Suit(self.trump)
        covers = [a for a in legal if isinstance(a, Defend)]
        if covers:
            return min(
                covers, key=lambda a: (a.card.suit == trump, int(a.card.rank), int(a.card.suit))
            )
        for wanted in (Take(), Pass()):
            if wanted in legal:
                return wanted
        return legal[0]

    def _variant_timeout(self, seat: int, legal: list[Action]) -> Action:
        """``blind``: the first slot, as an opening or an answer (he cannot see
        his cards, so the clock picks none for him); ``english``: the lowest
        pair, or one lowest card when nobody can open with a pair."""
        if self.rules.blind:
            return blind.slot_action(self, seat, 0)
        if not self.table and seat == self.attacker:
            trump = Suit(self.trump)
            openings = [a for a in legal if isinstance(a, Attack)]
            return min(
                openings, key=lambda a: (a.cards[0].suit == trump, int(a.cards[0].rank), str(a))
            )
        return self._answer_timeout(legal)

    def slot_action(self, seat: int, slot: int) -> Action:
        return blind.slot_action(self, seat, slot)

    # ---- asking ------------------------------------------------------------------

    def actors(self) -> list[int]:
        return bout.actors(self)

    def legal_actions(self, seat: int) -> list[Action]:
        return bout.legal(self, seat)

    def legal_by_seat(self) -> list[tuple[int, Sequence[Action]]]:
        return bout.legal_by_seat(self)

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
        others); ``seat=None`` is the public view for a group message.

        Built once per state and seat: a view is a frozen value, and one move is
        looked at many times (the bot's table, each panel, its notifications, the
        handlers), about 16 views per action. ``apply`` is the only way the state
        changes after construction (callers send decisions, nothing else), and it
        drops them; a copy (:meth:`clone`) starts with none."""
        found = self._views.get(seat)
        if found is None:
            found = self._views[seat] = self._view(seat)
        return found

    def _view(self, seat: int | None) -> View:
        trump = Suit(self.trump)
        over = self.result is not None
        hidden = self.slots is not None
        return View(
            seat=seat,
            hand=self.hand(seat) if seat is not None and not hidden else (),
            legal=tuple(bout.legal(self, seat)) if seat is not None and not hidden else (),
            seats=tuple(
                SeatInfo(
                    s, self.players[s], self.hands[s].bit_count(), self.out[s], self.team_of(s)
                )
                for s in range(self.n)
            ),
            trump=trump,
            trump_card=card_of(self.trump_card) if self.trump_card >= 0 else None,
            trump_card_in_stock=self.trump_card >= 0 and len(self.stock) > self.second_hidden(),
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
            waiting_for=tuple(bout.actors(self)),
            opener=self.opener if self.opener >= 0 else None,
            opener_reason=self.opener_reason,
            opener_card=card_of(self.opener_card) if self.opener_card >= 0 else None,
            first_bout=self.first_bout,
            dealer=self.dealer if self.dealer >= 0 else None,
            outcome=self.result,
            moves=len(self.history),
            second_trump_hidden=self.second_hidden(),
            second_trump_card=(
                card_of(self.second_trump) if self.second_trump >= 0 and not self.stock else None
            ),
            match=matches.view(self) if self.rules.sprint else None,
            last_discard=(
                tuple((card_of(a), card_of(c) if c >= 0 else None) for a, c in self.last_discard)
                if self.rules.show_last_discard
                else None
            ),
            slots=blind.own_slots(self, seat) if hidden and seat is not None else None,
            shown_hands=blind.shown_hands(self, seat) if hidden and seat is not None else (),
            no_pair=self.no_pair,
            single_lead=self.single_lead,
            return_used=self.return_used,
            end_reason=self.end_reason,
        )

    def second_hidden(self) -> bool:
        """``trump_change``: the second trump card still lies face down (it is the
        bottom of the stock list, drawn last)."""
        return self.second_trump >= 0 and bool(self.stock)

    # ---- records -------------------------------------------------------------------

    def expected(self, key: str) -> Any:
        over = self.result is not None
        if key == "attacker":
            return None if over else self.players[self.attacker]
        if key == "defender":
            return None if over else self.players[self.defender]
        if key == "trump":
            return "SHDC"[self.trump]
        if key == "stock":
            return len(self.stock)
        if key == "discard":
            return self.discard
        if key == "table":
            return [
                [str(card_of(a)), str(card_of(c)) if c >= 0 else None]
                for a, c in zip(self.table, self.covers, strict=True)
            ]
        if key == "limit":
            return self.next_limit()
        if key == "out":
            return [self.players[s] for s in range(self.n) if self.out[s]]
        if key == "result":
            return self.result_json()
        if key == "match" and self.rules.sprint:
            return matches.expected(self)
        if key == "return_used":
            return self.return_used
        raise KeyError(key)

    def result_json(self) -> dict[str, Any] | None:
        r = self.result
        if r is None:
            return None
        if r.draw:
            return {"draw": True}
        if self.rules.teams:
            return {"losers": [self.players[s] for s in r.losers]}
        return {"loser": self.players[r.losers[0]]}

    # ---- the next game of a series ---------------------------------------------

    @property
    def scored(self) -> Outcome | None:
        """Sprint: the match's result once decided, or a knock-out deal's durak."""
        if self.rules.sprint:
            return matches.scored(self)
        return self.result

    def next_game(self) -> Series:
        """The next game of the series.

        After a loss the loser deals (with teams: the losing team's member who held
        the most cards, ties to the first clockwise from this game's dealer); after
        a draw the dealer does not change.
        """
        if self.result is None:
            raise ValueError("the game is not over")
        if self.rules.sprint:
            return matches.next_game(self)
        base = self.dealer if self.dealer >= 0 else 0
        if self.result.draw:
            return Series(AFTER_DRAW, dealer=self.players[base])
        losers = self.result.losers
        if len(losers) == 1:
            dealer = losers[0]
        else:
            ordered = sorted(losers, key=lambda s: (s - base - 1) % self.n)
            most = max(self.hands[s].bit_count() for s in ordered)
            dealer = next(s for s in ordered if self.hands[s].bit_count() == most)
        name = self.players[dealer]
        return Series(AFTER_LOSS, dealer=name, previous_loser=name)
