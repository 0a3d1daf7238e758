"""The examples of PILE-GAMES.md sections 2-4 played through the game interface
(views included), the refusal precedence of 6.6, rule 1.7's end, the series, and
the starts a record may not give."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from durak import Rules
from durak.actions import TAKE, Attack, Beat, Defend, Lead, Pass
from durak.cards import Suit, parse_card
from durak.errors import IllegalAction, MalformedRecord
from durak.games import AFTER_DRAW, AFTER_LOSS, Game, Series
from durak.games.pile import PileGame, dealer_and_choosing_order
from durak.selfplay import play_random

from .pile_helpers import act, action, cards, hand, start

ROOT = Path(__file__).resolve().parents[2]


def vector_start(name: str) -> dict:
    return json.loads((ROOT / "tests" / "vectors-pile" / f"{name}.json").read_text())["start"]


def refused(g: Game, text: str) -> str:
    before = g.snapshot()
    words = text.split()
    with pytest.raises(IllegalAction) as e:
        g.apply(g.seat_of(words[0]), action(" ".join(words[1:])))
    assert g.snapshot() == before
    return e.value.code


# ---- own trumps (section 2) ----------------------------------------------------


def test_own_trumps_example_deal_swap_beats_and_take_of_three():
    g = start("own_trumps", "ABC", vector_start("own_trumps_deal_swap_and_beats"))
    assert hand(g, "A") == cards("7S 8S 9S 10S JS QH KH 6C 7C 8C 6S AC")
    assert g.hand_sizes() == [12, 12, 12]
    v = g.view(0)
    assert v.trumps == (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS) and v.trump is None
    assert (v.turn, v.phase, v.stock, v.discard, v.take_cost) == (0, "lead", 0, 0, None)
    act(g, "A lead 7C")
    assert refused(g, "C beat KC") == "not_your_turn"
    act(g, "B beat 6H")
    assert (g.turn, g.phase) == (1, "lead")
    act(g, "B lead QS")
    assert refused(g, "C beat KC") == "cannot_beat"
    act(g, "C beat 6D")
    act(g, "C lead 7D")
    assert Beat(parse_card("AC")) not in g.legal_actions(0)
    act(g, "A beat 6S")
    act(g, "A lead 8C")
    assert g.view(None).take_cost == 3
    act(g, "B take")
    assert g.expected("pile") == ["7C", "6H", "QS", "6D"]
    assert (g.turn, g.phase) == (2, "lead")
    assert "8C" in hand(g, "B") and "6S" in hand(g, "B") and "7D" in hand(g, "B")


def test_own_trumps_take_ten_on_his_own_suit_and_a_short_pile():
    g = start("own_trumps", "ABCD", vector_start("own_trumps_take_ten_and_short_pile"))
    assert g.view(1).take_cost == 10
    act(g, "B take")
    assert g.expected("pile") == ["9S"] and g.hand_sizes() == [3, 13, 3, 3]
    act(g, "C lead QS")
    assert g.view(3).take_cost == 2  # 3 due, 2 in the pile
    act(g, "D take")
    assert g.pile == [] and (g.turn, g.phase) == (0, "lead")


def test_own_trumps_take_pile_option_picks_up_the_whole_pile():
    s = vector_start("own_trumps_take_ten_and_short_pile")
    g = start("own_trumps", "ABCD", s, own_trumps_take="pile")
    assert g.view(1).take_cost == 11
    act(g, "B take")
    assert g.pile == [] and g.hand_sizes()[1] == 14 and g.turn == 2


def test_own_trumps_the_take_of_three_does_not_depend_on_whether_he_could_beat():
    s = {
        "trumps": {"A": "S", "B": "H", "C": "D"},
        "hands": {"A": ["7S"], "B": ["AC", "6H"], "C": ["8D"]},
        "pile": ["6C", "7C", "8C", "9C", "10C"],
        "turn": "B",
        "phase": "answer",
    }
    g = start("own_trumps", "ABC", s)
    assert Beat(parse_card("AC")) in g.legal_actions(1)
    act(g, "B take")
    assert g.expected("pile") == ["6C", "7C"]


def test_own_trumps_from_seed_every_player_holds_his_six_and_sizes_are_kept():
    swapped = 0
    for seed in range(40):
        for players in ("ABC", "ABCD"):
            g = Game.from_seed(Rules(game="own_trumps"), list(players), seed)
            assert isinstance(g, PileGame)
            n = len(players)
            assert g.hand_sizes() == [36 // n] * n
            for s in range(n):
                assert g.hands[s] >> (g.suits[s] * 16 + 6) & 1
            draws = g.start["swap_draws"]
            swapped += len(draws)
            for name, card in draws.items():
                seat = g.seat_of(name)
                assert parse_card(card).id != g.suits[seat] * 16 + 6
                assert not g.hands[seat] >> parse_card(card).id & 1  # drawn away from him
            assert len(set(g.suits)) == n
            assert g.turn == (g.dealer + 1) % n and g.phase == "lead"
    assert swapped > 0


def test_own_trumps_dealer_and_choosing_order_match_from_seed():
    for seed in range(10):
        dealer, order = dealer_and_choosing_order(["A", "B", "C", "D"], seed)
        g = Game.from_seed(Rules(game="own_trumps"), ["A", "B", "C", "D"], seed)
        assert isinstance(g, PileGame)
        assert g.players[g.dealer] == dealer
        assert order[-1] == dealer and order[0] == g.players[(g.dealer + 1) % 4]
        assert sorted(order) == ["A", "B", "C", "D"]


def test_the_game_interface_gives_the_choosing_order_from_seed_deals_by():
    """What a lobby asks suits by (``Game.choosing_order``) is the deal's own order."""
    for players in (["A", "B", "C"], ["A", "B", "C", "D"]):
        for seed in range(10):
            order = Game.choosing_order(Rules(game="own_trumps"), players, seed)
            g = Game.from_seed(Rules(game="own_trumps"), players, seed)
            assert isinstance(g, PileGame)
            n = len(players)
            assert order == tuple((g.dealer + k) % n for k in range(1, n + 1))
    for game in ("podkidnoy", "piled", "road"):
        assert Game.choosing_order(Rules(game=game), ["A", "B", "C"], 1) == ()


