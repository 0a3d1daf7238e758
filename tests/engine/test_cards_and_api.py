from __future__ import annotations

import copy
import json
import random

import pytest

from durak import (
    Attack,
    Card,
    Game,
    IllegalAction,
    MalformedRecord,
    Rank,
    Rules,
    Suit,
    export_record,
    from_snapshot,
    parse_card,
    parse_cards,
    to_snapshot,
)
from durak.cards import deck
from durak.selfplay import random_step


@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("10H", Card(Suit.HEARTS, Rank.TEN)),
        ("th", Card(Suit.HEARTS, Rank.TEN)),
        ("10♥", Card(Suit.HEARTS, Rank.TEN)),
        ("6s", Card(Suit.SPADES, Rank.SIX)),
        ("AD", Card(Suit.DIAMONDS, Rank.ACE)),
        ("q♣", Card(Suit.CLUBS, Rank.QUEEN)),
        (" 2C ", Card(Suit.CLUBS, Rank.TWO)),
    ],
)
def test_parse_card(text, card):
    assert parse_card(text) == card
    assert parse_card(str(card)) == card


@pytest.mark.parametrize("text", ["", "1H", "11H", "10X", "H10", "10", "♥", "AAH", None, 10])
def test_parse_card_refuses(text):
    with pytest.raises(ValueError):
        parse_card(text)


def test_formats():
    c = parse_card("10H")
    assert str(c) == "10H" and c.display == "10♥"
    assert [str(x) for x in parse_cards("6s, th ad")] == ["6S", "10H", "AD"]
    assert len(deck(24)) == 24 and len(deck(36)) == 36 and len(deck(52)) == 52
    assert min(deck(36)).rank == Rank.SIX


def test_rules_refuse_nonsense():
    for bad in (
        {"deck": 40},
        {"throw_in": "some"},
        {"first_bout_limit": 4},
        {"transfer": "yes"},
        {"hand_size": 7},
        {"transfer_by_showing_trump": True},
        {"colour": "red"},
    ):
        with pytest.raises(ValueError):
            Rules.from_dict(bad)
    with pytest.raises(ValueError):
        Rules(deck=24).check_players(5)
    with pytest.raises(ValueError):
        Rules(teams=True).check_players(3)
    Rules(deck=52).check_players(8)


def test_views_hide_other_hands():
    game = Game.from_seed(Rules(), ["Ann", "Bob", "Cid"], 5)
    public_cards = {game.view(None).trump_card, game.view(None).opener_card}
    for seat in range(3):
        view = game.view(seat)
        assert view.hand == game.hand(seat)
        others = {c for s in range(3) if s != seat for c in game.hand(s)} - public_cards
        text = repr(view)
        assert others and not any(repr(c) in text for c in others)
        assert [s.cards for s in view.seats] == [6, 6, 6]
    public = game.view(None)
    assert public.hand == () and public.legal == ()
    text = repr(public)
    for seat in range(3):
        for c in game.hand(seat):
            if public.trump_card != c and public.opener_card != c:
                assert repr(c) not in text


def test_apply_refuses_without_changing_anything():
    game = Game.from_seed(Rules(), "ABC", 9)
    before = to_snapshot(game)
    opener = game.actors()[0]
    other = (opener + 1) % 3
    with pytest.raises(IllegalAction) as e:
        game.apply(other, Attack((game.hand(other)[0],)))
    assert e.value.code == "not_your_turn" and str(e.value)
    with pytest.raises(IllegalAction) as e:
        game.apply(7, Attack((game.hand(opener)[0],)))
    assert e.value.code == "not_your_turn"
    with pytest.raises(ValueError):
        game.apply(opener, Attack(()))
    with pytest.raises(TypeError):
        game.apply(opener, "attack")  # type: ignore[arg-type]
    assert to_snapshot(game) == before


def test_snapshot_round_trips_mid_bout_as_json():
    rules = Rules(transfer=True, transfer_by_showing_trump=True, trump_exchange=True)
    game = Game.from_seed(rules, "ABCD", 11)
    rng = random.Random(4)
    for _ in range(40):
        game.apply(*random_step(game, rng))
        text = json.dumps(to_snapshot(game))
        again = from_snapshot(json.loads(text))
        assert to_snapshot(again) == to_snapshot(game)
        assert again.legal_by_seat() == game.legal_by_seat()
        assert export_record(again) == export_record(game)


def _damage(snapshot, rng):
    data = copy.deepcopy(snapshot)
    key = rng.choice(sorted(data))
    choice = rng.randrange(5)
    if choice == 0:
        del data[key]
    elif choice == 1:
        data[key] = None
    elif choice == 2:
        data[key] = "garbage"
    elif choice == 3:
        data[key] = [1, 2, 3]
    else:
        data[key] = -5
    return data


def test_damaged_snapshots_raise_malformed_record_or_load_consistently():
    game = Game.from_seed(Rules(), "ABCD", 2)
    rng = random.Random(0)
    for _ in range(30):
        game.apply(*random_step(game, rng))
    snap = to_snapshot(game)
    for _ in range(400):
        data = _damage(snap, rng)
        try:
            restored = from_snapshot(data)
        except MalformedRecord:
            continue
        # what loads must still be a playable game
        restored.legal_by_seat()
    # a card duplicated between two hands
    data = copy.deepcopy(snap)
    data["hands"][1].append(data["hands"][0][0])
    with pytest.raises(MalformedRecord):
        from_snapshot(data)
    with pytest.raises(MalformedRecord):
        from_snapshot({"format": "something else"})
    with pytest.raises(MalformedRecord):
        from_snapshot("not even a dict")


def test_next_game_of_a_series():
    rng = random.Random(8)
    game = Game.from_seed(Rules(), "ABC", 8)
    while game.result is None:
        game.apply(*random_step(game, rng))
    series = game.next_game()
    if game.result.draw:
        assert series.kind == "after_draw" and series.dealer == game.players[game.dealer]
    else:
        loser = game.result.loser
        assert series.kind == "after_loss"
        assert series.dealer == series.previous_loser == game.players[loser]
        nxt = Game.from_seed(Rules(), "ABC", 9, series)
        assert nxt.attacker == (loser + 1) % 3
        assert nxt.dealer == loser
