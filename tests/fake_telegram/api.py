"""Bot API method handlers of the fake server.

Each handler takes :class:`Params` and returns the ``result`` value, or raises
:class:`ApiError`. Handlers are plain functions except getUpdates (it long-polls).
State lives on :class:`~tests.fake_telegram.server.FakeTelegram`; handlers validate the
request like Telegram does and then call the server's state-changing helpers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._params import Params
from ._text import EntityParseError, parse_text, strip_text
from .errors import (
    NOT_MODIFIED,
    WEBHOOK_CONFLICT,
    ApiError,
    bad_request,
    conflict,
    forbidden,
    too_many_requests,
)
from .models import JSON, CallbackAnswer, Chat, Message, StoredFile, User
from .ratelimit import retry_after_seconds
from .webhook import DEFAULT_MAX_CONNECTIONS

if TYPE_CHECKING:
    from .server import FakeTelegram

Handler = Callable[["BotApi", Params], Any]

MAX_TEXT = 4096
MAX_CAPTION = 1024
MAX_CALLBACK_DATA_BYTES = 64
MAX_BUTTONS = 100
MAX_CALLBACK_ANSWER = 200
CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)
_BUTTON_ACTIONS = (
    "url",
    "callback_data",
    "web_app",
    "login_url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
)
_COMMAND_RE = re.compile(r"[a-z0-9_]{1,32}")
_PARSE_MODES = frozenset({"html", "markdown", "markdownv2"})
# Stored-and-echoed settings: setter -> (getter, result key of the getter).
_SETTINGS = {
    "setMyDescription": ("getMyDescription", "description"),
    "setMyShortDescription": ("getMyShortDescription", "short_description"),
    "setMyName": ("getMyName", "name"),
}

_REGISTRY: dict[str, Handler] = {}


def api_method(*names: str) -> Callable[[Handler], Handler]:
    """Register a handler; Bot API method names are case-insensitive."""

    def register(handler: Handler) -> Handler:
        for name in names:
            _REGISTRY[name.lower()] = handler
        return handler

    return register


def member_payload(user: User, status: str) -> JSON:
    """A ChatMember object with every field PTB requires for ``status``."""
    data: JSON = {"status": status, "user": user.to_api()}
    if status == "creator":
        data["is_anonymous"] = False
    elif status == "administrator":
        data.update(
            {
                "can_be_edited": False,
                "is_anonymous": False,
                "can_manage_chat": True,
                "can_delete_messages": True,
                "can_manage_video_chats": True,
                "can_restrict_members": True,
                "can_promote_members": False,
                "can_change_info": True,
                "can_invite_users": True,
                "can_post_stories": False,
                "can_edit_stories": False,
                "can_delete_stories": False,
                "can_pin_messages": True,
            }
        )
    elif status == "kicked":
        data["until_date"] = 0
    return data


class BotApi:
    def __init__(self, server: FakeTelegram) -> None:
        self.server = server

    def lookup(self, method: str) -> Callable[[Params], Any] | None:
        handler = _REGISTRY.get(method.lower())
        if handler is None:
            return None
        return lambda params: handler(self, params)

    # ------------------------------------------------------------------ shared checks

    def _chat(self, p: Params, name: str = "chat_id") -> Chat:
        raw = p.raw(name)
        if raw in (None, ""):
            raise bad_request("chat_id is empty")
        chat = self.server.find_chat(raw)
        if chat is None:
            raise bad_request("chat not found")
        if chat.migrated_to is not None:
            raise bad_request(
                "group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": chat.migrated_to.id},
            )
        return chat

    def _check_can_send(self, chat: Chat) -> None:
        if chat.is_private:
            user = chat.user
            assert user is not None
            if user.is_bot:
                raise forbidden("bot can't send messages to bots")
            if user.blocked:
                raise forbidden("bot was blocked by the user")
            if not user.started:
                raise forbidden("bot can't initiate conversation with a user")
            return
        kind = chat.type
        if chat.bot_status == "kicked":
            raise forbidden(f"bot was kicked from the {kind} chat")
        if chat.bot_status == "left":
            raise forbidden(f"bot is not a member of the {kind} chat")

    def _text(
        self, p: Params, name: str = "text", entities_name: str = "entities"
    ) -> tuple[str, str, list[JSON]]:
        raw = p.get_str(name) or ""
        parse_mode = p.get_str("parse_mode") or None
        if parse_mode and parse_mode.lower() not in _PARSE_MODES:
            raise bad_request(f"unsupported parse_mode {parse_mode!r}")
        try:
            plain, entities = parse_text(raw, parse_mode)
        except EntityParseError as exc:
            raise bad_request(f"can't parse entities: {exc}") from None
        if not parse_mode and p.has(entities_name):
            given = p.get_json(entities_name)
            entities = list(given) if isinstance(given, list) else []
        plain, entities = strip_text(plain, entities)
        return raw, plain, entities

    def _markup(self, p: Params) -> JSON | None:
        markup = p.get_json("reply_markup")
        if markup is None:
            return None
        if not isinstance(markup, dict):
            raise bad_request("can't parse reply keyboard markup JSON object")
        if "inline_keyboard" not in markup:
            return markup
        rows = markup["inline_keyboard"]
        _validate_inline_keyboard(rows)
        return markup if any(rows) else None

    def _reply_to(self, p: Params, chat: Chat) -> Message | None:
        params = p.get_json("reply_parameters")
        if params is None and p.has("reply_to_message_id"):
            params = {
                "message_id": p.get_int("reply_to_message_id"),
                "allow_sending_without_reply": p.get_bool("allow_sending_without_reply"),
            }
        if params is None:
            return None
        if not isinstance(params, dict) or "message_id" not in params:
            raise bad_request("can't parse reply parameters JSON object")
        target = chat
        if params.get("chat_id") not in (None, chat.id):
            target = self.server.find_chat(params["chat_id"]) or chat
        message = target.messages.get(int(params["message_id"]))
        if message is None or message.deleted:
            if params.get("allow_sending_without_reply"):
                return None
            raise bad_request("message to be replied not found")
        return message

    def _rate_limit(self, chat: Chat) -> None:
        wait = self.server.limiter.acquire(chat.id, chat.is_private, chat.stats)
        if wait is not None:
            raise too_many_requests(retry_after_seconds(wait))

    def _edit_target(self, p: Params) -> Message:
        if p.has("inline_message_id"):
            raise bad_request("inline messages are not supported by the fake server")
        chat = self._chat(p)
        self._check_can_send(chat)
        message_id = p.require_int("message_id", "message identifier is not specified")
        message = chat.messages.get(message_id)
        if message is None or message.deleted:
            raise bad_request("message to edit not found")
        if not message.from_bot:
            raise bad_request("message can't be edited")
        return message

    def _not_modified(self, message: Message) -> ApiError:
        """Telegram's answer to an edit that changes nothing, counted (each one is a
        request the bot need not have made)."""
        self.server.count_not_modified(message.chat)
        return bad_request(NOT_MODIFIED)

    def _message_id(self, p: Params) -> int:
        return p.require_int("message_id", "message identifier is not specified")


def _validate_inline_keyboard(rows: Any) -> None:
    if not isinstance(rows, list):
        raise bad_request('field "inline_keyboard" of the InlineKeyboardMarkup must be an Array')
    count = 0
    for row in rows:
        if not isinstance(row, list):
            raise bad_request("can't parse inline keyboard row: must be an Array")
        for button in row:
            count += 1
            _validate_button(button)
    if count > MAX_BUTTONS:
        raise bad_request("REPLY_MARKUP_TOO_LONG")


def _validate_button(button: Any) -> None:
    prefix = "can't parse inline keyboard button: "
    if not isinstance(button, dict):
        raise bad_request(prefix + "InlineKeyboardButton must be an Object")
    text = button.get("text")
    if not isinstance(text, str):
        raise bad_request(prefix + "Text must be a String")
    if not text.strip():
        raise bad_request("BUTTON_TEXT_INVALID")
    if "callback_data" in button:
        data = button["callback_data"]
        if not isinstance(data, str) or not 1 <= len(data.encode()) <= MAX_CALLBACK_DATA_BYTES:
            raise bad_request("BUTTON_DATA_INVALID")
    elif not any(key in button for key in _BUTTON_ACTIONS):
        raise bad_request(prefix + "Text buttons are unallowed in the inline keyboard")


# ---------------------------------------------------------------------- bot & updates


@api_method("getMe")
def get_me(api: BotApi, p: Params) -> JSON:
    server = api.server
    return {
        **server.bot.to_api(),
        "can_join_groups": True,
        "can_read_all_group_messages": not server.privacy_mode,
        "supports_inline_queries": False,
        "can_connect_to_business": False,
        "has_main_web_app": server.has_main_web_app,
    }


@api_method("getUpdates")
async def get_updates(api: BotApi, p: Params) -> list[JSON]:
    server = api.server
    if server.webhook_url:
        raise conflict(WEBHOOK_CONFLICT)
    limit = min(max(p.get_int("limit") or 100, 1), 100)
    timeout = max(p.get_float("timeout") or 0.0, 0.0)
    allowed = p.get_json("allowed_updates")
    if allowed is not None and not isinstance(allowed, list):
        raise bad_request("can't parse allowed_updates JSON array")
    return await server.updates.poll(p.get_int("offset"), limit, timeout, allowed)


@api_method("setWebhook")
async def set_webhook(api: BotApi, p: Params) -> bool:
    server = api.server
    url = p.get_str("url") or ""
    connections = p.get_int("max_connections") or DEFAULT_MAX_CONNECTIONS
    if not 1 <= connections <= 100:
        raise bad_request("bad webhook: max_connections must be between 1 and 100")
    if p.get_bool("drop_pending_updates"):
        server.updates.clear()
    allowed = p.get_json("allowed_updates")
    if isinstance(allowed, list):
        server.updates.set_allowed(allowed)
    await server.set_webhook(url, p.get_str("secret_token") or "", connections)
    return True


@api_method("deleteWebhook")
async def delete_webhook(api: BotApi, p: Params) -> bool:
    await api.server.set_webhook("")
    if p.get_bool("drop_pending_updates"):
        api.server.updates.clear()
    return True


@api_method("getWebhookInfo")
def get_webhook_info(api: BotApi, p: Params) -> JSON:
    server = api.server
    info: JSON = {
        "url": server.webhook_url,
        "has_custom_certificate": False,
        "pending_update_count": len(server.updates),
    }
    if server.updates.allowed is not None:
        info["allowed_updates"] = sorted(server.updates.allowed)
    return info


@api_method("close", "logOut")
def close(api: BotApi, p: Params) -> bool:
    return True


# ---------------------------------------------------------------------- commands & settings


def _scope_key(p: Params) -> tuple[str, str]:
    scope = p.get_json("scope") or {"type": "default"}
    if not isinstance(scope, dict) or "type" not in scope:
        raise bad_request("can't parse BotCommandScope JSON object")
    language = p.get_str("language_code") or ""
    if language and not re.fullmatch(r"[a-z]{2}", language):
        raise bad_request("invalid language code specified")
    return api_scope_key(scope), language


def api_scope_key(scope: JSON | None) -> str:
    return json.dumps(scope or {"type": "default"}, sort_keys=True)


@api_method("setMyCommands")
def set_my_commands(api: BotApi, p: Params) -> bool:
    commands = p.get_json("commands")
    if not isinstance(commands, list):
        raise bad_request("can't parse commands JSON array")
    if len(commands) > 100:
        raise bad_request("BOT_COMMANDS_TOO_MUCH")
    cleaned: list[JSON] = []
    for item in commands:
        if not isinstance(item, dict):
            raise bad_request("can't parse BotCommand JSON object")
        command = str(item.get("command", "")).lstrip("/")
        description = str(item.get("description", ""))
        if not _COMMAND_RE.fullmatch(command):
            raise bad_request("BOT_COMMAND_INVALID")
        if not 1 <= len(description.strip()) <= 256:
            raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
        cleaned.append({"command": command, "description": description})
    key = _scope_key(p)
    if cleaned:
        api.server.bot_commands[key] = cleaned
    else:
        api.server.bot_commands.pop(key, None)
    return True


@api_method("getMyCommands")
def get_my_commands(api: BotApi, p: Params) -> list[JSON]:
    return list(api.server.bot_commands.get(_scope_key(p), []))


@api_method("deleteMyCommands")
def delete_my_commands(api: BotApi, p: Params) -> bool:
    api.server.bot_commands.pop(_scope_key(p), None)
    return True


@api_method(*_SETTINGS, "setChatMenuButton", "setMyDefaultAdministratorRights")
def set_setting(api: BotApi, p: Params) -> bool:
    api.server.bot_settings[p.method.lower()] = p.loggable()
    return True


@api_method(*(getter for getter, _ in _SETTINGS.values()))
def get_setting(api: BotApi, p: Params) -> JSON:
    method = p.method
    for setter, (getter, key) in _SETTINGS.items():
        if getter.lower() == method.lower():
            stored = api.server.bot_settings.get(setter.lower(), {})
            return {key: stored.get(key, "")}
    raise ApiError(404, "Not Found")


@api_method("getChatMenuButton")
def get_chat_menu_button(api: BotApi, p: Params) -> JSON:
    stored = api.server.bot_settings.get("setchatmenubutton", {})
    button = stored.get("menu_button")
    if isinstance(button, str):
        button = json.loads(button)
    return button or {"type": "commands"}


# ---------------------------------------------------------------------- messages


@api_method("sendMessage")
def send_message(api: BotApi, p: Params) -> JSON:
    chat = api._chat(p)
    api._check_can_send(chat)
    raw, plain, entities = api._text(p)
    if not plain:
        raise bad_request("message text is empty")
    if len(plain) > MAX_TEXT:
        raise bad_request("message is too long")
    markup = api._markup(p)
    reply_to = api._reply_to(p, chat)
    topic = _topic(p, chat)
    api._rate_limit(chat)
    message = api.server.post_bot_message(
        chat,
        topic=topic,
        text=raw,
        plain_text=plain,
        entities=entities,
        parse_mode=p.get_str("parse_mode"),
        reply_markup=markup,
        reply_to=reply_to,
        disable_notification=p.get_bool("disable_notification"),
        link_preview_options=p.get_json("link_preview_options"),
    )
    return message.to_api()


@api_method("sendDocument")
def send_document(api: BotApi, p: Params) -> JSON:
    chat = api._chat(p)
    api._check_can_send(chat)
    document = _document(api, p)
    raw, plain, entities = api._text(p, "caption", "caption_entities")
    if len(plain) > MAX_CAPTION:
        raise bad_request("message caption is too long")
    markup = api._markup(p)
    reply_to = api._reply_to(p, chat)
    topic = _topic(p, chat)
    api._rate_limit(chat)
    message = api.server.post_bot_message(
        chat,
        topic=topic,
        text=raw or None,
        plain_text=plain or None,
        entities=entities,
        parse_mode=p.get_str("parse_mode"),
        reply_markup=markup,
        reply_to=reply_to,
        disable_notification=p.get_bool("disable_notification"),
        document=document,
    )
    return message.to_api()


def _topic(p: Params, chat: Chat) -> int | None:
    """The forum topic a new message goes to: ``message_thread_id``, which must name one
    of the chat's topics (Telegram refuses any other); none for General."""
    thread = p.get_int("message_thread_id")
    if thread is None or thread == 0:
        return None
    if thread not in chat.topics:
        raise bad_request("message thread not found")
    return thread


