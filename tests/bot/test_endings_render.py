"""What the group reads when the clock covers or beats for a player, and when a
game ends by ``no_progress_draw`` (issue 27 item 6)."""

from __future__ import annotations

from bot.ui import render
from bot.ui.i18n import language
from durak import Game, Rules
from durak.service import Seat
from durak.view import Outcome


def test_the_clock_covering_or_beating_is_said_so():
    seats = tuple(Seat(s, 100 + s, n) for s, n in enumerate(("Anna", "Boris")))
    game = Game.from_seed(Rules(), ("Anna", "Boris"), 1)
    table = render.Table(1, 1, "x", seats, game.view(None), timeouts=((1, "defend"),))
    assert render.timeout_line(table) == (
        "⌛ Boris ran out of time: covered with the cheapest card that beats"
    )
    beat = render.Table(1, 1, "x", seats, game.view(None), timeouts=((0, "beat"),))
    assert "Anna ran out of time: beaten with the cheapest card that beats" in render.timeout_line(
        beat
    )


def test_a_game_without_progress_ends_as_a_draw_the_group_can_read():
    seats = tuple(Seat(s, 100 + s, n) for s, n in enumerate(("Anna", "Boris", "Clara")))
    draw = Outcome((), True)
    assert render.outcome_line(seats, draw, None, "no_progress") == (
        "100 takes in a row changed nothing: a draw."
    )
    with language("ru"):
        assert "100 взятий подряд" in render.outcome_line(seats, draw, None, "no_progress")
