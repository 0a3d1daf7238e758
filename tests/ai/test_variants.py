"""Issue 14, item 5: every level plays every VARIANTS.md option legally and from
its own view; what the public history tells it stays true of the real game, and
the deals the search samples agree with everything public."""

from __future__ import annotations

import random

import pytest

from durak import Game, Rules
from durak.ai import Observation, agents
from durak.ai.determinize import Sampler
from durak.cards import deck_mask

from .conftest import play

#: Each option alone, and some allowed combinations (VARIANTS.md section 11).
VARIANTS: list[Rules] = [
    Rules(trump_change=True),
    Rules(sprint=True),
    Rules(blind=True),
    Rules(partial_defence=True),
    Rules(english=True),
    Rules(return_last_card=True),
    Rules(damka=True),
    Rules(japanese="H"),
    Rules(bout_limit=5),
    Rules(show_last_discard=True),
    Rules(trump_change=True, trump_exchange=True, transfer=True, partial_defence=True),
    Rules(sprint=True, japanese="S", damka=True, transfer=True),
    Rules(blind=True, trump_change=True, deck=24),
    Rules(english=True, partial_defence=True, throw_in="all", bout_limit=5),
    Rules(return_last_card=True, damka=True, transfer=True, transfer_by_showing_trump=True),
    Rules(japanese="D", english=True, teams=True),
    Rules(sprint=True, partial_defence=True, return_last_card=True, deck=24),
    Rules(trump_change=True, english=True, show_last_discard=True, deck=52),
]


def counts(rules: Rules) -> list[int]:
    if rules.blind:
        return [2]
    if rules.teams:
        return [4]
    top = 3 if rules.deck == 24 else 4
    return list(range(2, top + 1))


def ids(rules: Rules) -> str:
    return ",".join(f"{k}={v}" for k, v in rules.changed().items())


def knowledge_holds(game: Game, obs: Observation) -> None:
    """Everything the public history told the observer is true of the game."""
    k = obs.knowledge
    for s in range(game.n):
        assert k.known[s] & ~game.hands[s] == 0, "a card 'known' in a hand is not there"
    assert k.discarded & ~game.discard_mask == 0
    assert (k.passed, k.primary_passed, k.shown) == (game.passed, game.primary_passed, game.shown)
    assert k.trump_card == game.trump_card
    in_stock = game.trump_card >= 0 and game.trump_card in game.stock
    assert k.trump_in_stock == in_stock
    table = sum(1 << c for c in game.table) | sum(1 << c for c in game.covers if c >= 0)
    assert k.table == table
    assert k.in_stock & ~sum(1 << c for c in game.stock) == 0
    if game.varied:
        assert k.transferred == game.transferred
    if game.rules.english:
        assert k.taker == game.taker


def deals_hold(game: Game, obs: Observation) -> None:
    """A sampled deal agrees with everything public and with the observer's hand."""
    if game.rules.blind:
        return  # not sampled: hard plays the blind heuristic (durak.ai.agents)
    me = obs.seat
    deal = Sampler(obs)(random.Random(len(game.history)))
    assert deal.hands[me] == game.hands[me]
    assert deal.hand_sizes() == game.hand_sizes()
    assert len(deal.stock) == len(game.stock)
    assert deal.second_hidden() == game.second_hidden()
    if game.trump_card >= 0 and game.trump_card in game.stock:
        assert deal.stock.index(game.trump_card) == game.stock.index(game.trump_card)
    union = 0
    parts = [*deal.hands, sum(1 << c for c in deal.stock), deal.discard_mask, deal.out_of_play]
    parts += [1 << c for c in deal.table] + [1 << c for c in deal.covers if c >= 0]
    for part in parts:
        assert union & part == 0
        union |= part
    assert union == deck_mask(game.rules.deck)
    assert deal.out_of_play.bit_count() == game.out_of_play.bit_count()
    for name in ("attacker", "defender", "table", "covers", "limit", "taking", "passed", "trump"):
        assert getattr(deal, name) == getattr(game, name), name
    assert (deal.primary_passed, deal.throwers, deal.shown) == (
        game.primary_passed,
        game.throwers,
        game.shown,
    )
    assert (deal.single_lead, deal.return_used) == (game.single_lead, game.return_used)
    if game.rules.english:
        assert deal.taker == game.taker
    assert deal.actors() == game.actors()
    assert deal.legal_actions(me) == game.legal_actions(me)


def both(game: Game, obs: Observation) -> None:
    knowledge_holds(game, obs)
    deals_hold(game, obs)


@pytest.mark.parametrize("rules", VARIANTS, ids=ids)
def test_heuristic_levels_play_every_variant_to_the_end(rules):
    before = agents.FALLBACKS[0]
    finished = total = 0
    for players in counts(rules):
        for seed in range(3):
            for mix in (("random", "greedy"), ("easy", "normal"), ("normal", "random", "easy")):
                game = play(rules, players, seed, mix, check=both, max_moves=1500)
                finished += game.result is not None
                total += 1
    assert agents.FALLBACKS[0] == before, "a heuristic proposed an illegal action"
    assert finished >= total - 1, "games caught in a cycle"


@pytest.mark.parametrize("rules", VARIANTS, ids=ids)
def test_hard_plays_every_variant_to_the_end(rules):
    before = agents.FALLBACKS[0]
    for players in counts(rules)[:2]:
        game = play(rules, players, 11, ("hard", "normal"), check=knowledge_holds, max_moves=1500)
        assert game.result is not None
    assert agents.FALLBACKS[0] == before, "the search failed (it fell back to normal)"