def _document(api: BotApi, p: Params) -> StoredFile:
    upload = p.file("document")
    reference = p.get_str("document") or ""
    if upload is None and reference.startswith("attach://"):
        upload = p.file(reference[len("attach://") :])
    if upload is not None:
        if not upload.data:
            raise bad_request("file must be non-empty")
        return api.server.store_file(upload.filename, upload.content_type, upload.data)
    if not reference:
        raise bad_request("there is no document in the request")
    stored = api.server.files.get(reference)
    if stored is not None:
        return stored
    if reference.startswith(("http://", "https://")):
        name = reference.rstrip("/").rsplit("/", 1)[-1] or None
        return api.server.store_file(name, None, b"")
    raise bad_request("wrong file identifier/HTTP URL specified")


@api_method("getFile")
def get_file(api: BotApi, p: Params) -> JSON:
    stored = api.server.files.get(p.require_str("file_id", "invalid file_id"))
    if stored is None:
        raise bad_request("invalid file_id")
    return {
        "file_id": stored.file_id,
        "file_unique_id": stored.file_unique_id,
        "file_size": len(stored.data),
        "file_path": stored.file_path,
    }


@api_method("editMessageText")
def edit_message_text(api: BotApi, p: Params) -> JSON:
    message = api._edit_target(p)
    if message.document is not None or message.plain_text is None:
        raise bad_request("there is no text in the message to edit")
    raw, plain, entities = api._text(p)
    if not plain:
        raise bad_request("message text is empty")
    if len(plain) > MAX_TEXT:
        raise bad_request("message is too long")
    markup = api._markup(p)
    unchanged = (plain, entities, markup) == (
        message.plain_text,
        message.entities,
        message.reply_markup,
    )
    if unchanged:
        raise api._not_modified(message)
    api._rate_limit(message.chat)
    api.server.apply_edit(
        message,
        text=raw,
        plain_text=plain,
        entities=entities,
        parse_mode=p.get_str("parse_mode"),
        reply_markup=markup,
    )
    return message.to_api()


