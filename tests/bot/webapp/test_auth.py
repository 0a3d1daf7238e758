"""initData as the Bot API documents it: accepted when Telegram signed it for this bot,
refused when forged, from another bot, changed, expired or malformed."""

from __future__ import annotations

import hashlib
import hmac
import json
from urllib.parse import parse_qsl, quote, urlencode

import pytest

from bot.webapp.auth import AuthError, sign_init_data, validate_init_data

TOKEN = "123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
OTHER = "654321:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
NOW = 1_700_000_000
USER = {"id": 42, "first_name": "Ann", "language_code": "ru"}


def test_documented_algorithm_by_hand():
    """The check string and key exactly as the Bot API page writes them."""
    fields = {"auth_date": str(NOW), "query_id": "Q", "user": json.dumps(USER)}
    check = "\n".join(f"{k}={fields[k]}" for k in sorted(fields))
    secret = hmac.new(b"WebAppData", TOKEN.encode(), hashlib.sha256).digest()
    digest = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    data = urlencode({**fields, "hash": digest})
    user = validate_init_data(data, TOKEN, 86400, now=NOW + 5)
    assert (user.user_id, user.first_name, user.language) == (42, "Ann", "ru")


def test_signed_with_start_param():
    data = sign_init_data(TOKEN, USER, auth_date=NOW, start_param="17")
    assert validate_init_data(data, TOKEN, 86400, now=NOW).start_param == "17"


@pytest.mark.parametrize(
    "data",
    [
        None,
        "",
        123,
        "x" * 5000,
        "not a query string",
        "auth_date=1&hash=00",
        f"auth_date={NOW}&user=%7B%7D",  # no hash at all
    ],
)
def test_malformed(data):
    with pytest.raises(AuthError):
        validate_init_data(data, TOKEN, 86400, now=NOW)


def test_another_bots_token():
    data = sign_init_data(OTHER, USER, auth_date=NOW)
    with pytest.raises(AuthError, match="hash"):
        validate_init_data(data, TOKEN, 86400, now=NOW)


def test_forged_hash():
    data = sign_init_data(TOKEN, USER, auth_date=NOW)
    fields = dict(parse_qsl(data))
    fields["hash"] = "0" * 64
    with pytest.raises(AuthError, match="hash"):
        validate_init_data(urlencode(fields), TOKEN, 86400, now=NOW)


def test_tampered_user():
    data = sign_init_data(TOKEN, USER, auth_date=NOW)
    fields = dict(parse_qsl(data))
    fields["user"] = json.dumps({**USER, "id": 43})
    with pytest.raises(AuthError, match="hash"):
        validate_init_data(urlencode(fields), TOKEN, 86400, now=NOW)


def test_tampered_start_param_added():
    data = sign_init_data(TOKEN, USER, auth_date=NOW)
    with pytest.raises(AuthError, match="hash"):
        validate_init_data(data + "&start_param=99", TOKEN, 86400, now=NOW)


def test_field_twice():
    data = sign_init_data(TOKEN, USER, auth_date=NOW)
    with pytest.raises(AuthError, match="twice"):
        validate_init_data(data + "&user=" + quote(json.dumps(USER)), TOKEN, 86400, now=NOW)


def test_expired_and_fresh_at_the_edge():
    data = sign_init_data(TOKEN, USER, auth_date=NOW)
    assert validate_init_data(data, TOKEN, 86400, now=NOW + 86400).user_id == 42
    with pytest.raises(AuthError, match="expired"):
        validate_init_data(data, TOKEN, 86400, now=NOW + 86401)
    with pytest.raises(AuthError, match="expired"):
        validate_init_data(data, TOKEN, 60, now=NOW + 61)


def test_from_the_future():
    data = sign_init_data(TOKEN, USER, auth_date=NOW + 3600)
    with pytest.raises(AuthError, match="future"):
        validate_init_data(data, TOKEN, 86400, now=NOW)


@pytest.mark.parametrize("user", [{"first_name": "x"}, {"id": "42"}, {"id": -1}, [1], {"id": True}])
def test_signed_but_no_usable_user(user):
    data = sign_init_data(TOKEN, user, auth_date=NOW)  # type: ignore[arg-type]
    with pytest.raises(AuthError, match="user"):
        validate_init_data(data, TOKEN, 86400, now=NOW)
