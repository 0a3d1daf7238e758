"""Lobbies opened at once in several groups (issue 33 item 8): every join is on the
lobby's own message within one group slot, and the start edits that same message.

Seen before: three games starting at once, a sprint lobby opened after the group's
/settings kept "1 player: Anna" after Boris had joined through the deep link, and the
start came as a second lobby message. Two ways led there:

- a lobby shown from what the service said a moment before: the admin's change in
  /settings re-shows the group's lobby with the state it read, and a join shown in the
  meantime was overwritten by that older state ("1 player" again);
- a new bot process (a restart, or a standby taking over) knew neither the lobbies'
  messages nor what the process before had not yet sent: a join's edit that the old
  process had queued was never made, and the next change of the lobby was posted as a
  second lobby message, the first one left as it was.

No time is asserted. A join counts from the moment the service stored it (a spy on
``GameService.join``); from then on at most one of the group's paced requests may start
before the lobby's edit that names him: the one already on its way."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bot.transport.outbox import Outbox
from bot.ui import callbacks as cb
from durak.service import GameInfo, GameService
from tests.fake_telegram import FakeTelegram, RateLimits
from tests.fake_telegram.fixtures import async_test
from tests.fake_telegram.models import Chat, Message, RequestRecord, User

from .harness import SCALE, durak_of, running_bot

PACED = {"sendmessage", "editmessagetext", "editmessagereplymarkup", "senddocument"}
HEAD = "Durak: a new game"


def paced(server: FakeTelegram, group: Chat) -> list[RequestRecord]:
    """The group's paced requests Telegram accepted, in the order they were answered."""
    return [
        r
        for r in server.requests()
        if r.method.lower() in PACED and r.status == 200 and r.params.get("chat_id") == group.id
    ]


@dataclass
class Group:
    chat: Chat
    creator: User
    joiners: list[User]
    rng: random.Random
    #: (joiner's name, how many of the group's paced requests were answered when the
    #: service stored his join)
    joins: list[tuple[str, int]] = field(default_factory=list)
    lobby: Message | None = None

    def joined(self) -> list[User]:
        return [u for u in self.joiners if any(name == u.first_name for name, _ in self.joins)]


def lobby_of(server: FakeTelegram, group: Group) -> Message | None:
    return next(
        (
            m
            for m in server.messages(group.chat, include_deleted=False)
            if m.from_bot and any(d.startswith("1j.") for d in m.callback_data)
        ),
        None,
    )


def spy_on_joins(service: GameService, groups: list[Group], server: FakeTelegram) -> None:
    """Note, for each join the service stores, how far the group's requests had got."""
    by_chat = {group.chat.id: group for group in groups}
    join = service.join

    async def joined(chat_id: int, user_id: int, name: str, thread_id: int = 0) -> GameInfo:
        info = await join(chat_id, user_id, name, thread_id)
        group = by_chat[chat_id]
        group.joins.append((name, len(paced(server, group.chat))))
        return info

    service.join = joined  # type: ignore[method-assign]


class HeldRead:
    """Holds a read of a group's open lobby (``GameService.lobby``), the one after
    ``skip`` more, once it has its answer, until the test lets it go: what the reader
    then shows is older than what happened meanwhile."""

    def __init__(self, service: GameService, chat: Chat, skip: int) -> None:
        self.read: Callable[..., Awaitable[GameInfo | None]] = service.lobby
        self.chat = chat
        self.skip = skip
        self.holding = asyncio.Event()
        self.go = asyncio.Event()
        service.lobby = self.lobby  # type: ignore[method-assign]

    async def lobby(self, chat_id: int, thread_id: int = 0) -> GameInfo | None:
        info = await self.read(chat_id, thread_id)
        if chat_id == self.chat.id and not self.holding.is_set():
            if self.skip == 0:
                self.holding.set()
                await self.go.wait()
            self.skip -= 1
        return info


async def open_lobby(server: FakeTelegram, group: Group, after_settings: bool) -> Message:
    creator, chat = group.creator, group.chat
    if after_settings:  # the admin's menu first: the game chosen there (two taps)
        await creator.send(chat, "/settings")
        menu = await server.wait_for_bot_message(chat, contains="Settings", timeout=10)
        await (await creator.press(menu, cb.setting("gm"))).wait(10)
        sprint = cb.setting("gsp")
        await server.wait_for(lambda: sprint in menu.callback_data, 10, what="the game list")
        await (await creator.press(menu, sprint)).wait(10)
        await server.wait_for(lambda: cb.setting("tt") in menu.callback_data, 10, what="menu")
    await creator.send(chat, "/newgame")
    lobby = await server.wait_for(lambda: lobby_of(server, group), 10, what="a lobby")
    group.lobby = lobby
    return lobby


async def join(server: FakeTelegram, group: Group, user: User) -> None:
    """Join by the lobby's button; who never opened the bot's chat is sent there by a
    deep link, and its Start joins him."""
    lobby = lobby_of(server, group) or group.lobby
    assert lobby is not None
    await asyncio.sleep(group.rng.random() * 0.1)
    data = next(d for d in lobby.callback_data if d.startswith("1j."))
    answer = await (await user.press(lobby, data)).wait(10)
    if answer.url:
        assert not user.started and "?start=j" in answer.url
        await asyncio.sleep(group.rng.random() * 0.05)
        await user.start_bot(answer.url.split("?start=")[1])
    else:
        assert user.started, answer
    await server.wait_for(
        lambda: any(name == user.first_name for name, _ in group.joins), 10, what="the join"
    )


