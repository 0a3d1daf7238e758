"""AI players finish thousands of games under every option mix, never trying
an illegal action, and what they know stays true to the real game."""

from __future__ import annotations

import pytest

from durak import Game
from durak.ai import Observation, agents
from durak.ai.determinize import Sampler
from durak.cards import deck_mask

from ..engine.conftest import RULE_MIXES, cases
from .conftest import play

MIXES = [("easy", "normal"), ("greedy", "random", "normal"), ("normal",), ("easy", "random")]


def knowledge_holds(game: Game, obs: Observation) -> None:
    """Everything the public history told the observer is true of the game."""
    k = obs.knowledge
    for s in range(game.n):
        assert k.known[s] & ~game.hands[s] == 0, "a card 'known' in a hand is not there"
    assert k.discarded & ~game.discard_mask == 0
    assert (k.passed, k.primary_passed, k.shown) == (
        game.passed,
        game.primary_passed,
        game.shown,
    )
    assert k.trump_card == game.trump_card
    assert k.trump_in_stock == bool(game.stock)
    table = sum(1 << c for c in game.table) | sum(1 << c for c in game.covers if c >= 0)
    assert k.table == table
    assert k.in_stock & ~sum(1 << c for c in game.stock) == 0


def deals_hold(game: Game, obs: Observation) -> None:
    """A sampled deal agrees with everything public and with the observer's hand."""
    me = obs.seat
    deal = Sampler(obs)(__import__("random").Random(len(game.history)))
    assert deal.hands[me] == game.hands[me]
    assert deal.hand_sizes() == game.hand_sizes()
    assert len(deal.stock) == len(game.stock)
    assert not game.stock or deal.stock[0] == game.stock[0]
    union = 0
    parts = [*deal.hands, sum(1 << c for c in deal.stock), deal.discard_mask]
    parts += [1 << c for c in deal.table] + [1 << c for c in deal.covers if c >= 0]
    for part in parts:
        assert union & part == 0
        union |= part
    assert union == deck_mask(game.rules.deck)
    for name in ("attacker", "defender", "table", "covers", "limit", "taking", "passed"):
        assert getattr(deal, name) == getattr(game, name), name
    assert (deal.primary_passed, deal.throwers, deal.shown) == (
        game.primary_passed,
        game.throwers,
        game.shown,
    )
    assert deal.actors() == game.actors()
    assert deal.legal_actions(me) == game.legal_actions(me)


def both(game: Game, obs: Observation) -> None:
    knowledge_holds(game, obs)
    deals_hold(game, obs)


@pytest.mark.parametrize("mix", MIXES, ids="-".join)
def test_heuristic_players_finish_every_option_mix(mix):
    before = agents.FALLBACKS[0]
    finished = 0
    for rules, players, seed in cases(7):
        game = play(rules, players, seed, mix)
        finished += game.result is not None
    assert agents.FALLBACKS[0] == before, "a heuristic proposed an illegal action"
    assert finished >= 0.99 * len(cases(7))


def test_what_the_ai_knows_is_true_at_every_step():
    for rules, players, seed in cases(1):
        play(rules, players, seed + 100, ("normal", "easy", "random"), check=both)


@pytest.mark.parametrize("rules", RULE_MIXES, ids=lambda r: str(r.changed() or "default"))
def test_hard_with_a_tiny_budget_plays_every_option_mix(rules):
    before = agents.FALLBACKS[0]
    counts = [2, 4] if not rules.teams else [4]
    for players in counts:
        game = play(rules, players, 5, ("hard", "normal", "easy"), check=knowledge_holds)
        assert game.result is not None
    assert agents.FALLBACKS[0] == before
