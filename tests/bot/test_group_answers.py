"""A person is answered within one group slot while games run (issue 27 items 3
and 5): the group's 20 sends+edits a minute are shared by its tables, and a
command's reply or the lobby someone has just joined used to queue behind them
(``/rules`` answered 5-58 s later, a lobby showing "1 player" 20 s after a join).
Now an answer goes before the tables; the table edit it displaces waits one slot.

No time is asserted: what is counted is how many of the group's paced requests
(sends and edits) start between the moment the bot queues the answer and the answer.
At most one can: the request already on its way then (a slot is not taken back).
Counting from the person's message instead would count the bot's own handling too,
which a busy machine stretches over several slots (issue 33 item 6)."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any

from bot.transport.outbox import Outbox
from durak.service import GameService
from tests.fake_telegram import FakeTelegram, RateLimits
from tests.fake_telegram.fixtures import async_test
from tests.fake_telegram.models import Chat

from .harness import SCALE, Table, durak_of, running_bot

PACED = {"sendmessage", "editmessagetext", "editmessagereplymarkup", "senddocument"}


def group_requests(server: FakeTelegram, group: Chat, since: float = float("-inf")) -> list:
    return [
        r
        for r in server.requests()
        if r.method.lower() in PACED and r.params.get("chat_id") == group.id and r.at >= since
    ]


@dataclass
class Queued:
    """The group's answers as the bot queues them (a spy on the outbox): for each, how
    many of the group's paced requests had been answered then, and whether a table of
    the group was waiting for its slot too (then the answer had to go before it)."""

    server: FakeTelegram
    group: Chat
    outbox: Outbox
    service: GameService
    tables: list[str] = field(default_factory=list)  # the group's table places, as last read
    marks: list[tuple[str, int, bool]] = field(default_factory=list)

    def watch(self) -> None:
        send, show = self.outbox.send, self.outbox.show

        def sent(chat_id: int, text: str, *args: Any, **kwargs: Any) -> None:
            self._mark(chat_id, text)
            send(chat_id, text, *args, **kwargs)

        def shown(chat_id: int, place: str, text: str, *args: Any, **kwargs: Any) -> None:
            if place.startswith("lobby:"):
                self._mark(chat_id, text)
            show(chat_id, place, text, *args, **kwargs)

        self.outbox.send = sent  # type: ignore[method-assign]
        self.outbox.show = shown  # type: ignore[method-assign]

    def _mark(self, chat_id: int, text: str) -> None:
        if chat_id == self.group.id:
            waiting = any(self.outbox.pending(chat_id, t) for t in self.tables)
            self.marks.append((text, len(group_requests(self.server, self.group)), waiting))

    def before(self, contains: str) -> tuple[int, bool]:
        """The group's paced requests that started after the bot queued the newest
        answer holding ``contains`` and before that answer went; whether a table waited."""
        _text, mark, waiting = next(m for m in reversed(self.marks) if contains in m[0])
        for count, r in enumerate(group_requests(self.server, self.group)[mark:]):
            if contains in str(r.params.get("text")):
                return count, waiting
        raise AssertionError(f"no answer holding {contains!r}")

    async def when_a_table_waits(self) -> None:
        """Until a table of the group waits for its slot (the players keep moving). The
        places are read again meanwhile: a sprint's next deal is a game of its own."""
        async with asyncio.timeout(30):
            while True:
                running = await self.service.running_games()
                self.tables = [f"table:{i.game_id}" for i in running if i.chat_id == self.group.id]
                assert self.tables, "every game of the group ended before the question"
                if any(self.outbox.pending(self.group.id, t) for t in self.tables):
                    return
                await asyncio.sleep(0.001)


async def keep_playing(tables: list[Table]) -> tuple[asyncio.Event, list[asyncio.Task]]:
    stop = asyncio.Event()
    tasks = [
        asyncio.create_task(t.play(u, stop, max_presses=100_000)) for t in tables for u in t.users
    ]
    return stop, tasks


async def stop_playing(stop: asyncio.Event, tasks: list[asyncio.Task]) -> None:
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)


@async_test
async def test_a_lobby_and_a_command_beside_four_running_games(make_fake_telegram, tmp_path):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Player{i}", started=True) for i in range(10)]
    group = server.add_group("Forum", users, admins=[users[0]])
    topics = [server.add_topic(group, f"Durak {k}") for k in range(5)]
    games = [
        Table(server, group, users[2 * k : 2 * k + 2], random.Random(k), topic=topics[k])
        for k in range(4)
    ]
    lobby_table = Table(server, group, users[8:], random.Random(9), topic=topics[4])
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        bot = durak_of(app)
        await bot.service.set_chat_settings(group.id, sprint=True)
        for table in games:
            await table.open_lobby()
            await table.join_all()
            await table.start()
        queued = Queued(server, group, bot.outbox, bot.service)
        queued.watch()
        stop, tasks = await keep_playing(games)
        try:
            await lobby_table.open_lobby()
            # the second player joins the sprint lobby while a table waits for its slot
            lobby = lobby_table.lobby()
            assert lobby is not None and "1 player" in (lobby.plain_text or "")
            joiner = users[9]
            join = next(b for b in lobby.buttons if (b.callback_data or "")[1:2] == "j")
            await queued.when_a_table_waits()
            await (await joiner.press(lobby, join.callback_data or "")).wait(10)
            await server.wait_for(
                lambda: "Player9" in (server.message(group, lobby.message_id).plain_text or ""),
                10,
                what="the joiner in the lobby",
            )
            joined = queued.before("Player9")
            # a command asked meanwhile, in a running game's topic
            await queued.when_a_table_waits()
            await users[0].send(group, "/rules", topic=topics[0])
            await server.wait_for_bot_message(group, contains="Rules in force")
            replied = queued.before("Rules in force")
        finally:
            await stop_playing(stop, tasks)
    assert joined[0] <= 1, f"{joined[0]} group requests went before the lobby's edit"
    assert replied[0] <= 1, f"{replied[0]} group requests went before the reply to /rules"
    assert joined[1] or replied[1], "no table waited when an answer was queued"
    assert server.limit_violations() == 0


@async_test
async def test_rules_during_a_four_player_game(make_fake_telegram, tmp_path):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Player{i}", started=True) for i in range(4)]
    group = server.add_group("Friends", users, admins=[users[0]])
    table = Table(server, group, users, random.Random(4))
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        bot = durak_of(app)
        await bot.service.set_chat_settings(group.id, deck=52)  # a longer game
        await table.open_lobby()
        await table.join_all()
        await table.start()
        queued = Queued(server, group, bot.outbox, bot.service)
        queued.watch()
        stop, tasks = await keep_playing([table])
        counts = []
        try:
            for k in range(3):  # three members ask while the table keeps moving
                await queued.when_a_table_waits()
                if table.ended() is not None:
                    break
                answers = len(server.texts_ever_shown(group))
                await users[k].send(group, "/rules")
                await server.wait_for(
                    lambda since=answers: any(
                        "Rules in force" in text for text in server.texts_ever_shown(group)[since:]
                    ),
                    10,
                    what="the answer",
                )
                counts.append(queued.before("Rules in force"))
            assert table.ended() is None or counts, "the game ended before anyone asked"
        finally:
            await stop_playing(stop, tasks)
    assert counts and all(c <= 1 for c, _waited in counts), counts
    assert any(waited for _c, waited in counts), "no table waited when an answer was queued"
    assert server.limit_violations() == 0
