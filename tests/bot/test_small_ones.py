"""The small ones of issue 10 (item 11), each through the real bot or the part at fault."""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace

import pytest

from bot.app import DurakBot
from bot.seats.timers import TurnTimers
from bot.transport.outbox import Outbox, SendLimits
from bot.ui import callbacks as cb
from durak.service import FINISHED, GameInfo, GameService
from tests.fake_telegram.fixtures import async_test
from tests.fake_telegram.models import Message
from tests.service.helpers import started

from .harness import Table, durak_of, friends_and_admin, running_bot
from .test_outbox import MemoryBot


@async_test
async def test_start_with_non_ascii_digits_is_the_help(make_fake_telegram, tmp_path, errors):
    server, users, _boss, _group = await friends_and_admin(make_fake_telegram, players=1)
    async with running_bot(server, tmp_path / "db.sqlite3"):
        chat = server.private_chat(users[0])
        await users[0].send(chat, "/start j²")
        await server.wait_for_bot_message(chat, contains="/newgame", timeout=10)
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_cancel_announces_once_and_the_cancelled_game_has_no_next(
    make_fake_telegram, tmp_path, errors
):
    server, users, boss, group = await friends_and_admin(make_fake_telegram, players=2)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        table = Table(server, group, users, random.Random(1))
        await table.open_lobby()
        await table.join_all()
        await table.start()
        game_id = (await bot.service.running_games())[0].game_id
        before = group.next_message_id - 1
        await boss.send(group, "/cancel")  # asked in private first
        ask = await server.wait_for(
            lambda: next(
                (
                    m
                    for m in server.messages(server.private_chat(boss))
                    if any(d.startswith("1w.") for d in m.callback_data)
                ),
                None,
            ),
            10,
            what="the question",
        )
        yes = next(d for d in ask.callback_data if d.endswith(".y"))
        await table.press(boss, ask, yes)
        end = await server.wait_for_bot_message(group, after=before, contains="cancelled")
        await bot.outbox.idle(10)
        said = [
            m
            for m in table.bot_messages(group)
            if (m.plain_text or "").startswith(("🏁", "🛑"))  # announcements, not the table
        ]
        assert len(said) == 1, [m.plain_text for m in said]
        assert not any(b.callback_data and b.callback_data[1] == "r" for b in end.buttons)
        # a Play again from an older message: the game is over, nobody is refused as such
        answer = await table.press(users[0], end, cb.lobby("r", game_id), check=False)
        assert answer == "The game is over."
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_settings_done_closes_the_menu(make_fake_telegram, tmp_path, errors):
    server, users, boss, group = await friends_and_admin(make_fake_telegram, players=2)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        table = Table(server, group, users, random.Random(1))
        await boss.send(group, "/settings")
        menu = await server.wait_for_bot_message(group, contains="", timeout=10)
        await server.wait_for(lambda: bool(server.message(group, menu.message_id).buttons), 10)
        assert await table.press(boss, menu, cb.setting("x")) == "Saved."
        await durak_of(app).outbox.idle(10)
        await server.wait_for(
            lambda: not server.message(group, menu.message_id).buttons, 10, what="a closed menu"
        )
        assert durak_of(app).outbox.message_id(group.id, "settings") is None
    assert not errors.records, [r.getMessage() for r in errors.records]


async def dealt_with_a_tap(table: Table, bot: DurakBot) -> tuple[GameInfo, Message, str]:
    """Lobby, everyone in, dealt and shown: the game, the opener's panel and the callback
    data of its first card."""
    await table.open_lobby()
    await table.join_all()
    await table.start()
    info = (await bot.service.running_games())[0]
    assert info.game is not None
    await bot.outbox.idle(10)
    panel = table.panel(table.users[info.game.attacker])
    assert panel is not None
    tap = next(d for d in panel.callback_data if ".c" in d)
    return info, panel, tap


