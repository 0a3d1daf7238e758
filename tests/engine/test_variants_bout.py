"""VARIANTS.md sections 3-7 (blind, partial_defence, english, return_last_card,
damka): every example of the text, the refusal precedence of 12.5-12.6, the
views, ``slot_action``, snapshots, and the record fields of 12.3."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from durak import Game, Rules, check_record
from durak.actions import RETURN_CARD, Attack, Defend, action_from_words
from durak.cards import deck, parse_card
from durak.errors import IllegalAction, MalformedRecord
from durak.games import restore


def cards(text: str) -> list[str]:
    return text.split()


def position(hands: dict[str, str], attacker: str = "A", trump: str = "S", **more: Any):
    start: dict[str, Any] = {
        "trump": trump,
        "trump_card": None,
        "stock": [],
        "hands": {k: v.split() for k, v in hands.items()},
        "discard": [],
        "attacker": attacker,
        "first_bout": False,
    }
    start.update(more)
    return start


def game(rules: dict[str, Any], players: str, start: dict[str, Any]) -> Game:
    return Game.from_start(Rules(**rules), list(players), start)


def act(g: Game, text: str) -> None:
    words = text.split()
    g.apply(g.seat_of(words[0]), action_from_words(words[1:]))


def refused(g: Game, text: str) -> str:
    words = text.split()
    before = g.snapshot()
    with pytest.raises(IllegalAction) as e:
        g.apply(g.seat_of(words[0]), action_from_words(words[1:]))
    assert g.snapshot() == before
    return e.value.code


def legal(g: Game, text: str) -> bool:
    words = text.split()
    seat, action = g.seat_of(words[0]), action_from_words(words[1:])
    listed = action in g.legal_actions(seat)
    assert listed == g.can_apply(seat, action), text
    return listed


def hand(g: Game, name: str) -> list[str]:
    return sorted(str(c) for c in g.hand(g.seat_of(name)))


def deck_order(dealt: list[str], trump_card: str, size: int = 36) -> list[str]:
    """A deck order: ``dealt`` (in dealing order), the trump card, the rest."""
    rest = [str(c) for c in deck(size) if str(c) not in dealt and str(c) != trump_card]
    return [*dealt, trump_card, *rest]


def interleave(*hands: str) -> list[str]:
    return [c for group in zip(*(h.split() for h in hands), strict=True) for c in group]


# ---- 3. blind ---------------------------------------------------------------------------

BLIND = {"blind": True}


def blind_example() -> Game:
    # dealer B: A gets cards 1, 3, ..., 11, B gets 2, ..., 12; 7H is the trump card
    order = deck_order(interleave("6S 9C KD 10H QS 8D", "7S JC AD 6H 9S KC"), "7H")
    return Game.from_start(Rules(**BLIND), ["A", "B"], {"deck_order": order, "dealer": "B"})


def test_blind_example_failed_then_beating_answer():
    g = blind_example()
    assert g.expected("attacker") == "A" and g.expected("limit") == 1
    assert legal(g, "B defend KD 7S") is False  # nothing on the table yet
    act(g, "A attack KD")
    assert legal(g, "B defend KD 7S") and legal(g, "B defend KD AD")
    act(g, "B defend KD 7S")  # 7S does not beat KD: accepted, B takes both
    assert g.hand_sizes() == [6, 7]
    b = g.view(1)
    assert b.slots is not None and len(b.slots) == 7
    assert b.slots[-2:] == (parse_card("KD"), parse_card("7S"))
    assert b.slots[:5] == (None,) * 5
    assert g.expected("attacker") == "A" and g.expected("stock") == 23
    act(g, "A attack 6S")
    act(g, "B defend 6S 6H")  # a trump beats it
    assert g.expected("discard") == 2 and g.expected("stock") == 22
    assert g.expected("attacker") == "B" and g.expected("defender") == "A"


def test_blind_refusals():
    g = blind_example()
    assert refused(g, "B take") == "cannot_take"
    assert refused(g, "A attack 10H QS") == "opening_size"
    assert refused(g, "A attack 10H 10D") == "not_in_hand"  # not_in_hand comes first
    assert refused(g, "A pass") == "not_your_turn"
    act(g, "A attack KD")
    assert refused(g, "A attack KD") == "not_your_turn"
    assert refused(g, "A attack 6S") == "not_your_turn"
    assert refused(g, "A pass") == "not_your_turn"
    assert refused(g, "B take") == "cannot_take"
    assert refused(g, "B defend 6S 7S") == "not_on_table"
    assert refused(g, "B defend KD QS") == "not_in_hand"


def test_blind_last_cards_draw():
    g = game(BLIND, "AB", position({"A": "JS", "B": "AH"}, trump="H"))
    act(g, "A attack JS")
    act(g, "B defend JS AH")
    assert g.expected("result") == {"draw": True}


def test_blind_views():
    g = blind_example()
    a, b, public = g.view(0), g.view(1), g.view(None)
    assert a.hand == () and a.legal == () and b.hand == () and b.legal == ()
    assert a.slots == (None,) * 6
    assert dict(a.shown_hands)[1] == tuple(parse_card(c) for c in cards("7S JC AD 6H 9S KC"))
    assert dict(b.shown_hands)[0] == tuple(parse_card(c) for c in cards("6S 9C KD 10H QS 8D"))
    assert public.slots is None and public.shown_hands == () and public.hand == ()
    assert a.throwers == ()


def test_blind_slot_action():
    g = blind_example()
    assert g.slot_action(0, 2) == Attack((parse_card("KD"),))
    with pytest.raises(IllegalAction) as e:
        g.slot_action(1, 0)
    assert e.value.code == "not_your_turn"
    with pytest.raises(ValueError):
        g.slot_action(0, 6)
    g.apply(0, g.slot_action(0, 2))
    assert g.slot_action(1, 0) == Defend(parse_card("KD"), parse_card("7S"))
    g.apply(1, g.slot_action(1, 0))
    assert [str(c) for c in g.view(0).shown_hands[0][1][-2:]] == ["KD", "7S"]


def test_blind_trump_card_drawn_is_seen():
    start = position(
        {"A": "6S 9C KD 10H QS 8D", "B": "7S JC AD 6H 9S KC"},
        trump="H",
        trump_card="7H",
        stock=[],
    )
    g = game(BLIND, "AB", start)
    act(g, "A attack KD")
    act(g, "B defend KD AD")  # beats: A draws the trump card
    a = g.view(0)
    assert a.slots is not None and a.slots[-1] == parse_card("7H")
    assert a.slots[:-1] == (None,) * 5


def test_blind_second_trump_card_drawn_is_seen():
    """With trump_change the second trump card is shown when drawn (1.3): the
    player who draws it has seen it, like the trump card above it."""
    start = position(
        {"A": "6S 9C KD 10H QS 8D", "B": "7S JC AD 6H 9S KC"},
        trump="H",
        trump_card="7H",
        stock=[],
    )
    start["second_trump_card"] = "QC"
    g = game({**BLIND, "trump_change": True}, "AB", start)
    act(g, "A attack KD")
    act(g, "B defend KD AD")  # beats: A draws the trump card, B the second one
    b = g.view(1)
    assert b.slots is not None and b.slots[-1] == parse_card("QC")
    assert b.slots[:-1] == (None,) * 5
    assert g.expected("trump") == "C"


def test_blind_slots_survive_a_snapshot():
    g = blind_example()
    act(g, "A attack KD")
    act(g, "B defend KD 7S")
    act(g, "A attack 6S")
    copy = restore(json.loads(json.dumps(g.snapshot())))
    assert copy.view(1) == g.view(1) and copy.view(0) == g.view(0)
    assert copy.snapshot() == g.snapshot()


def test_blind_timeout_plays_the_first_slot():
    g = blind_example()
    assert g.timeout_action(0) == Attack((parse_card("6S"),))
    act(g, "A attack KD")
    assert g.timeout_seats() == [1]
    assert g.timeout_action(1) == Defend(parse_card("KD"), parse_card("7S"))


def test_slot_action_without_blind_is_a_value_error():
    g = game({}, "AB", position({"A": "6S", "B": "7S"}))
    with pytest.raises(ValueError):
        g.slot_action(0, 0)


# ---- 4. partial_defence -----------------------------------------------------------------

PARTIAL = {"partial_defence": True}


def test_partial_defence_limit_of_three():
    start = position({"A": "8H 9S KS", "B": "9H JD 6C", "C": "JH 7S"}, trump="D")
    g = game(PARTIAL, "ABC", start)
    act(g, "A attack 8H")
    act(g, "B defend 8H 9H")
    act(g, "A attack 9S")
    act(g, "B defend 9S JD")
    act(g, "C attack JH")
    act(g, "B take")
    assert g.expected("discard") == 4
    assert hand(g, "B") == ["6C", "JH"]
    assert g.expected("attacker") == "C"


def test_partial_defence_nothing_covered_is_rules():
    start = position({"A": "8H 8S KS", "B": "9H JD 6C", "C": "JH 7S"}, trump="D")
    g = game(PARTIAL, "ABC", start)
    act(g, "A attack 8H 8S")
    act(g, "B take")
    assert g.expected("discard") == 0 and hand(g, "B") == sorted(cards("9H JD 6C 8H 8S"))
    assert g.expected("attacker") == "C"


def test_partial_defence_throw_in_after_the_take():
    start = position({"A": "8H 8S 9S KS", "B": "9H 6C 7C 10C"}, trump="D")
    g = game(PARTIAL, "AB", start)
    act(g, "A attack 8H")
    act(g, "B defend 8H 9H")
    act(g, "A attack 8S")
    act(g, "B take")
    act(g, "A attack 9S")  # a 9 is on the table (a covered pair's rank still counts)
    assert hand(g, "B") == sorted(cards("6C 7C 10C 8S 9S"))
    assert g.expected("discard") == 2 and hand(g, "A") == ["KS"]
    assert g.expected("attacker") == "A"  # B is skipped


# ---- 5. english -------------------------------------------------------------------------

ENGLISH = {"english": True}


def test_english_first_bout_pair_opens():
    # dealer C: A gets cards 1, 4, ..., B 2, 5, ..., C 3, 6, ...
    a, b, c = "8H 6S 7D 10C QS KD", "9S 9H JS 6H 7C AD", "8S 10H JD QC KC AC"
    order = deck_order(interleave(a, b, c), "6D")
    g = Game.from_start(Rules(**ENGLISH), ["A", "B", "C"], {"deck_order": order, "dealer": "C"})
    assert g.expected("attacker") == "B" and g.expected("defender") == "C"
    view = g.view(None)
    assert view.no_pair == (0,) and view.single_lead is False
    assert refused(g, "A attack 8H") == "not_your_turn"
    assert refused(g, "B attack 9S") == "opening_size"
    assert refused(g, "B attack 9S JS") == "mixed_ranks"
    assert refused(g, "B attack 9S 9D") == "not_in_hand"
    assert legal(g, "B attack 9S 9H") and not legal(g, "B attack 6H")


def test_english_nobody_holds_a_pair():
    start = position({"A": "8H 10C KS", "B": "9H JD 6C", "C": "JH 7S QD"}, trump="D")
    g = game(ENGLISH, "ABC", start)
    assert g.expected("attacker") == "A" and g.view(None).single_lead
    assert g.view(None).no_pair == (0, 1, 2)
    assert refused(g, "A attack 8H 10C") == "opening_size"
    assert legal(g, "A attack 8H") and legal(g, "A attack KS")
    act(g, "A attack 8H")
    assert g.expected("defender") == "B"


def test_english_limit_decides_the_pair():
    start = position({"A": "7S 7H KD", "B": "9C", "C": "JC JD 6H"}, trump="S")
    g = game(ENGLISH, "ABC", start)
    assert g.expected("attacker") == "C" and g.expected("defender") == "A"
    assert g.expected("limit") == 3
    assert g.view(None).no_pair == (0, 1)


def test_english_taker_in_a_position():
    start = position({"A": "8S 8H 10C", "B": "6C 7C 7D", "C": "9S"}, trump="D", taker="B")
    g = game(ENGLISH, "ABC", start)
    # A leads: B (the taker) would be skipped anyway, A holds a pair against B
    assert g.expected("attacker") == "A"
    start = position({"A": "10C JD", "B": "6C 6H 7D", "C": "9S KS"}, trump="D", taker="B")
    g = game(ENGLISH, "ABC", start)
    assert g.expected("attacker") == "A" and g.view(None).single_lead
    assert g.view(None).no_pair == (0, 2)
    with pytest.raises(MalformedRecord):
        game({}, "ABC", start)


def test_english_repetition_view_says_why():
    path = (
        Path(__file__).resolve().parents[2] / "tests/vectors-variants/english_repetition_draw.json"
    )
    with open(path, encoding="utf-8") as f:
        record = json.load(f)
    g = Game.from_start(Rules.from_record(record["rules"]), record["players"], record["start"])
    for step in record["steps"]:
        if "do" in step and "error" not in step:
            g.apply(
                g.seat_of(step["player"]), action_from_words([step["do"], *step.get("cards", [])])
            )
    assert g.view(None).end_reason == "repetition" and g.result is not None and g.result.draw
    assert g.expected("out") == []


def test_english_timeout_opens_a_pair():
    start = position({"A": "8S 8H 10C 10D", "B": "6C 7C 7D"}, trump="D")
    g = game(ENGLISH, "AB", start)
    action = g.timeout_action(0)
    assert isinstance(action, Attack) and sorted(map(str, action.cards)) == ["8H", "8S"]


# ---- 6. return_last_card ----------------------------------------------------------------

RETURN = {"return_last_card": True}


def test_return_example():
    g = game(RETURN, "AB", position({"A": "KS", "B": "7H 9C"}, trump="D"))
    act(g, "A attack KS")
    assert RETURN_CARD in g.legal_actions(1)
    act(g, "B return_card")
    assert hand(g, "A") == ["KS"] and g.view(None).return_used
    assert g.expected("attacker") == "B" and g.expected("limit") == 1
    act(g, "B attack 7H")
    assert refused(g, "A return_card") == "cannot_return"  # B holds a card
    act(g, "A take")
    assert g.expected("attacker") == "B" and g.expected("limit") == 2
    act(g, "B attack 9C")
    assert refused(g, "A return_card") == "cannot_return"  # used
    assert not legal(g, "A return_card")
    act(g, "A take")
    assert g.expected("result") == {"loser": "A"}


def test_return_without_the_return():
    g = game(RETURN, "AB", position({"A": "KS", "B": "7H 9C"}, trump="D"))
    act(g, "A attack KS")
    act(g, "B take")
    assert g.expected("result") == {"loser": "B"}


def test_return_after_the_last_throw_in():
    g = game(RETURN, "AB", position({"A": "10S 10H", "B": "6D 7D 8C"}, trump="D"))
    act(g, "A attack 10S")
    assert refused(g, "B return_card") == "cannot_return"
    act(g, "A attack 10H")
    act(g, "B return_card")
    assert hand(g, "A") == ["10H", "10S"] and g.expected("table") == []


def test_return_refusal_precedence():
    start = position({"A": "KS", "B": "7H 9C", "C": "6C"}, trump="D")
    g = game(RETURN, "ABC", start)
    act(g, "A attack KS")
    assert refused(g, "B return_card") == "cannot_return"  # three active players
    assert refused(g, "A return_card") == "not_your_turn"
    assert refused(g, "C return_card") == "not_your_turn"
    g = game(RETURN, "AB", position({"A": "KS", "B": "7H 9C"}, trump="D"))
    assert refused(g, "B return_card") == "not_your_turn"  # no open bout
    act(g, "A attack KS")
    act(g, "B take")
    g = game(RETURN, "AB", position({"A": "KS 6S", "B": "7H 9C"}, trump="D"))
    act(g, "A attack KS")
    act(g, "B take")
    assert refused(g, "B return_card") == "not_your_turn"  # after his take
    g = game({}, "AB", position({"A": "KS", "B": "7H 9C"}, trump="D"))
    act(g, "A attack KS")
    assert refused(g, "B return_card") == "variant_off"
    assert refused(g, "A return_card") == "not_your_turn"


def test_return_not_after_a_covered_card_or_a_transfer():
    g = game(RETURN, "AB", position({"A": "10S 10H", "B": "JS 7D 8C"}, trump="D"))
    act(g, "A attack 10S 10H")
    act(g, "B defend 10S JS")
    assert refused(g, "B return_card") == "cannot_return"
    rules = {**RETURN, "transfer": True}
    g = game(rules, "AB", position({"A": "10S 6C 7C", "B": "10H"}, trump="D"))
    act(g, "A attack 10S")
    act(g, "B transfer 10H")  # B's hand is empty, but not every card on the table is his
    assert g.expected("defender") == "A"
    assert refused(g, "A return_card") == "cannot_return"


def test_return_used_in_a_position():
    start = position({"A": "KS", "B": "7H 9C"}, trump="D", return_used=True)
    g = game(RETURN, "AB", start)
    act(g, "A attack KS")
    assert refused(g, "B return_card") == "cannot_return"
    with pytest.raises(MalformedRecord):
        game({}, "AB", start)
    with pytest.raises(MalformedRecord):
        game(RETURN, "AB", {**start, "return_used": 1})


# ---- 7. damka ---------------------------------------------------------------------------

DAMKA = {"damka": True}


def test_damka_opening_of_one_suit():
    start = position({"A": "7S 10S KS 7D 9C 6D 8C", "B": "9S JS 6H QC QD"}, trump="H")
    g = game(DAMKA, "AB", start)
    assert refused(g, "A attack 7S 7D") == "mixed_suits"
    assert legal(g, "A attack 7S 10S KS") and not legal(g, "A attack 7S 7D")
    act(g, "A attack 7S 10S KS")
    act(g, "B defend 7S 9S")
    act(g, "B defend 10S JS")
    act(g, "B defend KS 6H")
    for text in ("A attack 7D", "A attack 9C", "A attack 6D"):
        assert legal(g, text), text
    assert not legal(g, "A attack 8C")


def test_damka_precedence():
    start = position({"A": "7S 8S 9S 10S", "B": "6H 6D"}, trump="H")
    g = game(DAMKA, "AB", start)
    assert refused(g, "A attack 7S 8S 9S") == "limit"
    assert refused(g, "A attack 7S 7D") == "not_in_hand"


def test_damka_queen_of_spades():
    start = position({"A": "QS 6C 7C", "B": "AS KS QH"}, trump="S")
    g = game(DAMKA, "AB", start)
    act(g, "A attack QS")
    assert refused(g, "B defend QS AS") == "cannot_beat"
    assert not legal(g, "B defend QS KS") and legal(g, "B take")
    g = game({**DAMKA, "transfer": True}, "AB", start)
    act(g, "A attack QS")
    assert legal(g, "B transfer QH")


def test_damka_queen_of_spades_as_a_cover():
    g = game(DAMKA, "AB", position({"A": "JS 10H", "B": "QS 6C"}, trump="H"))
    act(g, "A attack JS")
    assert legal(g, "B defend JS QS")
    g = game(DAMKA, "AB", position({"A": "10H 10S", "B": "QS 6C"}, trump="H"))
    act(g, "A attack 10H")
    assert not legal(g, "B defend 10H QS")
    g = game(DAMKA, "AB", position({"A": "10H 10S", "B": "QS 6C"}, trump="S"))
    act(g, "A attack 10H")
    assert legal(g, "B defend 10H QS")


def test_blind_damka_queen_of_spades_never_beats():
    g = game({**BLIND, **DAMKA}, "AB", position({"A": "QS 6C", "B": "AS 7H"}, trump="S"))
    act(g, "A attack QS")
    act(g, "B defend QS AS")  # accepted, but it does not beat: B takes both
    assert hand(g, "B") == ["7H", "AS", "QS"]


# ---- records ----------------------------------------------------------------------------


def test_blind_record_round_trip():
    g = blind_example()
    act(g, "A attack KD")
    act(g, "B defend KD 7S")
    from durak import export_record

    report = check_record(export_record(g))
    assert not report.failures and report.passed == 2