def test_own_trumps_takes_the_lobbys_suits_and_keeps_them_for_the_series():
    trumps = {"A": "C", "B": "D", "C": "S"}
    rules = Rules(game="own_trumps", no_progress_draw=False)  # random play: to a loss
    g = Game.from_seed(rules, ["A", "B", "C"], 5, Series(trumps=trumps))
    assert g.expected("trumps") == trumps
    play_random(g, random.Random(5))
    nxt = g.next_game()
    assert nxt.trumps == trumps and nxt.kind == AFTER_LOSS
    assert nxt.previous_loser == g.players[g.result.losers[0]]
    g2 = Game.from_seed(Rules(game="own_trumps"), ["A", "B", "C"], 6, nxt)
    assert isinstance(g2, PileGame)
    assert g2.expected("trumps") == trumps and g2.players[g2.dealer] == nxt.dealer
    assert g2.turn == (g2.dealer + 1) % 3


# ---- piled (section 3) ----------------------------------------------------------


def test_piled_example_refill_after_the_beat_and_take_of_the_pile():
    g = start("piled", "ABCD", vector_start("piled_deal_refill_take"))
    v = g.view(None)
    assert v.trump == Suit.DIAMONDS and str(v.trump_card) == "9D" and v.trump_card_in_stock
    assert v.stock == 24 and (v.turn, v.phase) == (1, "lead")
    act(g, "B lead AS")
    assert hand(g, "B") == cards("6D 10H 8H")
    act(g, "C beat QD")
    assert Lead(parse_card("10S")) in g.legal_actions(2)  # drawn before he leads
    act(g, "C lead 10S")
    assert g.view(3).take_cost == 3 and g.legal_actions(3) == [TAKE]
    act(g, "D take")
    assert g.hand_sizes() == [3, 3, 3, 6] and g.view(0).stock == 21
    assert (g.turn, g.phase, g.pile) == (0, "lead", [])


def test_piled_trump_card_drawn_last_and_the_durak():
    g = start("piled", "AB", vector_start("piled_trump_card_last_and_durak"))
    act(g, "A lead 6C")
    assert "7D" in hand(g, "A")
    act(g, "B beat 7C")
    assert "9S" in hand(g, "B") and not g.view(None).trump_card_in_stock
    assert str(g.view(None).trump_card) == "9S"  # still shown once drawn
    for text in ("B lead 10H", "A take", "B lead 9S", "A take", "B lead AS"):
        act(g, text)
    assert g.out == [False, True] and not g.over and g.turn == 0 and g.phase == "answer"
    act(g, "A take")
    assert g.expected("result") == {"loser": "A"} and g.expected("turn") is None


