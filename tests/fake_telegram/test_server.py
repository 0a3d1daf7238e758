# mypy: disable-error-code="union-attr"
"""Tests of the fake Telegram server, driven by python-telegram-bot's real client."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
import telegram
from hypothesis import given, settings
from hypothesis import strategies as st
from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Conflict,
    EndPointNotFound,
    Forbidden,
    InvalidToken,
    RetryAfter,
)
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, ContextTypes

from tests.fake_telegram import FakeTelegram, RateLimits
from tests.fake_telegram._text import parse_html
from tests.fake_telegram.fixtures import FakeTelegramFactory, async_test
from tests.fake_telegram.ratelimit import RateLimiter, RateStats


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def keyboard(*data: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(d.upper(), callback_data=d) for d in data]])


@asynccontextmanager
async def ptb_bot(server: FakeTelegram, token: str | None = None) -> AsyncIterator[telegram.Bot]:
    bot = telegram.Bot(
        token or server.token, base_url=server.base_url, base_file_url=server.base_file_url
    )
    async with bot:
        yield bot


# ------------------------------------------------------------------------- basics


@async_test
async def test_get_me_and_token_errors(fake_telegram: FakeTelegram) -> None:
    async with ptb_bot(fake_telegram) as bot:
        me = await bot.get_me()
        assert me.username == "fake_durak_bot"
        assert me.is_bot and me.id == 123456789
        with pytest.raises(EndPointNotFound):
            await bot.do_api_request("noSuchMethod")
    with pytest.raises(InvalidToken):
        async with ptb_bot(fake_telegram, token="42:wrong-token"):
            pass
    async with httpx.AsyncClient() as client:
        wrong = await client.post(f"{fake_telegram.base_url}42:wrong/getMe")
        malformed = await client.post(f"{fake_telegram.base_url}garbage/getMe")
        unknown = await client.post(f"{fake_telegram.base_url}{fake_telegram.token}/fooBar")
    assert (wrong.status_code, wrong.json()) == (
        401,
        {"ok": False, "error_code": 401, "description": "Unauthorized"},
    )
    assert malformed.status_code == 404
    assert unknown.json() == {"ok": False, "error_code": 404, "description": "Not Found"}


@async_test
async def test_request_encodings_and_keep_alive(fake_telegram: FakeTelegram) -> None:
    tg = fake_telegram
    group = tg.add_group("Encodings", [tg.add_user("Ann")])
    url = f"{tg.base_url}{tg.token}"
    async with httpx.AsyncClient() as client:
        as_json = await client.post(f"{url}/sendMessage", json={"chat_id": group.id, "text": "j"})
        as_form = await client.post(f"{url}/sendMessage", data={"chat_id": group.id, "text": "f"})
        as_get = await client.get(f"{url}/SENDMESSAGE", params={"chat_id": group.id, "text": "g"})
    for response in (as_json, as_form, as_get):
        assert response.status_code == 200, response.text
        assert response.json()["ok"] is True
    assert [m.plain_text for m in tg.messages(group)] == ["j", "f", "g"]
    assert tg.connections_accepted == 1  # all three over one keep-alive connection

    before = tg.connections_accepted
    async with ptb_bot(tg) as bot:
        for i in range(10):
            await bot.send_message(group.id, f"m{i}")
    assert tg.connections_accepted - before <= 2  # PTB/httpx reuse connections


# ------------------------------------------------------------------------- messages


@async_test
async def test_send_and_edit_group_message(fake_telegram: FakeTelegram) -> None:
    tg = fake_telegram
    group = tg.add_group("Durak", [tg.add_user("Ann")])
    async with ptb_bot(tg) as bot:
        sent = await bot.send_message(
            group.id,
            "<b>Trump</b>: &lt;hearts&gt; &amp; co",
            parse_mode="HTML",
            reply_markup=keyboard("take", "pass"),
        )
        assert sent.text == "Trump: <hearts> & co"
        assert sent.entities[0].type == "bold" and sent.entities[0].length == 5
        assert sent.reply_markup is not None
        edited = await bot.edit_message_text(
            "Round 2", group.id, sent.message_id, reply_markup=keyboard("take")
        )
        assert edited.text == "Round 2" and edited.edit_date is not None
        await bot.edit_message_text("Round 3", group.id, sent.message_id)  # drops the keyboard
        second = await bot.send_message(group.id, "second")

    message = tg.message(group, sent.message_id)
    assert second.message_id == sent.message_id + 1
    assert message.plain_text == "Round 3" and message.buttons == []
    assert message.history[0].text == "<b>Trump</b>: &lt;hearts&gt; &amp; co"
    assert [v.plain_text for v in message.history] == ["Trump: <hearts> & co", "Round 2", "Round 3"]
    assert tg.texts_ever_shown(group) == ["Trump: <hearts> & co", "Round 2", "Round 3", "second"]
    assert "TAKE" in tg.texts_ever_shown(group, include_buttons=True)


@async_test
async def test_forum_topics(fake_telegram: FakeTelegram) -> None:
    tg = fake_telegram
    ann = tg.add_user("Ann")
    group = tg.add_group("Forum", [ann])
    topic = tg.add_topic(group, "Durak")
    asked = await ann.send(group, "/newgame", topic=topic)
    assert asked.to_api()["message_thread_id"] == topic and asked.to_api()["is_topic_message"]
    async with ptb_bot(tg) as bot:
        sent = await bot.send_message(group.id, "in the topic", message_thread_id=topic)
        assert sent.message_thread_id == topic and sent.is_topic_message
        plain = await bot.send_message(group.id, "in General")
        assert plain.message_thread_id is None
        with pytest.raises(BadRequest, match="Message thread not found"):
            await bot.send_message(group.id, "nowhere", message_thread_id=topic + 100)
    assert tg.message(group, sent.message_id).topic == topic
    assert tg.message(group, plain.message_id).topic is None
    # A reply in General names a thread but is no topic message.
    reply = await ann.send(group, "hi", reply_to=tg.message(group, plain.message_id))
    assert reply.to_api()["message_thread_id"] == plain.message_id
    assert "is_topic_message" not in reply.to_api()


@async_test
async def test_not_modified_and_deleted_messages(fake_telegram: FakeTelegram) -> None:
    tg = fake_telegram
    group = tg.add_group("Durak", [tg.add_user("Ann")])
    async with ptb_bot(tg) as bot:
        sent = await bot.send_message(
            group.id, "<i>same</i>", parse_mode="HTML", reply_markup=keyboard("a")
        )
        with pytest.raises(BadRequest) as refused:
            await bot.edit_message_text(
                "<i>same</i>",
                group.id,
                sent.message_id,
                parse_mode="HTML",
                reply_markup=keyboard("a"),
            )
        assert refused.value.message == (  # Telegram's words (PTB capitalises the first)
            "Message is not modified: specified new message content and reply markup are"
            " exactly the same as a current content and reply markup of the message"
        )
        with pytest.raises(BadRequest, match="Message is not modified"):
            await bot.edit_message_reply_markup(
                group.id, sent.message_id, reply_markup=keyboard("a")
            )
        assert tg.not_modified_count(group) == tg.not_modified_count() == 2
        await bot.edit_message_text(
            "<i>same</i>", group.id, sent.message_id, parse_mode="HTML", reply_markup=keyboard("b")
        )  # markup differs: allowed
        assert await bot.delete_message(group.id, sent.message_id) is True
        with pytest.raises(BadRequest, match="Message to edit not found"):
            await bot.edit_message_text("new", group.id, sent.message_id)
        with pytest.raises(BadRequest, match="Message to delete not found"):
            await bot.delete_message(group.id, sent.message_id)
    assert tg.message(group, sent.message_id).deleted


@async_test
async def test_text_and_keyboard_limits(fake_telegram: FakeTelegram) -> None:
    tg = fake_telegram
    group = tg.add_group("Limits", [tg.add_user("Ann")])
    async with ptb_bot(tg) as bot:
        await bot.send_message(group.id, "ok", reply_markup=keyboard("й" * 32))  # 64 bytes
        with pytest.raises(BadRequest, match="Button_data_invalid"):
            await bot.send_message(group.id, "x", reply_markup=keyboard("й" * 32 + "x"))
        too_many = InlineKeyboardMarkup(
            [[InlineKeyboardButton(str(i), callback_data=str(i))] for i in range(101)]
        )
        with pytest.raises(BadRequest, match="Reply_markup_too_long"):
            await bot.send_message(group.id, "x", reply_markup=too_many)
        with pytest.raises(BadRequest, match="Message text is empty"):
            await bot.send_message(group.id, "<b> </b>", parse_mode="HTML")
        await bot.send_message(group.id, "&lt;" * 4096, parse_mode="HTML")  # 4096 after parsing
        with pytest.raises(BadRequest, match="Message is too long"):
            await bot.send_message(group.id, "x" * 4097)
        with pytest.raises(BadRequest, match="Can't parse entities"):
            await bot.send_message(group.id, "Hello <Bob>", parse_mode="HTML")
    assert len(tg.messages(group)) == 2


def test_parse_html_entities_use_utf16_offsets() -> None:
    plain, entities = parse_html('🂡 <b>ace</b> <a href="https://t.me">x</a>')
    assert plain == "🂡 ace x"
    assert entities == [
        {"type": "bold", "offset": 3, "length": 3},
        {"type": "text_link", "offset": 7, "length": 1, "url": "https://t.me"},
    ]


# ------------------------------------------------------------------------- private chats


@async_test
async def test_private_chat_needs_start_and_respects_block(fake_telegram: FakeTelegram) -> None:
    tg = fake_telegram
    ann = tg.add_user("Ann", "ann", "ru")
    async with ptb_bot(tg) as bot:
        with pytest.raises(Forbidden, match="bot can't initiate conversation with a user"):
            await bot.send_message(ann.id, "your cards")
        start = await ann.start_bot("join-123")
        assert start.text == "/start join-123"
        await bot.send_message(ann.id, "your cards")
        await ann.block_bot()
        with pytest.raises(Forbidden, match="bot was blocked by the user"):
            await bot.send_message(ann.id, "more cards")
        updates = await bot.get_updates()
    kinds = [
        u.message.text if u.message else u.my_chat_member.new_chat_member.status for u in updates
    ]
    assert kinds == ["/start join-123", "kicked"]
    assert updates[0].message.from_user.language_code == "ru"
    assert tg.private_chat(ann).messages[2].plain_text == "your cards"


# ------------------------------------------------------------------------- rate limits


@async_test
async def test_group_rate_limit_answers_retry_after(
    make_fake_telegram: FakeTelegramFactory,
) -> None:
    clock = FakeClock()
    tg = await make_fake_telegram(rate_limits=RateLimits().scaled(0.01), clock=clock)
    group = tg.add_group("Busy", [tg.add_user("Ann")])
    async with ptb_bot(tg) as bot:
        first = await bot.send_message(group.id, "0")
        for i in range(1, 19):
            clock.advance(0.01)
            await bot.send_message(group.id, str(i))
        await bot.edit_message_text("edited", group.id, first.message_id)  # edits count too
        with pytest.raises(RetryAfter) as raised:
            await bot.send_message(group.id, "21st")
        assert raised.value.retry_after == 1  # whole seconds, at least 1
        with pytest.raises(RetryAfter):
            await bot.edit_message_text("again", group.id, first.message_id)
        clock.advance(0.43)  # the first send (t=0) leaves the 0.6 s window (now t=0.61)
        await bot.send_message(group.id, "accepted again")
        with pytest.raises(RetryAfter):
            await bot.send_message(group.id, "over again")
    assert tg.rate_limited_count(group) == 3
    assert tg.limit_violations(group) == 0 and tg.limit_violations() == 0
    assert group.stats.accepted == 21 and group.stats.peak_in_window == 20
    assert len(tg.messages(group)) == 20


@async_test
async def test_private_and_global_limits(make_fake_telegram: FakeTelegramFactory) -> None:
    clock = FakeClock()
    tg = await make_fake_telegram(rate_limits=RateLimits(global_max=5), clock=clock)
    users = [tg.add_user(f"U{i}", started=True) for i in range(3)]
    async with ptb_bot(tg) as bot:
        for _ in range(3):  # burst of 3
            await bot.send_message(users[0].id, "card")
        with pytest.raises(RetryAfter):
            await bot.send_message(users[0].id, "card")
        clock.advance(1.0)  # one token back, and a fresh global window
        await bot.send_message(users[0].id, "card")
        for _ in range(3):
            await bot.send_message(users[1].id, "x")
        await bot.send_message(users[2].id, "x")
        with pytest.raises(RetryAfter):  # 5 per second for the whole bot
            await bot.send_message(users[2].id, "x")
    assert tg.rate_limited_count() == 2
    assert tg.rate_limited_count(tg.private_chat(users[2])) == 1


@async_test
async def test_observe_only_counts_violations(make_fake_telegram: FakeTelegramFactory) -> None:
    tg = await make_fake_telegram(rate_limits=RateLimits.observe_only())
    group = tg.add_group("Flood", [tg.add_user("Ann")])
    async with ptb_bot(tg) as bot:
        for i in range(22):
            await bot.send_message(group.id, str(i))
    assert tg.rate_limited_count() == 0
    assert tg.limit_violations(group) == 2
    assert group.stats.peak_in_window == 22


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(min_value=0, max_value=5), min_size=1, max_size=80),
    st.integers(min_value=1, max_value=6),
    st.floats(min_value=0.1, max_value=2),
)
def test_sliding_window_never_accepts_more_than_the_limit(
    gaps: list[float], limit: int, window: float
) -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimits(group_max=limit, group_window=window, global_max=10**6), clock)
    stats = RateStats()
    accepted: list[float] = []
    for gap in gaps:
        clock.advance(gap)
        if limiter.acquire(-1, False, stats) is None:
            accepted.append(clock.now)
    for t in accepted:
        assert sum(1 for u in accepted if t - window < u <= t) <= limit
    assert stats.violations == 0 and stats.accepted == len(accepted)


# ------------------------------------------------------------------------- updates & callbacks


@async_test
async def test_long_poll_delivers_press_and_answer_resolves_it(
    fake_telegram: FakeTelegram,
) -> None:
    tg = fake_telegram
    ann = tg.add_user("Ann", "ann")
    group = tg.add_group("Durak", [ann])
    async with ptb_bot(tg) as bot:
        sent = await bot.send_message(group.id, "Your move", reply_markup=keyboard("take", "beat"))
        assert [b.callback_data for b in tg.buttons(group, sent.message_id)] == ["take", "beat"]
        poll = asyncio.create_task(bot.get_updates(timeout=10))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        unrelated = await bot.send_message(group.id, "not blocked by the long poll")
        assert time.monotonic() - started < 1.0 and unrelated.text
        press = await ann.press(tg.message(group, sent.message_id), "take")
        updates = await asyncio.wait_for(poll, 2)
        assert time.monotonic() - started < 2.0
        query = updates[0].callback_query
        assert query.data == "take" and query.from_user.id == ann.id
        assert query.message.message_id == sent.message_id
        assert tg.unanswered_callbacks() == [press]

        await bot.answer_callback_query(query.id, "You took the cards", show_alert=True)
        answer = await press
        assert (answer.text, answer.show_alert) == ("You took the cards", True)
        assert tg.unanswered_callbacks() == []
        with pytest.raises(BadRequest, match="Query is too old"):
            await bot.answer_callback_query(query.id)
        with pytest.raises(ValueError, match="not on the keyboard"):
            tg.press(ann, group, sent.message_id, "forged")
        forged = tg.press(ann, group, sent.message_id, "forged", check=False)
        with pytest.raises(BadRequest, match="Message_too_long"):
            await bot.answer_callback_query(forged.id, "x" * 201)
        assert not forged.answered
        confirmed = await bot.get_updates(offset=updates[-1].update_id + 1, timeout=0)
        assert [u.callback_query.data for u in confirmed] == ["forged"]


@async_test
async def test_webhook_delivery_posts_each_update_with_its_secret_and_retries(
    fake_telegram: FakeTelegram,
) -> None:
    """After setWebhook, updates are POSTed to ``webhook_target`` one by one with the
    secret; a POST answered 500 is sent again; deleteWebhook stops the delivery."""
    from aiohttp import web

    tg = fake_telegram
    ann = tg.add_user("Ann", "ann")
    group = tg.add_group("Durak", [ann])
    got: list[tuple[str, dict]] = []
    refuse = [True]  # the first POST is answered 500

    async def hook(request: web.Request) -> web.Response:
        got.append(
            (request.headers.get("X-Telegram-Bot-Api-Secret-Token", ""), await request.json())
        )
        if refuse[0]:
            refuse[0] = False
            return web.Response(status=500)
        return web.Response()

    server = web.Application()
    server.router.add_post("/hook", hook)
    runner = web.AppRunner(server)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    tg.webhook_target = f"http://127.0.0.1:{port}/hook"
    try:
        async with ptb_bot(tg) as bot:
            sent = await bot.send_message(group.id, "Your move", reply_markup=keyboard("take"))
            await bot.set_webhook(
                "https://bot.example.org/hook", secret_token="s3", max_connections=1
            )
            with pytest.raises(Conflict):
                await bot.get_updates(timeout=0)
            await ann.send(group, "/help")
            press = tg.press(ann, group, sent.message_id, "take")
            await tg.wait_for(lambda: len(got) == 3, 5, what="three POSTs")
            assert {secret for secret, _ in got} == {"s3"}
            first, again, second = (update for _, update in got)
            assert first == again and first["message"]["text"] == "/help"  # sent again
            assert second["callback_query"]["id"] == press.id
            assert tg.webhook is not None and (tg.webhook.delivered, tg.webhook.failed) == (2, 1)
            await tg.wait_until_delivered()

            await bot.delete_webhook()
            await ann.send(group, "/rules")
            await asyncio.sleep(0.2)
            assert len(got) == 3 and tg.pending_updates == 1  # it waits for getUpdates
            [left] = await bot.get_updates(timeout=0)
            assert left.message.text == "/rules"
    finally:
        await runner.cleanup()


@async_test
async def test_late_callback_answer_is_refused(make_fake_telegram: FakeTelegramFactory) -> None:
    clock = FakeClock()
    tg = await make_fake_telegram(callback_answer_timeout=15.0, clock=clock)
    ann = tg.add_user("Ann")
    group = tg.add_group("Durak", [ann])
    async with ptb_bot(tg) as bot:
        sent = await bot.send_message(group.id, "Move", reply_markup=keyboard("take"))
        press = tg.press_button(ann, tg.message(group, sent.message_id), "TAKE")
        clock.advance(15.5)
        with pytest.raises(BadRequest, match="Query is too old"):
            await bot.answer_callback_query(press.id, "late")
    assert not press.answered and press.late_answer is not None
    assert tg.late_callback_answers == 1
    with pytest.raises(TimeoutError):
        await press.wait(timeout=0.01)


@async_test
async def test_second_get_updates_terminates_the_first(fake_telegram: FakeTelegram) -> None:
    # Two bot instances (one PTB Bot has a single getUpdates connection).
    async with ptb_bot(fake_telegram) as bot, ptb_bot(fake_telegram) as other:
        first = asyncio.create_task(bot.get_updates(timeout=5))
        await asyncio.sleep(0.05)
        second = asyncio.create_task(other.get_updates(timeout=0))
        with pytest.raises(Conflict, match="terminated by other getUpdates request"):
            await asyncio.wait_for(first, 2)
        assert await second == ()


@async_test
async def test_group_privacy_mode_and_commands(fake_telegram: FakeTelegram) -> None:
    tg = fake_telegram
    ann = tg.add_user("Ann", "ann")
    group = tg.add_group("Durak", [ann])
    async with ptb_bot(tg) as bot:
        await ann.send(group, "hello everyone")  # privacy mode: not delivered
        await ann.send(group, "/newgame@fake_durak_bot")
        await ann.send(group, "/newgame@other_bot")
        await ann.send(group, "/join")
        updates = await bot.get_updates()
        assert [u.message.text for u in updates] == ["/newgame@fake_durak_bot", "/join"]
        command = updates[0].message.entities[0]
        assert (command.type, command.offset, command.length) == ("bot_command", 0, 23)
        await bot.set_my_commands([("newgame", "Start a game")])
        await bot.set_my_commands([("newgame", "Начать игру")], language_code="ru")
    assert tg.commands() == [{"command": "newgame", "description": "Start a game"}]
    assert tg.commands(language_code="ru")[0]["description"] == "Начать игру"
    assert len(group.messages) == 4


@async_test
async def test_membership_migration_and_documents(fake_telegram: FakeTelegram) -> None:
    tg = fake_telegram
    ann, bob = tg.add_user("Ann"), tg.add_user("Bob")
    old = tg.add_group("Basic", [bob], admins=[ann], supergroup=False)
    async with ptb_bot(tg) as bot:
        assert (await bot.get_chat_member(old.id, ann.id)).status == "creator"
        assert (await bot.get_chat_member(old.id, bob.id)).status == "member"
        assert (await bot.get_chat_member(old.id, tg.add_user("Eve").id)).status == "left"
        admins = await bot.get_chat_administrators(old.id)
        assert [a.user.id for a in admins] == [ann.id]
        with pytest.raises(BadRequest, match="Message can't be deleted"):  # bot not admin
            await bot.delete_message(old.id, tg.send_message(bob, old, "hi").message_id)

        new = tg.migrate_group(old)
        with pytest.raises(ChatMigrated) as migrated:
            await bot.send_message(old.id, "hello")
        assert migrated.value.new_chat_id == new.id
        doc = await bot.send_document(
            new.id,
            io.BytesIO(b"log data"),
            filename="game.log",
            caption="<b>log</b>",
            parse_mode="HTML",
        )
        assert doc.caption == "log" and doc.document.file_name == "game.log"
        file = await bot.get_file(doc.document.file_id)
        assert bytes(await file.download_as_bytearray()) == b"log data"

        tg.remove_bot_from_group(new, ann)
        with pytest.raises(Forbidden, match="bot was kicked from the supergroup chat"):
            await bot.send_message(new.id, "still here?")
        updates = await bot.get_updates()
    assert tg.message(new, doc.message_id).document.data == b"log data"
    assert any(u.message and u.message.migrate_to_chat_id == new.id for u in updates)
    assert updates[-1].my_chat_member.new_chat_member.status == "kicked"


@async_test
async def test_wait_for_wakes_on_change(fake_telegram: FakeTelegram) -> None:
    tg = fake_telegram
    group = tg.add_group("Durak", [tg.add_user("Ann")])

    async def send_later() -> None:
        await asyncio.sleep(0.05)
        async with ptb_bot(tg) as bot:
            await bot.send_message(group.id, "hello there")

    task = asyncio.create_task(send_later())
    message = await tg.wait_for_bot_message(group, contains="hello", timeout=3)
    assert message.plain_text == "hello there"
    await task
    with pytest.raises(TimeoutError):
        await tg.wait_for(lambda: tg.request_count("sendMessage") > 1, timeout=0.05)
    assert tg.requests("sendMessage")[0].params["text"] == "hello there"
    assert tg.internal_errors == []


# ------------------------------------------------------------------------- PTB Application


@async_test
async def test_application_receives_command_and_replies(fake_telegram: FakeTelegram) -> None:
    tg = fake_telegram
    ann = tg.add_user("Ann", "ann")
    group = tg.add_group("Durak", [ann])

    async def new_game(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_chat is not None
        await context.bot.send_message(
            update.effective_chat.id,
            f"Game by <b>{update.effective_user.first_name}</b>",
            parse_mode="HTML",
            reply_markup=keyboard("join"),
        )

    async def on_button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.callback_query is not None
        await update.callback_query.answer(f"joined via {update.callback_query.data}")

    application = (
        Application.builder()
        .token(tg.token)
        .base_url(tg.base_url)
        .base_file_url(tg.base_file_url)
        .build()
    )
    application.add_handler(CommandHandler("newgame", new_game))
    application.add_handler(CallbackQueryHandler(on_button))
    await application.initialize()
    assert application.updater is not None
    await application.updater.start_polling(poll_interval=0, timeout=1)
    await application.start()
    try:
        await ann.send(group, "/newgame@fake_durak_bot")
        reply = await tg.wait_for_bot_message(group, contains="Game by", timeout=5)
        assert reply.text == "Game by <b>Ann</b>" and reply.plain_text == "Game by Ann"
        answer = await tg.press(ann, group, reply.message_id, "join").wait(timeout=5)
        assert answer.text == "joined via join"
    finally:
        await application.updater.stop()
        await application.stop()
        await application.shutdown()
    assert tg.pending_updates == 0  # PTB confirmed everything on shutdown
    assert tg.request_count("deleteWebhook") == 1
    # PTB sends form-encoded strings; its shutdown poll uses timeout 0 to confirm updates
    assert any(r.params.get("timeout") == "0" for r in tg.requests("getUpdates"))
