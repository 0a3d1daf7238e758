"""Finds the bot's messages in its source and brings the catalogs up to date.

A message is a literal string in ``_("…")``, ``N_("…")`` or ``n_("…", "…", n)``
(read with ``ast``, so implicit concatenation of literals is fine). A call whose
text is built (an f-string, ``+``) cannot be translated and is reported;
a variable (``_(note)``) is assumed to hold a string marked ``N_`` elsewhere.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..i18n import DEFAULT, SUPPORTED, catalog_path
from . import po

BOT = Path(__file__).resolve().parent.parent
MARKERS = {"_": 1, "N_": 1, "n_": 2}  # function name -> how many leading literal args

PLURAL_FORMS = {
    "ru": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 "
    "&& (n%100<10 || n%100>=20) ? 1 : 2);",
    "uk": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 "
    "&& (n%100<10 || n%100>=20) ? 1 : 2);",
    "pl": "nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
}
LANGUAGE_TEAMS = {"ru": "Russian", "uk": "Ukrainian", "pl": "Polish"}


@dataclass(frozen=True, slots=True)
class Message:
    msgid: str
    msgid_plural: str | None
    file: str  # relative to the repository, e.g. "bot/render.py"
    line: int


@dataclass(frozen=True, slots=True)
class Unseen:
    """A marker call whose text is built at run time: no catalog can hold it."""

    file: str
    line: int
    why: str


def _marker(node: ast.Call) -> str | None:
    f = node.func
    return f.id if isinstance(f, ast.Name) and f.id in MARKERS else None


def _literal(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def scan(source: str, file: str) -> tuple[list[Message], list[Unseen]]:
    found, unseen = [], []
    for node in ast.walk(ast.parse(source, file)):
        if not isinstance(node, ast.Call) or (name := _marker(node)) is None:
            continue
        args = node.args[: MARKERS[name]]
        texts = [_literal(a) for a in args]
        if len(args) == MARKERS[name] and all(t is not None for t in texts):
            plural = texts[1] if name == "n_" else None
            found.append(Message(texts[0] or "", plural, file, node.lineno))
            continue
        for a in args:
            if isinstance(a, ast.JoinedStr):
                unseen.append(Unseen(file, node.lineno, f"an f-string inside {name}()"))
            elif isinstance(a, ast.BinOp):
                unseen.append(
                    Unseen(file, node.lineno, f"a text built with an operator in {name}()")
                )
    found.sort(key=lambda m: m.line)  # ast.walk is breadth-first
    unseen.sort(key=lambda u: u.line)
    return found, unseen


def find(root: Path = BOT) -> tuple[list[Message], list[Unseen]]:
    """Every message in the bot's modules, in file then line order."""
    messages, unseen = [], []
    for path in sorted(root.rglob("*.py")):
        file = path.relative_to(root.parent).as_posix()
        m, u = scan(path.read_text(encoding="utf-8"), file)
        messages += m
        unseen += u
    return messages, unseen


def conflicts(messages: Sequence[Message]) -> list[str]:
    """A msgid used both plain and as a plural's singular (or with two plurals)
    is one catalog entry that cannot serve both."""
    kinds: dict[str, str | None] = {}
    out = []
    for m in messages:
        if m.msgid in kinds and kinds[m.msgid] != m.msgid_plural:
            out.append(f"{m.file}:{m.line}: {m.msgid!r} is used with different plurals")
        kinds.setdefault(m.msgid, m.msgid_plural)
    return out


def new_catalog(lang: str) -> po.Catalog:
    header = (
        "Project-Id-Version: durak-bot\n"
        f"Language-Team: {LANGUAGE_TEAMS.get(lang, lang)}\n"
        f"Language: {lang}\n"
        "MIME-Version: 1.0\n"
        "Content-Type: text/plain; charset=UTF-8\n"
        "Content-Transfer-Encoding: 8bit\n"
        f"Plural-Forms: {PLURAL_FORMS[lang]}\n"
    )
    comments = [
        f"# {LANGUAGE_TEAMS.get(lang, lang)} texts of the durak bot.",
        "# Update with: python -m bot.locales extract",
    ]
    return po.Catalog(header, [], comments)


def _flags(msgid: str) -> list[str]:
    return ["python-brace-format"] if re.search(r"\{\w*\}", msgid) else []


def update(catalog: po.Catalog, messages: Sequence[Message], keep_obsolete: bool = True) -> None:
    """Bring ``catalog`` to exactly ``messages``: new ones added untranslated (or,
    when an old text is close, with its translation marked fuzzy), existing
    translations kept, entries no longer used marked obsolete (``#~``)."""
    nplurals = catalog.nplurals
    old = {(e.msgid, e.obsolete): e for e in catalog.entries}
    refs: dict[str, list[str]] = {}
    order: list[Message] = []
    for m in messages:
        if m.msgid not in refs:
            refs[m.msgid] = []
            order.append(m)
        if m.file not in refs[m.msgid]:
            refs[m.msgid].append(m.file)
    used = set(refs)
    # Old translations that no message uses any more: material for fuzzy matches.
    spare = {e.msgid: e for e in catalog.entries if e.msgid not in used and any(e.msgstr)}
    entries = []
    for m in order:
        e = old.get((m.msgid, False)) or old.get((m.msgid, True))
        if e is not None and (e.msgid_plural is None) == (m.msgid_plural is None):
            e.obsolete = False
        else:
            e = po.Entry(m.msgid)
            shape = [
                s for s in spare.values() if (s.msgid_plural is None) == (m.msgid_plural is None)
            ]
            close = difflib.get_close_matches(m.msgid, [s.msgid for s in shape], 1, 0.75)
            if close:
                e.msgstr = list(spare[close[0]].msgstr)
                e.flags.append(po.FUZZY)
        e.msgid_plural = m.msgid_plural
        forms = 1 if m.msgid_plural is None else nplurals
        e.msgstr = (e.msgstr + [""] * forms)[:forms]
        e.references = refs[m.msgid]
        e.flags = [f for f in e.flags if f == po.FUZZY] + _flags(m.msgid)
        entries.append(e)
    if keep_obsolete:
        kept = {e.msgid for e in entries}
        for e in catalog.entries:
            if e.msgid not in kept and any(e.msgstr):
                e.obsolete = True
                e.references = []
                entries.append(e)
                kept.add(e.msgid)
    catalog.entries = entries


def languages() -> list[str]:
    """The languages with a catalog: all but English, which the msgids are."""
    return [lang for lang in SUPPORTED if lang != DEFAULT]


def run(keep_obsolete: bool = True) -> tuple[list[Path], list[Unseen]]:
    """Update (or create) every language's catalog; returns the files changed."""
    messages, unseen = find()
    problems = conflicts(messages)
    if problems:
        raise ValueError("\n".join(problems))
    changed = []
    for lang in languages():
        path = catalog_path(lang)
        before = path.read_text(encoding="utf-8") if path.exists() else None
        catalog = po.parse(before, str(path)) if before is not None else new_catalog(lang)
        update(catalog, messages, keep_obsolete)
        after = po.dumps(catalog)
        if after != before:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(after, encoding="utf-8")
            changed.append(path)
    return changed, unseen


def untranslated(catalog: po.Catalog) -> Iterator[po.Entry]:
    return (e for e in catalog.entries if not e.obsolete and not e.translated)
