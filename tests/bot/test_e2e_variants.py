"""Whole games of VARIANTS.md's options through the real bot and the fake Bot API:
a sprint match of two (one table message, the score between deals, the match
result, the tally of 2.6) and a knock-out of three, blind (slots tapped; nobody
reads a card he may not see), English (its "no pair" line), trump change (the
face-down card and the change on the table), return_last_card (its button, and
it works) and damka (a one-suit opening of several cards through the picker).

Every game is watched as the plain games are: after every press no group text
shows a card from a hand (:meth:`Table.check_group`), and under ``blind`` no
player's own chat shows him a card he has not seen. AI seats are left out: the
AI's play of the variants is another branch's work.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Iterable

from durak import game_from_record, replay
from durak.actions import RETURN_CARD, action_from_step
from durak.records import check_document
from durak.service import GameService
from tests.fake_telegram import FakeTelegram, RateLimits
from tests.fake_telegram.fixtures import async_test
from tests.fake_telegram.models import Button, Chat, User

from .harness import SCALE, Table, durak_of, running_bot
from .test_e2e import finished_game, friends, public_cards
from .textcards import cards_in


async def seated(server: FakeTelegram, players: int, seed: int) -> tuple[Table, Chat]:
    users, group = friends(server, players)
    return Table(server, group, users, random.Random(seed)), group


async def started(table: Table, service: GameService, **options: object) -> int:
    await service.set_chat_settings(table.group.id, **options)
    await table.open_lobby()
    await table.join_all()
    await table.start()
    return (await service.running_games())[0].game_id


async def deals_of(service: GameService, last: int) -> list[int]:
    """The games of a series up to ``last``, first to last."""
    chain: list[int] = []
    game_id: int | None = last
    while game_id is not None:
        chain.append(game_id)
        game_id = (await service.game(game_id)).previous_game_id
    return chain[::-1]


def texts(server: FakeTelegram, chat: Chat) -> list[str]:
    return server.texts_ever_shown(chat, include_buttons=True)


def steps(record: dict) -> list[dict]:
    return [s for s in record["steps"] if "do" in s]


async def the_record(table: Table, server: FakeTelegram, ended) -> tuple[dict, str]:
    """Press the end's record button: the document sent, and its caption."""
    button = next(b.callback_data for b in ended.buttons if b.callback_data.startswith("1h."))
    await table.press(table.users[0], ended, button)
    doc = await server.wait_for(
        lambda: next((m for m in server.messages(table.group) if m.document), None),
        10,
        what="the record",
    )
    return json.loads(doc.document.data), doc.plain_text or ""


def whole_match(document: dict, records: list[dict], caption: str, what: str) -> None:
    """The match's document: every deal's record in order, which the checker passes,
    and a caption that says so (issue 27 item 2)."""
    assert document["format"] == "durak-match/1"
    assert document["deals"] == records
    report = check_document(document)
    assert not report.failures and report.passed > len(records)
    assert f"{what} ending with game #" in caption
    assert f"all its {len(records)} deals in order, every move of each" in caption


def clean(table: Table, server: FakeTelegram, errors) -> None:
    assert not table.leaks, table.leaks
    assert not server.unanswered_callbacks()
    assert server.limit_violations() == 0
    assert not errors.records, [r.getMessage() for r in errors.records]


def group_shows_only_public(server: FakeTelegram, group: Chat, records: Iterable[dict]) -> None:
    public: set[str] = set()
    for record in records:
        public |= public_cards(record)
    shown: set[str] = set()
    for text in texts(server, group):
        shown |= cards_in(text)
    assert shown <= public, f"a group message showed {sorted(shown - public)}"


# ---- sprint ---------------------------------------------------------------------------


