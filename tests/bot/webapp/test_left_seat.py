"""Issue 36 item 6: a player who left or was kicked kept seeing the hand the AI plays for
his seat, on his open page and in his private panel. His result still counts; his view
does not: his page shows the table as a spectator sees it, his panel the group's table and
one line saying the AI plays his seat, and it is not edited for the AI's moves."""

from __future__ import annotations

import random

from tests.fake_telegram.fixtures import async_test

from ..harness import Table, durak_of
from .client import a_game, init_data, offered, page

LINE = "The AI plays your seat to the end"


@async_test
async def test_a_kicked_player_sees_the_table_as_a_spectator(make_fake_telegram, tmp_path, errors):
    async with a_game(make_fake_telegram, tmp_path, players=3) as g:
        service = durak_of(g.app).service
        boss, kicked = g.users[0], g.users[1]
        chat = g.server.private_chat(kicked)
        async with page(g.port, {"init": init_data(g.server, kicked)}) as p:
            mine = await p.state()
            assert mine["you"] == 1 and mine["hand"]  # his own cards while he plays
            said = await kicked.send(g.group, "hello")
            await boss.send(g.group, "/kick", reply_to=said)
            await g.server.wait_for_bot_message(g.group, contains="the AI plays his seat")
            assert (await service.game(g.game_id)).seats[1].left
            state = await p.state()
            while state["you"] is not None:  # states of moves made before the kick
                state = await p.state()
            assert state["hand"] == [] and offered(state) == []
            await p.send({"move": {"do": "take"}, "version": state["version"]})
            assert (await p.until("error"))["error"] == "not_in_game"
        # a page opened again: the public view (he played here: no question to Telegram)
        asked = g.server.request_count("getChatMember")
        async with page(g.port, {"init": init_data(g.server, kicked)}) as p:
            again = await p.state()
            assert again["you"] is None and again["hand"] == []
        assert g.server.request_count("getChatMember") == asked

        # his panel, brought up to date as his page closed: the table and the line
        def newest() -> str:
            mine = g.table.bot_messages(chat)
            return (mine[-1].plain_text or "") if mine else ""

        await g.server.wait_for(lambda: LINE in newest(), 10, what="his panel")
        told = len(chat.shown)
        rest = Table(g.server, g.group, [boss, g.users[2]], random.Random(5))
        await rest.play_to_the_end(timeout=120)
        await durak_of(g.app).outbox.idle(10)
        after = [s.plain_text or "" for s in chat.shown[told - 1 :]]
        assert len(after) <= 2, after  # the line, then at most the end
        assert not any("Your cards" in text for text in after), after
        final = await service.game(g.game_id)
        assert final.status == "finished"
        assert any(s.user_id == kicked.id for s in final.seats)  # his result counts
    assert not errors.records, [r.getMessage() for r in errors.records]
