"""VARIANTS.md sections 1, 2, 8 and 10, the deal side: every example of the text
as a record or a game, plus the points of the tables (``bout_limit``,
``show_last_discard``) and the malformed records of 12.3 for these options."""

from __future__ import annotations

from typing import Any

import pytest

from durak import (
    Attack,
    Defend,
    ExchangeTrump,
    Game,
    IllegalAction,
    MalformedRecord,
    Outcome,
    Rules,
    Series,
    Take,
    from_snapshot,
    game_from_record,
    parse_card,
    parse_cards,
    to_snapshot,
)

from .test_scenarios import ORDER, check, record


def pos(hands: dict[str, str], attacker: str = "A", trump: str = "S", **extra: Any) -> dict:
    start: dict[str, Any] = {
        "trump": trump,
        "trump_card": None,
        "stock": [],
        "hands": {k: v.split() for k, v in hands.items()},
        "attacker": attacker,
        "first_bout": False,
    }
    start.update(extra)
    return start


def game_at(players: str, start: dict, **rules: Any) -> Game:
    return game_from_record(record(players, start, [], rules))


def malformed(players: str, start: dict, **rules: Any) -> None:
    with pytest.raises(MalformedRecord):
        game_at(players, start, **rules)


def play(game: Game, *words: str) -> None:
    for text in words:
        name, do, *cards = text.split()
        seat = game.seat_of(name)
        if do == "attack":
            game.apply(seat, Attack(parse_cards(" ".join(cards))))
        elif do == "defend":
            game.apply(seat, Defend(parse_card(cards[0]), parse_card(cards[1])))
        elif do == "take":
            game.apply(seat, Take())
        else:
            raise AssertionError(text)


# ---- section 1: trump_change -------------------------------------------------------------

TC = {"trump_change": True}


def test_trump_change_deal_lays_the_second_trump_card_under_the_trump_card():
    start = {"deck_order": ORDER, "dealer": "B", "series": "first", "previous_loser": None}
    a = "6S 8S 10S QS AS 7H"  # cards 1, 3, ..., 11
    b = "7S 9S JS KS 6H 8H"  # cards 2, ..., 12; card 13 (9H) face down, 14 (10H) trump card
    check(record("AB", start, [{"hands": {"A": a.split(), "B": b.split()}, "stock": 24}], TC))
    check(record("AB", start, [{"trump": "H", "attacker": "B"}], TC))  # 6H: first trump decides
    game = game_at("AB", start, **TC)
    view = game.view(None)
    assert view.second_trump_hidden and view.second_trump_card is None
    assert view.trump_card == parse_card("10H") and view.trump_card_in_stock
    assert game.stock[0] == parse_card("9H").id  # drawn last


CHANGE = pos(
    {"A": "8H 9C", "B": "10H 6C AD"},
    trump="D",
    trump_card="7D",
    stock=["KS"],
    second_trump_card="QS",
)


def test_trump_change_the_change_example():
    steps = [
        {"stock": 3, "trump": "D"},
        "A attack 8H",
        "B defend 8H 10H",
        {"trump": "S", "stock": 0, "discard": 2, "attacker": "B"},
        {"hands": {"A": ["9C", "KS", "7D", "QS"], "B": ["6C", "AD"]}},
        "B attack 6C",
        {"legal": ["A defend 6C 9C", "A defend 6C KS", "A defend 6C QS"]},
        "A defend 6C 7D !cannot_beat",
    ]
    check(record("AB", CHANGE, steps, TC))
    game = game_at("AB", CHANGE, **TC)
    assert game.view(0).second_trump_hidden
    play(game, "A attack 8H", "B defend 8H 10H")
    view = game.view(None)
    assert not view.second_trump_hidden and view.second_trump_card == parse_card("QS")
    assert view.trump.letter == "S" and not view.trump_card_in_stock


def test_trump_change_exchange_example():
    rules = {"trump_change": True, "trump_exchange": True}
    start = pos({"A": "6D 9H", "B": "8C JC"}, trump="D", trump_card="7D", second_trump_card="QS")
    check(record("AB", start, [{"stock": 2}, "A exchange_trump !cannot_exchange"], rules))
    start["stock"] = ["KS"]
    game = game_at("AB", start, **rules)
    game.apply(0, ExchangeTrump())
    assert game.view(None).trump_card == parse_card("6D")
    assert [str(parse_card_id) for parse_card_id in game.hand(0)] == ["9H", "7D"]
    # drawn after K♠ and before Q♠: the stock list is bottom first
    assert game.stock == [parse_card(c).id for c in ("QS", "6D", "KS")]
    play(game, "A attack 9H", "B take")  # A draws K♠ 6♦ Q♠: spades are trump
    assert game.expected("trump") == "S" and game.expected("stock") == 0


