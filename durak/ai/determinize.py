"""Full game states consistent with an observation, for the search.

The public part of the state (table, counts, who attacks, passes...) and the
observer's own hand are copied; every card the observer cannot place is dealt
at random into the other hands, the stock and the unseen part of the discard,
keeping what the public history pins down: picked-up cards still in a hand,
the trump card with whoever drew it (or under the stock), and the trumps the
opening announcement kept out of every first hand.

VARIANTS.md: ``sprint``'s out-of-play cards are dealt like the unseen discard
(the face-up one stays known); ``trump_change``'s face-down second trump card
is one of the stock's hidden cards, laid under the trump card (once drawn it
is known and stays with its drawer); ``japanese`` has no trump card; the
bout-side state a view shows (English's single lead, the return used) or the
history gives (who took last, a transfer in this bout) is copied. English's
repetition history is not public in full (it holds hands), so a sampled game
starts it empty: a search may miss a draw by repetition. ``blind`` is not
sampled (the observer's own hand is hidden from him): the hard level plays
the blind heuristic there (:mod:`durak.ai.agents`).
"""

from __future__ import annotations

import random

from ..cards import RANK_LANES, deck_mask
from ..games.podkidnoy import Podkidnoy
from .masks import ids
from .observation import Observation


class Sampler:
    """Builds the public template once; each call deals the hidden cards anew."""

    def __init__(self, obs: Observation) -> None:
        view, know = obs.view, obs.knowledge
        me, n = obs.seat, len(view.seats)
        game = Podkidnoy(obs.rules, tuple(s.name for s in view.seats))
        game.trump = int(view.trump)
        game.trump_card = know.trump_card
        game.discard, game.discard_mask = view.discard, know.discarded
        game.out = [s.out for s in view.seats]
        game.attacker = view.attacker if view.attacker is not None else -1
        game.defender = view.defender if view.defender is not None else -1
        game.table = [a.id for a, _ in view.table]
        game.covers = [c.id if c is not None else -1 for _, c in view.table]
        game.open = game.covers.count(-1)
        for a, c in zip(game.table, game.covers, strict=True):
            game.table_ranks |= 1 << (a & 15)
            if c >= 0:
                game.table_ranks |= 1 << (c & 15)
        game.limit = view.limit or 0
        game.taking = view.taking
        game.passed, game.primary_passed = know.passed, know.primary_passed
        game.shown = know.shown
        game.throwers = sum(1 << s for s in view.throwers)
        game.first_bout = view.first_bout
        game.dealer = view.dealer if view.dealer is not None else -1
        game.opener = view.opener if view.opener is not None else -1
        game.opener_reason = view.opener_reason
        game.opener_card = view.opener_card.id if view.opener_card is not None else -1
        if game.varied:
            game.single_lead, game.no_pair = view.single_lead, view.no_pair
            game.return_used, game.transferred = view.return_used, know.transferred
            game.taker = know.taker
            game.window = (view.discard, view.stock)
        hand = obs.hand
        game.hands[me] = hand
        placed = hand | know.discarded | know.table
        self.fixed = [0] * n
        self.need = [0] * n
        for s in range(n):
            if s != me:
                self.fixed[s] = know.known[s]
                self.need[s] = view.seats[s].cards - know.known[s].bit_count()
                placed |= know.known[s]
                if self.need[s] < 0:
                    raise ValueError(f"seat {s} holds fewer cards than it is known to hold")
        self.bottom = -1
        stock_need = view.stock
        if know.trump_in_stock:
            self.bottom = know.trump_card
            placed |= 1 << know.trump_card
            stock_need -= 1
        #: trump_change: the second trump card lies hidden at the stock's bottom
        self.second_hidden = view.second_trump_hidden
        if view.second_trump_card is not None:
            game.second_trump = view.second_trump_card.id
        # sprint: the cards after the deal lie out of play, the face-up one known
        on_table = sum(1 + (c is not None) for _, c in view.table)
        held = sum(s.cards for s in view.seats)
        self.out_need = obs.rules.deck - held - view.stock - view.discard - on_table
        if obs.rules.sprint and know.trump_card >= 0:
            placed |= 1 << know.trump_card
            game.out_of_play |= 1 << know.trump_card
            self.out_need -= 1
        elif self.out_need and not obs.rules.sprint:
            raise ValueError("cards out of play without sprint")
        pool = deck_mask(obs.rules.deck) & ~placed
        self.forced = ids(pool & know.in_stock)
        self.free = ids(pool & ~know.in_stock)
        self.stock_free = stock_need - len(self.forced)
        self.discard_need = view.discard - know.discarded.bit_count()
        if self.stock_free < 0 or self.discard_need < 0 or self.out_need < 0:
            raise ValueError("the observation places more cards than there are")
        dealt = self.stock_free + self.discard_need + sum(self.need) + self.out_need
        if len(self.free) != dealt:
            raise ValueError("the observation's card count does not add up")
        self.template = game
        self.me = me
        self.void, self.want = _throw_in_signs(obs)

    def __call__(self, rng: random.Random) -> Podkidnoy:
        game = self.template.clone()
        cards = list(self.free)
        rng.shuffle(cards)
        dealt = self.fixed.copy()
        if self.void or self.want:
            cards = self._constrained(cards, dealt)
        pos = self.stock_free
        stock = cards[:pos]
        if self.forced:
            stock += self.forced
            rng.shuffle(stock)
        if self.second_hidden:  # stock[0] is the second trump card, under the trump card
            second, stock = stock[0], stock[1:]
            game.second_trump = second
            game.stock = [second, self.bottom, *stock] if self.bottom >= 0 else [second, *stock]
        else:
            game.stock = [self.bottom, *stock] if self.bottom >= 0 else stock
        hands = game.hands
        for s, mask in enumerate(dealt):
            if s != self.me:
                k = self.need[s] - (mask & ~self.fixed[s]).bit_count()
                for c in cards[pos : pos + k]:
                    mask |= 1 << c
                hands[s] = mask
                pos += k
        for c in cards[pos : pos + self.discard_need]:
            game.discard_mask |= 1 << c
        pos += self.discard_need
        for c in cards[pos : pos + self.out_need]:
            game.out_of_play |= 1 << c
        return game

    def _constrained(self, cards: list[int], dealt: list[int]) -> list[int]:
        """Deal the seats whose throw-in rights tell something first: a seat
        the table shows without a throw-in gets no card of a table rank, one
        it waits for gets at least one. Returns the cards left to deal."""
        for s, ranks in self.void.items():
            keep = [c for c in cards if (ranks >> (c & 15)) & 1]
            other = [c for c in cards if not (ranks >> (c & 15)) & 1]
            k = self.need[s]
            if len(other) < k:
                return cards  # cannot happen for a real game; deal unconstrained
            for c in other[:k]:
                dealt[s] |= 1 << c
            cards = other[k:] + keep
        for s, ranks in self.want.items():
            if self.need[s] - (dealt[s] & ~self.fixed[s]).bit_count() <= 0:
                continue
            for i, c in enumerate(cards):
                if (ranks >> (c & 15)) & 1:
                    dealt[s] |= 1 << c
                    del cards[i]
                    break
        return cards


def _throw_in_signs(obs: Observation) -> tuple[dict[int, int], dict[int, int]]:
    """What the seats the table waits for (or not) say about hidden hands: a
    thrower with the right to throw in is waited for exactly when he holds a
    card of a rank on the table. Returns ``(void, want)``: rank sets per seat
    of cards he holds none of / at least one of (only when not known)."""
    view, know = obs.view, obs.knowledge
    void: dict[int, int] = {}
    want: dict[int, int] = {}
    if not view.table or view.limit is None or len(view.table) >= view.limit:
        return void, want
    ranks = 0
    for a, c in view.table:
        ranks |= 1 << int(a.rank)
        if c is not None:
            ranks |= 1 << int(c.rank)
    lanes = ranks * RANK_LANES
    waiting, me = set(view.waiting_for), obs.seat
    attacker = view.attacker
    free = [s for s in view.throwers if not (know.passed >> s) & 1]
    attacker_can = attacker in waiting if attacker in free else True
    for s in free:
        decided = s == attacker or know.primary_passed or not attacker_can
        if s == me or not decided:
            continue
        if s in waiting:
            if not know.known[s] & lanes:
                want[s] = ranks
        else:
            void[s] = ranks
    return void, want
