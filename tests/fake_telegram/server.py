"""A fake Telegram Bot API server for end-to-end tests of the bot (stdlib asyncio only).

What it fakes
    The HTTP Bot API as python-telegram-bot (PTB) uses it: ``POST /bot<TOKEN>/<method>`` with
    form-urlencoded, multipart or JSON bodies (GET query parameters work too), HTTP/1.1
    keep-alive and concurrent connections, answers shaped exactly like Telegram's
    (``{"ok": true, "result": ...}`` or ``{"ok": false, "error_code", "description",
    "parameters"}`` with the matching HTTP status), so PTB raises its real exception classes
    (BadRequest, Forbidden, RetryAfter, InvalidToken, Conflict, ChatMigrated).
    Methods: getMe, getUpdates (offset/limit/long-poll timeout/allowed_updates, 409 when a
    newer poll supersedes an older one), set/delete/getWebhook(Info) (stored only),
    set/get/deleteMyCommands per scope + language, sendMessage, sendDocument (+ getFile and
    downloads under ``base_file_url``), editMessageText/Caption/ReplyMarkup, deleteMessage(s),
    answerCallbackQuery, getChat, getChatMember, getChatAdministrators, getChatMemberCount,
    pin/unpin(All)ChatMessage(s), leaveChat, sendChatAction and a few stored settings.
    Telegram behaviours: per-chat message ids, edit history, "message is not modified"
    (Telegram's words, counted per chat: ``not_modified_count``), deleted messages, 403 for
    users who never started or blocked the bot, group privacy mode, text/caption/callback/
    keyboard limits, callback answer timeout, flood limits (see
    :mod:`tests.fake_telegram.ratelimit`), group-to-supergroup migration.

What it does not fake
    Inline mode, payments, media other than documents, Markdown parse
    modes (raw text kept, no entities), forum topics, message reactions, business accounts,
    channels, chat_member updates, the 48-hour edit/delete window, and real Telegram's exact
    wording of rarely seen errors (common ones match Telegram).

Configuration
    ``FakeTelegram(rate_limits=RateLimits(...))`` sets the flood limits (``RateLimits().scaled(
    0.01)`` compresses time, ``RateLimits.observe_only()`` never answers 429 but counts
    violations); ``clock=`` injects a time source for rate limits and the callback answer
    timeout (``callback_answer_timeout``, 15 s by default); ``privacy_mode`` (default on)
    hides plain group messages from the bot unless it is an admin or they reply to it.
    ``call_delay`` (seconds, default 0) holds every Bot API call that long before answering,
    as the real Bot API's tens of milliseconds do (loopback answers in a fraction of one).
    After setWebhook, updates are POSTed to ``webhook_target`` (the bot's local address
    behind the URL it registered, :mod:`.webhook`) when a test sets it.

Test-side use (all inside one event loop)::

    async with FakeTelegram() as tg:
        alice = tg.add_user("Alice", "alice")
        group = tg.add_group("Durak", [alice])
        app = Application.builder().token(tg.token).base_url(tg.base_url)...
        await alice.send(group, "/newgame")
        reply = await tg.wait_for_bot_message(group)
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import logging
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, TypeVar
from urllib.parse import unquote

from ._http import HttpError, HttpRequest, HttpResponse, HttpServer, decode_params
from ._params import Params
from ._text import command_entities, command_target
from .api import BotApi, api_scope_key, member_payload
from .errors import QUERY_TOO_OLD, ApiError, bad_request
from .models import (
    JSON,
    Button,
    CallbackAnswer,
    CallbackPress,
    Chat,
    Message,
    RequestRecord,
    ShownText,
    StoredFile,
    User,
)
from .ratelimit import RateLimiter, RateLimits, RateStats
from .updates import UpdateQueue
from .webhook import DEFAULT_MAX_CONNECTIONS, WebhookDelivery

_LOGGER = logging.getLogger(__name__)
_TOKEN_RE = re.compile(r"\d+:[A-Za-z0-9_-]+")
DEFAULT_TOKEN = "123456789:AAFakeTelegramTokenForTests_0123456789"
T = TypeVar("T")


class FakeTelegram:
    """The fake server plus the test-side API to act as users and inspect what the bot did."""

    def __init__(
        self,
        token: str = DEFAULT_TOKEN,
        *,
        bot_username: str = "fake_durak_bot",
        bot_first_name: str = "Durak Test Bot",
        rate_limits: RateLimits | None = None,
        callback_answer_timeout: float = 15.0,
        privacy_mode: bool = True,
        clock: Callable[[], float] = time.monotonic,
        host: str = "127.0.0.1",
        port: int = 0,
        log_requests: bool = True,
        call_delay: float = 0.0,
    ) -> None:
        bot_id = int(token.split(":", 1)[0]) if token.split(":", 1)[0].isdigit() else 1
        self.token = token
        self.bot = User(bot_id, bot_first_name, bot_username, None, is_bot=True, server=self)
        self.rate_limits = rate_limits or RateLimits()
        self.limiter = RateLimiter(self.rate_limits, clock)
        self.callback_answer_timeout = callback_answer_timeout
        self.privacy_mode = privacy_mode
        #: getMe's ``has_main_web_app``: the bot has a main Mini App (set before the bot starts)
        self.has_main_web_app = False
        self.host = host
        self.log_requests = log_requests
        self.call_delay = call_delay
        self._requested_port = port
        self._clock = clock

        self.users: dict[int, User] = {}
        self.chats: dict[int, Chat] = {}
        self._chats_by_username: dict[str, Chat] = {}
        self.updates = UpdateQueue()
        self.files: dict[str, StoredFile] = {}
        self._files_by_path: dict[str, StoredFile] = {}
        self.bot_commands: dict[tuple[str, str], list[JSON]] = {}
        self.bot_settings: dict[str, JSON] = {}
        self.webhook_url = ""
        #: Where a webhook's updates are POSTed: the bot's local address behind the https
        #: URL it registers (see :mod:`.webhook`). None: nothing is delivered (a test never
        #: reaches out to the URL the bot names), the updates wait in the queue.
        self.webhook_target: str | None = None
        self.webhook: WebhookDelivery | None = None
        self.callbacks: dict[str, CallbackPress] = {}
        self._unanswered: dict[str, CallbackPress] = {}
        self.late_callback_answers = 0
        self.repeated_callback_answers = 0
        #: Edits refused as "message is not modified", per chat id.
        self.not_modified: Counter[int] = Counter()
        self.request_counts: Counter[str] = Counter()
        self._requests: dict[str, list[RequestRecord]] = {}
        self.internal_errors: list[str] = []

        self._user_ids = itertools.count(1_000_001)
        self._group_ids = itertools.count(1)
        self._file_ids = itertools.count(1)
        self._query_ids = itertools.count(1)
        self._changed = asyncio.Event()
        self._http = HttpServer(self._handle_http)
        self._api = BotApi(self)
        self.port = 0

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> FakeTelegram:
        self.port = await self._http.start(self.host, self._requested_port)
        return self

    async def stop(self) -> None:
        await self.set_webhook("")
        await self._http.stop()

    async def set_webhook(
        self, url: str, secret: str = "", max_connections: int = DEFAULT_MAX_CONNECTIONS
    ) -> None:
        """setWebhook (``url`` empty: deleteWebhook): delivery to the new URL replaces any."""
        if self.webhook is not None:
            await self.webhook.stop()
            self.webhook = None
        self.webhook_url = url
        if url and self.webhook_target:
            self.webhook = WebhookDelivery(self, self.webhook_target, secret, max_connections)
            self.webhook.start()

    async def __aenter__(self) -> FakeTelegram:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @property
    def base_url(self) -> str:
        """For ``ApplicationBuilder().base_url(...)``; PTB appends the token itself."""
        return f"http://{self.host}:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        return f"http://{self.host}:{self.port}/file/bot"

    # ------------------------------------------------------------------ world building

    def add_user(
        self,
        first_name: str,
        username: str | None = None,
        language_code: str | None = "en",
        *,
        last_name: str | None = None,
        started: bool = False,
    ) -> User:
        user = User(
            next(self._user_ids),
            first_name,
            username,
            language_code,
            last_name,
            started=started,
            server=self,
        )
        self.users[user.id] = user
        return user

    def add_group(
        self,
        title: str,
        members: Iterable[User] = (),
        admins: Iterable[User] = (),
        *,
        supergroup: bool = True,
        creator: User | None = None,
        bot_admin: bool = False,
        members_can_pin: bool = True,
        username: str | None = None,
    ) -> Chat:
        """A group with the bot in it; ``creator`` defaults to the first admin."""
        n = next(self._group_ids)
        chat_id = -(1_000_000_000_000 + n) if supergroup else -(4_000_000_000 + n)
        admin_list = list(admins)
        creator = creator or (admin_list[0] if admin_list else None)
        chat = Chat(
            chat_id,
            "supergroup" if supergroup else "group",
            title=title,
            username=username,
            creator_id=creator.id if creator else None,
            bot_status="administrator" if bot_admin else "member",
            members_can_pin=members_can_pin,
        )
        for user in [*members, *admin_list, *([creator] if creator else [])]:
            chat.members[user.id] = user
        chat.admins = {user.id for user in admin_list}
        self._register_chat(chat)
        return chat

    def _register_chat(self, chat: Chat) -> None:
        self.chats[chat.id] = chat
        if chat.username:
            self._chats_by_username[chat.username.lower()] = chat

    def private_chat(self, user: User) -> Chat:
        chat = self.chats.get(user.id)
        if chat is None:
            chat = Chat(user.id, "private", user=user)
            self._register_chat(chat)
        return chat

    def find_chat(self, chat_id: int | str) -> Chat | None:
        """Resolve a Bot API ``chat_id`` (number, numeric string or ``@username``)."""
        if isinstance(chat_id, str):
            if chat_id.startswith("@"):
                return self._chats_by_username.get(chat_id[1:].lower())
            try:
                chat_id = int(chat_id)
            except ValueError:
                return None
        chat = self.chats.get(chat_id)
        if chat is None and chat_id in self.users:
            chat = self.private_chat(self.users[chat_id])
        return chat

    def chat(self, chat_id: int) -> Chat:
        chat = self.find_chat(chat_id)
        if chat is None:
            raise LookupError(f"no chat {chat_id}")
        return chat

    def add_member(self, chat: Chat, user: User) -> Message:
        """``user`` joins the group (the bot sees a ``new_chat_members`` service message)."""
        chat.members[user.id] = user
        return self._service_message(chat, user, {"new_chat_members": [user.to_api()]})

    def remove_member(self, chat: Chat, user: User) -> Message:
        chat.members.pop(user.id, None)
        chat.admins.discard(user.id)
        return self._service_message(chat, user, {"left_chat_member": user.to_api()})

    # ------------------------------------------------------------------ acting as users

    def send_message(
        self,
        user: User,
        chat: Chat,
        text: str,
        *,
        reply_to: Message | None = None,
        topic: int | None = None,
    ) -> Message:
        """``user`` writes ``text`` in ``chat``; the bot gets it unless privacy mode hides it.

        In a private chat this also marks the user as having started the bot (and unblocks
        it, as pressing "Restart" does). In groups ``user`` must be a member.
        """
        self._check_user_can_write(user, chat)
        if topic is not None and topic not in chat.topics:
            raise ValueError(f"chat {chat.id} has no topic {topic}")
        if chat.is_private:
            self._ensure_started(user)
        message = Message(
            chat,
            chat.allocate_message_id(),
            user,
            _now(),
            text=text,
            plain_text=text,
            entities=command_entities(text),
            reply_to=reply_to,
            topic=topic,
        )
        self._store(message)
        if self._bot_receives(chat, message):
            self.updates.push("message", {"message": message.to_api()})
        self._notify()
        return message

    #: Telegram's placeholder senders: "from" of a message sent on behalf of a chat.
    ANONYMOUS_ADMIN = User(1087968824, "Group", username="GroupAnonymousBot", is_bot=True)
    CHANNEL_SENDER = User(136817688, "Channel", username="Channel_Bot", is_bot=True)

    def send_as_chat(self, chat: Chat, text: str, sender_chat: Chat) -> Message:
        """A message in ``chat`` sent on behalf of ``sender_chat``: the group itself (an
        anonymous admin) or a channel. ``from`` is Telegram's placeholder user, as there."""
        placeholder = self.ANONYMOUS_ADMIN if sender_chat is chat else self.CHANNEL_SENDER
        message = Message(
            chat,
            chat.allocate_message_id(),
            placeholder,
            _now(),
            text=text,
            plain_text=text,
            entities=command_entities(text),
            sender_chat=sender_chat,
        )
        self._store(message)
        if self._bot_receives(chat, message):
            self.updates.push("message", {"message": message.to_api()})
        self._notify()
        return message

    def start_bot(self, user: User, payload: str | None = None) -> Message:
        """``user`` presses Start (``/start PAYLOAD`` for deep links); also unblocks."""
        text = f"/start {payload}" if payload else "/start"
        return self.send_message(user, self.private_chat(user), text)

    def block_bot(self, user: User) -> None:
        if user.blocked:
            return
        user.blocked = True
        if user.started:
            self._push_my_chat_member(self.private_chat(user), user, "member", "kicked")
        self._notify()

    def unblock_bot(self, user: User) -> None:
        if not user.blocked:
            return
        user.blocked = False
        self._push_my_chat_member(self.private_chat(user), user, "kicked", "member")
        self._notify()

    def press(
        self,
        user: User,
        chat: Chat,
        message_id: int,
        callback_data: str,
        *,
        check: bool = True,
    ) -> CallbackPress:
        """Press an inline button: the bot gets a callback_query; await the returned handle
        for its answerCallbackQuery. ``check=False`` allows forged data and deleted messages.
        """
        message = chat.message(message_id)
        if check and message.deleted:
            raise ValueError(f"message {message_id} in chat {chat.id} is deleted")
        if check and callback_data not in message.callback_data:
            raise ValueError(
                f"{callback_data!r} is not on the keyboard of message {message_id}: "
                f"{message.callback_data}"
            )
        query_id = f"{self.bot.id}{next(self._query_ids):010d}"
        press = CallbackPress(
            query_id, user, message, callback_data, self._clock(), self._loop().create_future()
        )
        self.callbacks[query_id] = press
        self._unanswered[query_id] = press
        self.updates.push(
            "callback_query",
            {
                "callback_query": {
                    "id": query_id,
                    "from": user.to_api(),
                    "message": message.to_api(),
                    "chat_instance": str(abs(chat.id) * 7919 % 10**12),
                    "data": callback_data,
                }
            },
        )
        self._notify()
        return press

    def press_button(self, user: User, message: Message, text: str) -> CallbackPress:
        """Press the button labelled ``text`` (exact, else substring match)."""
        data = message.button(text).callback_data
        if data is None:
            raise ValueError(f"button {text!r} has no callback_data")
        return self.press(user, message.chat, message.message_id, data)

    def buttons(self, chat: Chat, message_id: int) -> list[Button]:
        return chat.message(message_id).buttons

    # ------------------------------------------------------------------ membership events

    def remove_bot_from_group(
        self, chat: Chat, by: User | None = None, *, kicked: bool = True
    ) -> None:
        """The bot is removed (``kicked``) or leaves; it gets a my_chat_member update."""
        self.set_bot_status(chat, "kicked" if kicked else "left", actor=by or self._actor(chat))

    def add_bot_to_group(self, chat: Chat, by: User | None = None, *, admin: bool = False) -> None:
        status = "administrator" if admin else "member"
        self.set_bot_status(chat, status, actor=by or self._actor(chat))

    def set_bot_status(self, chat: Chat, status: str, *, actor: User) -> None:
        old = chat.bot_status
        chat.bot_status = status
        if old != status:
            self._push_my_chat_member(chat, actor, old, status)
        self._notify()

    def migrate_group(self, chat: Chat, by: User | None = None) -> Chat:
        """Upgrade a basic group to a supergroup; sends to the old id then fail with
        ``migrate_to_chat_id`` (PTB raises ChatMigrated)."""
        if chat.type != "group" or chat.migrated_to is not None:
            raise ValueError("only a not yet migrated basic group can be migrated")
        actor = by or self._actor(chat)
        new = Chat(
            -(1_000_000_000_000 + next(self._group_ids)),
            "supergroup",
            title=chat.title,
            members=dict(chat.members),
            admins=set(chat.admins),
            creator_id=chat.creator_id,
            bot_status=chat.bot_status,
            members_can_pin=chat.members_can_pin,
        )
        self._register_chat(new)
        self._service_message(chat, actor, {"migrate_to_chat_id": new.id})
        chat.migrated_to = new
        self._service_message(new, actor, {"migrate_from_chat_id": chat.id})
        return new

    # ------------------------------------------------------------------ inspection

    def messages(self, chat: Chat, *, include_deleted: bool = True) -> list[Message]:
        return [m for m in chat.messages.values() if include_deleted or not m.deleted]

    def message(self, chat: Chat, message_id: int) -> Message:
        return chat.message(message_id)

    def texts_ever_shown(
        self, chat: Chat, *, from_bot_only: bool = True, include_buttons: bool = False
    ) -> list[str]:
        return chat.texts_ever_shown(from_bot_only=from_bot_only, include_buttons=include_buttons)

    def unanswered_callbacks(self) -> list[CallbackPress]:
        return list(self._unanswered.values())

    @property
    def stats(self) -> RateStats:
        """Whole-bot counters: accepted sends/edits, 429 answers, violations."""
        return self.limiter.total

    def rate_limited_count(self, chat: Chat | None = None) -> int:
        """How many 429 answers the bot got (in ``chat``, or in total)."""
        return (chat.stats if chat else self.limiter.total).rate_limited

    def not_modified_count(self, chat: Chat | None = None) -> int:
        """How many edits (in ``chat``, or in total) changed nothing and were refused as
        "message is not modified": each was a request the bot need not have made."""
        if chat is not None:
            return self.not_modified[chat.id]
        return sum(self.not_modified.values())

    def limit_violations(self, chat: Chat | None = None) -> int:
        """Sends/edits accepted beyond a limit (0 by construction when limits are enforced)."""
        if chat is not None:
            return chat.stats.violations
        return self.limiter.total.violations + self.limiter.global_violations

    def requests(self, method: str | None = None) -> list[RequestRecord]:
        if method is not None:
            return list(self._requests.get(method.lower(), []))
        return sorted(
            (r for records in self._requests.values() for r in records), key=lambda r: r.at
        )

    def request_count(self, method: str) -> int:
        return self.request_counts[method.lower()]

    def commands(self, scope: JSON | None = None, language_code: str = "") -> list[JSON]:
        return list(self.bot_commands.get((api_scope_key(scope), language_code), []))

    @property
    def connections_accepted(self) -> int:
        """TCP connections opened by clients so far (keep-alive keeps this low)."""
        return self._http.connections_accepted

    @property
    def pending_updates(self) -> int:
        return len(self.updates)

    def push_raw_update(self, kind: str, payload: JSON) -> int:
        """Queue an update exactly as given, e.g. one the client cannot parse (a sticker
        without its required fields); its update_id."""
        update_id = self.updates.push(kind, {kind: payload})
        self._notify()
        return update_id

    # ------------------------------------------------------------------ waiting

    async def wait_for(
        self, predicate: Callable[[], T | None], timeout: float = 5.0, *, what: str = ""
    ) -> T:
        """Wait until ``predicate()`` is truthy (re-checked after every state change)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            result = predicate()
            if result:
                return result
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"timed out after {timeout}s waiting for {what or predicate}")
            changed = self._changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), remaining)

    async def wait_for_bot_message(
        self,
        chat: Chat,
        *,
        after: int | None = None,
        contains: str | None = None,
        timeout: float = 5.0,
    ) -> Message:
        """The first bot message in ``chat`` with id > ``after`` (default: sent from now on)
        whose plain text contains ``contains``."""
        start = chat.next_message_id - 1 if after is None else after

        def find() -> Message | None:
            for message_id in range(start + 1, chat.next_message_id):
                message = chat.messages.get(message_id)
                if message is None or not message.from_bot:
                    continue
                if contains is None or contains in (message.plain_text or ""):
                    return message
            return None

        return await self.wait_for(find, timeout, what=f"a bot message in chat {chat.id}")

    async def wait_until_delivered(self, timeout: float = 5.0) -> None:
        """Wait until the bot confirmed (fetched and acknowledged) every pending update."""
        await self.wait_for(lambda: len(self.updates) == 0, timeout, what="updates delivered")

    # ------------------------------------------------------------------ state changes
    # (called by the Bot API handlers)

    def add_topic(self, chat: Chat, name: str) -> int:
        """Open a forum topic in the group (which makes it a forum); its thread id is
        the id of the topic's first (service) message, as in Telegram."""
        thread = chat.allocate_message_id()
        chat.topics[thread] = name
        service = Message(
            chat, thread, self._actor(chat), _now(), service={"forum_topic_created": {"name": name}}
        )
        service.topic = thread
        chat.messages[thread] = service
        return thread

    def delete_topic(self, chat: Chat, thread: int) -> None:
        """Delete a forum topic with every message in it, as an admin can: posting
        to it is then refused ("message thread not found"), editing its messages too."""
        del chat.topics[thread]
        for message in chat.messages.values():
            if message.topic == thread:
                self.mark_deleted(message)

    def post_bot_message(self, chat: Chat, **fields: Any) -> Message:
        message = Message(chat, chat.allocate_message_id(), self.bot, _now(), **fields)
        self._store(message)
        return message

    def apply_edit(
        self,
        message: Message,
        *,
        text: str | None,
        plain_text: str | None,
        entities: list[JSON],
        parse_mode: str | None,
        reply_markup: JSON | None,
    ) -> None:
        message.text = text
        message.plain_text = plain_text
        message.entities = entities
        message.parse_mode = parse_mode
        message.reply_markup = reply_markup
        message.edit_date = _now()
        message.history.append(message.snapshot())
        self._record_shown(message)

    def count_not_modified(self, chat: Chat) -> None:
        self.not_modified[chat.id] += 1

    def mark_deleted(self, message: Message) -> None:
        message.deleted = True
        if message.message_id in message.chat.pinned:
            message.chat.pinned.remove(message.message_id)

    def pin(self, chat: Chat, message: Message) -> None:
        if message.message_id in chat.pinned:
            chat.pinned.remove(message.message_id)
        chat.pinned.append(message.message_id)
        if chat.is_group:  # Telegram posts a service message; bots don't get their own
            service = Message(
                chat,
                chat.allocate_message_id(),
                self.bot,
                _now(),
                service={"pinned_message": message.to_api(with_reply=False)},
            )
            chat.messages[service.message_id] = service

    def answer_callback(self, query_id: str, answer: CallbackAnswer) -> None:
        press = self.callbacks.get(query_id)
        if press is None:
            raise bad_request(QUERY_TOO_OLD)
        if press.answered:
            self.repeated_callback_answers += 1
            raise bad_request(QUERY_TOO_OLD)
        if self._clock() - press.created_at > self.callback_answer_timeout:
            self.late_callback_answers += 1
            press.late_answer = answer
            raise bad_request(QUERY_TOO_OLD)
        press.future.set_result(answer)
        self._unanswered.pop(query_id, None)

    def store_file(self, file_name: str | None, mime_type: str | None, data: bytes) -> StoredFile:
        n = next(self._file_ids)
        suffix = file_name.rsplit(".", 1)[-1] if file_name and "." in file_name else "bin"
        stored = StoredFile(
            file_id=f"BQACAgIAAxkDAAI{n:08d}",
            file_unique_id=f"AgAD{n:06d}",
            file_name=file_name,
            mime_type=mime_type,
            data=data,
            file_path=f"documents/file_{n}.{suffix}",
        )
        self.files[stored.file_id] = stored
        self._files_by_path[stored.file_path] = stored
        return stored

    # ------------------------------------------------------------------ internals

    def _loop(self) -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _store(self, message: Message) -> None:
        message.chat.messages[message.message_id] = message
        message.history.append(message.snapshot())
        self._record_shown(message)

    def _record_shown(self, message: Message) -> None:
        if message.plain_text is None and not message.reply_markup:
            return
        message.chat.shown.append(
            ShownText(
                message.message_id,
                message.plain_text or "",
                message.text or "",
                tuple(b.text for b in message.buttons),
                message.from_bot,
            )
        )

    def _actor(self, chat: Chat) -> User:
        if chat.creator_id is not None and chat.creator_id in self.users:
            return self.users[chat.creator_id]
        return next(iter(chat.members.values()), self.bot)

    def _check_user_can_write(self, user: User, chat: Chat) -> None:
        if chat.migrated_to is not None:
            raise ValueError(f"chat {chat.id} migrated to {chat.migrated_to.id}")
        if chat.is_private and chat.user is not user:
            raise ValueError(f"{user.first_name} cannot write in another user's private chat")
        if chat.is_group and user.id not in chat.members:
            raise ValueError(f"{user.first_name} is not a member of {chat.title!r}")

    def _ensure_started(self, user: User) -> None:
        if user.blocked:
            self.unblock_bot(user)
        user.started = True

    def _bot_receives(self, chat: Chat, message: Message) -> bool:
        if chat.is_private:
            return True
        if not chat.bot_present:
            return False
        target = command_target(message.text or "")
        if target is not None and target[1] is not None:
            addressed_here = target[1].lower() == (self.bot.username or "").lower()
            return addressed_here or not self.privacy_mode or chat.bot_is_admin
        if not self.privacy_mode or chat.bot_is_admin or target is not None:
            return True
        return message.reply_to is not None and message.reply_to.from_bot

    def _service_message(self, chat: Chat, actor: User, fields: JSON) -> Message:
        message = Message(chat, chat.allocate_message_id(), actor, _now(), service=fields)
        chat.messages[message.message_id] = message
        if chat.bot_present:  # service messages pass privacy mode
            self.updates.push("message", {"message": message.to_api()})
        self._notify()
        return message

    def _push_my_chat_member(self, chat: Chat, actor: User, old: str, new: str) -> None:
        self.updates.push(
            "my_chat_member",
            {
                "my_chat_member": {
                    "chat": chat.to_api(),
                    "from": actor.to_api(),
                    "date": _now(),
                    "old_chat_member": member_payload(self.bot, old),
                    "new_chat_member": member_payload(self.bot, new),
                }
            },
        )

    # ------------------------------------------------------------------ HTTP

    def _check_token(self, token: str) -> None:
        if token == self.token:
            return
        if _TOKEN_RE.fullmatch(token):
            raise ApiError(401, "Unauthorized")
        raise ApiError(404, "Not Found")

    async def _handle_http(self, request: HttpRequest) -> HttpResponse:
        path = unquote(request.path)
        if path.startswith("/file/bot"):
            return self._serve_file(path[len("/file/bot") :])
        if not path.startswith("/bot"):
            return HttpResponse.json(404, ApiError(404, "Not Found").payload())
        token, _, method = path[len("/bot") :].partition("/")
        arrived = self._clock()
        if self.call_delay > 0:
            await asyncio.sleep(self.call_delay)
        params = Params({}, {}, method)
        queued_before = len(self.updates)
        try:
            self._check_token(token)
            handler = self._api.lookup(method)
            if handler is None:
                raise ApiError(404, "Not Found")
            try:
                values, files = decode_params(request)
            except HttpError as exc:
                raise bad_request(str(exc)) from None
            params = Params(values, files, method)
            result = handler(params)
            if inspect.isawaitable(result):
                result = await result
            status, payload = 200, {"ok": True, "result": result}
        except ApiError as exc:
            status, payload = exc.status, exc.payload()
        except Exception as exc:  # a bug in the fake: make it loud in tests
            _LOGGER.exception("fake Telegram failed on %s", method)
            self.internal_errors.append(f"{method}: {exc!r}")
            status = 500
            payload = ApiError(500, f"Internal Server Error: {exc!r}").payload()
        agent = request.headers.get("user-agent")
        self._record_request(method, params, status, payload, agent, arrived)
        if method.lower() != "getupdates" or len(self.updates) != queued_before:
            self._notify()
        return HttpResponse.json(status, payload)

    def _record_request(
        self,
        method: str,
        params: Params,
        status: int,
        payload: JSON,
        agent: str | None = None,
        arrived: float | None = None,
    ) -> None:
        key = method.lower()
        self.request_counts[key] += 1
        if not self.log_requests:
            return
        record = RequestRecord(
            method,
            params.loggable(),
            tuple(params.files),
            status,
            payload.get("description"),
            self._clock(),
            agent or "",
            self._clock() if arrived is None else arrived,
        )
        self._requests.setdefault(key, []).append(record)

    def _serve_file(self, rest: str) -> HttpResponse:
        token, _, file_path = rest.partition("/")
        try:
            self._check_token(token)
        except ApiError as exc:
            return HttpResponse.json(exc.status, exc.payload())
        stored = self._files_by_path.get(file_path)
        if stored is None:
            return HttpResponse.json(404, ApiError(404, "Not Found").payload())
        return HttpResponse(200, stored.data, stored.mime_type or "application/octet-stream")


def _now() -> int:
    return int(time.time())