@async_test
async def test_a_whole_sprint_match_of_two(make_fake_telegram, tmp_path, errors):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    table, group = await seated(server, 2, seed=21)
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        first = await started(table, service, sprint=True)
        ended = await table.play_to_the_end(watch=(service, first), timeout=300)
        last, _record = await finished_game(table, app)
        chain = await deals_of(service, last)
        infos = [await service.game(g) for g in chain]
        records = [await service.export_record(g) for g in chain]
        board = {t.name: t for t in await service.leaderboard(group.id, limit=50)}
        await durak_of(app).outbox.idle(10)
        tables = {
            m.message_id for g in chain for m in await service.messages(g) if m.kind == "table"
        }
        document, caption = await the_record(table, server, ended)

    whole_match(document, records, caption, "Sprint match")
    assert chain[0] == first and len(chain) >= 6  # nobody can win 6 of 10 sooner
    match = infos[-1].game.view(None).match
    assert match is not None and match.decided and match.played == len(chain)
    for k, info in enumerate(infos):  # every deal but the last, with the match going on
        view = info.game.view(None)
        assert view.match.played == k + 1 and view.match.decided == (k == len(chain) - 1)
    # one table message for the whole match: every deal edits the same one
    assert len(tables) == 1, tables
    stock_texts = {e.message_id for e in group.shown if "Stock:" in e.plain_text}
    assert stock_texts == tables
    # between deals: the deal's fool, the score, and no Play again yet
    between = [m for m in table.bot_messages(group) if "follows." in m.plain_text]
    assert len(between) == len(chain) - 1
    for k, m in enumerate(between):  # the deal that ended, its fool, the score, the next
        assert f"Deal {k + 1} of 10 is over" in m.plain_text and not m.buttons
        assert "Sprint match score:" in m.plain_text and f"Deal {k + 2} follows." in m.plain_text
    table_text = server.message(group, tables.pop()).plain_text or ""
    assert "Sprint match after" in table_text or "Sprint match, deal" in table_text
    # the match's result, and the tally of VARIANTS.md 2.6: one game, one loss
    names = [u.first_name for u in table.users]
    text = ended.plain_text or ""
    assert f"Sprint match after {len(chain)} deals" in text
    assert all(t.played == 1 for t in board.values()) and sorted(board) == sorted(names)
    if match.draw:
        assert "The match is drawn." in text
        assert all(t.draws == 1 and t.losses == 0 for t in board.values())
    else:
        assert f"{match.winner} wins the match!" in text
        assert {n: t.losses for n, t in board.items()} == {n: int(n != match.winner) for n in names}
    group_shows_only_public(server, group, records)
    clean(table, server, errors)


@async_test
async def test_a_knock_out_of_three(make_fake_telegram, tmp_path, errors):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    table, group = await seated(server, 3, seed=22)
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        first = await started(table, service, sprint=True)
        ended = await table.play_to_the_end(watch=(service, first), timeout=300)
        last, _record = await finished_game(table, app)
        chain = await deals_of(service, last)
        infos = [await service.game(g) for g in chain]
        records = [await service.export_record(g) for g in chain]
        board = {t.name: t for t in await service.leaderboard(group.id, limit=50)}
        await durak_of(app).outbox.idle(10)
        tables = {
            m.message_id for g in chain for m in await service.messages(g) if m.kind == "table"
        }
        document, caption = await the_record(table, server, ended)
        await table.users[0].send(group, "/history")
        history = await server.wait_for_bot_message(group, contains="Recent games")

    whole_match(document, records, caption, "Knock-out")
    # the recap and /history name every player of the match, those knocked out in
    # earlier deals too, never by a number (issue 33 item 3)
    recap = next(x for x in (ended.plain_text or "").splitlines() if x.startswith("📈 "))
    rated = next(x for x in (history.plain_text or "").splitlines() if "📈 " in x)
    for line in (recap, rated):
        assert all(u.first_name in line for u in table.users), line
        assert not any(str(u.id) in line for u in table.users), line
    match = infos[-1].game.view(None).match
    assert match.deals is None and match.winner is not None and match.played == len(chain)
    assert len(match.eliminated) == 2 and match.winner not in match.eliminated
    assert len(infos[0].seats) == 3 and len(infos[-1].seats) == 2
    assert len(tables) == 1, tables
    text = ended.plain_text or ""
    assert f"{match.winner} wins the match!" in text and "Out of the match" in text
    # each player knocked out has one loss, the winner none (2.6)
    assert {n: t.losses for n, t in board.items()} == {
        u.first_name: int(u.first_name in match.eliminated) for u in table.users
    }
    assert all(t.draws == 0 for t in board.values())
    group_shows_only_public(server, group, records)
    clean(table, server, errors)