@api_method("editMessageCaption")
def edit_message_caption(api: BotApi, p: Params) -> JSON:
    message = api._edit_target(p)
    if message.document is None:
        raise bad_request("there is no caption in the message to edit")
    raw, plain, entities = api._text(p, "caption", "caption_entities")
    if len(plain) > MAX_CAPTION:
        raise bad_request("message caption is too long")
    markup = api._markup(p)
    if (plain or None, entities, markup) == (
        message.plain_text,
        message.entities,
        message.reply_markup,
    ):
        raise api._not_modified(message)
    api._rate_limit(message.chat)
    api.server.apply_edit(
        message,
        text=raw or None,
        plain_text=plain or None,
        entities=entities,
        parse_mode=p.get_str("parse_mode"),
        reply_markup=markup,
    )
    return message.to_api()


@api_method("editMessageReplyMarkup")
def edit_message_reply_markup(api: BotApi, p: Params) -> JSON:
    message = api._edit_target(p)
    markup = api._markup(p)
    if markup == message.reply_markup:
        raise api._not_modified(message)
    api._rate_limit(message.chat)
    api.server.apply_edit(
        message,
        text=message.text,
        plain_text=message.plain_text,
        entities=message.entities,
        parse_mode=message.parse_mode,
        reply_markup=markup,
    )
    return message.to_api()


