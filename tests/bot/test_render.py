"""Rendering is pure: texts and keyboards from views, checked without Telegram."""

from __future__ import annotations

import random

from bot.ui import callbacks as cb
from bot.ui import keyboards, render
from durak import Game, Pass, Rules
from durak.selfplay import random_step
from durak.service import Seat

from .textcards import cards_in


def seats(n: int) -> tuple[Seat, ...]:
    return tuple(Seat(i, 100 + i, f"P<{i}>") for i in range(n))


def positions(count: int = 40):
    """Games at many moments, all options mixed."""
    rng = random.Random(5)
    for i in range(count):
        rules = Rules(
            transfer=i % 2 == 0, transfer_by_showing_trump=i % 4 == 0, trump_exchange=True
        )
        game = Game.from_seed(rules, [f"P<{s}>" for s in range(4)], i)
        for _ in range(rng.randrange(0, 120)):
            if game.result is not None:
                break
            game.apply(*random_step(game, rng))
        yield game


def test_the_public_table_shows_no_card_from_a_hand():
    for game in positions():
        t = render.Table(1, 5, "Friends & co", seats(4), game.view(None))
        text = render.table_text(t)
        public = {str(a) for a, _ in t.view.table} | {str(c) for _, c in t.view.table if c}
        public |= {str(c) for c in (t.view.trump_card, t.view.opener_card) if c is not None}
        assert cards_in(text) <= public
        assert "P&lt;0&gt;" in text and "<0>" not in text  # names are escaped
        assert "Friends &amp; co" in text


def test_a_panel_shows_its_own_hand_and_only_that():
    for game in positions():
        seat = random.Random(len(game.history)).randrange(4)
        view = game.view(seat)
        t = render.Table(1, 5, "Friends", seats(4), view)
        text = render.panel_text(t)
        table_cards = {str(a) for a, _ in view.table} | {str(c) for _, c in view.table if c}
        others = {str(c) for s in range(4) if s != seat for c in game.hand(s)}
        public = {str(c) for c in (view.trump_card, view.opener_card) if c is not None}
        shown = cards_in(text)
        assert {str(c) for c in view.hand} <= shown
        assert not (shown & (others - public - table_cards))


def test_panel_buttons_mark_playable_cards_and_offer_legal_actions():
    for game in positions(20):
        for seat in range(4):
            view = game.view(seat)
            markup = keyboards.panel(9, 3, view)
            buttons = [b for row in markup["inline_keyboard"] for b in row]
            can = keyboards.playable(view)
            for c in view.hand:
                tap = cb.move(9, None, cb.Tap(c))
                label = next(b["text"] for b in buttons if b["callback_data"] == tap)
                assert label == (render.card(c) if c in can else f"({render.card(c)})")
            for b in buttons:
                assert len(b["callback_data"].encode()) <= 64
                decoded = cb.decode(b["callback_data"])
                # only a pass is bound to the table seen (version 3); the rest is
                # checked when pressed, so a panel need not change with every move
                expected = 3 if isinstance(decoded.move, Pass) else None
                assert decoded.game_id == 9 and decoded.version == expected
                if not isinstance(decoded.move, cb.Tap | cb.Refresh | cb.Pick):
                    assert decoded.move in view.legal


def test_lobby_and_help_texts():
    text = render.lobby_text(seats(2), Rules(transfer=True), "P<0>")
    assert "2 players" in text and "transfer" in text and "P&lt;0&gt;" in text
    assert "/newgame" in render.help_text() and "/stats" in render.help_text()
    assert render.refusal("cannot_beat") != render.refusal("made_up_code")


def test_variant_actions_are_offered_exactly_when_legal():
    from durak import ExchangeTrump, ShowTrump, Transfer

    seen = set()
    rng = random.Random(12)
    rules = Rules(transfer=True, transfer_by_showing_trump=True, trump_exchange=True)
    for i in range(6):
        game = Game.from_seed(rules, ["A", "B", "C", "D"], 100 + i)
        while game.result is None:
            check_variant_buttons(game, seen)
            game.apply(*random_step(game, rng))
    assert seen == {ExchangeTrump, ShowTrump, Transfer}


def check_variant_buttons(game, seen):
    from durak import ExchangeTrump, ShowTrump, Transfer

    for seat in range(4):
        view = game.view(seat)
        datas = {
            b["callback_data"]
            for row in keyboards.panel(9, 3, view)["inline_keyboard"]
            for b in row
        }
        for action in view.legal:
            if isinstance(action, ExchangeTrump | ShowTrump):
                assert cb.move(9, None, action) in datas
                seen.add(type(action))
            if isinstance(action, Transfer):
                assert action in keyboards.card_actions(view, action.card)
                seen.add(Transfer)
        for data in datas:
            move = cb.decode(data).move
            if isinstance(move, ExchangeTrump | ShowTrump):
                assert move in view.legal