def _piled_deck(first_hands: str) -> list:
    """A 36-card order whose first cards are ``first_hands``, the rest in deck order."""
    head = [parse_card(c) for c in first_hands.split()]
    from durak.cards import deck

    return head + [c for c in deck(36) if c not in head]


def test_piled_lowest_trump_leads_first_and_the_dealers_left_after_a_loss():
    # Dealer A: B, C, A get cards 1, 2, 3 ...; card 10 is the trump card (6 of hearts? no: 7H).
    order = _piled_deck("KS QS 9H  JS 10S 8H  9S 8S 7S  7H")
    rules = Rules(game="piled")
    g = PileGame.from_deck(rules, "ABC", order, 0)
    assert g.trump == Suit.HEARTS and g.turn == 0  # A holds 8H, the lowest trump
    g = PileGame.from_deck(rules, "ABC", order, 0, AFTER_LOSS, 0)
    assert g.turn == 1
    g = PileGame.from_deck(rules, "ABC", order, 0, AFTER_DRAW)
    assert g.turn == 0
    no_trump = _piled_deck("KS QS JS  10S 9S 8S  7S 6S AC  7H")
    assert PileGame.from_deck(rules, "ABC", no_trump, 0).turn == 1


# ---- road (section 4) -------------------------------------------------------------


def test_road_example_clearing_taking_the_bottom_and_going_out_on_a_clearing_card():
    g = start("road", "ABC", vector_start("road_trick_clear_and_take_bottom"))
    for text in ("A lead 7S", "B beat 9S", "C beat JS"):
        act(g, text)
    assert g.pile == [] and g.discard == 28 and (g.turn, g.phase) == (2, "lead")
    act(g, "C lead 8C")
    assert g.view(0).take_cost == 1
    act(g, "A take")
    assert (g.turn, g.phase) == (1, "lead")
    act(g, "B lead 10D")
    act(g, "C beat KD")
    act(g, "A take")
    assert g.expected("pile") == ["KD"] and (g.turn, g.phase) == (1, "answer")
    act(g, "B beat AD")
    act(g, "C beat 7H")
    assert g.out == [False, False, True] and g.discard == 31 and (g.turn, g.phase) == (0, "lead")


def test_road_five_players_the_36th_card_is_out_of_play_and_a_trick_is_five():
    g = start("road", "ABCDE", vector_start("road_5p_deal_first_trick"))
    v = g.view(0)
    assert str(v.out_of_play) == "9H" and str(v.trump_card) == "9H" and v.trump == Suit.HEARTS
    assert sum(g.hand_sizes()) == 35 and "9H" not in [str(c) for s in range(5) for c in g.hand(s)]
    for text in ("A lead 6S", "B beat 7S", "C beat 8S", "D beat 9S"):
        act(g, text)
    assert len(g.pile) == 4
    act(g, "E beat JS")
    assert g.discard == 5 and g.turn == 4


def test_road_with_four_players_the_dealer_keeps_the_trump_card():
    g = Game.from_seed(Rules(game="road"), ["A", "B", "C", "D"], 3)
    assert isinstance(g, PileGame)
    assert g.hand_sizes() == [9, 9, 9, 9] and g.out_of_play == -1
    assert g.hands[g.dealer] >> g.trump_card & 1 and g.trump == g.trump_card >> 4
    assert g.turn == (g.dealer + 1) % 4


def test_road_a_take_on_an_empty_pile_is_must_lead():
    g = start("road", "ABC", vector_start("road_trick_clear_and_take_bottom"))
    assert refused(g, "A take") == "must_lead"


def test_road_show_last_discard_shows_the_cleared_pile():
    s = vector_start("road_trick_clear_and_take_bottom")
    g = start("road", "ABC", s, show_last_discard=True)
    assert g.view(0).last_cleared == ()
    for text in ("A lead 7S", "B beat 9S", "C beat JS"):
        act(g, text)
    assert [str(c) for c in g.view(1).last_cleared] == ["7S", "9S", "JS"]
    assert start("road", "ABC", s).view(0).last_cleared is None


