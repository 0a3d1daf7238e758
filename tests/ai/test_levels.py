"""The levels' decisions: the heuristics' rules of thumb, the endgame solver,
the search's budget, and decide()."""

from __future__ import annotations

import random
import time

from durak import Game, Podkidnoy, Rules, parse_card, parse_cards
from durak.actions import TAKE, Attack, Defend
from durak.ai import decide, observation_for
from durak.ai.agents import HardAgent, perfect_information
from durak.ai.endgame import Solver
from durak.ai.mcts import search

from .conftest import play


def position(hands: dict[str, str], attacker: str, trump: str = "H", **more) -> Game:
    start = {
        "trump": trump,
        "hands": {name: cards.split() for name, cards in hands.items()},
        "attacker": attacker,
        "discard": more.pop("discard", []),
        **more,
    }
    return Podkidnoy.from_position(Rules(), list(hands), start)


def test_the_solver_finds_the_only_safe_lead():
    # Trump hearts. Leading 6S loses (B covers with 7S, then leads 8C, which A
    # cannot beat); leading the ace forces B to take, then 6S is covered and A is out.
    game = position({"A": "6S AS", "B": "7S 8C"}, "A")
    solver = Solver(0)
    safe = solver.safe_moves(game, [Attack((parse_card("6S"),)), Attack((parse_card("AS"),))])
    assert safe == [Attack((parse_card("AS"),))]


def test_hard_plays_a_perfect_information_endgame_exactly():
    game = position({"A": "6S AS", "B": "7S 8C"}, "A", discard=_rest("6S AS 7S 8C"))
    obs = observation_for(game, 0)
    assert perfect_information(obs)
    for seed in range(5):
        assert decide("hard", obs, seed, iterations=50) == Attack((parse_card("AS"),))


def _rest(held: str) -> list[str]:
    from durak.cards import deck

    taken = set(parse_cards(held))
    return [str(c) for c in deck(36) if c not in taken]


def test_normal_covers_cheaply_and_keeps_trumps():
    # B defends 7S holding 9S, 10S and the trump 6H: the cheapest cover is 9S.
    game = position({"A": "7S KD", "B": "9S 10S 6H QC"}, "A", stock=["8D", "9D"], trump_card="AH")
    game.apply(0, Attack((parse_card("7S"),)))
    assert decide("normal", observation_for(game, 1), 0) == Defend(
        parse_card("7S"), parse_card("9S")
    )


def test_normal_takes_rather_than_spend_a_high_trump_early():
    # B holds no diamond: only the ace of trumps beats 6D, with 14 cards in the stock.
    stock = ["7D", "8D", "9D", "10D", "JD", "QD", "AD", "7C", "8C", "10C", "JC", "QC", "KC", "7H"]
    game = position(
        {"A": "6D KD 7S QS JS 10S", "B": "AH 6S 6C 8S 9C AC"}, "A", stock=stock, trump_card="KH"
    )
    game.apply(0, Attack((parse_card("6D"),)))
    assert decide("normal", observation_for(game, 1), 0) == TAKE
    assert decide("greedy", observation_for(game, 1), 0) == Defend(
        parse_card("6D"), parse_card("AH")
    )


def test_every_level_decides_the_same_for_the_same_seed():
    game = play(Rules(throw_in="all"), 4, 3, ("normal",), max_moves=25)
    obs = observation_for(game, game.actors()[0])
    for level in ("random", "greedy", "easy", "normal", "hard"):
        assert decide(level, obs, 11, iterations=40) == decide(level, obs, 11, iterations=40)


def test_hard_keeps_to_its_time_budget():
    rng = random.Random(4)
    worst = 0.0
    for seed in range(3):
        game = play(Rules(), 4, seed, ("normal",), max_moves=8 + seed)
        obs = observation_for(game, game.actors()[0])
        began = time.perf_counter()
        HardAgent(budget_ms=150).choose(obs, rng)
        worst = max(worst, time.perf_counter() - began)
    assert worst < 0.6


def test_search_returns_a_legal_action_at_once_when_there_is_no_choice():
    game = position({"A": "6S 7S", "B": "8C 9C"}, "A", stock=["6D", "7D"], trump_card="AH")
    game.apply(0, Attack((parse_card("6S"),)))
    obs = observation_for(game, 1)  # B cannot beat a spade: take is all he has
    result = search(obs, random.Random(1), seconds=5.0)
    assert result.action == TAKE and result.iterations == 0 and result.seconds < 0.1