# ---- blind ---------------------------------------------------------------------------


@async_test
async def test_a_blind_game(make_fake_telegram, tmp_path, errors):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    table, group = await seated(server, 2, seed=23)
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        first = await started(table, service, blind=True)
        for user in table.users:  # the panel: face-down slots, no card of one's own
            panel = table.panel(user)
            assert panel is not None
            slot_buttons = [b for b in panel.buttons if ".s" in (b.callback_data or "")]
            assert len(slot_buttons) == 6 and all(b.text.startswith("🂠") for b in slot_buttons)
        await table.play_to_the_end(watch=(service, first))
        _, record = await finished_game(table, app)
        await durak_of(app).outbox.idle(10)

    assert len(steps(record)) > 4  # the slots were tapped: every play of the game was one
    for user in table.users:  # every slot button of every panel named a slot, not a card
        for message in server.messages(server.private_chat(user)):
            for b in message.buttons:
                if ".s" in (b.callback_data or "") and b.text.startswith("🂠"):
                    assert not cards_in(b.text)
    group_shows_only_public(server, group, [record])
    clean(table, server, errors)


# ---- English, trump change, return, damka --------------------------------------------------


def prefer_text(*needles: str):
    """A player who presses a button with one of ``needles`` whenever he has one."""

    def choose(_user: User, buttons: list[Button]) -> Button | None:
        for needle in needles:
            found = [b for b in buttons if needle in b.text]
            if found:
                return found[0]
        return None

    return choose


async def games_until(
    table: Table, service: GameService, app, found, limit: int, prefer=None, settle=None
) -> tuple[list[dict], list[str]]:
    """Play games (Play again after each) until ``found(record, group texts)`` holds
    for one, at most ``limit``; the records and the group's texts."""
    records: list[dict] = []
    running = (await service.running_games())[0].game_id
    for _ in range(limit):
        await table.play_to_the_end(watch=(service, running), prefer=prefer, settle=settle)
        game_id, record = await finished_game(table, app)
        records.append(record)
        if found(record, texts(table.server, table.group)):
            break
        ended = table.ended()
        assert ended is not None
        await table.play_again(ended)  # a lobby: every player confirms
        table.since = ended.message_id
        running = await next_game(service, game_id)
    return records, texts(table.server, table.group)


async def next_game(service: GameService, game_id: int) -> int:
    for _ in range(500):
        following = [i for i in await service.running_games() if i.previous_game_id == game_id]
        if following:
            return following[0].game_id
        await asyncio.sleep(0.02)
    raise AssertionError(f"no game followed {game_id}")


@async_test
async def test_an_english_game_says_nobody_had_a_pair(make_fake_telegram, tmp_path, errors):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    table, group = await seated(server, 3, seed=24)
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        await started(table, service, english=True)
        records, shown = await games_until(
            table,
            service,
            app,
            lambda _r, t: any("Nobody had a pair" in x or "No pair:" in x for x in t),
            limit=6,
        )
        await durak_of(app).outbox.idle(10)
    assert any("Nobody had a pair" in x or "No pair:" in x for x in shown)
    # a pair opens when one can: some opening of the games was two cards of a rank
    openings = [s for r in records for s in steps(r) if s["do"] == "attack"]
    assert any(len(s["cards"]) == 2 for s in openings)
    group_shows_only_public(server, group, records)
    clean(table, server, errors)


@async_test
async def test_trump_change_shows_the_face_down_card_and_the_change(
    make_fake_telegram, tmp_path, errors
):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    table, group = await seated(server, 2, seed=25)
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        await started(table, service, trump_change=True)
        records, shown = await games_until(
            table, service, app, lambda _r, t: any("Trump changed to" in x for x in t), limit=4
        )
        await durak_of(app).outbox.idle(10)
    assert any("a face-down card under it will be the new trump" in x for x in shown)
    changed = [x for x in shown if "Trump changed to" in x]
    assert changed
    second = replay(records[-1]).view(None).second_trump_card
    assert second is not None and any(second.display in x for x in changed)
    assert any(f"the {second.display} was drawn" in x for x in changed)
    group_shows_only_public(server, group, records)
    clean(table, server, errors)


