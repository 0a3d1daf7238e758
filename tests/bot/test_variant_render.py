"""The table and panels for VARIANTS.md's view fields and the pile games' PileView,
from hand-built views (the view contract of durak/view.py): what each shows, and
that no card a reader may not see is written."""

from __future__ import annotations

from dataclasses import replace

from bot.ui import callbacks as cb
from bot.ui import keyboards, render
from durak import Attack, Defend, Take
from durak.actions import Beat, Lead, ReturnCard
from durak.cards import Suit, parse_card, parse_cards
from durak.service import Seat
from durak.view import MatchView, PileView, SeatInfo, View

from .textcards import cards_in


def seats(n: int) -> tuple[Seat, ...]:
    return tuple(Seat(i, 100 + i, name) for i, name in enumerate("ABCDEF"[:n]))


def infos(*counts: int) -> tuple[SeatInfo, ...]:
    return tuple(SeatInfo(i, "ABCDEF"[i], c, c == 0, None) for i, c in enumerate(counts))


def view(**changes: object) -> View:
    base = View(
        seat=None,
        hand=(),
        legal=(),
        seats=infos(6, 6),
        trump=Suit.DIAMONDS,
        trump_card=parse_card("7D"),
        trump_card_in_stock=True,
        stock=12,
        discard=0,
        table=(),
        attacker=0,
        defender=1,
        throwers=(0,),
        limit=6,
        taking=False,
        waiting_for=(0,),
        opener=None,
        opener_reason="position",
        opener_card=None,
        first_bout=False,
        dealer=1,
        outcome=None,
        moves=3,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def pile(**changes: object) -> PileView:
    base = PileView(
        seat=None,
        hand=(),
        legal=(),
        seats=infos(5, 4, 6),
        game="piled",
        pile=parse_cards(["7C", "9C", "QS"]),
        turn=1,
        phase="answer",
        trump=parse_card("9D").suit,
        trumps=(),
        trump_card=parse_card("9D"),
        trump_card_in_stock=True,
        out_of_play=None,
        stock=8,
        discard=0,
        take_cost=3,
        last_cleared=None,
        waiting_for=(1,),
        dealer=2,
        outcome=None,
        moves=7,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def table(v: View | PileView, n: int = 2) -> render.Table:
    return render.Table(1, 5, "Friends", seats(n), v)


def buttons(markup: keyboards.Markup) -> list[dict[str, str]]:
    return [b for row in markup["inline_keyboard"] for b in row]


def moves(markup: keyboards.Markup) -> list[object]:
    return [cb.decode(b["callback_data"]).move for b in buttons(markup) if "callback_data" in b]


# ---- VARIANTS.md -------------------------------------------------------------------------


def test_trump_change_shows_the_face_down_card_then_the_new_trump():
    before = render.table_text(table(view(second_trump_hidden=True)))
    assert "face-down card" in before and "7♦" in before
    after = render.table_text(
        table(view(trump=parse_card("QS").suit, second_trump_card=parse_card("QS")))
    )
    assert "Trump changed to ♠" in after and "Q♠" in after
    assert "face-down" not in after


def test_a_sprint_match_shows_the_score_and_then_its_result():
    going = MatchView(10, 4, (("A", 3), ("B", 1)), ("A", "B"), (), None, False)
    text = render.table_text(table(view(match=going)))
    assert "deal 5 of 10" in text and "A 3 : B 1" in text
    done = MatchView(10, 7, (("A", 5), ("B", 1)), ("A", "B"), (), "A", False)
    text = render.table_text(table(view(match=done, outcome=None)))
    assert "A wins the match" in text
    knockout = MatchView(None, 2, (), ("A", "B"), ("C",), None, False)
    text = render.table_text(table(view(match=knockout, seats=infos(6, 6)), 3))
    assert "Knock-out, deal 3" in text and "Out of the match: C" in text
    # a sprint deal has no stock: its turned card is out of play, never "drawn"
    text = render.table_text(table(view(match=going, trump_card_in_stock=False, stock=0)))
    assert "the 7♦ is out of play" in text and "was drawn" not in text


def test_the_last_discard_is_shown_only_with_the_option():
    pairs = ((parse_card("8H"), parse_card("9H")), (parse_card("8S"), None))
    assert "8♥/9♥ 8♠" in render.table_text(table(view(last_discard=pairs)))
    assert "Last discarded" not in render.table_text(table(view(last_discard=None)))


def test_english_says_who_had_no_pair_and_who_leads_one_card():
    text = render.table_text(table(view(no_pair=(0, 1), single_lead=True, attacker=0), 3))
    assert "Nobody had a pair: A leads one card." in text
    text = render.table_text(table(view(no_pair=(0,), attacker=1, defender=2), 3))
    assert "No pair: A" in text


def test_a_draw_by_repetition_says_so():
    from durak.view import Outcome

    text = render.table_text(table(view(outcome=Outcome((), True), end_reason="repetition")))
    assert "The same position again: a draw." in text


def test_the_return_button_is_offered_when_legal():
    v = view(
        seat=1,
        hand=parse_cards(["7H", "9C"]),
        legal=(Take(), ReturnCard()),
        table=((parse_card("KS"), None),),
        waiting_for=(1,),
    )
    assert ReturnCard() in moves(keyboards.panel(1, 5, v))
    assert ReturnCard() not in moves(keyboards.panel(1, 5, replace(v, legal=(Take(),))))


def test_blind_panel_shows_slots_and_the_opponents_hand_never_an_unseen_card():
    own = parse_cards(["6S", "9C", "KD", "10H"])  # the truth, which he may not see
    seen = parse_card("KD")
    v = view(
        seat=0,
        hand=(),
        legal=(),
        slots=(None, None, seen, None),
        shown_hands=((1, parse_cards(["7S", "JC", "AD"])),),
        waiting_for=(0,),
        limit=1,
    )
    text = render.panel_text(table(v))
    shown = cards_in(text)
    assert {"7S", "JC", "AD", "KD"} <= shown
    assert not shown & ({str(c) for c in own} - {"KD"})
    markup = keyboards.panel(1, 5, v)
    slots = [m for m in moves(markup) if isinstance(m, cb.Slot)]
    assert [s.index for s in slots] == [0, 1, 2, 3]
    labels = [b["text"] for b in buttons(markup)]
    assert labels[2] == "K♦" and all("🂠" in x for x in labels[:2])
    assert not cards_in(" ".join(labels)) - {"KD"}
    # the group table has no hand at all
    public = render.table_text(table(replace(v, seat=None, slots=None, shown_hands=())))
    assert not cards_in(public) - {"7D"}


def test_english_pair_tap_offers_the_pairs_and_damka_picker_allows_one_suit():
    hand = parse_cards(["9S", "9H", "KD", "6C"])
    pair = Attack(parse_cards(["9S", "9H"]))
    v = view(seat=0, hand=hand, legal=(pair,))
    assert keyboards.card_actions(v, parse_card("9S")) == [pair]
    assert keyboards.card_actions(v, parse_card("KD")) == []
    choice = keyboards.choice(1, 5, keyboards.card_actions(v, parse_card("9H")))
    assert pair in moves(choice)
    # damka: openings of one suit; the picker offers only cards that fit the choice
    hand = parse_cards(["7S", "10S", "KS", "7D"])
    one_suit = (["7S"], ["10S"], ["KS"], ["7S", "10S"], ["7S", "KS"], ["10S", "KS"], ["7D"])
    legal = tuple(Attack(parse_cards(c)) for c in one_suit)
    v = view(seat=0, hand=hand, legal=legal)
    assert keyboards.several_card_openings(v)
    picked = keyboards.picker(1, 5, v, (parse_card("7S"),))
    offered = cards_in(" ".join(b["text"] for b in buttons(picked)))
    assert "7D" not in offered and {"10S", "KS"} <= offered
    two = keyboards.picker(1, 5, v, parse_cards(["7S", "10S"]))
    assert Attack(parse_cards(["10S", "7S"])) in moves(two)
    for b in buttons(two):
        assert len(b["callback_data"].encode()) <= 64


# ---- pile games ---------------------------------------------------------------------------


def test_piled_table_shows_top_card_turn_stock_and_trump_card():
    text = render.table_text(table(pile(), 3))
    assert "Q♠" in text and "B to beat Q♠ or take 3 cards" in text
    assert "Stock: 8" in text and "9♦" in text
    assert not cards_in(text) - {"7C", "9C", "QS", "9D"}


def test_road_shows_how_many_of_how_many_and_the_card_out_of_play():
    v = pile(
        game="road",
        seats=infos(7, 7, 7, 7, 7),
        pile=parse_cards(["6S", "8S"]),
        turn=2,
        trump_card=None,
        trump_card_in_stock=False,
        out_of_play=parse_card("7H"),
        stock=0,
        discard=5,
        take_cost=1,
    )
    text = render.table_text(table(v, 5))
    assert "(2 of 5)" in text and "7♥ is out of play" in text and "Discard: 5" in text
    assert "take the bottom card" in text


def test_own_trumps_show_each_players_suit_and_the_take_cost():
    s, h, d = (parse_card(x).suit for x in ("6S", "6H", "6D"))
    v = pile(game="own_trumps", trump=None, trumps=(s, h, d), trump_card=None, stock=0)
    text = render.table_text(table(v, 3))
    assert "A ♠" in text and "B ♥" in text and "C ♦" in text
    mine = replace(
        v,
        seat=1,
        hand=parse_cards(["6H", "KS", "8C"]),
        legal=(Beat(parse_card("6H")), Beat(parse_card("KS")), Take()),
        take_cost=10,
    )
    markup = keyboards.panel(1, 7, mine)
    assert Take() in moves(markup)
    assert any(b["text"].endswith("Take (10)") for b in buttons(markup))
    labels = {b["text"] for b in buttons(markup)}
    assert "6♥" in labels and "(8♣)" in labels
    assert keyboards.card_actions(mine, parse_card("KS")) == [Beat(parse_card("KS"))]


def test_a_pile_panel_offers_exactly_the_legal_leads():
    v = pile(
        seat=0,
        hand=parse_cards(["7S", "KH"]),
        legal=(Lead(parse_card("7S")), Lead(parse_card("KH"))),
        pile=(),
        turn=0,
        phase="lead",
        take_cost=None,
    )
    markup = keyboards.panel(1, 7, v)
    taps = [m for m in moves(markup) if isinstance(m, cb.Tap)]
    assert {t.card for t in taps} == set(v.hand)
    assert Take() not in moves(markup)
    assert "lead any card" in render.panel_text(table(v, 3))


def test_pile_roles_notify_the_player_on_turn():
    from bot.screens.presenter import role

    assert role(pile(), 1) == "answer"
    assert role(pile(), 0) is None
    assert role(pile(turn=0, phase="lead"), 0) == "lead"


def test_new_callbacks_round_trip():
    for m in (
        cb.Slot(0),
        cb.Slot(17),
        cb.Pick(()),
        cb.Pick(parse_cards(["7S", "10S", "KS"])),
        Attack(parse_cards(["9S", "9H"])),
        Lead(parse_card("10H")),
        Beat(parse_card("AS")),
        ReturnCard(),
        Defend(parse_card("6S"), parse_card("7S")),
    ):
        data = cb.move(123, 45, m)
        assert len(data.encode()) <= 64
        assert cb.decode(data).move == m
    assert cb.decode(cb.suit(17, "H")) == cb.Callback("c", 17, suit="H")


def test_suit_choice_lobby_text_and_buttons():
    text = render.suit_choice_text(seats(3), (1, 2, 0), ("S",), 40)
    assert "B: ♠" in text and "C: ⏳" in text and "40 seconds" in text
    markup = keyboards.suits(9, ("H", "D", "C"))
    assert [cb.decode(b["callback_data"]).suit for b in buttons(markup)] == ["H", "D", "C"]
