"""Every step is visible, and a creator who never opened the bot gets his cards
(issue 11 items 5 and 9), end to end through the fake Bot API."""

from __future__ import annotations

import asyncio
import random
import re

from durak import game_from_record
from durak.actions import action_from_step
from tests.fake_telegram import FakeTelegram, RateLimits
from tests.fake_telegram.fixtures import FakeTelegramFactory, async_test
from tests.fake_telegram.models import Button, Chat, Message, User

from .harness import SCALE, Table, durak_of, running_bot
from .test_e2e import finished_game

TOOK = re.compile(r"↪ (Player\d) took (\d+) cards?")
BEATEN = re.compile(r"↪ Beaten off: (\d+) cards? to the discard")
TRANSFERRED = re.compile(r"(Player\d) transferred to (Player\d)")
OUT = re.compile(r"(Player\d(?:, Player\d)*) (?:is|are) out: no cards left")


def table_message(table: Table) -> Message:
    """The group's table: the message headed "🃏 Durak · <group>"."""
    for m in table.bot_messages(table.group):
        if (m.plain_text or "").startswith("🃏 Durak ·"):
            return m
    raise AssertionError("no table message")


def versions(message: Message) -> list[str]:
    return [v.plain_text or "" for v in message.history] + [message.plain_text or ""]


def transfers_first(user: User, buttons: list[Button]) -> Button | None:
    """A player who transfers whenever he can (so a game surely shows one)."""
    return next((b for b in buttons if b.text.startswith("Transfer")), None)


def out_order(record: dict) -> list[str]:
    """Who went out, in order, read from the record's steps on its own."""
    game = game_from_record(record)
    order: list[str] = []
    for step in record["steps"]:
        if "do" not in step:
            continue
        seat = game.players.index(step["player"])
        game.apply(seat, action_from_step({k: v for k, v in step.items() if k != "expect"}))
        for s in game.view(None).seats:
            if s.out and s.name not in order:
                order.append(s.name)
    return order


@async_test
async def test_the_table_shows_each_event_and_the_end_message_tells_the_story(
    make_fake_telegram: FakeTelegramFactory, tmp_path, errors
):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Player{i}", started=True) for i in range(4)]
    group = server.add_group("Friends", users, admins=[users[0]])
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        await service.set_chat_settings(group.id, transfer=True)
        table = Table(server, group, users, random.Random(5))
        await table.open_lobby()
        await table.join_all()
        await table.start()
        running = (await service.running_games())[0].game_id
        await durak_of(app).outbox.idle(10)
        first = table_message(table).plain_text or ""  # nobody has played yet
        outbox = durak_of(app).outbox

        async def shown_at_once() -> None:
            # A transfer's line lasts one state: nobody presses until it is on screen
            # (on a busy machine the outbox would coalesce that state away). A tap on a
            # card that can only be transferred transfers too, so the log decides.
            steps = (await service.export_record(running))["steps"]
            if steps and steps[-1].get("do") == "transfer":
                await asyncio.sleep(0.05)  # the move is shown after its press's answer
                await outbox.idle(10)

        ended = await table.play_to_the_end(
            watch=(service, running), prefer=transfers_first, settle=shown_at_once
        )
        _game_id, record = await finished_game(table, app)
        board = {t.name: t.losses for t in await service.leaderboard(group.id, limit=50)}
        await durak_of(app).outbox.idle(10)
        shown = versions(table_message(table))
        for user in users:  # the panels carry the same table
            for m in table.bot_messages(server.private_chat(user)):
                shown += versions(m)

    assert not table.leaks, table.leaks
    names = {u.first_name for u in users}
    took = [m for t in shown for m in TOOK.finditer(t)]
    beaten = [m for t in shown for m in BEATEN.finditer(t)]
    transferred = [m for t in shown for m in TRANSFERRED.finditer(t)]
    out = [m for t in shown for m in OUT.finditer(t)]
    assert took and all(m[1] in names and 1 <= int(m[2]) <= 36 for m in took)
    assert beaten and all(int(m[1]) % 2 == 0 and int(m[1]) >= 2 for m in beaten)
    # the new defender's panel, rendered while the game waits on him, shows the
    # transfer; a game whose random taps made none has nothing to show
    made = [x for x in record["steps"] if x.get("do") in ("transfer", "show_trump")]
    assert bool(transferred) == bool(made), (len(made), len(transferred))
    assert all(m[1] != m[2] for m in transferred)
    assert out
    # the opener line says what happened, and goes away after the first bout
    assert "opened" in first and "↪" not in first
    opened = [t for t in shown if "opened" in t]
    assert all("Discard: 0" in t and "took" not in t for t in opened)
    assert "opened" not in versions(table_message(table))[-1]
    # the end message: the order of going out, the durak, the group's series score
    text = ended.plain_text or ""
    order = out_order(record)
    expected = ", ".join(f"{k}. {name}" for k, name in enumerate(order, 1))
    assert f"Out in this order: {expected}" in text, text
    result = record["steps"][-1]["expect"]["result"]
    if "draw" not in result:
        assert f"{result['loser']} is the durak!" in text
    score = " · ".join(f"Player{i} {board[f'Player{i}']}" for i in range(4))
    assert f"Series in this group (times the durak): {score}" in text, text


