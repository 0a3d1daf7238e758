"""The catalogs, through Babel: extract the messages from the source, update each
language's ``.po`` (new ones untranslated, close old texts fuzzy, unused ones
obsolete), and compile a ``.po`` for gettext. Plural rules come from CLDR (Babel's
locale data), so no catalog carries a hand-written rule.

A message is a literal string in ``_("…")``, ``N_("…")`` or ``n_("…", "…", n)``.
"""

from __future__ import annotations

import io
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

from ..ui.i18n import DEFAULT, SUPPORTED, catalog_path

BOT = Path(__file__).resolve().parent.parent
KEYWORDS: dict[str, tuple[int, ...] | None] = {"_": None, "N_": None, "n_": (1, 2)}
PROJECT = "durak-bot"
TEAMS = {"ru": "Russian", "uk": "Ukrainian", "pl": "Polish"}


def languages() -> list[str]:
    """The languages with a catalog: all but English, which the msgids are."""
    return [lang for lang in SUPPORTED if lang != DEFAULT]


def template() -> Catalog:
    """Every message of the bot's modules, with the files that use it."""
    pot = Catalog(project=PROJECT, fuzzy=False)
    found = extract_from_dir(
        BOT, [("**.py", "python")], keywords=KEYWORDS, comment_tags=("TRANSLATORS:",)
    )
    for file, line, message, comments, context in found:
        pot.add(
            message,
            locations=[(f"{BOT.name}/{file}", line)],
            auto_comments=comments,
            context=context,
        )
    return pot


def read(path: Path, lang: str) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, locale=lang, domain="durak")


def dumps(catalog: Catalog) -> bytes:
    """The file as ``extract`` writes it: unwrapped lines, files without line
    numbers (so moving code does not touch the catalogs)."""
    out = io.BytesIO()
    write_po(out, catalog, width=0, include_lineno=False, sort_output=False)
    return out.getvalue()


def new_catalog(lang: str) -> Catalog:
    return Catalog(
        locale=lang,
        project=PROJECT,
        version="1",
        language_team=TEAMS.get(lang, lang),
        header_comment=f"# {TEAMS.get(lang, lang)} texts of the durak bot.\n"
        "# Update with: python -m bot.locales extract",
        fuzzy=False,
    )


def update(lang: str, pot: Catalog, keep_obsolete: bool = True) -> bool:
    """Bring the language's catalog to the template; True if the file changed."""
    path = catalog_path(lang)
    before = path.read_bytes() if path.exists() else None
    catalog = read(path, lang) if before is not None else new_catalog(lang)
    catalog.update(pot, update_creation_date=False)
    catalog.project, catalog.version = PROJECT, "1"  # the header: "durak-bot 1"
    if not keep_obsolete:
        catalog.obsolete.clear()
    after = dumps(catalog)
    if after == before:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(after)
    return True


def untranslated(catalog: Catalog) -> list[Message]:
    """What the bot would show in English: empty, partly translated or fuzzy."""
    out = []
    for m in catalog:
        if not m.id:
            continue
        forms = m.string if isinstance(m.string, (tuple, list)) else (m.string,)
        if m.fuzzy or not all(forms):
            out.append(m)
    return out