def _check_deletable(chat: Chat, message: Message | None) -> Message:
    if message is None or message.deleted:
        raise bad_request("message to delete not found")
    if chat.is_group and not message.from_bot and not chat.bot_is_admin:
        raise bad_request("message can't be deleted")
    return message


@api_method("deleteMessage")
def delete_message(api: BotApi, p: Params) -> bool:
    chat = api._chat(p)
    message = _check_deletable(chat, chat.messages.get(api._message_id(p)))
    api.server.mark_deleted(message)
    return True


@api_method("deleteMessages")
def delete_messages(api: BotApi, p: Params) -> bool:
    chat = api._chat(p)
    ids = p.get_json("message_ids")
    if not isinstance(ids, list) or not 1 <= len(ids) <= 100:
        raise bad_request("message_ids must be a non-empty array of at most 100 identifiers")
    for message_id in ids:
        message = chat.messages.get(int(message_id))
        try:
            _check_deletable(chat, message)
        except ApiError:
            continue  # Telegram skips messages that can't be deleted
        assert message is not None
        api.server.mark_deleted(message)
    return True


@api_method("answerCallbackQuery")
def answer_callback_query(api: BotApi, p: Params) -> bool:
    query_id = p.get_str("callback_query_id") or ""
    text = p.get_str("text")
    if text is not None and len(text) > MAX_CALLBACK_ANSWER:
        raise bad_request("MESSAGE_TOO_LONG")
    answer = CallbackAnswer(
        text=text or None,
        show_alert=p.get_bool("show_alert"),
        url=p.get_str("url") or None,
        cache_time=p.get_int("cache_time") or 0,
    )
    api.server.answer_callback(query_id, answer)
    return True


