"""Issue 26 item 5: one update the client cannot parse costs one line, not the bot.

PTB parses a getUpdates batch as a whole: one update it cannot parse (a sticker without
its required fields) failed the batch, every time it was fetched again, for good, with two
CRITICAL tracebacks each time. The bot drops that update with one WARNING (its update_id
and why, never its content), moves the offset past it and goes on; in webhook mode as well,
and a deeply nested body (RecursionError) is answered 400 with one WARNING."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator

import httpx
import pytest

from bot.transport.request import slim_updates
from tests.fake_telegram.fixtures import async_test

from .harness import durak_of, friends_and_admin, running_bot
from .test_webhook import update, webhook_bot

#: Something of the bad update's content that no log line may carry.
CONTENT = "sticker-content-7f3a"


def bad_sticker(chat, user) -> dict:
    """A message whose sticker lacks what PTB's ``Sticker`` requires."""
    return {
        "message_id": 99,
        "date": 1,
        "chat": {"id": chat.id, "type": chat.type, "title": chat.title},
        "from": {"id": user.id, "is_bot": False, "first_name": user.first_name},
        "sticker": {"file_id": CONTENT},
    }


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def at_least(self, level: int) -> list[str]:
        return [r.getMessage() for r in self.records if r.levelno >= level]

    def mention(self, text: str) -> list[logging.LogRecord]:
        """Records whose message or traceback carries ``text``."""
        found = []
        for r in self.records:
            trace = logging.Formatter().formatException(r.exc_info) if r.exc_info else ""
            if text in r.getMessage() + trace + repr(r.args):
                found.append(r)
        return found


@pytest.fixture
def lines() -> Iterator[Lines]:
    handler = Lines()
    root = logging.getLogger()
    root.addHandler(handler)
    yield handler
    root.removeHandler(handler)


@async_test
async def test_a_bad_update_in_a_polled_batch_costs_one_warning(
    make_fake_telegram, tmp_path, lines
):
    server, users, _boss, group = await friends_and_admin(make_fake_telegram, players=1)
    (ann,) = users
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        assert durak_of(app).service is not None
        bad = server.push_raw_update("message", bad_sticker(group, ann))
        sent = await ann.send(group, "/help")  # likely in the same batch, after it
        reply = await server.wait_for_bot_message(group, after=sent.message_id, contains="/newgame")
        assert reply is not None
        await server.wait_until_delivered()
        polls = server.request_count("getUpdates")
        await asyncio.sleep(0.5)  # polling goes on as usual: long polls, not a loop
        assert server.request_count("getUpdates") - polls <= 3
    assert lines.at_least(logging.ERROR) == []
    warned = lines.at_least(logging.WARNING)
    assert warned == [f"update {bad} dropped: PTB cannot parse it ({warned[0].split('(', 1)[1]}"]
    assert "Sticker" in warned[0]
    assert lines.mention(CONTENT) == []


def test_slim_updates_keeps_the_good_updates_of_a_batch_and_the_bad_ones_ids(lines):
    good = {
        "update_id": 7,
        "message": {"message_id": 1, "date": 1, "chat": {"id": 5, "type": "private"}},
    }
    bad = {"update_id": 8, "message": {**good["message"], "sticker": {"file_id": CONTENT}}}
    nameless = {"message": good["message"]}  # no update_id: nothing to move past
    answer = {"ok": True, "result": [good, bad, nameless, {**good, "update_id": 9}]}
    slim = json.loads(slim_updates(json.dumps(answer).encode()))
    assert slim["result"] == [good, {"update_id": 8}, {**good, "update_id": 9}]
    assert len(lines.at_least(logging.WARNING)) == 2 and lines.mention(CONTENT) == []


@async_test
async def test_the_webhook_drops_a_bad_update_and_refuses_a_deep_body(
    make_fake_telegram, tmp_path, lines
):
    async with webhook_bot(make_fake_telegram, tmp_path) as (server, group, user, hook, _):
        headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": "s3cret"}
        bad = {"update_id": 41, "message": bad_sticker(group, user)}
        deep = "[" * 100_000 + "]" * 100_000
        async with httpx.AsyncClient() as client:
            dropped = await client.post(hook, content=json.dumps(bad), headers=headers)
            nested = await client.post(hook, content=deep, headers=headers)
            good = await client.post(
                hook, content=json.dumps(update(42, group, user, "/help")), headers=headers
            )
        # 200: Telegram would send a refused update again and again
        assert (dropped.status_code, nested.status_code, good.status_code) == (200, 400, 200)
        reply = await server.wait_for_bot_message(group, after=0, contains="/newgame")
        assert reply is not None
    assert lines.at_least(logging.ERROR) == []
    warned = lines.at_least(logging.WARNING)
    assert len(warned) == 2, warned
    assert warned[0].startswith("update 41 dropped: PTB cannot parse it (TypeError")
    assert "RecursionError" in warned[1]
    assert lines.mention(CONTENT) == []