# ---- rule 1.7: the end ----------------------------------------------------------


@pytest.mark.parametrize("game", ["piled", "road", "own_trumps"])
def test_last_card_beaten_by_the_last_card_is_a_draw(game):
    s: dict = {"hands": {"A": ["7C"], "B": ["9C"]}, "turn": "A"}
    players = "ABC" if game != "piled" else "AB"
    s["trumps" if game == "own_trumps" else "trump"] = (
        {"A": "S", "B": "H", "C": "D"} if game == "own_trumps" else "S"
    )
    g = start(game, players, s)
    act(g, "A lead 7C")
    assert not g.over and g.turn == 1 and g.phase == "answer"
    act(g, "B beat 9C")
    assert g.expected("result") == {"draw": True}
    assert sorted(g.expected("out")) == sorted(players)
    assert g.view(0).turn is None and g.view(0).phase is None and g.actors() == []
    assert refused(g, "B lead 9C") == "game_over"


@pytest.mark.parametrize("game", ["piled", "road"])
def test_the_last_players_answer_ends_the_game_when_cards_remain(game):
    g = start(
        game,
        "ABC" if game == "road" else "AB",
        {"trump": "S", "hands": {"A": ["7C"], "B": ["9C", "10D"]}, "turn": "A"},
    )
    act(g, "A lead 7C")
    act(g, "B beat 9C")
    assert g.expected("result") == {"loser": "B"}


def test_a_position_already_over_is_over_at_once():
    g = start("road", "ABC", {"trump": "S", "hands": {"B": ["6S"]}, "turn": "A"})
    assert g.expected("result") == {"loser": "B"} and g.actors() == []
    g = start("piled", "AB", {"trump": "S", "hands": {}, "turn": "A"})
    assert g.expected("result") == {"draw": True}


def test_the_turn_of_a_player_who_is_out_in_phase_lead_passes_on():
    g = start("road", "ABC", {"trump": "S", "hands": {"B": ["6S"], "C": ["7S"]}, "turn": "A"})
    assert g.turn == 1 and g.expected("out") == ["A"]


# ---- refusals (6.6) ----------------------------------------------------------------


def _precedence_game() -> PileGame:
    # A is out, B answers 7C, C waits.
    return start(
        "piled",
        "ABC",
        {
            "trump": "S",
            "hands": {"B": ["8C", "9H", "6D"], "C": ["QS", "KD", "AH"]},
            "pile": ["7C"],
            "turn": "B",
            "phase": "answer",
        },
    )


def test_refusal_precedence():
    g = _precedence_game()
    assert refused(g, "A attack 8C") == "not_your_turn"  # left the game: any action
    assert refused(g, "A take") == "not_your_turn"
    assert refused(g, "C attack QS") == "variant_off"  # not on turn, but a podkidnoy action
    assert refused(g, "C defend 7C QS") == "variant_off"
    assert refused(g, "C pass") == "variant_off"
    assert refused(g, "B exchange_trump") == "variant_off"
    assert refused(g, "B return_card") == "variant_off"
    assert refused(g, "B transfer 8C") == "variant_off"
    assert refused(g, "B show_trump 8C") == "variant_off"
    assert refused(g, "C lead JS") == "not_your_turn"  # before not_in_hand
    assert refused(g, "C take") == "not_your_turn"
    assert refused(g, "B lead JS") == "must_answer"  # before not_in_hand
    assert refused(g, "B beat JS") == "not_in_hand"  # before cannot_beat
    assert refused(g, "B beat 6D") == "cannot_beat"
    act(g, "B beat 8C")
    assert refused(g, "B beat JS") == "must_lead"
    assert refused(g, "B take") == "must_lead"
    done = start("piled", "AB", {"trump": "S", "hands": {"A": ["6S"]}, "turn": "A"})
    for text in ("A attack 6S", "A lead 6S", "B take", "A pass"):
        assert refused(done, text) == "game_over"


