"""A flood of commands must not starve the table (issue 10, item 8)."""

from __future__ import annotations

import asyncio

from bot.screens.presenter import PRIORITY_GROUP
from bot.transport.outbox import Outbox, SendLimits
from tests.fake_telegram.fixtures import async_test

from .harness import durak_of, friends_and_admin, running_bot
from .test_outbox import MemoryBot


@async_test
async def test_the_table_goes_before_command_replies_queued_ahead_of_it():
    bot = MemoryBot()
    outbox = Outbox(bot, SendLimits(group_interval=0.001, global_per_second=1e5))  # type: ignore[arg-type]
    group = -100
    for n in range(40):
        outbox.send(group, f"help {n}", priority=1)  # what FlowContext.reply queues
    outbox.show(group, "table:1", "the table", priority=PRIORITY_GROUP)
    outbox.send(group, "🏁 the end", priority=PRIORITY_GROUP)
    await outbox.start()
    await outbox.idle(10)
    await outbox.stop()
    order = [text for _, text in bot.sends]
    assert order[:2] == ["the table", "🏁 the end"]  # the table first, its own in order
    assert order[2:] == [f"help {n}" for n in range(40)]  # the replies keep their order


@async_test
async def test_a_members_repeated_command_is_answered_once_a_minute(
    make_fake_telegram, tmp_path, errors
):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=2)
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        for _ in range(5):
            await users[0].send(group, "/help")
        await users[1].send(group, "/help")  # another member: his own answer
        await users[0].send(group, "/rules")  # another command: its own answer
        await server.wait_until_delivered(10)
        await asyncio.sleep(0.2)
        await durak_of(app).outbox.idle(10)
        texts = [m.plain_text or "" for m in server.messages(group) if m.sender.is_bot]
        assert sum("/newgame" in t for t in texts) == 2
        assert sum("Deck:" in t for t in texts) == 1
        handlers = durak_of(app).flows
        assert handlers is not None
        handlers.repeat_window = 0  # a minute later: answered again
        await users[0].send(group, "/help")
        await server.wait_for(
            lambda: (
                sum(
                    "/newgame" in (m.plain_text or "")
                    for m in server.messages(group)
                    if m.sender.is_bot
                )
                == 3
            ),
            10,
            what="the third answer",
        )
    assert not errors.records, [r.getMessage() for r in errors.records]
