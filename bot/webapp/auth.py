"""The Mini App's initData, checked as the Bot API documents ("Validating data received
via the Mini App"): the fields but ``hash`` sorted by key, ``key=value`` joined by line
feeds, HMAC-SHA256 with the key HMAC-SHA256("WebAppData", bot token), compared in constant
time; ``auth_date`` at most ``max_age`` seconds old. Nothing the page says is trusted but
what this check lets through: the user's id, his language and the ``start_param``."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode

__all__ = ["MAX_INIT_BYTES", "AuthError", "WebAppUser", "sign_init_data", "validate_init_data"]

#: Telegram's initData is a few hundred bytes; anything much longer is not from it.
MAX_INIT_BYTES = 4096
#: A clock this far ahead of ours still counts as now (Telegram's and ours drift a little).
FUTURE_SKEW = 60.0


class AuthError(ValueError):
    """initData that does not prove who sent it; the message says why (for the log)."""


@dataclass(frozen=True, slots=True)
class WebAppUser:
    """Who opened the page, as Telegram signed it."""

    user_id: int
    first_name: str
    language: str | None
    start_param: str | None
    auth_date: int
    last_name: str | None = None
    username: str | None = None

    @property
    def id(self) -> int:
        """As Telegram's ``User`` names it (a seat's name is made the same way)."""
        return self.user_id


def _secret(token: str) -> bytes:
    return hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()


def _check_string(fields: dict[str, str]) -> bytes:
    return "\n".join(f"{k}={fields[k]}" for k in sorted(fields)).encode()


def validate_init_data(
    init_data: object, token: str, max_age: float, now: float | None = None
) -> WebAppUser:
    """The user ``init_data`` names, or :class:`AuthError`: not a string, too long, not a
    query string, a field twice, no or a wrong hash (another bot's token, a changed
    field), no ``auth_date`` or one older than ``max_age``, no user with a numeric id."""
    if not isinstance(init_data, str) or not init_data:
        raise AuthError("no initData")
    if len(init_data) > MAX_INIT_BYTES:
        raise AuthError("initData too long")
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise AuthError("initData is not a query string") from None
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise AuthError("a field of initData twice")
    given = fields.pop("hash", "")
    expected = hmac.new(_secret(token), _check_string(fields), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise AuthError("initData's hash does not match")
    moment = time.time() if now is None else now
    try:
        auth_date = int(fields.get("auth_date", ""))
    except ValueError:
        raise AuthError("initData has no auth_date") from None
    if auth_date > moment + FUTURE_SKEW:
        raise AuthError("initData's auth_date is in the future")
    if moment - auth_date > max_age:
        raise AuthError("initData expired")
    try:
        user = json.loads(fields.get("user", ""))
    except ValueError:
        raise AuthError("initData has no user") from None
    if not isinstance(user, dict):
        raise AuthError("initData has no user")
    user_id = user.get("id")
    if type(user_id) is not int or user_id <= 0:
        raise AuthError("initData's user has no id")
    name = user.get("first_name")
    lang = user.get("language_code")
    start = fields.get("start_param")
    last, username = user.get("last_name"), user.get("username")
    return WebAppUser(
        user_id=user_id,
        first_name=name if isinstance(name, str) else "",
        language=lang if isinstance(lang, str) else None,
        start_param=start or None,
        auth_date=auth_date,
        last_name=last if isinstance(last, str) else None,
        username=username if isinstance(username, str) else None,
    )


def sign_init_data(
    token: str,
    user: dict[str, object],
    auth_date: int | None = None,
    start_param: str | None = None,
    **extra: str,
) -> str:
    """initData as Telegram makes it for ``user`` (tests and the benchmark open the page
    as a player would; the bot itself never signs anything)."""
    fields = {
        "auth_date": str(int(time.time()) if auth_date is None else auth_date),
        "query_id": "AAHdF6IQAAAAAN0XohDhrOrc",
        "user": json.dumps(user, separators=(",", ":"), ensure_ascii=False),
        **extra,
    }
    if start_param is not None:
        fields["start_param"] = start_param
    digest = hmac.new(_secret(token), _check_string(fields), hashlib.sha256).hexdigest()
    return urlencode({**fields, "hash": digest})
