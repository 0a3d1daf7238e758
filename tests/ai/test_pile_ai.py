"""The AI players in the pile games: every level plays every game to the end
legally, decides from its own pile view only, and normal plays sensibly."""

from __future__ import annotations

import pickle
import random

import pytest

from durak import Game, Rules
from durak.actions import TAKE, Beat, Lead
from durak.ai import LEVELS, PileObservation, decide, observation_for
from durak.ai import pile as pile_ai
from durak.ai.arena import run
from durak.cards import parse_card
from durak.games.pile import PileGame
from durak.selfplay import NAMES

GAMES = [
    (Rules(game="own_trumps"), 3),
    (Rules(game="own_trumps", own_trumps_take="pile"), 4),
    (Rules(game="piled"), 2),
    (Rules(game="piled"), 5),
    (Rules(game="road"), 3),
    (Rules(game="road"), 5),
]
ALL = ("random", "greedy", *LEVELS)


def ids(case: tuple) -> str:
    rules, k = case
    return f"{rules.game}-{rules.own_trumps_take}-{k}p"


@pytest.mark.parametrize("case", GAMES, ids=ids)
@pytest.mark.parametrize("level", ALL)
def test_every_level_plays_every_pile_game_to_the_end_legally(case, level):
    rules, k = case
    for seed in range(3):
        game = Game.from_seed(rules, NAMES[:k], seed)
        levels = [level if s % 2 == 0 else "random" for s in range(k)]
        while game.result is None:
            assert len(game.history) < 50_000, "the game did not end"
            seat = game.actors()[0]
            obs = observation_for(game, seat)
            assert isinstance(obs, PileObservation)
            action = decide(levels[seat], obs, seed * 1000 + len(game.history))
            assert action in game.legal_actions(seat)
            game.apply(seat, action)  # refuses anything illegal


@pytest.mark.parametrize("case", GAMES, ids=ids)
def test_the_heuristics_propose_only_legal_actions(case):
    rules, k = case
    game = Game.from_seed(rules, NAMES[:k], 11)
    rng = random.Random(11)
    while game.result is None and len(game.history) < 3000:
        seat = game.actors()[0]
        obs = observation_for(game, seat)
        assert isinstance(obs, PileObservation)
        assert pile_ai.normal(obs) in obs.view.legal
        assert pile_ai.greedy(obs) in obs.view.legal
        game.apply(seat, rng.choice(game.legal_actions(seat)))


def _hidden_cards_shuffled(g: PileGame, seat: int, rng: random.Random) -> PileGame:
    other = g.clone(with_history=True)
    others = [s for s in range(g.n) if s != seat]
    pool = [i for s in others for i in range(64) if g.hands[s] >> i & 1]
    hidden_stock = g.stock[1:]
    pool += hidden_stock
    rng.shuffle(pool)
    for s in others:
        size = g.hands[s].bit_count()
        other.hands[s] = sum(1 << i for i in pool[:size])
        pool = pool[size:]
    if g.stock:
        other.stock = [g.stock[0], *pool]
    return other


@pytest.mark.parametrize("case", GAMES, ids=ids)
def test_the_ai_sees_nothing_hidden(case):
    """Two games differing only in hidden cards give the same observation, so the
    same decision at every level."""
    rules, k = case
    game = Game.from_seed(rules, NAMES[:k], 4)
    assert isinstance(game, PileGame)
    rng = random.Random(4)
    differed = 0
    for step in range(200):
        if game.result is None and step % 7 == 0:
            seat = game.turn
            twin = _hidden_cards_shuffled(game, seat, rng)
            differed += twin.hands != game.hands
            a, b = observation_for(game, seat), observation_for(twin, seat)
            assert a == b
            for level in ALL:
                assert decide(level, a, step) == decide(level, b, step)
        if game.result is not None:
            break
        game.apply(game.turn, rng.choice(game.legal_actions(game.turn)))
    assert differed > 0


def test_a_pile_observation_pickles():
    game = Game.from_seed(Rules(game="road"), NAMES[:3], 1)
    obs = observation_for(game, game.actors()[0])
    back = pickle.loads(pickle.dumps(obs))
    assert back == obs and decide("normal", back, 1) == decide("normal", obs, 1)


def _position(game: str, players: str, start: dict) -> PileGame:
    g = Game.from_start(Rules(game=game), list(players), start)
    assert isinstance(g, PileGame)
    return g


def test_normal_beats_with_the_cheapest_card_and_keeps_trumps():
    g = _position(
        "piled",
        "AB",
        {
            "trump": "H",
            "hands": {"A": ["9S", "KS", "6H"], "B": ["7C"]},
            "pile": ["8S"],
            "turn": "A",
            "phase": "answer",
        },
    )
    assert decide("normal", observation_for(g, 0), 0) == Beat(parse_card("9S"))


def test_normal_leads_low_and_not_his_trumps():
    g = _position(
        "road",
        "ABC",
        {
            "trump": "H",
            "hands": {"A": ["6H", "9S", "7D", "AC"], "B": ["6S"], "C": ["7S"]},
            "turn": "A",
        },
    )
    assert decide("normal", observation_for(g, 0), 0) == Lead(parse_card("7D"))


def test_normal_in_own_trumps_leads_into_the_next_players_suit():
    g = _position(
        "own_trumps",
        "ABC",
        {
            "trumps": {"A": "S", "B": "H", "C": "D"},
            "hands": {"A": ["6C", "9H", "QH", "7S"], "B": ["6H"], "C": ["6D"]},
            "turn": "A",
        },
    )
    assert decide("normal", observation_for(g, 0), 0) == Lead(parse_card("QH"))


def test_normal_takes_when_nothing_beats():
    g = _position(
        "piled",
        "AB",
        {
            "trump": "H",
            "hands": {"A": ["6S", "7C"], "B": ["7D"]},
            "pile": ["8S"],
            "turn": "A",
            "phase": "answer",
        },
    )
    assert decide("normal", observation_for(g, 0), 0) == TAKE


@pytest.mark.parametrize("game", ["own_trumps", "piled", "road"])
def test_the_arena_plays_pile_games_and_normal_loses_less_than_random(game):
    # two random players left alone can take for ever: played out here without
    # no_progress_draw (RULES-NOTES.md 77), which would call many of those a draw
    rules = Rules(game=game, no_progress_draw=False)
    results = run(["normal", "random", "random"], 30, 0, rules)
    assert len(results) == 30 and not any(r.unfinished for r in results)
    lost = {"normal": 0, "random": 0}
    for r in results:
        for s in r.losers:
            lost[r.seats[s]] += 1
    # normal has one seat in three, random two: equal play would give 10 vs 20.
    assert lost["normal"] < 5 and lost["random"] > 20
