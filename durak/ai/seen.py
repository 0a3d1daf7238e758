"""``Seen``: the few facts a heuristic player decides from, as card masks.

Built from an :class:`~durak.ai.observation.Observation` (a real decision) or
from a simulated :class:`~durak.games.podkidnoy.Podkidnoy` (inside a search, where every seat
plays the heuristic): the same heuristics serve both, and they only read the
deciding seat's own hand and public facts.

VARIANTS.md: ``beaters`` is the rules' own beating table (``japanese``,
``damka``); ``single_lead`` (English), ``can_return`` (``return_last_card``)
come from the legal actions or the engine's predicates.
"""

from __future__ import annotations

from ..actions import EXCHANGE_TRUMP, RETURN_CARD, ShowTrump, Transfer
from ..cards import card_of, deck_mask, lowest_rank, suit_mask
from ..games.podkidnoy import Podkidnoy
from ..games.podkidnoy.bout import exchange_room, may_return
from ..rules import Rules
from .masks import beaters_for
from .moves import transfers
from .observation import Observation


class Seen:
    """One seat's decision situation. ``pool`` holds every card that may be in
    another hand: not ours, not on the table, not known to be discarded or to
    lie in the stock. Once the stock is empty, ``pool`` is exactly what the
    other players hold together."""

    __slots__ = (
        "attacker",
        "beaters",
        "can_exchange",
        "can_return",
        "counts",
        "covers",
        "defender",
        "exclude",
        "first_bout",
        "hand",
        "limit",
        "low",
        "me",
        "n",
        "out",
        "pool",
        "rules",
        "single_lead",
        "stock",
        "table",
        "table_ranks",
        "taking",
        "transfers",
        "trump",
        "trumps",
    )

    me: int
    rules: Rules
    hand: int
    trump: int
    trumps: int  # mask of the trump suit
    low: int  # the deck's lowest rank
    table: list[int]
    covers: list[int]
    table_ranks: int
    limit: int
    taking: bool
    stock: int
    counts: list[int]
    out: list[bool]
    attacker: int
    defender: int
    n: int
    pool: int
    exclude: list[int] | None  # per seat: cards known to be elsewhere
    transfers: tuple[Transfer | ShowTrump, ...]  # the legal transfers
    can_exchange: bool
    first_bout: bool
    beaters: tuple[int, ...]  # per card: the cards that beat it (these rules, this trump)
    single_lead: bool  # english: nobody could open with a pair, one card is led
    can_return: bool  # return_last_card: the defender may hand the table back

    def possible(self, seat: int) -> int:
        """Cards ``seat`` may hold."""
        if self.exclude is None:
            return self.pool
        return self.pool & ~self.exclude[seat]

    @classmethod
    def of_game(cls, game: Podkidnoy, seat: int) -> Seen:
        """In a simulation: the seat's own hand and the public state only."""
        s = cls()
        s.me, s.n, s.rules = seat, game.n, game.rules
        s.hand = hand = game.hands[seat]
        s.trump = trump = game.trump
        s.trumps = suit_mask(trump)
        s.low = int(lowest_rank(game.rules.deck))
        s.table, s.covers = game.table, game.covers
        s.table_ranks = game.table_ranks
        s.limit, s.taking = game.limit, game.taking
        s.stock = stock = len(game.stock)
        s.counts = [h.bit_count() for h in game.hands]
        s.out = game.out
        s.attacker, s.defender = game.attacker, game.defender
        s.first_bout = game.first_bout
        seen = hand | game.discard_mask
        for c in game.table:
            seen |= 1 << c
        for c in game.covers:
            if c >= 0:
                seen |= 1 << c
        if stock and game.trump_card >= 0:
            seen |= 1 << game.trump_card
        s.pool = deck_mask(game.rules.deck) & ~seen
        s.exclude = None
        s.transfers = ()
        if game.rules.transfer and seat == game.defender:
            s.transfers = tuple(transfers(game, seat))
        s.can_exchange = (
            game.rules.trump_exchange
            and not game.table
            and seat == game.attacker
            and exchange_room(game) >= 2
            and bool(hand >> (trump * 16 + s.low) & 1)
        )
        s.beaters = beaters_for(game.rules, trump)
        s.single_lead = game.single_lead
        s.can_return = (
            game.rules.return_last_card
            and seat == game.defender
            and bool(game.table)
            and not game.taking
            and may_return(game)
        )
        return s

    @classmethod
    def of_observation(cls, obs: Observation) -> Seen:
        view, know = obs.view, obs.knowledge
        s = cls()
        s.me, s.n, s.rules = obs.seat, len(view.seats), obs.rules
        s.hand = hand = obs.hand
        s.trump = trump = int(view.trump)
        s.trumps = suit_mask(trump)
        s.low = int(lowest_rank(obs.rules.deck))
        s.table = [a.id for a, _ in view.table]
        s.covers = [c.id if c is not None else -1 for _, c in view.table]
        ranks = 0
        for a, c in zip(s.table, s.covers, strict=True):
            ranks |= 1 << (a & 15)
            if c >= 0:
                ranks |= 1 << (c & 15)
        s.table_ranks = ranks
        s.limit = view.limit or 0
        s.taking = view.taking
        s.stock = view.stock
        s.counts = [i.cards for i in view.seats]
        s.out = [i.out for i in view.seats]
        s.attacker = view.attacker if view.attacker is not None else -1
        s.defender = view.defender if view.defender is not None else -1
        s.first_bout = view.first_bout
        elsewhere = hand | know.discarded | know.table | know.in_stock
        if know.trump_in_stock:
            elsewhere |= 1 << know.trump_card
        s.pool = deck_mask(obs.rules.deck) & ~elsewhere
        everyone = 0
        for k in know.known:
            everyone |= k
        s.exclude = [everyone & ~k for k in know.known]
        s.transfers = tuple(a for a in view.legal if isinstance(a, Transfer | ShowTrump))
        s.can_exchange = EXCHANGE_TRUMP in view.legal
        s.beaters = beaters_for(obs.rules, trump)
        s.single_lead = view.single_lead
        s.can_return = RETURN_CARD in view.legal
        return s

    def describe(self) -> str:
        """For debugging a decision."""
        return " ".join(str(card_of(i)) for i in range(64) if self.hand >> i & 1)