# ---- the information tests -------------------------------------------------------------

HIDDEN = [
    Rules(trump_change=True),
    Rules(trump_change=True, trump_exchange=True, transfer=True),
    Rules(sprint=True),
    Rules(sprint=True, japanese="D"),
    Rules(japanese="S", partial_defence=True),
]


def _twin(game: Game, me: int, rng: random.Random, own: bool) -> Game | None:
    """The same game on a deal where two cards ``me`` cannot see change places,
    replayed with the same actions; ``None`` if that changes anything public.
    ``own`` (blind): one of them is an unseen card of ``me``'s own hand, the other
    another of his or one still in the stock; else two cards outside his hand
    (other hands, the stock, ``trump_change``'s second trump card, ``sprint``'s
    cards out of play)."""
    from durak import Podkidnoy, parse_card

    order = list(game.start["deck_order"])
    played = {str(c) for _, a in game.history for c in _cards(a)}
    if game.trump_card >= 0:
        played.add(str(parse_card_id(game.trump_card)))
    if own:
        seen = game.seen[me]
        mine = _ids(game.hands[me])
        unseen = {str(parse_card_id(c)) for c in mine if not seen >> c & 1}
        stock = {str(parse_card_id(c)) for c in game.stock} - played
        first = [i for i, c in enumerate(order) if c in unseen]
        second = [i for i, c in enumerate(order) if c in unseen | stock]
        if not first or len(second) < 2:
            return None
        i = rng.choice(first)
        j = rng.choice([k for k in second if k != i])
    else:
        hand = {str(parse_card_id(c)) for c in _ids(game.hands[me])}
        dealt = _dealt_positions(game, me)
        hidden = [i for i, c in enumerate(order) if c not in played | hand and i not in dealt]
        if len(hidden) < 2:
            return None
        i, j = rng.sample(hidden, 2)
    order[i], order[j] = order[j], order[i]
    twin = Podkidnoy.from_deck(
        game.rules,
        game.players,
        [parse_card(c) for c in order],
        game.players.index(game.start["dealer"]),
    )
    replay = Podkidnoy.from_deck(
        game.rules,
        game.players,
        [parse_card(c) for c in game.start["deck_order"]],
        game.players.index(game.start["dealer"]),
    )
    for seat, action in game.history:
        if not twin.can_apply(seat, action):
            return None
        twin.apply(seat, action)
        replay.apply(seat, action)
        if twin.view(None) != replay.view(None):
            return None
    return twin


def parse_card_id(c: int):
    from durak.cards import card_of

    return card_of(c)


def _ids(mask: int) -> list[int]:
    return [c for c in range(64) if mask >> c & 1]


def _cards(action) -> list:
    out = []
    for name in ("cards", "card", "attack"):
        value = getattr(action, name, ())
        out += list(value) if isinstance(value, tuple) else [value]
    return out


def _dealt_positions(game: Game, seat: int) -> set[int]:
    n = game.n
    dealer = game.players.index(game.start["dealer"])
    return {k * n + (seat - dealer - 1) % n for k in range(game.rules.hand_size)}


def _cut(game: Game, moves: int) -> Game:
    from durak import Podkidnoy, parse_card

    out = Podkidnoy.from_deck(
        game.rules,
        game.players,
        [parse_card(c) for c in game.start["deck_order"]],
        game.players.index(game.start["dealer"]),
    )
    for seat, action in game.history[:moves]:
        out.apply(seat, action)
    return out


def _compare(rules: Rules, own: bool, players: list[int]) -> tuple[int, int]:
    from durak.ai import decide, observation_for

    rng = random.Random(5)
    compared = differed = 0
    for seed in range(14):
        n = players[seed % len(players)]
        full = play(rules, n, seed, ("normal", "easy"))
        for moves in sorted(rng.sample(range(1, len(full.history)), min(5, len(full.history) - 1))):
            game = _cut(full, moves)
            if game.result is None:
                me = rng.choice(game.actors())
                twin = _twin(game, me, rng, own)
                if twin is None:
                    continue
                a, b = observation_for(game, me), observation_for(twin, me)
                assert a == b
                differed += game.hands != twin.hands or game.stock != twin.stock
                differed += game.out_of_play != twin.out_of_play
                for level in ("random", "greedy", "easy", "normal", "hard"):
                    assert decide(level, a, seed=3, iterations=30) == decide(
                        level, b, seed=3, iterations=30
                    )
                compared += 1
    return compared, differed


@pytest.mark.parametrize("rules", HIDDEN, ids=ids)
def test_the_variants_hidden_cards_do_not_reach_the_decision(rules):
    compared, differed = _compare(rules, own=False, players=[2, 3, 4])
    assert compared >= 10, "too few twins to compare"
    assert differed >= 10, "the twins' hidden cards did not differ"


@pytest.mark.parametrize("rules", [Rules(blind=True), Rules(blind=True, deck=52)], ids=ids)
def test_blind_own_unseen_cards_do_not_reach_the_decision(rules):
    """Two blind games differing only in the observer's own unseen cards (swapped
    with each other or with the stock) give equal observations and choices."""
    compared, differed = _compare(rules, own=True, players=[2])
    assert compared >= 10, "too few twins to compare"
    assert differed >= 10, "the twins' hidden cards did not differ"
