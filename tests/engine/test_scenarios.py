"""Every rule and option of RULES.md as a small record, checked by the record
checker (the same machinery as the shared vectors)."""

from __future__ import annotations

from typing import Any

from durak import check_record
from durak.cards import deck

ORDER = [str(c) for c in deck(36)]  # 6S..AS 6H..AH 6D..AD 6C..AC


def position(players, hands, attacker="A", trump="S", trump_card=None, stock=(), first=False):
    return {
        "trump": trump,
        "trump_card": trump_card,
        "stock": list(stock),
        "hands": {k: v.split() for k, v in hands.items()},
        "attacker": attacker,
        "first_bout": first,
    }


def record(players: str, start: dict, steps: list, rules: dict | None = None) -> dict[str, Any]:
    out = []
    for step in steps:
        if isinstance(step, dict):
            out.append({"expect": step})
            continue
        words = step.split()
        error = None
        if words[-1].startswith("!"):
            error = words.pop()[1:]
        player, do, args = words[0], words[1], words[2:]
        s: dict[str, Any] = {"player": player, "do": do}
        if do == "attack":
            s["cards"] = args
        elif do == "defend":
            s["attack"], s["card"] = args
        elif do in ("transfer", "show_trump"):
            s["card"] = args[0]
        if error:
            s["error"] = error
        out.append(s)
    return {
        "format": "durak-record/1",
        "name": "scenario",
        "rules": rules or {},
        "players": list(players),
        "start": start,
        "steps": out,
    }


def check(rec: dict) -> None:
    report = check_record(rec, "scenario")
    assert not report.failures, "\n".join(report.failures)
    assert report.passed > 0


def swap(order, i, j):
    order = list(order)
    order[i], order[j] = order[j], order[i]
    return order


# ---- the deal and who opens (sections 2, 3) --------------------------------------


def test_deal_clockwise_from_dealers_left_no_trump_in_hands():
    start = {"deck_order": ORDER, "dealer": "A", "series": "first", "previous_loser": None}
    check(
        record(
            "ABC",
            start,
            [
                {
                    "trump": "D",
                    "hands": {
                        "B": ["6S", "9S", "QS", "6H", "9H", "QH"],
                        "C": ["7S", "10S", "KS", "7H", "10H", "KH"],
                        "A": ["8S", "JS", "AS", "8H", "JH", "AH"],
                    },
                    "stock": 18,
                    "attacker": "B",  # nobody holds a trump: the dealer's left neighbour
                    "defender": "C",
                    "limit": 6,
                },
                "B attack 6S",
                "C defend 6S 7S",
                "B pass",
                # refill: attacker first, from the top of the stock (the card after the trump card)
                {"hands": {"B": ["9S", "QS", "6H", "9H", "QH", "7D"]}, "stock": 16},
            ],
        )
    )


def test_lowest_trump_opens_the_first_game():
    order = swap(ORDER, 9, 18)  # 6H becomes the trump card, B gets 6D
    start = {"deck_order": order, "dealer": "A", "series": "first", "previous_loser": None}
    check(
        record(
            "ABC",
            start,
            [
                {"trump": "H", "attacker": "C", "defender": "A"},
                "A attack 8S !not_your_turn",
                "C attack 7H",  # any card may open
            ],
        )
    )


def test_after_a_draw_the_lowest_trump_opens_again():
    order = swap(ORDER, 9, 18)
    start = {"deck_order": order, "dealer": "B", "series": "after_draw", "previous_loser": None}
    # dealer B: C gets the first card; hands rotate, the lowest trump 7H goes to A
    check(record("ABC", start, [{"trump": "H", "attacker": "A", "hand_sizes": {"A": 6}}]))


def test_six_players_the_dealers_last_card_shows_trump():
    start = {"deck_order": ORDER, "dealer": "F", "series": "first", "previous_loser": None}
    check(
        record(
            "ABCDEF",
            start,
            [
                {
                    "trump": "C",
                    "stock": 0,
                    "hand_sizes": {p: 6 for p in "ABCDEF"},
                    "hands": {"F": ["JS", "8H", "AH", "JD", "8C", "AC"]},
                    "attacker": "D",  # 6C is the lowest trump; it went to D
                    "defender": "E",
                    "limit": 6,
                }
            ],
        )
    )