@async_test
async def test_return_last_card_offers_its_button_and_it_works(
    make_fake_telegram, tmp_path, errors
):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    table, group = await seated(server, 2, seed=26)
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        await started(table, service, return_last_card=True)

        def returned(record: dict, _texts: list[str]) -> bool:
            return any(s["do"] == "return_card" for s in steps(record))

        async def offered_at_once() -> None:
            # The return is open until the defender acts, and a card pressed on his
            # panel of before the lead beats the last card: nobody presses until the
            # panel offering the return is on screen (a busy machine lost that race
            # in ten games running).
            running = await service.running_games()
            if not running:
                return
            game = (await service.game(running[0].game_id)).game  # the live one
            if game is not None and any(
                RETURN_CARD in game.legal_actions(seat) for seat in game.actors()
            ):
                await asyncio.sleep(0.05)  # the move is shown after its press's answer
                await durak_of(app).outbox.idle(10)

        records, _shown = await games_until(
            table,
            service,
            app,
            returned,
            limit=16,  # about half the games reach a lead of one's last cards
            prefer=prefer_text("Return the card"),
            settle=offered_at_once,
        )
        await durak_of(app).outbox.idle(10)
    assert returned(records[-1], [])
    shown = [x for u in table.users for x in texts(server, server.private_chat(u))]
    assert any("Return the card" in x for x in shown)
    # after the return the defender opened against the returner's hand (2.)
    record = records[-1]
    k = next(i for i, s in enumerate(steps(record)) if s["do"] == "return_card")
    after = steps(record)[k + 1 :]
    assert after and after[0]["player"] == steps(record)[k]["player"]
    assert after[0]["do"] == "attack"
    group_shows_only_public(server, group, records)
    clean(table, server, errors)


def picker_player(_user: User, buttons: list[Button]) -> Button | None:
    """Opens with several cards of one suit whenever the panel offers the picker:
    taps "Several cards", then cards of a suit he holds two of, then plays them."""
    opener = [b for b in buttons if "Several cards" in b.text]
    if opener:
        return opener[0]
    play = [b for b in buttons if b.text.startswith("▶️")]
    picked = [b for b in buttons if b.text.startswith("✅")]
    if not play and not picked and not any(b.text.startswith("↩ ") for b in buttons):
        return None  # not the picker
    if play and len(picked) >= 2:
        return play[0]
    free = [b for b in buttons if (b.callback_data or "").split(".")[-1].startswith("m")]
    free = [b for b in free if not b.text.startswith("✅") and cards_in(b.text)]
    suits = [next(iter(cards_in(b.text)))[-1] for b in free]
    twice = [b for b, s in zip(free, suits, strict=True) if suits.count(s) >= 2 or picked]
    if twice:
        return twice[0]
    return play[0] if play else None


def several_card_openings(record: dict) -> list[list[str]]:
    """The openings of several cards in ``record`` (an attack on an empty table)."""
    game = game_from_record(record)
    names = record["players"]
    out = []
    for step in steps(record):
        if step["do"] == "attack" and len(step["cards"]) > 1 and not game.view(None).table:
            out.append(step["cards"])
        game.apply(names.index(step["player"]), action_from_step(step))
    return out


@async_test
async def test_damka_opens_with_several_cards_of_one_suit_through_the_picker(
    make_fake_telegram, tmp_path, errors
):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    table, group = await seated(server, 2, seed=27)
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        await started(table, service, damka=True)
        records, _shown = await games_until(
            table,
            service,
            app,
            lambda r, _t: bool(several_card_openings(r)),
            limit=4,
            prefer=picker_player,
        )
        await durak_of(app).outbox.idle(10)
    openings = several_card_openings(records[-1])
    assert openings
    for cards in openings:  # one suit, and (damka) not one rank in several suits
        assert len({c[-1] for c in cards}) == 1, cards
    assert any(len({c[:-1] for c in cards}) > 1 for cards in openings)
    shown = [x for u in table.users for x in texts(server, server.private_chat(u))]
    assert any(x.startswith("▶️ Play") for x in shown)  # the picker's play button
    assert any("Choose the cards to open with" in x for x in shown)
    group_shows_only_public(server, group, records)
    clean(table, server, errors)
