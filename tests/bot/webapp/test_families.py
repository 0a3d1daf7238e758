"""The page's state for every game family and variant, played out at random: each
seat's WebSocket frame names no card that seat may not see (the public frame's cards,
his own hand and, in blind, his opponent's: his own face-down cards not even to him), what it
offers is exactly his legal moves, and the family's own fields are there (the pile,
Take's cost, own trumps' suits, blind's slots, English's and the sprint's lines)."""

from __future__ import annotations

import json
import random
import re

import pytest

from bot.ui import events, render
from bot.webapp import protocol
from durak.rules import Rules
from durak.selfplay import new_game, random_step
from durak.service import Seat

from .client import offered

#: One rule set per family and per variant that changes what the table shows.
RULE_SETS: dict[str, tuple[dict[str, object], int]] = {
    "podkidnoy": ({}, 4),
    "transfer": ({"transfer": True, "transfer_by_showing_trump": True}, 3),
    "trump_exchange": ({"trump_exchange": True}, 3),
    "teams": ({"teams": True}, 4),
    "attack_loser": ({"attack_loser": True, "deck": 52}, 6),
    "trump_change": ({"trump_change": True}, 3),
    "sprint": ({"sprint": True}, 3),
    "blind": ({"blind": True}, 2),
    "partial_defence": ({"partial_defence": True}, 3),
    "english": ({"english": True}, 2),
    "return_last_card": ({"return_last_card": True}, 2),
    "damka": ({"damka": True}, 3),
    "japanese": ({"japanese": "S"}, 3),
    "show_last_discard": ({"show_last_discard": True}, 4),
    "own_trumps": ({"game": "own_trumps"}, 3),
    "piled": ({"game": "piled"}, 3),
    "road": ({"game": "road"}, 4),
}

SUITS = {"♠": "S", "♥": "H", "♦": "D", "♣": "C"}
#: A card as the frame may write it: a record's "7H" in a field, or "7♥" in a line.
CARD = re.compile(r"(?<![0-9A-Z])(10|[2-9JQKA])([SHDC♠♥♦♣])(?![a-z])")


def cards_in(frame: str) -> set[str]:
    return {rank + SUITS.get(suit, suit) for rank, suit in CARD.findall(frame)}


def assert_offers_the_panels_moves(view, state: dict) -> None:
    """The page is offered every legal move the panel offers, and nothing else: a card's
    single-card moves on that card (its covers name their attack card), the buttons'
    moves as buttons, openings of several cards for the picker while the table is empty;
    a card that cannot open alone (English) offers the pairs it is in."""
    legal = [a.step() for a in view.legal]
    offer = state["offer"]
    steps = offered(state)
    assert all(step in legal for step in steps), [s for s in steps if s not in legal]
    for entry in offer["cards"].values():  # a card offers each of its moves once
        assert len(entry["options"]) == len({json.dumps(o["step"]) for o in entry["options"]})
    singles = any(a.get("do") == "attack" and len(a["cards"]) == 1 for a in legal)
    for step in legal:
        do = step["do"]
        if do in ("defend", "transfer", "lead", "beat") or (
            do == "attack" and len(step["cards"]) == 1
        ):
            card = step["card"] if do != "attack" else step["cards"][0]
            options = offer["cards"][card]["options"]
            assert step in [o["step"] for o in options], (step, options)
            if do == "defend":  # the page lights the attack card it covers
                assert next(o for o in options if o["step"] == step)["covers"] == step["attack"]
        elif do == "attack":
            if not view.table:
                assert step in [o["step"] for o in offer["openings"]], step
            if len(step["cards"]) == 2 and not singles:  # English: each card offers its pairs
                for card in step["cards"]:
                    entry = offer["cards"][card]
                    assert entry["ask"], entry
                    assert step in [o["step"] for o in entry["options"]]
        else:
            assert step in [a["step"] for a in offer["actions"]], step
    for card, entry in offer["cards"].items():
        assert card in {str(c) for c in view.hand}
        assert entry["ask"] == (
            len(entry["options"]) > 1 or len(entry["options"][0]["step"].get("cards", ())) > 1
        )


def table(game, seats: tuple[Seat, ...]) -> render.Table:
    public = game.view(None)
    return render.Table(7, public.moves, "Friends", seats, public, story=events.story(7, game))


def frame(game, seat: int | None, seats: tuple[Seat, ...]) -> tuple[str, dict]:
    message = protocol.state(protocol.for_seat(table(game, seats), game.view(seat)), "en")
    return protocol.dumps(message), message["state"]


