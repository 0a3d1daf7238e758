"""The table as a Telegram Mini App: the page, its WebSocket, the initData check.

One door: :class:`WebApp` (the routes and connections), :class:`Bridge` (the seam to the
service and the presenter), :func:`validate_init_data`."""

from __future__ import annotations

from .auth import AuthError, WebAppUser, sign_init_data, validate_init_data
from .bridge import Bridge
from .registry import Registry
from .server import LIMITS, Limits, WebApp

__all__ = [
    "LIMITS",
    "AuthError",
    "Bridge",
    "Limits",
    "Registry",
    "WebApp",
    "WebAppUser",
    "sign_init_data",
    "validate_init_data",
]