@api_method("sendChatAction")
def send_chat_action(api: BotApi, p: Params) -> bool:
    chat = api._chat(p)
    api._check_can_send(chat)
    action = p.get_str("action") or ""
    if action not in CHAT_ACTIONS:
        raise bad_request("wrong parameter action in request")
    chat.last_action = action
    return True


# ---------------------------------------------------------------------- chats


@api_method("getChat")
def get_chat(api: BotApi, p: Params) -> JSON:
    chat = api._chat(p)
    if chat.is_private and chat.user is not None and not chat.user.started:
        raise bad_request("chat not found")
    data = {
        **chat.to_api(),
        "accent_color_id": 0,
        "max_reaction_count": 11,
        "accepted_gift_types": {
            "unlimited_gifts": False,
            "limited_gifts": False,
            "unique_gifts": False,
            "premium_subscription": False,
            "gifts_from_channels": False,
        },
    }
    if chat.is_group:
        data["permissions"] = {
            "can_send_messages": True,
            "can_send_polls": True,
            "can_invite_users": True,
            "can_pin_messages": chat.members_can_pin,
            "can_change_info": False,
        }
    if chat.pinned:
        data["pinned_message"] = chat.messages[chat.pinned[-1]].to_api(with_reply=False)
    return data


@api_method("getChatMember")
def get_chat_member(api: BotApi, p: Params) -> JSON:
    chat = api._chat(p)
    user_id = p.require_int("user_id", "invalid user_id specified")
    return member_payload(*_member(api, chat, user_id))


