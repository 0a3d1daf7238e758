"""Translations: gettext catalogs per language, chosen per update.

The language lives in a ``ContextVar`` (never a global), so concurrent updates
for users with different languages cannot mix. Catalogs are the ``.po`` files
in ``bot/locales/<lang>/LC_MESSAGES/durak.po`` (kept by Babel: ``python -m
bot.locales``), compiled in memory on first use (no build step, no stale
``.mo``); English is the msgids themselves, and so is any message a catalog has
not translated yet (English plurals go through the same ``ngettext``).
"""

from __future__ import annotations

import gettext
import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

log = logging.getLogger(__name__)

LOCALES = Path(__file__).parent.parent / "locales"
DOMAIN = "durak"
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


def catalog_path(lang: str) -> Path:
    return LOCALES / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def _catalog(lang: str) -> gettext.NullTranslations:
    """The language's ``.po`` compiled by Babel to ``.mo`` bytes in memory and read
    by the stdlib's own ``GNUTranslations`` (plural rules from the header included;
    fuzzy and empty entries left out, so they read as English)."""
    path = catalog_path(lang)
    if lang == DEFAULT or not path.exists():
        return gettext.NullTranslations()
    try:
        mo = io.BytesIO()
        with path.open("rb") as f:
            write_mo(mo, read_po(f, locale=lang, domain=DOMAIN, abort_invalid=True))
        mo.seek(0)
        return gettext.GNUTranslations(mo)
    except Exception:  # the tests keep this from happening; English beats no bot
        log.exception("the %s catalog is broken; speaking English", lang)
        return gettext.NullTranslations()


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