@pytest.mark.parametrize("name", RULE_SETS)
def test_every_frame_of_a_random_game(name: str) -> None:
    options, players = RULE_SETS[name]
    rules = Rules(**options)  # type: ignore[arg-type]
    rng = random.Random(name)
    seen_fields: set[str] = set()
    for _deal in range(2):
        game = new_game(rules, players, rng.randrange(2**31))
        seats = tuple(Seat(i, 100 + i, game.players[i]) for i in range(players))
        for _step in range(400):
            public_text, public = frame(game, None, seats)
            assert public["hand"] == [] and offered(public) == []
            shown = cards_in(public_text)
            for seat in range(players):
                text, state = frame(game, seat, seats)
                json.loads(text)  # one well-formed message
                view = game.view(seat)
                own = {str(c) for c in view.hand}
                # blind: he sees his opponent's hand, not his own (VARIANTS.md 3.2), but
                # the slots of the cards he took, which the view shows him
                own |= {str(c) for _s, cs in getattr(view, "shown_hands", ()) for c in cs}
                own |= {str(c) for c in getattr(view, "slots", None) or () if c is not None}
                stray = cards_in(text) - shown - own
                assert not stray, f"{name}: seat {seat} is shown {stray}, not his to see"
                assert_offers_the_panels_moves(view, state)
                assert state["you"] == seat
                seen_fields |= {k for k, v in state.items() if v not in (None, [], False)}
            if game.result is not None:
                break
            mover, action = random_step(game, rng)
            game.apply(mover, action)
    family = "pile" if rules.game != "podkidnoy" else "bout"
    expected = {"seats", "hand", "offer", "notes", "status"}
    if family == "pile":
        expected |= {"pile", "takeCost"}
    else:
        expected |= {"table", "trump"}
    if name == "blind":  # his cards are face-down slots, played by their number
        expected = expected - {"hand"} | {"slots", "slotsLive", "shownHands"}
    if name == "show_last_discard":
        expected |= {"lastDiscard"}
    assert expected <= seen_fields, f"{name}: never shown {expected - seen_fields}"


def test_own_trumps_names_each_seats_suit() -> None:
    game = new_game(Rules(game="own_trumps"), 3, 5)
    seats = tuple(Seat(i, 100 + i, game.players[i]) for i in range(3))
    rng = random.Random(5)
    for _ in range(200):  # the suits are known once chosen
        _text, state = frame(game, 0, seats)
        if all(s.get("suit") for s in state["seats"]):
            break
        mover, action = random_step(game, rng)
        game.apply(mover, action)
    assert all(s.get("suit") in ("S", "H", "D", "C") for s in state["seats"]), state["seats"]


def test_a_sprint_and_english_say_their_lines() -> None:
    game = new_game(Rules(sprint=True), 2, 3)
    seats = tuple(Seat(i, 100 + i, game.players[i]) for i in range(2))
    _text, state = frame(game, 0, seats)
    assert "deal 1" in " ".join(state["notes"]).lower(), state["notes"]
    # English: whenever the panel says who leads (nobody had a pair), the page does too
    said = 0
    for seed in range(40):
        game = new_game(Rules(english=True), 2, seed)
        rng = random.Random(seed)
        while game.result is None:
            said_there = [x for x in render.table_text(table(game, seats)).split("\n")]
            line = next((x for x in said_there if "pair" in x.lower()), "")
            if line:
                said += 1
                assert line in frame(game, 0, seats)[1]["notes"]
            mover, action = random_step(game, rng)
            game.apply(mover, action)
    assert said, "no English game of 40 had a lead without a pair"


def test_the_pages_lines_are_plain_text_with_names_as_written() -> None:
    """The page sets its lines as text: a name with HTML's characters in it reads as the
    player wrote it there (the group's message escapes it)."""
    game = new_game(Rules(), 2, 4)
    names = ("Bob <b>&amp;</b>", "Eve & Mallory")
    seats = tuple(Seat(i, 100 + i, names[i]) for i in range(2))
    _text, state = frame(game, 0, seats)
    said = " ".join([state["status"], *state["notes"]])
    assert any(name in said for name in names), said
    assert "&lt;" not in said and "&amp;amp;" not in said
    group = render.table_text(table(game, seats))
    assert "Bob &lt;b&gt;&amp;amp;&lt;/b&gt;" in group or "Eve &amp; Mallory" in group


def test_road_says_its_discard_once() -> None:
    """The page draws road's discard count; its lines do not say it again."""
    game = new_game(Rules(game="road"), 3, 2)
    seats = tuple(Seat(i, 100 + i, game.players[i]) for i in range(3))
    _text, state = frame(game, 0, seats)
    assert state["discard"] is not None
    assert not [x for x in state["notes"] if "Discard" in x], state["notes"]