@async_test
async def test_take_on_a_panel_left_behind_refreshes_it(make_fake_telegram, tmp_path, errors):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=2)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        table = Table(server, group, users, random.Random(4))
        info, panel, tap = await dealt_with_a_tap(table, bot)
        opener, defender = users[info.game.attacker], users[info.game.defender]
        assert await table.press(opener, panel, tap) == ""

        def take_button() -> str | None:
            p = table.panel(defender)
            found = [b.callback_data for b in (p.buttons if p else []) if "Take" in b.text]
            return found[0] if found else None

        await server.wait_for(lambda: take_button() is not None, 10, what="a Take button")
        take, panel = take_button(), table.panel(defender)
        assert take is not None and panel is not None
        assert await table.press(defender, panel, take) == ""
        again = await table.press(defender, panel, take, check=False)
        assert again == "The table changed; look again."
        # and once the panel's edit has landed, a Take that crossed it is told the same
        # (Telegram's callback query carries the message as it is now, without Take)
        await server.wait_for(lambda: take_button() is None, 10, what="the Take edited away")
        crossed = await table.press(defender, panel, take, check=False)
        assert crossed == "The table changed; look again."
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_a_card_pressed_again_on_a_panel_left_behind_is_told_the_table_changed(
    make_fake_telegram, tmp_path, errors
):
    """The card he has just played, pressed again on his panel before it shows the play
    (or on the panel as it was before an edit), is "the table changed", not "you do not
    hold that card": it lies on the table, so no panel of now offers it."""
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=2)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        table = Table(server, group, users, random.Random(5))
        info, panel, tap = await dealt_with_a_tap(table, bot)
        opener = users[info.game.attacker]
        assert await table.press(opener, panel, tap) == ""
        again = await table.press(opener, panel, tap, check=False)
        assert again == "The table changed; look again."
        await server.wait_for(
            lambda: tap not in table.panel(opener).callback_data, 10, what="the card edited away"
        )
        crossed = await table.press(opener, panel, tap, check=False)
        assert crossed == "The table changed; look again."
        assert (await bot.service.game(info.game_id)).version == info.version + 1  # played once
    assert not errors.records, [r.getMessage() for r in errors.records]


@pytest.mark.long
@async_test
async def test_ten_thousand_finished_games_leave_nothing_behind(tmp_path):
    """The outbox's ids and chats and the clocks' state do not grow with finished games."""
    bot = MemoryBot()
    limits = SendLimits(group_interval=0, private_interval=0, global_per_second=1e7, period=0.01)
    outbox = Outbox(bot, limits)  # type: ignore[arg-type]
    await outbox.start()
    service = await GameService.open(tmp_path / "db.sqlite3")
    info = await started(service, 2)

    async def nothing(*_: object) -> None:
        return None

    timers = TurnTimers(service, nothing, nothing)
    sizes = []
    try:
        for n in range(10_000):
            group, users = -1000 - n, (10 * n + 1, 10 * n + 2)
            outbox.show(group, f"table:{n}", "the table")
            for user in users:
                outbox.show(user, f"panel:{n}", "your cards")
            if n % 2:  # half of them still queued when released
                await outbox.idle(10)
            outbox.release(group, f"table:{n}")
            for user in users:
                outbox.release(user, f"panel:{n}")
            await timers.arm(replace(info, game_id=10_000 + n))
            await timers.arm(replace(info, game_id=10_000 + n, status=FINISHED, version=99))
            if n % 1000 == 999:
                await outbox.idle(10)
                await asyncio.sleep(0.02)  # a period: idle chats are pruned
                sizes.append(
                    (
                        len(outbox._ids),
                        len(outbox._releasing),
                        len(outbox._chats),
                        len(timers._armed),
                        len(timers._tasks),
                        len(timers._deadlines),
                    )
                )
    finally:
        await timers.close()
        await outbox.stop()
        await service.close()
    assert sizes[-1] == sizes[0] and max(max(s) for s in sizes) <= 3, sizes
