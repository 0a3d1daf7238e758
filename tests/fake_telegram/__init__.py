"""A fake Telegram Bot API server for end-to-end tests (see :mod:`.server`)."""

from .errors import ApiError
from .models import (
    Button,
    CallbackAnswer,
    CallbackPress,
    Chat,
    Message,
    MessageVersion,
    RequestRecord,
    ShownText,
    User,
)
from .ratelimit import RateLimits, RateStats
from .server import DEFAULT_TOKEN, FakeTelegram

__all__ = [
    "DEFAULT_TOKEN",
    "ApiError",
    "Button",
    "CallbackAnswer",
    "CallbackPress",
    "Chat",
    "FakeTelegram",
    "Message",
    "MessageVersion",
    "RateLimits",
    "RateStats",
    "RequestRecord",
    "ShownText",
    "User",
]
