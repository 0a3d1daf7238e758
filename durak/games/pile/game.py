"""A pile game (PILE-GAMES.md): the shared state and the game interface.

The three games share one state: hands, the pile (bottom first), the player on
turn and his phase. Legality and the actions live in :mod:`.play`, the deal and a
record's position in :mod:`.deal`, each game's own rules in :mod:`.own_trumps`,
:mod:`.piled` and :mod:`.road`, and JSON in :mod:`.snapshot`. Every refusal is an
:class:`IllegalAction`, raised before anything changes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ...actions import TAKE, Action, Beat, Lead
from ...cards import Card, Suit, card_of, cards_of, deck, parse_suit, sort_key
from ...errors import IllegalAction, MalformedRecord
from ...rules import NO_PROGRESS, Rules
from ...view import PileView, SeatInfo
from ..base import AFTER_DRAW, AFTER_LOSS, FIRST, Game, Series, series_dealer
from . import deal, own_trumps, play
from . import snapshot as snapshots

#: The expectation keys of PILE-GAMES.md 6.7 this class answers (the checker
#: answers ``legal``, ``illegal``, ``hands`` and ``hand_sizes`` itself).
_KEYS = ("turn", "phase", "pile", "trump", "trumps", "out", "result", "stock", "discard")


class PileGame(Game):
    """One game of own trumps, piled or road."""

    GAMES = ("own_trumps", "piled", "road")

    __slots__ = (
        "_views",
        "dealer",
        "discard",
        "discard_mask",
        "hands",
        "last_cleared",
        "out",
        "out_of_play",
        "phase",
        "pile",
        "stall",
        "stock",
        "suits",
        "trump",
        "trump_card",
        "turn",
    )

    hands: list[int]  # card masks
    out: list[bool]
    pile: list[int]  # card ids, bottom first
    turn: int  # -1 once over
    phase: str  # "lead" or "answer" (meaningless once over)
    suits: list[int]  # each seat's trump suit (the game's trump in piled and road)
    trump: int  # -1 in own trumps
    trump_card: int  # piled: the face-up card; road: the card showing trump; else -1
    stock: list[int]  # piled: bottom first, stock[0] is the trump card while undrawn
    discard: int
    discard_mask: int  # the discarded cards this game saw (a position may give a count)
    out_of_play: int  # road with 5 players: the 36th card; else -1
    last_cleared: list[int] | None  # road: the last pile cleared
    stall: int  # no_progress_draw: takes since the last progress (RULES-NOTES.md 77)
    dealer: int
    _views: dict[int | None, PileView]  # this state's views by seat (None: public)

    def __init__(self, rules: Rules, players: Sequence[str]) -> None:
        """Use a constructor: :meth:`from_seed`, :meth:`from_deck`, :meth:`from_start`."""
        names = tuple(players)
        if len(set(names)) != len(names) or not all(isinstance(p, str) and p for p in names):
            raise ValueError("player names must be distinct non-empty strings")
        if rules.game not in self.GAMES:
            raise ValueError(f"{rules.game} is not a pile game")
        rules.check_players(len(names))
        self.rules = rules
        self.players = names
        self.n = len(names)
        self.hands = [0] * self.n
        self.out = [False] * self.n
        self.pile = []
        self.turn = -1
        self.phase = play.LEAD
        self.suits = [0] * self.n
        self.trump = self.trump_card = self.out_of_play = self.dealer = -1
        self.stock = []
        self.discard = self.discard_mask = 0
        self.last_cleared = None
        self.stall = 0
        self.result = None
        self.history = []
        self.start = {}
        self._views = {}

    # ---- construction ---------------------------------------------------------

    @classmethod
    def from_seed(
        cls,
        rules: Rules,
        players: Sequence[str],
        seed: int | str,
        series: Series | None = None,
    ) -> PileGame:
        """A shuffled deal. The first dealer comes from :func:`deal.first_dealer`
        (what a lobby asks suits by); own trumps takes the suits from
        ``series.trumps`` or, without them, draws them in the choosing order."""
        names = tuple(series.players) if series and series.players else tuple(players)
        series = series or Series()
        dealer, loser = series_dealer(names, series, lambda: deal.first_dealer(names, seed))
        cards = list(deck(36))
        rng = random.Random(f"durak:{seed}")
        rng.shuffle(cards)
        suits: dict[int, int] | None = None
        if rules.game == "own_trumps":
            if series.trumps:
                suits = {names.index(p): int(parse_suit(s)) for p, s in series.trumps.items()}
            else:
                n = len(names)
                suits = own_trumps.assign_suits([(dealer + k) % n for k in range(1, n + 1)], seed)
        game = cls(rules, names)
        deal.deal(game, cards, dealer, series.kind, loser, suits, None, rng)
        return game

    @classmethod
    def choosing_order(
        cls, rules: Rules, players: Sequence[str], seed: int | str
    ) -> tuple[int, ...]:
        """Own trumps: clockwise from the left neighbour of the first dealer, whom
        :meth:`from_seed` draws from the same seed (:func:`deal.first_dealer`)."""
        if rules.game != "own_trumps":
            return ()
        n = len(players)
        dealer = deal.first_dealer(tuple(players), seed)
        return tuple((dealer + k) % n for k in range(1, n + 1))

    @classmethod
    def from_deck(
        cls,
        rules: Rules,
        players: Sequence[str],
        order: Sequence[Card],
        dealer: int,
        series: str = FIRST,
        previous_loser: int | None = None,
        suits: dict[int, int] | None = None,
        swap_draws: dict[int, int] | None = None,
    ) -> PileGame:
        """Deal an explicit deck order (top card first); own trumps needs ``suits``
        (seat -> suit) and, if anyone swaps, ``swap_draws`` (receiver -> card id)."""
        game = cls(rules, players)
        rng = random.Random(0) if swap_draws is None else None
        deal.deal(game, order, dealer, series, previous_loser, suits, swap_draws, rng)
        return game

    @classmethod
    def from_start(cls, rules: Rules, players: Sequence[str], start: dict[str, Any]) -> PileGame:
        game = cls(rules, players)
        try:
            if "deck_order" in start:
                deal.read_deck_start(game, start)
            else:
                deal.read_position(game, start)
        except MalformedRecord:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            raise MalformedRecord(f"bad start: {type(e).__name__}: {e}") from None
        return game

    @classmethod
    def restore(cls, data: dict[str, Any]) -> PileGame:
        return snapshots.read(cls, data)

    def snapshot(self) -> dict[str, Any]:
        return snapshots.write(self)

    def clone(self, with_history: bool = False) -> PileGame:
        """An independent copy (the history only if asked; ``start`` is shared)."""
        g = PileGame(self.rules, self.players)  # (a mypyc-compiled class has no bare __new__)
        g.hands, g.out, g.pile = list(self.hands), list(self.out), list(self.pile)
        g.turn, g.phase, g.suits = self.turn, self.phase, list(self.suits)
        g.trump, g.trump_card, g.out_of_play = self.trump, self.trump_card, self.out_of_play
        g.stock, g.discard, g.discard_mask = list(self.stock), self.discard, self.discard_mask
        g.last_cleared = None if self.last_cleared is None else list(self.last_cleared)
        g.dealer, g.result, g.start = self.dealer, self.result, self.start
        g.stall = self.stall
        g.history = list(self.history) if with_history else []
        return g

    # ---- seats -------------------------------------------------------------------

    def next_player(self, seat: int) -> int:
        """The first player clockwise after ``seat`` still in the game (``seat``
        itself if he is the only one); -1 if nobody is."""
        n, out = self.n, self.out
        for k in range(1, n + 1):
            s = (seat + k) % n
            if not out[s]:
                return s
        return -1

    def in_game(self) -> int:
        return self.out.count(False)

    # ---- deciding ----------------------------------------------------------------

    def verify(self, seat: int, action: Action) -> None:
        play.verify(self, seat, action)

    def apply(self, seat: int, action: Action) -> None:
        views, self._views = self._views, {}  # the old state's views go (see view)
        try:
            play.apply(self, seat, action)
        except IllegalAction:
            self._views = views  # refused before anything changed: they still hold
            raise

    def actors(self) -> list[int]:
        return [] if self.result is not None else [self.turn]

    def legal_actions(self, seat: int) -> list[Action]:
        return play.legal(self, seat)

    def legal_by_seat(self) -> list[tuple[int, Sequence[Action]]]:
        if self.result is not None:
            return []
        return [(self.turn, play.legal(self, self.turn))]

    def timeout_action(self, seat: int) -> Action:
        """Answering, he beats the top card with his cheapest card that beats it (a
        card not of his trump suit first) and takes only when he cannot: a seat that
        always took would keep the cards going round for ever (issue 27 item 6);
        leading, he leads his lowest card: the lowest rank among the cards not of
        his trump suit if he has any (as podkidnoy's opener)."""
        mine = self.suits[seat]
        if self.phase == play.ANSWER:
            beats = [a for a in self.legal_actions(seat) if isinstance(a, Beat)]
            if not beats:
                return TAKE
            return min(
                beats, key=lambda a: (a.card.suit == mine, int(a.card.rank), int(a.card.suit))
            )
        hand = cards_of(self.hands[seat])
        return Lead(min(hand, key=lambda c: (c.suit == mine, int(c.rank), int(c.suit))))

    # ---- reading -----------------------------------------------------------------

    def hand(self, seat: int) -> tuple[Card, ...]:
        mine = Suit(self.suits[seat])
        return tuple(sorted(cards_of(self.hands[seat]), key=lambda c: sort_key(c, mine)))

    def hand_sizes(self) -> list[int]:
        return [h.bit_count() for h in self.hands]

    def take_cost(self) -> int | None:
        """What a take costs the player on turn now (phase ``answer``), else ``None``."""
        if self.result is not None or self.phase != play.ANSWER:
            return None
        if self.rules.game == "own_trumps":
            return own_trumps.take_count(self, self.turn)
        return len(self.pile) if self.rules.game == "piled" else 1

    def view(self, seat: int | None = None) -> PileView:
        """What ``seat`` sees: his hand and legal actions, counts of the others,
        and everything public; ``None`` is the public view. Built once per state and
        seat, as :meth:`Podkidnoy.view <durak.games.podkidnoy.game.Podkidnoy.view>`
        (``apply`` drops them; a copy starts with none)."""
        found = self._views.get(seat)
        if found is None:
            found = self._views[seat] = self._view(seat)
        return found

    def _view(self, seat: int | None) -> PileView:
        over = self.result is not None
        game = self.rules.game
        road = game == "road"
        return PileView(
            seat=seat,
            hand=self.hand(seat) if seat is not None else (),
            legal=tuple(play.legal(self, seat)) if seat is not None else (),
            seats=tuple(
                SeatInfo(s, self.players[s], self.hands[s].bit_count(), self.out[s], None)
                for s in range(self.n)
            ),
            game=game,
            pile=tuple(card_of(i) for i in self.pile),
            turn=None if over else self.turn,
            phase=None if over else self.phase,
            trump=None if self.trump < 0 else Suit(self.trump),
            trumps=tuple(Suit(s) for s in self.suits) if game == "own_trumps" else (),
            trump_card=card_of(self.trump_card) if self.trump_card >= 0 else None,
            trump_card_in_stock=bool(self.stock),
            out_of_play=card_of(self.out_of_play) if self.out_of_play >= 0 else None,
            stock=len(self.stock),
            discard=self.discard,
            take_cost=self.take_cost(),
            last_cleared=(
                tuple(card_of(i) for i in self.last_cleared or ())
                if road and self.rules.show_last_discard
                else None
            ),
            waiting_for=() if over else (self.turn,),
            dealer=self.dealer if self.dealer >= 0 else None,
            outcome=self.result,
            moves=len(self.history),
            end_reason=self.end_reason(),
        )

    def end_reason(self) -> str | None:
        """``"no_progress"`` for the draw of ``no_progress_draw`` (cards still held),
        else ``None``."""
        r = self.result
        if r is not None and r.draw and any(self.hands):
            return NO_PROGRESS
        return None

    # ---- records -------------------------------------------------------------------

    def expected(self, key: str) -> Any:
        """PILE-GAMES.md 6.7; ``KeyError`` for a key a pile game does not take
        (``trump`` in own trumps, ``trumps`` in the other two, podkidnoy's keys)."""
        if key not in _KEYS:
            raise KeyError(key)
        over = self.result is not None
        own = self.rules.game == "own_trumps"
        if key == "turn":
            return None if over else self.players[self.turn]
        if key == "phase":
            return None if over else self.phase
        if key == "pile":
            return [str(card_of(i)) for i in self.pile]
        if key == "trump":
            if own:
                raise KeyError(key)
            return "SHDC"[self.trump]
        if key == "trumps":
            if not own:
                raise KeyError(key)
            return {self.players[s]: "SHDC"[self.suits[s]] for s in range(self.n)}
        if key == "out":
            return [self.players[s] for s in range(self.n) if self.out[s]]
        if key == "stock":
            return len(self.stock)
        if key == "discard":
            return self.discard
        return self.result_json()

    def result_json(self) -> dict[str, Any] | None:
        r = self.result
        if r is None:
            return None
        if r.draw:
            return {"draw": True}
        return {"loser": self.players[r.losers[0]]}

    # ---- the next game of a series ---------------------------------------------

    def next_game(self) -> Series:
        """Rule 1.8: the loser deals; after a draw the dealer deals again; own trumps
        keeps every player's suit."""
        if self.result is None:
            raise ValueError("the game is not over")
        trumps = None
        if self.rules.game == "own_trumps":
            trumps = {self.players[s]: "SHDC"[self.suits[s]] for s in range(self.n)}
        if self.result.draw:
            dealer = self.players[self.dealer if self.dealer >= 0 else 0]
            return Series(AFTER_DRAW, dealer=dealer, trumps=trumps)
        name = self.players[self.result.losers[0]]
        return Series(AFTER_LOSS, dealer=name, previous_loser=name, trumps=trumps)