async def change_a_setting_during_a_join(
    server: FakeTelegram, service: GameService, group: Group, joiner: User
) -> None:
    """The admin changes the turn time in the open menu (the lobby is shown again, with
    the rule) while ``joiner`` joins: the menu's read of the lobby is answered before
    the join and shown after the join's own edit."""
    menu = next(m for m in server.messages(group.chat) if "Settings" in (m.plain_text or ""))
    await (await group.creator.press(menu, cb.setting("tt"))).wait(10)
    value = cb.setting("tt", 5)  # 15 s
    await server.wait_for(lambda: value in menu.callback_data, 10, what="the turn times")
    # the change reads the lobby twice: whether the new rules seat its players, then
    # to show it again; the second read is answered, then held
    held = HeldRead(service, group.chat, skip=1)
    choice = asyncio.ensure_future((await group.creator.press(menu, value)).wait(10))
    try:
        await asyncio.wait_for(held.holding.wait(), 10)
        await join(server, group, joiner)
        assert group.lobby is not None
        lobby = group.lobby
        await server.wait_for(
            lambda: joiner.first_name in (lobby.plain_text or ""), 10, what="the join's edit"
        )
    finally:
        held.go.set()  # never a handler left waiting
        service.lobby = held.read  # type: ignore[method-assign]
    await choice


def lobby_messages(server: FakeTelegram, group: Group) -> list[tuple[int, bool, str]]:
    """(id, deleted, the first lines) of each of the group's lobby messages."""
    return [
        (m.message_id, m.deleted, " | ".join((m.plain_text or "").split("\n")[1:3]))
        for m in server.messages(group.chat)
        if m.from_bot and HEAD in (m.text or "")
    ]


async def everyone_shown(server: FakeTelegram, groups: list[Group], outbox: Outbox) -> None:
    """Each group's lobby message (the first, the only one) lists everyone who joined,
    and still does once the bot has sent all it had queued. (A join counts when the
    service stored it; the handler shows it a moment later: on a busy machine the outbox
    may be idle in between, so the names are first waited for, 10 s at the most.)"""
    for group in groups:
        lobby = group.lobby
        assert lobby is not None
        with contextlib.suppress(TimeoutError):
            await server.wait_for(
                lambda lobby=lobby, group=group: all(
                    u.first_name in (lobby.plain_text or "") for u in group.joined()
                ),
                10,
            )
    await outbox.idle(10)
    for group in groups:
        lobby = group.lobby
        assert lobby is not None
        missing = [u.first_name for u in group.joined() if u.first_name not in lobby.plain_text]
        assert not missing, (
            f"{group.chat.title}'s lobby forgot {missing}: {lobby.plain_text!r}; the group's"
            f" lobby messages: {lobby_messages(server, group)}"
        )


@async_test
async def test_lobbies_opened_at_once_show_every_join_and_start_in_place(
    make_fake_telegram, tmp_path, errors
):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    groups = []
    for g in range(3):
        creator = server.add_user(f"Anna{g}", started=True)
        # some join through the deep link (they never opened the bot's chat), some by
        # the button
        joiners = [
            server.add_user(f"Boris{g}", started=g == 2),
            server.add_user(f"Clara{g}", started=g != 1),
            server.add_user(f"Dmitri{g}", started=g == 0),
        ]
        chat = server.add_group(f"Group {g}", [creator, *joiners], admins=[creator])
        groups.append(Group(chat, creator, joiners, random.Random(g)))
    first, second, third = groups
    db = tmp_path / "durak.sqlite3"
    async with running_bot(server, db) as app:
        service = durak_of(app).service
        spy_on_joins(service, groups, server)
        # three lobbies at once, the first after its group's /settings
        await asyncio.gather(*(open_lobby(server, g, g is first) for g in groups))
        await asyncio.gather(
            change_a_setting_during_a_join(server, service, first, first.joiners[0]),
            join(server, second, second.joiners[0]),
            join(server, third, third.joiners[0]),
        )
        await everyone_shown(server, groups, durak_of(app).outbox)
        await asyncio.gather(*(join(server, g, g.joiners[1]) for g in groups))
    # a new process (a restart; a standby taking over is the same): the lobbies go on
    async with running_bot(server, db) as app:
        spy_on_joins(durak_of(app).service, groups, server)
        await asyncio.gather(*(join(server, g, g.joiners[2]) for g in groups))
        await everyone_shown(server, groups, durak_of(app).outbox)
        starts = []
        for group in groups:  # the three games start at once
            lobby = lobby_of(server, group)
            assert lobby is not None
            data = next(d for d in lobby.callback_data if d.startswith("1s."))
            starts.append(await group.creator.press(lobby, data))
        await asyncio.gather(*(press.wait(10) for press in starts))
        await durak_of(app).outbox.idle(10)

    for group in groups:
        lobby = group.lobby
        assert lobby is not None
        lobbies = [m for m in server.messages(group.chat) if m.from_bot and HEAD in (m.text or "")]
        assert [m.message_id for m in lobbies] == [lobby.message_id], (
            f"{group.chat.title}: a second lobby message: "
            + repr([(m.message_id, (m.plain_text or "").split("\n")[1:3]) for m in lobbies])
        )
        requests = paced(server, group.chat)
        for name, before in group.joins:
            shown = next(
                k
                for k, r in enumerate(requests)
                if k >= before and name in str(r.params.get("text"))
            )
            assert requests[shown].params.get("message_id") in (None, lobby.message_id)
            assert shown - before <= 1, (
                f"{shown - before} requests of {group.chat.title} went before {name}'s join"
            )
        text = lobby.plain_text or ""
        assert "The game started" in text, text
        assert all(u.first_name in text for u in group.joiners), text
        assert "Sprint" in text if group is first else "Sprint" not in text
    assert not errors.records, [r.getMessage() for r in errors.records]