def test_trump_change_records_malformed():
    malformed("AB", pos({"A": "6D", "B": "7D"}, trump_card="7S"), **TC)  # no second card
    malformed("AB", pos({"A": "6D", "B": "7D"}, trump_card="7S", second_trump_card="8H"))
    start = pos({"A": "6D", "B": ""}, trump_card="7S", second_trump_card="8H")
    malformed("AB", start, **TC)  # something left to draw: nobody has left


# ---- section 2: sprint -----------------------------------------------------------------

SP = {"sprint": True}


def test_sprint_deal_example():
    start = {"deck_order": ORDER, "dealer": "A"}
    b = "6S 8S 10S QS AS 7H"  # cards 1, 3, ..., 11
    a = "7S 9S JS KS 6H 8H"  # A holds the lowest trump, 6H; B opens all the same
    steps = [{"hands": {"A": a.split(), "B": b.split()}, "stock": 0, "attacker": "B"}]
    steps.append({"trump": "H", "limit": 6, "out": []})
    check(record("AB", start, steps, SP))
    game = game_at("AB", start, **SP)
    view = game.view(None)
    assert view.trump_card == parse_card("9H") and not view.trump_card_in_stock
    assert game.out_of_play == sum(1 << parse_card(c).id for c in ORDER[12:])
    assert view.match is not None and view.match.deals == 10 and view.match.played == 0
    assert game.start == {"deck_order": ORDER, "dealer": "A", "match": game.match.to_json()}


def test_sprint_first_bout_limit_caps_the_first_bout_even_without_six_cap():
    start = {"deck_order": ORDER, "dealer": "A"}
    rules = {"sprint": True, "first_bout_limit": 5, "six_cap_after_stock": False}
    check(record("AB", start, [{"limit": 5}], rules))


def _ten_deal(played: int, wa: int, wb: int, winner: str | None) -> Game:
    """A deal of a 10-deal match, played to its end: ``winner`` wins it (None: drawn)."""
    match = {"played": played, "wins": {"A": wa, "B": wb}}
    if winner is None:
        start = pos({"A": "6S", "B": "7S"}, match=match, dealer="A")
        game = game_at("AB", start, **SP)
        play(game, "A attack 6S", "B defend 6S 7S")
    else:
        loser = "B" if winner == "A" else "A"
        start = pos({winner: "6S", loser: "7H"}, attacker=winner, match=match, dealer="A")
        game = game_at("AB", start, **SP)
        play(game, f"{winner} attack 6S", f"{loser} take")
    assert game.result is not None
    return game


def test_sprint_match_decided_early():
    # After 7 deals A has 5 wins, B 1, one draw: left 3 and 5 > 1 + 3.
    game = _ten_deal(6, 4, 1, "A")
    assert game.expected("match") == {
        "played": 7,
        "wins": {"A": 5, "B": 1},
        "result": {"winner": "A"},
        "next_dealer": None,
    }
    assert game.scored == Outcome(losers=(1,))
    assert not game.next_game().continues
    view = game.view(None).match
    assert view is not None and view.winner == "A" and view.decided
    # One deal earlier the match went on: 4-1 after 6, left 4.
    earlier = _ten_deal(5, 3, 1, "A")
    assert earlier.scored is None
    series = earlier.next_game()
    assert (
        series.continues
        and series.dealer == "B"
        and series.match
        == {
            "played": 6,
            "wins": {"A": 4, "B": 1},
        }
    )


@pytest.mark.parametrize(
    ("tenth", "result", "scored"),
    [
        ("B", {"draw": True}, Outcome(draw=True)),
        ("A", {"winner": "A"}, Outcome(losers=(1,))),
        (None, {"winner": "A"}, Outcome(losers=(1,))),
    ],
)
def test_sprint_match_tenth_deal(tenth, result, scored):
    # At 5-4 after 9 deals the 10th is played.
    game = _ten_deal(9, 5, 4, tenth)
    assert game.expected("match")["result"] == result
    assert game.expected("match")["played"] == 10
    assert game.scored == scored
    assert not game.next_game().continues


def test_sprint_match_records_malformed():
    hands = {"A": "6S", "B": "7S"}
    malformed("AB", pos(hands, match={"played": 7, "wins": {"A": 5, "B": 1}}), **SP)  # decided
    malformed("AB", pos(hands, match={"played": 2, "wins": {"A": 2, "B": 1}}), **SP)
    malformed("AB", pos(hands, match={"played": 10, "wins": {"A": 5, "B": 5}}), **SP)
    malformed("AB", pos(hands, match={"played": 2, "wins": {"C": 1}}), **SP)
    malformed("AB", pos(hands, match={"played": 2, "wins": {"A": 1}}))  # without sprint
    malformed("AB", pos(hands, trump_card="8S"), **SP)
    malformed("AB", pos(hands, trump_card="8S", stock=["9S"]), **SP)
    malformed("ABC", pos({**hands, "C": "8S"}, match={"played": 1, "wins": {}}), **SP)
    game_at("AB", pos(hands, match={"played": 2, "wins": {"A": 1}}), **SP)  # well formed


