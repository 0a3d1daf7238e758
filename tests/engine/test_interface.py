"""The game interface and the vocabulary every game shares: rules with every
option and their forbidden combinations, actions, refusal codes, records."""

from __future__ import annotations

import random

import pytest

from durak import (
    Attack,
    Beat,
    Game,
    IllegalAction,
    Lead,
    Podkidnoy,
    ReturnCard,
    Rules,
    Series,
    action_from_step,
    check_record,
    from_snapshot,
    parse_cards,
    to_snapshot,
)
from durak.actions import action_from_words
from durak.games import family, restore
from durak.selfplay import random_step


def test_the_family_comes_from_the_rules():
    assert family(Rules()) is Podkidnoy
    game = Game.from_seed(Rules(), "ABC", 3)
    assert isinstance(game, Podkidnoy)
    assert isinstance(restore(to_snapshot(game)), Podkidnoy)


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ({"sprint": True, "trump_exchange": True}, "no stock"),
        ({"sprint": True, "trump_change": True}, "no stock"),
        ({"sprint": True, "teams": True}, "dealer"),
        ({"sprint": True, "attack_loser": True}, "dealer"),
        ({"sprint": True, "blind": True}, "dealer"),
        ({"blind": True, "transfer": True}, "one card"),
        ({"blind": True, "partial_defence": True}, "one card"),
        ({"blind": True, "english": True}, "one card"),
        ({"blind": True, "return_last_card": True}, "one card"),
        ({"blind": True, "trump_exchange": True}, "one card"),
        ({"english": True, "damka": True}, "opening"),
        ({"english": True, "trump_exchange": True}, "exchange"),
        ({"english": True, "attack_loser": True}, "English"),
        ({"english": True, "return_last_card": True}, "English"),
        ({"japanese": "H", "trump_change": True}, "trump card"),
        ({"japanese": "S", "trump_exchange": True}, "trump card"),
        ({"japanese": "C"}, "never clubs"),
        ({"bout_limit": 4}, "bout_limit"),
        ({"game": "road", "transfer": True}, "podkidnoy option"),
        ({"game": "piled", "deck": 52}, "36 cards"),
        ({"game": "piled", "own_trumps_take": "pile"}, "own_trumps"),
        ({"own_trumps_take": "pile"}, "own_trumps"),
        ({"game": "chess"}, "game must be"),
    ],
)
def test_forbidden_combinations_are_refused_with_a_reason(options, why):
    with pytest.raises(ValueError, match=why):
        Rules.from_dict(options)


def test_allowed_combinations_and_view_only_options():
    Rules(blind=True, throw_in="all", first_bout_limit=5, bout_limit=5, attack_loser=True)
    Rules(sprint=True, transfer=True, damka=True, japanese="D", partial_defence=True)
    Rules(game="road", show_last_discard=True)
    Rules(game="own_trumps", own_trumps_take="pile")


@pytest.mark.parametrize(
    ("options", "low", "high"),
    [
        ({}, 2, 6),
        ({"deck": 24}, 2, 4),
        ({"deck": 52}, 2, 8),
        ({"blind": True}, 2, 2),
        ({"trump_change": True}, 2, 4),
        ({"trump_change": True, "deck": 24}, 2, 3),
        ({"sprint": True}, 2, 5),
        ({"sprint": True, "deck": 24}, 2, 3),
        ({"sprint": True, "deck": 52}, 2, 5),
        ({"game": "own_trumps"}, 3, 4),
        ({"game": "piled"}, 2, 6),
        ({"game": "road"}, 3, 6),
    ],
)
def test_player_counts(options, low, high):
    rules = Rules.from_dict(options)
    assert rules.player_range() == (low, high)
    rules.check_players(low)
    rules.check_players(high)
    for bad in (low - 1, high + 1):
        with pytest.raises(ValueError):
            rules.check_players(bad)


def test_an_attack_is_the_same_decision_in_any_order():
    a, b = Attack(parse_cards("10H 10S")), Attack(parse_cards("10S 10H"))
    assert a == b and hash(a) == hash(b)
    assert a.cards != b.cards  # the table still shows them as given
    assert Attack(parse_cards("10H")) != a
    assert Attack(parse_cards("10H 10H")) != Attack(parse_cards("10H"))


def test_new_actions_read_and_print():
    for step in ({"do": "return_card"}, {"do": "lead", "card": "7S"}, {"do": "beat", "card": "QD"}):
        action = action_from_step(step)
        assert action.step() == step
        assert action_from_words(action.words().split()) == action
    assert isinstance(action_from_words(["return_card"]), ReturnCard)
    with pytest.raises(ValueError):
        action_from_step({"do": "lead"})
    with pytest.raises(ValueError):
        action_from_words(["beat"])


def test_pile_actions_in_podkidnoy_are_variant_off_after_the_general_codes():
    game = Game.from_seed(Rules(), "AB", 1)
    opener = game.actors()[0]
    card = game.hand(opener)[0]
    for action in (Lead(card), Beat(card)):
        with pytest.raises(IllegalAction) as e:
            game.apply(opener, action)
        assert e.value.code == "variant_off"
    assert game.history == []


def test_legal_expectation_ignores_the_order_of_an_attacks_cards():
    record = {
        "format": "durak-record/1",
        "players": ["A", "B"],
        "start": {
            "trump": "D",
            "hands": {"A": ["10H", "10S", "7C"], "B": ["JH", "QS", "6C"]},
            "attacker": "A",
        },
        "comment": "a record may carry a comment",
        "steps": [
            {"comment": "a step that is only a comment"},
            {"expect": {"legal": ["A attack 10H 10S", "A attack 10S 10H"]}, "comment": "x"},
            {"player": "A", "do": "attack", "cards": ["10S", "10H"], "comment": "y"},
            {"expect": {"table": [["10S", None], ["10H", None]]}},
        ],
    }
    report = check_record(record)
    assert not report.failures, report.failures
    assert report.passed == 3


def test_a_failed_key_is_one_check_naming_each_entry():
    record = {
        "format": "durak-record/1",
        "players": ["A", "B"],
        "start": {"trump": "D", "hands": {"A": ["10H"], "B": ["JH"]}, "attacker": "A"},
        "steps": [{"expect": {"legal": ["A attack 10H", "B take", "A pass"], "stock": 0}}],
    }
    report = check_record(record)
    assert report.passed == 1 and len(report.failures) == 1
    assert "'B take'" in report.failures[0] and "'A pass'" in report.failures[0]


def test_series_carries_the_dealer_by_name():
    rng = random.Random(4)
    game = Game.from_seed(Rules(), "ABCD", 4)
    while not game.over:
        game.apply(*random_step(game, rng))
    series = game.next_game()
    assert isinstance(series, Series) and not series.continues
    nxt = Game.from_seed(Rules(), "ABCD", 5, series)
    assert nxt.players[nxt.dealer] == series.dealer
    assert from_snapshot(to_snapshot(nxt)).snapshot() == nxt.snapshot()


def test_timeout_action_is_legal_and_commits_least():
    rng = random.Random(2)
    for seed in range(30):
        game = Game.from_seed(Rules(transfer=True, throw_in="all"), "ABCD", seed)
        while not game.over:
            seats = game.timeout_seats()
            assert sorted(seats) == game.actors()
            action = game.timeout_action(seats[0])
            assert game.can_apply(seats[0], action)
            if len(game.history) % 3 == 0:
                game.apply(seats[0], action)
            else:
                game.apply(*random_step(game, rng))