def test_podkidnoy_refuses_pile_actions_with_variant_off():
    g = Game.from_seed(Rules(), ["A", "B", "C"], 1)
    seat = g.actors()[0]
    card = g.hand(seat)[0]
    for a in (Lead(card), Beat(card)):
        with pytest.raises(IllegalAction) as e:
            g.verify(seat, a)
        assert e.value.code == "variant_off"
    other = (seat + 1) % 3
    with pytest.raises(IllegalAction) as e:
        g.verify(other, Lead(g.hand(other)[0]))
    assert e.value.code == "variant_off"


def test_legal_lists_only_pile_actions():
    g = _precedence_game()
    legal = g.legal_actions(1)
    assert legal == [Beat(parse_card("8C")), TAKE]
    assert not any(isinstance(a, (Attack, Defend, Pass)) for a in legal)
    assert g.legal_actions(0) == [] and g.legal_actions(2) == []


# ---- timeouts -------------------------------------------------------------------


def test_timeout_beats_when_it_can_takes_when_not_and_leads_the_lowest_card():
    g = _precedence_game()
    assert g.timeout_seats() == [1] and g.timeout_action(1) == Beat(parse_card("8C"))
    trumped = start(  # a trump is spent only when no plain card beats
        "piled",
        "AB",
        {"trump": "S", "hands": {"A": ["QS", "KD"], "B": ["6S", "AS", "9H"]}, "pile": ["7C"],
         "turn": "B", "phase": "answer"},
    )  # fmt: skip
    assert trumped.timeout_action(1) == Beat(parse_card("6S"))
    cannot = start(
        "piled",
        "AB",
        {"trump": "S", "hands": {"A": ["QS", "KD"], "B": ["9H", "6D"]}, "pile": ["7C"],
         "turn": "B", "phase": "answer"},
    )  # fmt: skip
    assert cannot.timeout_action(1) == TAKE
    act(g, "B take")
    assert g.turn == 2 and g.timeout_action(2) == Lead(parse_card("KD"))
    own = start(
        "own_trumps",
        "ABC",
        {
            "trumps": {"A": "S", "B": "H", "C": "D"},
            "hands": {"A": ["6S", "7C", "8H"], "B": ["9H"], "C": ["9D"]},
            "turn": "A",
        },
    )
    assert own.timeout_action(0) == Lead(parse_card("7C"))  # not his own six


# ---- starts a record may not give (6.1, 6.3, 6.4) --------------------------------


@pytest.mark.parametrize(
    "game, players, bad",
    [
        ("piled", "AB", {"trump": "S", "hands": {"A": ["6S"]}, "turn": "A", "phase": "answer"}),
        (
            "piled",
            "AB",
            {"trump": "S", "hands": {"B": ["6S"]}, "pile": ["7C"], "turn": "A", "phase": "answer"},
        ),
        (
            "piled",
            "AB",
            {"trump": "S", "hands": {"A": ["6S"], "B": ["7S"]}, "pile": ["7C"], "turn": "A"},
        ),
        (
            "piled",
            "AB",
            {
                "trump": "S",
                "trump_card": "6S",
                "stock": ["7D"],
                "hands": {"A": ["8S"], "B": ["7S", "8C", "9C"]},
                "turn": "A",
            },
        ),
        ("piled", "AB", {"trump": "S", "stock": ["7D"], "hands": {"A": ["8S"]}, "turn": "A"}),
        ("piled", "AB", {"trump": "S", "trump_card": "6H", "hands": {"A": ["8S"]}, "turn": "A"}),
        ("piled", "AB", {"trumps": {"A": "S", "B": "H"}, "trump": "S", "turn": "A"}),
        ("piled", "AB", {"trump": "S", "hands": {"A": ["8S"]}, "turn": "A", "attacker": "A"}),
        ("piled", "AB", {"trump": "S", "hands": {"A": ["8S"]}, "turn": "A", "first_bout": True}),
        ("piled", "AB", {"trump": "S", "hands": {"A": ["8S"], "B": ["8S"]}, "turn": "A"}),
        ("piled", "AB", {"trump": "S", "hands": {"A": ["8S"]}, "discard": 3, "turn": "A"}),
        (
            "road",
            "ABC",
            {"trump": "S", "hands": {"A": ["8S"]}, "pile": ["7S"], "turn": "A", "phase": "lead"},
        ),
        ("road", "ABC", {"trump": "S", "stock": ["7S"], "hands": {"A": ["8S"]}, "turn": "A"}),
        ("road", "ABC", {"trump": "S", "trump_card": "7S", "hands": {"A": ["8S"]}, "turn": "A"}),
        ("road", "ABC", {"trump": "S", "hands": {"A": ["8S"]}, "turn": "Z"}),
        (
            "own_trumps",
            "ABC",
            {"trump": "S", "trumps": {"A": "S", "B": "H", "C": "D"}, "turn": "A"},
        ),
        ("own_trumps", "ABC", {"trumps": {"A": "S", "B": "S", "C": "D"}, "turn": "A"}),
        ("own_trumps", "ABC", {"trumps": {"A": "S", "B": "H"}, "turn": "A"}),
    ],
)
def test_malformed_positions(game, players, bad):
    with pytest.raises(MalformedRecord):
        start(game, players, bad)