def _knockout_deal(players: str, hands: dict[str, str], attacker: str, dealer: str, series):
    """A knock-out deal near its end, in the match ``series`` carries."""
    match = series.match if series is not None else {"knockout": True}
    if series is not None:
        assert series.continues and series.players == tuple(players)
        assert series.dealer == dealer
    start = pos(hands, attacker=attacker, match=match, dealer=dealer)
    return game_at(players, start, **SP)


def test_sprint_knockout_example():
    # Seats A B C D, first dealer A. Deal 1: B opens; C is the durak and leaves.
    deal1 = Game.from_seed(
        Rules(sprint=True),
        "ABCD",
        1,
        Series(match={"knockout": True}, dealer="A", players=("A", "B", "C", "D"), continues=True),
    )
    assert deal1.dealer == 0 and deal1.attacker == 1  # B opens
    d1 = _knockout_deal("ABCD", {"B": "6S", "C": "7H 8H"}, "B", "A", None)
    play(d1, "B attack 6S", "C take")
    assert d1.result == Outcome(losers=(2,)) and d1.scored == Outcome(losers=(2,))
    assert d1.expected("match") == {
        "remaining": ["A", "B", "D"],
        "result": None,
        "next_dealer": "B",
    }
    s1 = d1.next_game()
    # Deal 2 (A B D): B deals, D opens; drawn.
    nxt = Game.from_seed(Rules(sprint=True), "ABCD", 7, s1)
    assert nxt.players == ("A", "B", "D") and nxt.dealer == 1 and nxt.attacker == 2
    d2 = _knockout_deal("ABD", {"D": "6S", "A": "7S"}, "D", "B", s1)
    play(d2, "D attack 6S", "A defend 6S 7S")
    assert d2.result == Outcome(draw=True) and d2.scored is None
    s2 = d2.next_game()
    # Deal 3: D deals, A opens; A is the durak.
    nxt = Game.from_seed(Rules(sprint=True), "ABD", 8, s2)
    assert nxt.dealer == 2 and nxt.attacker == 0
    d3 = _knockout_deal("ABD", {"A": "6S 9H", "B": "7S"}, "A", "D", s2)
    play(d3, "A attack 6S", "B defend 6S 7S")
    assert d3.scored == Outcome(losers=(0,))
    s3 = d3.next_game()
    # Deal 4 (B D): B deals (A is gone), D opens; B is the durak; D wins the match.
    nxt = Game.from_seed(Rules(sprint=True), "BD", 9, s3)
    assert nxt.players == ("B", "D") and nxt.dealer == 0 and nxt.attacker == 1
    assert nxt.view(None).match.deals is None  # still the knock-out, with two left
    d4 = _knockout_deal("BD", {"D": "6S", "B": "7H"}, "D", "B", s3)
    play(d4, "D attack 6S", "B take")
    assert d4.scored == Outcome(losers=(0,))
    assert d4.expected("match") == {
        "remaining": ["D"],
        "result": {"winner": "D"},
        "next_dealer": None,
    }
    view = d4.view(None).match
    assert view is not None and view.winner == "D" and view.eliminated == ("C", "A", "B")
    assert view.played == 4
    assert not d4.next_game().continues
    # C, A and B got one loss each: deals 1, 3 and 4 scored them, deal 2 nothing.


def test_sprint_knockout_with_two_left_needs_its_match_field():
    hands = {"A": "6S", "B": "7H"}
    two = game_at("AB", pos(hands, match={"knockout": True}), **SP)
    assert two.match.knockout
    assert not game_at("AB", pos(hands), **SP).match.knockout  # a 10-deal match
    assert game_at("ABC", pos({**hands, "C": "8S"}), **SP).match.knockout


def test_sprint_next_dealer_not_checked_without_the_dealer():
    start = pos({"B": "6S", "C": "7H 8H"}, attacker="B")
    steps = ["B attack 6S", "C take", {"match": {"remaining": ["A", "B"], "next_dealer": "X"}}]
    check(record("ABC", start, steps, SP))