async def running_table(
    server: FakeTelegram, users: list[User], group: Chat, topic: int | None = None
) -> Table:
    table = Table(server, group, users, random.Random(3), topic=topic)
    await table.open_lobby()
    await table.join_all()
    await table.start()
    return table


async def newgame_answer(server: FakeTelegram, table: Table) -> Message:
    before = {m.message_id for m in table.bot_messages(table.group)}
    await table.users[1].send(table.group, "/newgame", topic=table.topic)
    await server.wait_for(
        lambda: any(
            "already running" in (m.plain_text or "")
            for m in table.bot_messages(table.group)
            if m.message_id not in before
        ),
        10,
        what="the answer to /newgame",
    )
    return next(
        m
        for m in table.bot_messages(table.group)
        if m.message_id not in before and "already running" in (m.plain_text or "")
    )


@async_test
async def test_newgame_during_a_game_links_to_the_table(
    make_fake_telegram: FakeTelegramFactory, tmp_path, errors
):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Player{i}", started=True) for i in range(6)]
    supergroup = server.add_group("Super", users[:2], admins=[users[0]])
    basic = server.add_group("Basic", users[2:4], admins=[users[2]], supergroup=False)
    forum = server.add_group("Forum", users[4:], admins=[users[4]])
    topic = server.add_topic(forum, "Durak")
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        tables = [
            await running_table(server, users[:2], supergroup),
            await running_table(server, users[2:4], basic),
            await running_table(server, users[4:], forum, topic),
        ]
        await durak_of(app).outbox.idle(10)  # every table is on screen
        answers = [await newgame_answer(server, t) for t in tables]
        running = await service.running_games()
        lobbies = [t.lobby() for t in tables]
        await durak_of(app).outbox.idle(10)

    assert len(running) == 3  # no second game anywhere
    short = str(supergroup.id)[4:]
    for table, answer in zip(tables, answers, strict=True):
        table_id = table_message(table).message_id
        assert answer.reply_to is not None and answer.reply_to.message_id == table_id
    assert f'href="https://t.me/c/{short}/{table_id_of(tables[0])}"' in (answers[0].text or "")
    assert "t.me/c/" not in (answers[1].text or "")  # a basic group has no message links
    assert "The table is the message this answers." in (answers[1].plain_text or "")
    forum_short = str(forum.id)[4:]
    link = f'href="https://t.me/c/{forum_short}/{topic}/{table_id_of(tables[2])}"'
    assert link in (answers[2].text or "")
    assert answers[2].topic == topic
    assert all(lobby is None or "started" in (lobby.plain_text or "") for lobby in lobbies)


def table_id_of(table: Table) -> int:
    return table_message(table).message_id


@async_test
async def test_a_creator_who_never_opened_the_bot_gets_his_cards(
    make_fake_telegram: FakeTelegramFactory, tmp_path, errors
):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    creator = server.add_user("Player0", started=False)
    friend = server.add_user("Player1", started=True)
    group = server.add_group("Friends", [creator, friend], admins=[creator])
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        table = Table(server, group, [creator, friend], random.Random(2))
        await table.open_lobby()
        await table.join_all()
        lobby = table.lobby()
        assert lobby is not None
        start = next(b for b in lobby.buttons if b.callback_data and b.callback_data[1] == "s")
        answer = await table.press(creator, lobby, start.callback_data or "")
        game_id = (await service.running_games())[0].game_id
        deep = f"?start=g{game_id}"
        # the deal's answer opens the private chat instead of pointing at one that is not there
        assert answer.endswith(deep), answer
        await server.wait_for(
            lambda: any(
                b.url and b.url.endswith(deep)
                for m in table.bot_messages(group)
                if "cannot get their cards" in (m.plain_text or "")
                for b in m.buttons
            ),
            10,
            what="the group's button for the creator",
        )
        assert table.panel(creator) is None
        await creator.start_bot(f"g{game_id}")
        await server.wait_for(lambda: table.panel(creator) is not None, 10, what="his panel")
        await table.play_to_the_end()
        await durak_of(app).outbox.idle(10)

    warnings = [
        m for m in table.bot_messages(group) if "cannot get their cards" in (m.plain_text or "")
    ]
    assert len(warnings) == 1  # once
    assert [b.url for b in warnings[0].buttons] == [f"https://t.me/{server.bot.username}{deep}"]
    assert "Your cards are in our private chat" not in " ".join(table.answers[:1])
    said = " ".join(server.texts_ever_shown(group))
    assert "open a private chat with me and press Start" not in said
    assert not errors.records, [r.getMessage() for r in errors.records]


# ---- the log's story, exactly (bot.events) ----------------------------------------------