def test_after_a_loss_the_loser_deals_and_his_left_neighbour_opens():
    start = {"deck_order": ORDER, "dealer": "B", "series": "after_loss", "previous_loser": "B"}
    check(record("ABC", start, [{"attacker": "C", "defender": "A"}]))


def test_attack_loser_the_previous_loser_defends_first():
    start = {"deck_order": ORDER, "dealer": "B", "series": "after_loss", "previous_loser": "B"}
    check(record("ABC", start, [{"attacker": "A", "defender": "B"}], {"attack_loser": True}))


def test_after_loss_requires_the_loser_to_deal():
    start = {"deck_order": ORDER, "dealer": "A", "series": "after_loss", "previous_loser": "B"}
    report = check_record(record("ABC", start, []), "x")
    assert report.failures and "malformed" in report.failures[0]


# ---- the limit (section 4) ------------------------------------------------------------


def test_first_bout_limit_five():
    start = {"deck_order": ORDER, "dealer": "A", "series": "first", "previous_loser": None}
    check(record("AB", start, [{"limit": 5}], {"first_bout_limit": 5}))
    check(record("AB", start, [{"limit": 6}]))


def test_six_cap_after_stock():
    hands = {"A": "7H 7D 7C 8S", "B": "6S 6H 6D 6C 8H 8D 8C 9H"}
    check(record("AB", position("AB", hands), [{"limit": 6}]))
    check(
        record(
            "AB",
            position("AB", hands),
            [{"limit": 8}, "A attack 7H 7D 7C", {"limit": 8}],
            {"six_cap_after_stock": False},
        )
    )


def test_the_limit_counts_throw_ins_after_a_take():
    hands = {"A": "7H 7D 7C 9S", "B": "6S 6H", "C": "7S"}
    check(
        record(
            "ABC",
            position("ABC", hands, trump="C"),
            [
                {"limit": 2},
                "A attack 7H 7D 7C !limit",
                "A attack 7H",
                "B take",
                "B defend 7H 8H !not_your_turn",
                "B take !cannot_take",
                {"legal": ["A attack 7D", "A pass"], "illegal": ["C attack 7S"]},
                "A pass",
                {"legal": ["C attack 7S"]},
                "C attack 7S",
                {"hands": {"B": ["6S", "6H", "7H", "7S"]}, "out": ["C"], "attacker": "A"},
            ],
        )
    )


# ---- throwing in and priority ------------------------------------------------------------


def test_others_may_throw_in_when_the_primary_attacker_has_nothing():
    hands = {"A": "6S 7D 9C", "B": "7S 8S 10H JH QH KH", "C": "6H 7H", "D": "6D 7C"}
    check(
        record(
            "ABCD",
            position("ABCD", hands, trump="C", trump_card="AC", stock=["AH"]),
            [
                "A attack 6S",
                # A holds no 6: C (the defender's left neighbour) may throw in at once
                {"legal": ["C attack 6H"], "illegal": ["D attack 6D", "A pass"]},
                "B defend 6S 7S",
                # now A holds 7D: he has the first say again
                {"illegal": ["C attack 7H", "C pass"], "legal": ["A attack 7D", "A pass"]},
                "C attack 7H !not_your_turn",
                "A pass",
                "B defend 7H 8S !not_on_table",
                "C attack 7H",
                {"legal": ["A attack 7D"]},  # a new card re-opens throwing for A
                "B defend 7H 8S !cannot_beat",
                "B defend 7H 10H",
                "A pass",
                {"legal": ["C pass"], "illegal": ["A pass", "A attack 7D"]},  # his pass holds
            ],
        )
    )


def test_throw_in_all_lets_every_non_defender_in():
    hands = {"A": "6S 9C", "B": "7S 8S 10H JH QH KH", "C": "9D", "D": "6D 7C"}
    start = position("ABCD", hands, trump="C", trump_card="AC", stock=["AH"])
    steps = [
        "A attack 6S",
        {"legal": ["D attack 6D"]},
        "D attack 6D",
        {"table": [["6S", None], ["6D", None]]},
    ]
    check(record("ABCD", start, steps, {"throw_in": "all"}))
    check(record("ABCD", start, ["A attack 6S", "D attack 6D !not_your_turn"]))