def test_sprint_snapshot_round_trip_mid_match():
    deal = _ten_deal(3, 1, 2, "A")
    series = deal.next_game()
    game = Game.from_seed(Rules(sprint=True), "AB", 3, series)
    play(game, f"{game.players[game.attacker]} attack {game.hand(game.attacker)[0]}")
    snap = to_snapshot(game)
    back = from_snapshot(snap)
    assert to_snapshot(back) == snap and back.match == game.match
    assert back.out_of_play == game.out_of_play and back.view(0) == game.view(0)


# ---- section 8: japanese ---------------------------------------------------------------


def test_japanese_deal_example():
    rules = {"japanese": "H"}
    start = {"deck_order": ORDER, "dealer": "B", "series": "first", "previous_loser": None}
    check(record("AB", start, [{"stock": 24, "trump": "H", "attacker": "B"}], rules))
    game = game_at("AB", start, **rules)
    assert game.view(None).trump_card is None and not game.view(None).trump_card_in_stock
    # Nobody holds a heart: A, the dealer's left neighbour, opens.
    order = [c for c in ORDER if not c.endswith("H")] + [c for c in ORDER if c.endswith("H")]
    start = {"deck_order": order, "dealer": "B", "series": "first", "previous_loser": None}
    check(record("AB", start, [{"attacker": "A", "stock": 24}], rules))


def test_japanese_covering_examples():
    rules = {"japanese": "H"}
    start = pos({"A": "8C 8D 6H", "B": "AH 7C 9C 6D"}, trump="H")
    steps = [
        "A attack 8C",
        {"legal": ["B defend 8C 9C"], "illegal": ["B defend 8C AH", "B defend 8C 7C"]},
        "B defend 8C AH !cannot_beat",
    ]
    check(record("AB", start, steps, rules))
    start = pos({"A": "8D", "B": "9C 6H"}, trump="H")
    steps = ["A attack 8D", {"legal": ["B defend 8D 6H"], "illegal": ["B defend 8D 9C"]}]
    check(record("AB", start, steps, rules))
    start = pos({"A": "6H", "B": "AC 7H"}, trump="H")
    steps = ["A attack 6H", {"legal": ["B defend 6H 7H"], "illegal": ["B defend 6H AC"]}]
    check(record("AB", start, steps, rules))


def test_japanese_records_malformed():
    hands = {"A": "6S", "B": "7S"}
    malformed("AB", pos(hands, trump="H", trump_card="7H"), japanese="H")
    malformed("AB", pos(hands, trump="S"), japanese="H")
    game_at("AB", pos(hands, trump="H", stock=["8C"]), japanese="H")  # no trump card: fine


# ---- section 10: bout_limit, show_last_discard ------------------------------------------


def test_bout_limit_caps_every_bout_and_a_transfer():
    b, c = "8D 9S 10H JD JS JH 6D", "9H 10S QD QS QH 7C 9C"
    start = pos({"A": "8S 8H", "B": b, "C": c}, trump_card="6S", stock=["7S"])
    steps = [{"limit": 5}, "A attack 8S", "B transfer 8D", {"defender": "C", "limit": 5}]
    check(record("ABC", start, steps, {"bout_limit": 5, "transfer": True}))
    check(record("ABC", start, [{"limit": 6}], {"bout_limit": 6}))


def test_bout_limit_with_first_bout_limit_and_no_six_cap():
    start = pos({"A": "8S", "B": "9S 10H JD JS JH 6D 7D"})
    check(record("AB", start, [{"limit": 7}], {"bout_limit": 5, "six_cap_after_stock": False}))
    start["first_bout"] = True
    rules = {"bout_limit": 5, "six_cap_after_stock": False, "first_bout_limit": 5}
    check(record("AB", start, [{"limit": 5}], rules))


def test_show_last_discard_views():
    start = pos({"A": "10D 6H 9S", "B": "JD 7S 10S 8C"}, trump="C")
    game = game_at("AB", start, show_last_discard=True)
    assert game.view(None).last_discard == ()
    play(game, "A attack 10D", "B defend 10D JD")
    pairs = ((parse_card("10D"), parse_card("JD")),)
    assert game.view(None).last_discard == pairs and game.view(0).last_discard == pairs
    play(game, "B attack 7S", "A take")  # a take discards nothing: the last discard stays
    assert game.view(1).last_discard == pairs
    snap = to_snapshot(game)
    assert to_snapshot(from_snapshot(snap)) == snap
    assert from_snapshot(snap).view(None).last_discard == pairs
    off = game_at("AB", start)
    play(off, "A attack 10D", "B defend 10D JD")
    assert off.view(None).last_discard is None


def test_refused_variant_state_is_untouched():
    game = game_at("AB", CHANGE, **TC)
    before = to_snapshot(game)
    with pytest.raises(IllegalAction):
        game.apply(0, ExchangeTrump())
    assert to_snapshot(game) == before