def _bout_to(game, end: str) -> None:
    """Play one bout: the attacker opens with one card; the defender takes (``took``)
    or covers it (``beaten``); everyone else passes."""
    from durak import Attack, Defend, Pass, Take

    view = game.view(None)
    attacker, defender = view.attacker, view.defender
    opening = next(a for a in game.legal_actions(attacker) if isinstance(a, Attack))
    game.apply(attacker, Attack(opening.cards[:1]))
    if end == "took":
        game.apply(defender, Take())
    else:
        cover = next(a for a in game.legal_actions(defender) if isinstance(a, Defend))
        game.apply(defender, cover)
    while game.view(None).table:
        seat = next(s for s in game.actors() if Pass() in game.legal_actions(s))
        game.apply(seat, Pass())


def _coverable(seed: int) -> bool:
    from durak import Attack, Defend, Game, Rules

    game = Game.from_seed(Rules(), ["Anna", "Boris"], seed)
    view = game.view(None)
    opening = next(a for a in game.legal_actions(view.attacker) if isinstance(a, Attack))
    game.apply(view.attacker, Attack(opening.cards[:1]))
    return any(isinstance(a, Defend) for a in game.legal_actions(view.defender))


def test_the_story_counts_what_was_taken_and_discarded_and_survives_a_restart():
    from bot.ui import events
    from durak import Game, Rules
    from durak.games.base import restore

    seed = next(s for s in range(100) if _coverable(s))
    game = Game.from_seed(Rules(), ["Anna", "Boris"], seed)
    assert events.story(901, game).last is None  # nothing happened yet
    defender = game.view(None).defender
    _bout_to(game, "beaten")
    last = events.story(901, game).last
    assert last == events.Event(events.BEATEN_OFF, None, 2)
    assert game.view(None).discard == 2
    taker = game.view(None).defender
    before = game.view(None).seats[taker].cards
    _bout_to(game, "took")
    last = events.story(901, game).last
    assert last == events.Event(events.TOOK, taker, 1)
    assert game.view(None).seats[taker].cards == before + 1  # the defender draws nothing
    assert defender is not None
    # a restart: the game restored from its snapshot tells the same story
    events.forget(901)
    again = restore(game.snapshot())
    assert events.story(902, again) == events.story(901, game)


def test_a_transfer_and_going_out_are_events():
    from bot.ui import events
    from durak import Game, Rules, Transfer

    rules = Rules(transfer=True)
    for seed in range(200):
        game = Game.from_seed(rules, ["Anna", "Boris", "Clara"], seed)
        rng = random.Random(seed)
        seen: set[str | None] = set()
        while not game.over:
            seat, legal = rng.choice(game.legal_by_seat())
            transfers = [a for a in legal if isinstance(a, Transfer)]
            action = transfers[0] if transfers else rng.choice(list(legal))
            before = game.view(None)
            game.apply(seat, action)
            story = events.story(903, game)
            if transfers:
                assert story.last == events.Event(
                    events.TRANSFERRED, seat, to=game.view(None).defender, out=story.last.out
                )
                assert story.last.to != before.defender
            seen.add(story.last.kind if story.last else None)
        out = [s.seat for s in game.view(None).seats if s.out]
        assert sorted(story.out_order) == sorted(out)
        events.forget(903)
        if events.TRANSFERRED in seen:
            return
    raise AssertionError("no game with a transfer")


def test_pile_games_tell_takes_and_going_out_and_never_crash():
    from bot.ui import events
    from durak import Game, Rules, Take

    for game_name in ("own_trumps", "piled", "road"):
        rules = Rules(game=game_name)
        game = Game.from_seed(rules, ["Anna", "Boris", "Clara"], 11)
        rng = random.Random(11)
        while not game.over:
            seat, legal = rng.choice(game.legal_by_seat())
            action = rng.choice(list(legal))
            cost = game.view(None).take_cost
            game.apply(seat, action)
            story = events.story(904, game)
            if isinstance(action, Take):
                assert story.last is not None and story.last.kind == events.TOOK
                assert (story.last.seat, story.last.count) == (seat, cost)
        out = [s.seat for s in game.view(None).seats if s.out]
        assert sorted(story.out_order) == sorted(out)
        events.forget(904)


def test_a_returned_card_is_no_pick_up():
    """return_last_card: the attack cards go back to the attacker; nobody took them."""
    from bot.ui import events
    from durak import Game, ReturnCard, Rules

    for seed in range(300):
        game = Game.from_seed(Rules(return_last_card=True), ["Anna", "Boris"], seed)
        rng = random.Random(seed)
        while not game.over:
            seat, legal = rng.choice(game.legal_by_seat())
            returns = [a for a in legal if isinstance(a, ReturnCard)]
            earlier = events.story(905, game).last
            game.apply(seat, returns[0] if returns else rng.choice(list(legal)))
            if returns:
                assert events.story(905, game).last == earlier  # no new event line
                events.forget(905)
                return
        events.forget(905)
    raise AssertionError("no game with a return")
