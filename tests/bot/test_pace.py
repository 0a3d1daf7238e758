"""The group's table at a spectator's pace (bot/screens/pace.py), on a clock the test
moves: a bout's end is shown at most every 15 s, the start and a player going out always,
and a bout that ended too soon once the 15 s are up."""

from __future__ import annotations

import asyncio

from bot.screens.pace import TablePace
from tests.clock import ManualClock
from tests.fake_telegram.fixtures import async_test


@async_test
async def test_a_paced_table_is_edited_at_a_bouts_end_at_most_every_15_seconds():
    clock = ManualClock()
    again: list[int] = []

    async def show(game_id: int) -> None:
        again.append(game_id)

    pace = TablePace(show, clock)
    assert pace.edit(7, bout=1, out=0, paced=True)  # the start: always
    assert not pace.edit(7, bout=1, out=0, paced=True)  # a move within the bout
    assert pace.behind(7)
    await clock.forward(14.0)
    assert not pace.edit(7, bout=2, out=0, paced=True)  # the bout ended 14 s after: later
    assert not pace.edit(7, bout=3, out=0, paced=True)  # (one waiting edit, not two)
    await clock.forward(0.9)
    assert again == []
    await clock.forward(0.1)  # 15 s since the last edit: the game is shown again
    await asyncio.sleep(0)
    assert again == [7]
    assert pace.edit(7, bout=3, out=0, paced=True)  # ...and this time the table is edited
    assert not pace.behind(7)
    assert pace.edit(7, bout=3, out=1, paced=True)  # someone went out: always
    await clock.forward(15.0)
    assert not pace.edit(7, bout=3, out=1, paced=True)  # 15 s, but no bout ended
    assert pace.edit(7, bout=4, out=1, paced=True)  # a bout ended, 15 s after: at once
    await clock.forward(1.0)
    assert pace.edit(7, bout=4, out=1, paced=False)  # a page closed: every change again
    assert pace.edit(7, bout=4, out=1, paced=False)
    await pace.close()


@async_test
async def test_a_forgotten_game_is_not_shown_again():
    clock = ManualClock()
    again: list[int] = []

    async def show(game_id: int) -> None:
        again.append(game_id)

    pace = TablePace(show, clock)
    assert pace.edit(3, bout=1, out=0, paced=True)
    assert not pace.edit(3, bout=2, out=0, paced=True)
    pace.forget(3)  # the game ended (its end is shown by itself)
    await clock.forward(20.0)
    await asyncio.sleep(0)
    assert again == [] and not pace.behind(3)
    assert pace.edit(3, bout=1, out=0, paced=True)  # a game it does not know: its start
    await pace.close()