def _member(api: BotApi, chat: Chat, user_id: int) -> tuple[User, str]:
    server = api.server
    if user_id == server.bot.id:
        return server.bot, chat.bot_status if chat.is_group else "member"
    user = server.users.get(user_id)
    if user is None:
        raise bad_request("user not found")
    if chat.is_private:
        if user is not chat.user:
            raise bad_request("user not found")
        return user, "member"
    if user_id == chat.creator_id:
        return user, "creator"
    if user_id in chat.admins:
        return user, "administrator"
    return user, "member" if user_id in chat.members else "left"


@api_method("getChatAdministrators")
def get_chat_administrators(api: BotApi, p: Params) -> list[JSON]:
    chat = api._chat(p)
    if chat.is_private:
        raise bad_request("there are no administrators in the private chat")
    admins = [member_payload(*_member(api, chat, uid)) for uid in sorted(chat.admins)]
    if chat.creator_id is not None and chat.creator_id not in chat.admins:
        admins.insert(0, member_payload(*_member(api, chat, chat.creator_id)))
    admins.sort(key=lambda m: m["status"] != "creator")
    if chat.bot_is_admin:
        admins.append(member_payload(api.server.bot, "administrator"))
    return admins


@api_method("getChatMemberCount")
def get_chat_member_count(api: BotApi, p: Params) -> int:
    chat = api._chat(p)
    if chat.is_private:
        return 2
    return len(chat.members) + (1 if chat.bot_present else 0)


def _check_pin_rights(api: BotApi, chat: Chat) -> None:
    api._check_can_send(chat)
    if chat.is_group and not (chat.bot_is_admin or chat.members_can_pin):
        raise bad_request("not enough rights to manage pinned messages in the chat")


@api_method("pinChatMessage")
def pin_chat_message(api: BotApi, p: Params) -> bool:
    chat = api._chat(p)
    _check_pin_rights(api, chat)
    message = chat.messages.get(api._message_id(p))
    if message is None or message.deleted:
        raise bad_request("message to pin not found")
    api.server.pin(chat, message)
    return True


@api_method("unpinChatMessage")
def unpin_chat_message(api: BotApi, p: Params) -> bool:
    chat = api._chat(p)
    _check_pin_rights(api, chat)
    message_id = p.get_int("message_id")
    if message_id is None and chat.pinned:
        message_id = chat.pinned[-1]
    if message_id in chat.pinned:
        chat.pinned.remove(message_id)
    return True


@api_method("unpinAllChatMessages")
def unpin_all_chat_messages(api: BotApi, p: Params) -> bool:
    chat = api._chat(p)
    _check_pin_rights(api, chat)
    chat.pinned.clear()
    return True


@api_method("leaveChat")
def leave_chat(api: BotApi, p: Params) -> bool:
    chat = api._chat(p)
    if chat.is_private:
        raise bad_request("chat member status can't be changed in private chats")
    api._check_can_send(chat)
    api.server.set_bot_status(chat, "left", actor=api.server.bot)
    return True