def _own_deck_start(**changes):
    s = dict(vector_start("own_trumps_deal_swap_and_beats"))
    s.update(changes)
    return s


@pytest.mark.parametrize(
    "changes",
    [
        {"swap_draws": {"A": "AH"}},  # C missing
        {"swap_draws": {"A": "AH", "C": "AC", "B": "7H"}},  # B does not swap
        {"swap_draws": {"A": "6S", "C": "AC"}},  # his own six
        {"swap_draws": {"A": "AD", "C": "AC"}},  # not in A's hand
        {"trumps": {"A": "S", "B": "S", "C": "D"}},
        {"trumps": None},
        {"series": "after_loss", "previous_loser": "A"},  # the loser must deal
        {"attacker": "A"},
    ],
)
def test_malformed_own_trumps_deck_starts(changes):
    with pytest.raises(MalformedRecord):
        start("own_trumps", "ABC", _own_deck_start(**changes))


def test_trumps_and_swap_draws_belong_to_own_trumps():
    s = dict(vector_start("piled_deal_refill_take"))
    s["trumps"] = {"A": "S", "B": "H", "C": "D", "D": "C"}
    with pytest.raises(MalformedRecord):
        start("piled", "ABCD", s)


@pytest.mark.parametrize(
    "options",
    [
        {"game": "road", "transfer": True},
        {"game": "piled", "deck": 24},
        {"game": "piled", "throw_in": "all"},
        {"game": "road", "own_trumps_take": "pile"},
        {"game": "own_trumps", "bout_limit": 5},
        {"game": "own_trumps", "teams": True},
    ],
)
def test_podkidnoy_options_are_refused_with_a_pile_game(options):
    with pytest.raises(ValueError):
        Rules(**options)


def test_show_last_discard_is_accepted_by_every_pile_game():
    for game in ("own_trumps", "piled", "road"):
        Rules(game=game, show_last_discard=True)


@pytest.mark.parametrize(
    "game, bad, good",
    [("own_trumps", [2, 5], [3, 4]), ("piled", [1, 7], [2, 6]), ("road", [2, 7], [3, 6])],
)
def test_player_ranges(game, bad, good):
    rules = Rules(game=game)
    for k in bad:
        with pytest.raises(ValueError):
            rules.check_players(k)
    for k in good:
        rules.check_players(k)


def test_unknown_expectation_keys_raise_key_error():
    g = start("road", "ABC", vector_start("road_trick_clear_and_take_bottom"))
    for key in ("attacker", "defender", "table", "limit", "trumps", "match", "return_used"):
        with pytest.raises(KeyError):
            g.expected(key)
    own = start("own_trumps", "ABCD", vector_start("own_trumps_take_ten_and_short_pile"))
    with pytest.raises(KeyError):
        own.expected("trump")
    assert own.expected("stock") == 0 and own.expected("discard") == 0


def test_next_game_after_a_draw_keeps_the_dealer():
    g = Game.from_seed(Rules(game="piled"), ["A", "B"], 2)
    assert isinstance(g, PileGame)
    g.hands = [1 << parse_card("7C").id, 1 << parse_card("9C").id]
    g.stock, g.pile, g.turn, g.phase = [], [], 0, "lead"
    g.suits = [0, 0]
    act(g, "A lead 7C")
    act(g, "B beat 9C")
    nxt = g.next_game()
    assert nxt.kind == AFTER_DRAW and nxt.dealer == g.players[g.dealer]
    with pytest.raises(ValueError):
        Game.from_seed(Rules(game="piled"), ["A", "B"], 2).next_game()
