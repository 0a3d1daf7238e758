"""Translations: gettext catalogs per language, chosen per update.

The language lives in a ``ContextVar`` (never a global), so concurrent updates
for users with different languages cannot mix. Catalogs live in
``bot/locales/<lang>/LC_MESSAGES/durak.mo``; a language without a catalog
reads English (the msgids).
"""

from __future__ import annotations

import gettext
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path

LOCALES = Path(__file__).parent / "locales"
DEFAULT = "en"
SUPPORTED = ("en", "ru", "uk", "pl")
LANGUAGE_NAMES = {"en": "English", "ru": "Русский", "uk": "Українська", "pl": "Polski"}

_current: ContextVar[str] = ContextVar("language", default=DEFAULT)


def pick(code: str | None) -> str:
    """The supported language for a Telegram ``language_code`` (``ru-RU`` -> ``ru``)."""
    if code:
        base = code.replace("_", "-").split("-")[0].lower()
        if base in SUPPORTED:
            return base
    return DEFAULT


@cache
def _catalog(lang: str) -> gettext.NullTranslations:
    return gettext.translation("durak", LOCALES, languages=[lang], fallback=True)


@contextmanager
def language(lang: str) -> Iterator[None]:
    token = _current.set(lang)
    try:
        yield
    finally:
        _current.reset(token)


def current() -> str:
    return _current.get()


def N_(message: str) -> str:
    """Marks a message for the catalogs; it is translated where it is shown."""
    return message


def _(message: str) -> str:
    return _catalog(_current.get()).gettext(message)


def n_(singular: str, plural: str, n: int) -> str:
    return _catalog(_current.get()).ngettext(singular, plural, n)