def test_a_thrower_with_nothing_legal_cannot_pass_and_is_not_waited_for():
    hands = {"A": "6S 9C", "B": "7S 8S", "C": "10D"}
    check(
        record(
            "ABC",
            position("ABC", hands, trump="H"),
            [
                "A attack 6S",
                "C pass !not_your_turn",
                "B defend 6S 7S",
                # nobody can add a card: beaten off at once, B opens
                {"table": [], "discard": 2, "attacker": "B", "defender": "C"},
            ],
        )
    )


def test_opening_refusals_in_their_order():
    hands = {"A": "6S 6H 7D", "B": "7S 8S 9S"}
    check(
        record(
            "AB",
            position("AB", hands, trump="H"),
            [
                "B attack 7S !not_your_turn",
                "A attack 6S 8D !not_in_hand",
                "A attack 6S 6S !not_in_hand",
                "A attack 6S 7D !mixed_ranks",
                "A pass !not_your_turn",
                "B take !cannot_take",
                "A transfer 6S !not_your_turn",
                "B transfer 7S !not_your_turn",
                "A exchange_trump !variant_off",
                {"legal": ["A attack 6S 6H", "A attack 7D"]},
                "A attack 6S 6H",
                "B defend 6H 7S !cannot_beat",
                "B defend 7D 8S !not_on_table",
                "B defend 6S 9H !not_in_hand",
                "B transfer 7S !variant_off",
            ],
        )
    )


# ---- the end of a bout and of the game ------------------------------------------------


def test_players_leave_only_once_the_stock_is_empty():
    hands = {"A": "6S", "B": "7S 8S 9S", "C": "10D JD"}
    check(
        record(
            "ABC",
            position("ABC", hands, trump="H", trump_card="AH", stock=["KH"]),
            [
                "A attack 6S",
                "B defend 6S 7S",
                # A's hand was empty but the stock refilled it: nobody left
                {"out": [], "hands": {"A": ["KH", "AH"], "B": ["8S", "9S"]}, "stock": 0},
            ],
        )
    )


def test_if_the_next_opener_has_left_the_next_active_player_opens():
    hands = {"A": "6S 9D", "B": "7S", "C": "10D JD"}
    check(
        record(
            "ABC",
            position("ABC", hands, trump="H"),
            [
                "A attack 6S",
                "B defend 6S 7S",
                {"out": ["B"], "attacker": "C", "defender": "A", "result": None},
            ],
        )
    )


def test_game_result_json_and_game_over():
    hands = {"A": "6S", "B": "7S 8S"}
    check(
        record(
            "AB",
            position("AB", hands, trump="H"),
            [
                "A attack 6S",
                "B defend 6S 7S",
                {"result": {"loser": "B"}, "attacker": None, "limit": None, "out": ["A"]},
                "B attack 8S !game_over",
            ],
        )
    )


# ---- variants -------------------------------------------------------------------------


TRANSFER = {"transfer": True}


def test_transfer_chain_back_to_the_opener():
    hands = {"A": "6H 9C 10C JC", "B": "6D 9D", "C": "6C 10S JS"}
    start = position("ABC", hands, trump="S", trump_card="AS", stock=["KD"])
    check(
        record(
            "ABC",
            start,
            [
                "A attack 6H",
                {"legal": ["B transfer 6D"], "illegal": ["B transfer 9D"]},
                "B transfer 6D",
                {
                    "attacker": "B",
                    "defender": "C",
                    "limit": 3,
                    "table": [["6H", None], ["6D", None]],
                },
                "B transfer 6D !not_your_turn",
                "C transfer 6C",
                {"attacker": "C", "defender": "A", "limit": 3},
                "A transfer 6H !not_in_hand",
                "B attack 9D !rank_not_on_table",  # B, A's left neighbour, throws in now
                "A take",
                # C, the primary attacker since his transfer, draws first
                {
                    "hands": {
                        "A": ["9C", "10C", "JC", "6H", "6D", "6C"],
                        "C": ["10S", "JS", "KD", "AS"],
                    },
                    "attacker": "B",
                    "defender": "C",
                },
            ],
            TRANSFER,
        )
    )


def test_transfer_refused_after_a_cover_or_over_the_limit():
    hands = {"A": "6H 6S 9C", "B": "6D 7H 9D", "C": "QS"}
    start = position("ABC", hands, trump="C")
    check(
        record(
            "ABC",
            start,
            [
                "A attack 6H 6S",
                # C holds one card: two attack cards plus the transfer would be three
                "B transfer 6D !cannot_transfer",
                "B defend 6H 7H",
                "B transfer 6D !cannot_transfer",
            ],
            TRANSFER,
        )
    )
    check(record("ABC", start, ["A attack 6H", "B take", "B transfer 6D !not_your_turn"], TRANSFER))


def test_show_trump_transfers_without_playing_once_per_card():
    hands = {"A": "6H 6C 9C 10C JC", "B": "6S 9D 10D"}
    rules = {"transfer": True, "transfer_by_showing_trump": True}
    start = position("AB", hands, trump="S")
    check(
        record(
            "AB",
            start,
            [
                "A attack 6H",
                {"legal": ["B show_trump 6S", "B transfer 6S"]},
                "B show_trump 6S",
                {"attacker": "B", "defender": "A", "table": [["6H", None]], "hand_sizes": {"B": 3}},
                "A transfer 6C",
                {"attacker": "A", "defender": "B"},
                "B show_trump 6S !cannot_transfer",
                {"illegal": ["B show_trump 6S"], "legal": ["B transfer 6S"]},
            ],
            rules,
        )
    )
    check(record("AB", start, ["A attack 6H", "B show_trump 6S !variant_off"], TRANSFER))
    check(record("AB", start, ["A attack 6H", "B show_trump 6C !not_in_hand"], rules))


def test_trump_exchange_for_the_opener():
    hands = {"A": "6D 7S 8S", "B": "9S 10S JS"}
    rules = {"trump_exchange": True}
    start = position("AB", hands, trump="D", trump_card="QD", stock=["KH", "AH", "AC", "KC"])
    check(
        record(
            "AB",
            start,
            [
                {"legal": ["A exchange_trump"], "illegal": ["B exchange_trump"]},
                "B exchange_trump !not_your_turn",
                "A exchange_trump",
                {"hands": {"A": ["QD", "7S", "8S"]}, "stock": 5},
                "A exchange_trump !not_in_hand",
                "A attack 7S",
                "B defend 7S 9S",
                # the swapped 6D is now the face-up card, drawn last
                {
                    "hands": {"A": ["QD", "8S", "KH", "AH", "AC", "KC"], "B": ["10S", "JS", "6D"]},
                    "stock": 0,
                },
            ],
            rules,
        )
    )
    small = position("AB", hands, trump="D", trump_card="QD", stock=[])
    check(record("AB", small, ["A exchange_trump !cannot_exchange"], rules))


def test_teams_partners_never_fight_and_lose_together():
    hands = {"A": "6S 7H", "B": "7S 8D", "C": "6D", "D": "6H 9C"}
    rules = {"teams": True, "throw_in": "all"}
    check(
        record(
            "ABCD",
            position("ABCD", hands, trump="C"),
            [
                {"attacker": "A", "defender": "B"},
                "A attack 6S",
                # A holds no 6, so C may throw in; D is B's partner and never does
                {"legal": ["C attack 6D"], "illegal": ["D attack 6H", "A pass"]},
                "C attack 6D",
                "B defend 6S 7S",
                "B defend 6D 8D",
                # B and C are out; B would open, so the next active player, D, does
                {"out": ["B", "C"], "result": None, "attacker": "D", "defender": "A"},
                "D attack 6H",
                "A defend 6H 7H",
                {"result": {"losers": ["B", "D"]}},
            ],
            rules,
        )
    )


def test_a_transfer_gives_the_new_primary_attacker_the_first_say():
    hands = {"A": "6H 6C 9C", "B": "6D 6S 9D", "C": "10S JS QS KH"}
    check(
        record(
            "ABC",
            position("ABC", hands, trump="H"),
            [
                "A attack 6H",
                "A pass",
                "B transfer 6D",
                {"attacker": "B", "defender": "C", "limit": 4},
                # B holds 6S: A, who had passed as the old primary attacker, must wait again
                "A attack 6C !not_your_turn",
                "B pass",
                "A attack 6C",
                {"table": [["6H", None], ["6D", None], ["6C", None]]},
            ],
            TRANSFER,
        )
    )
