"""The gettext ``.po`` format, stdlib only: read, write, and compile to ``.mo`` bytes.

The ``.po`` files are the only catalog files in git; the bot compiles them in
memory when a language is first used, so there is no build step to forget.
Enough of the format for our catalogs: no ``msgctxt``, no previous-msgid comments.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

FUZZY = "fuzzy"


class PoError(ValueError):
    """A ``.po`` file this reader cannot read; the message names the line."""


@dataclass(slots=True)
class Entry:
    """One message: ``msgstr`` has one string, or one per plural form."""

    msgid: str
    msgid_plural: str | None = None
    msgstr: list[str] = field(default_factory=lambda: [""])
    flags: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)  # "# " and "#." lines, verbatim
    obsolete: bool = False

    @property
    def fuzzy(self) -> bool:
        return FUZZY in self.flags

    @property
    def translated(self) -> bool:
        """Every form filled in and confirmed (not fuzzy): what the bot will use."""
        return not self.fuzzy and bool(self.msgstr) and all(self.msgstr)


@dataclass(slots=True)
class Catalog:
    header: str  # the msgstr of the empty msgid: "Key: value\n" lines
    entries: list[Entry]
    header_comments: list[str] = field(default_factory=list)

    def headers(self) -> dict[str, str]:
        out = {}
        for line in self.header.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                out[key.strip()] = value.strip()
        return out

    @property
    def nplurals(self) -> int:
        m = re.search(r"nplurals\s*=\s*(\d+)", self.headers().get("Plural-Forms", ""))
        return int(m.group(1)) if m else 2

    def active(self) -> dict[str, Entry]:
        return {e.msgid: e for e in self.entries if not e.obsolete}


# ---- reading --------------------------------------------------------------------

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "a": "\a", "b": "\b"}
_KEYWORD = re.compile(r"^(msgid|msgid_plural|msgstr|msgstr\[(\d+)\])\s+(\".*)$")


def _unquote(text: str, where: str) -> str:
    text = text.strip()
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise PoError(f"{where}: expected a quoted string, got {text!r}")
    body, out, i = text[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        if ch == '"':
            raise PoError(f"{where}: unescaped quote")
        if ch == "\\":
            if i + 1 >= len(body) or body[i + 1] not in _ESCAPES:
                raise PoError(f"{where}: unknown escape {body[i : i + 2]!r}")
            out.append(_ESCAPES[body[i + 1]])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def parse(text: str, name: str = "<po>") -> Catalog:
    """Read a catalog. Obsolete (``#~``) entries are kept, marked ``obsolete``."""
    entries: list[Entry] = []
    header: Entry | None = None
    pending = Entry("")
    fields: dict[str, str] = {}
    last: str | None = None  # the keyword a continuation line extends
    started = False  # a keyword has been seen for the pending entry

    def finish() -> None:
        nonlocal pending, fields, last, started, header
        if started:
            if "msgid" not in fields:
                raise PoError(f"{name}: an entry without msgid")
            pending.msgid = fields["msgid"]
            pending.msgid_plural = fields.get("msgid_plural")
            if pending.msgid_plural is None:
                if "msgstr" not in fields:
                    raise PoError(f"{name}: no msgstr for {pending.msgid!r}")
                pending.msgstr = [fields["msgstr"]]
            else:
                forms = sorted(int(k[7:-1]) for k in fields if k.startswith("msgstr["))
                if forms != list(range(len(forms))) or not forms:
                    raise PoError(f"{name}: bad plural forms for {pending.msgid!r}")
                pending.msgstr = [fields[f"msgstr[{i}]"] for i in forms]
            if pending.msgid == "" and not pending.obsolete:
                if header is not None:
                    raise PoError(f"{name}: two headers")
                header = pending
            else:
                entries.append(pending)
        pending, fields, last, started = Entry(""), {}, None, False

    for number, raw in enumerate(text.splitlines(), 1):
        where = f"{name}:{number}"
        line = raw.strip()
        obsolete = line.startswith("#~")
        if obsolete:
            line = line[2:].strip()
            if not line:
                continue
        elif line.startswith("#"):
            if started:  # comments start the next entry
                finish()
            if line.startswith("#,"):
                pending.flags += [f.strip() for f in line[2:].split(",") if f.strip()]
            elif line.startswith("#:"):
                pending.references += line[2:].split()
            elif line.startswith("#|"):
                pass  # previous msgid: not kept
            else:
                pending.comments.append(raw.rstrip())
            continue
        if not line:
            finish()
            continue
        if line.startswith('"'):
            if last is None:
                raise PoError(f"{where}: a string outside an entry")
            fields[last] += _unquote(line, where)
            continue
        m = _KEYWORD.match(line)
        if m is None:
            raise PoError(f"{where}: cannot read {line!r}")
        keyword = m.group(1)
        if keyword == "msgid" and started:
            finish()
        if keyword in fields:
            raise PoError(f"{where}: {keyword} twice in one entry")
        started = True
        pending.obsolete = pending.obsolete or obsolete
        fields[keyword] = _unquote(m.group(3), where)
        last = keyword
    finish()
    if header is None:
        raise PoError(f"{name}: no header (the entry with an empty msgid)")
    seen: set[tuple[str, bool]] = set()
    for e in entries:
        if (e.msgid, e.obsolete) in seen:
            raise PoError(f"{name}: {e.msgid!r} twice")
        seen.add((e.msgid, e.obsolete))
    comments = header.comments + (["#, " + ", ".join(header.flags)] if header.flags else [])
    return Catalog(header.msgstr[0], entries, comments)


def read(path: Path) -> Catalog:
    return parse(path.read_text(encoding="utf-8"), str(path))


# ---- writing --------------------------------------------------------------------


def _quote(text: str) -> str:
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r") + '"'


def _field(keyword: str, text: str, prefix: str) -> list[str]:
    """One keyword; a text with inner newlines goes one line per line, as GNU does."""
    pieces = text.splitlines(keepends=True)
    if len(pieces) <= 1:
        return [f"{prefix}{keyword} {_quote(text)}"]
    return [f'{prefix}{keyword} ""'] + [prefix + _quote(p) for p in pieces]


def _entry_lines(e: Entry) -> list[str]:
    prefix = "#~ " if e.obsolete else ""
    lines = list(e.comments)
    if e.references and not e.obsolete:
        lines.append("#: " + " ".join(e.references))
    if e.flags:
        lines.append("#, " + ", ".join(e.flags))
    lines += _field("msgid", e.msgid, prefix)
    if e.msgid_plural is None:
        lines += _field("msgstr", e.msgstr[0], prefix)
    else:
        lines += _field("msgid_plural", e.msgid_plural, prefix)
        for i, s in enumerate(e.msgstr):
            lines += _field(f"msgstr[{i}]", s, prefix)
    return lines


def dumps(catalog: Catalog) -> str:
    blocks = [[*catalog.header_comments, 'msgid ""', *_field("msgstr", catalog.header, "")]]
    blocks += [_entry_lines(e) for e in catalog.entries]
    return "\n\n".join("\n".join(b) for b in blocks) + "\n"


def write(path: Path, catalog: Catalog) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(catalog), encoding="utf-8")


# ---- compiling ------------------------------------------------------------------


def mo_bytes(catalog: Catalog) -> bytes:
    """The GNU ``.mo`` image of the translated entries (what ``msgfmt`` writes;
    untranslated and fuzzy entries are left out, so they read as English)."""
    messages = {b"": catalog.header.encode()}
    for e in catalog.entries:
        if e.obsolete or not e.translated:
            continue
        if e.msgid_plural is None:
            messages[e.msgid.encode()] = e.msgstr[0].encode()
        else:
            key = f"{e.msgid}\0{e.msgid_plural}".encode()
            messages[key] = "\0".join(e.msgstr).encode()
    return _mo(messages.items())


def _mo(items: Iterable[tuple[bytes, bytes]]) -> bytes:
    pairs = sorted(items)
    count = len(pairs)
    ids_start = 7 * 4 + 16 * count  # header, then the two offset tables
    strs_start = ids_start + sum(len(k) + 1 for k, _ in pairs)
    id_table, str_table, ids, strs = [], [], b"", b""
    for key, value in pairs:
        id_table += [len(key), ids_start + len(ids)]
        str_table += [len(value), strs_start + len(strs)]
        ids += key + b"\0"
        strs += value + b"\0"
    head = struct.pack("<7I", 0x950412DE, 0, count, 7 * 4, 7 * 4 + 8 * count, 0, 0)
    tables = struct.pack(f"<{4 * count}I", *id_table, *str_table)
    return head + tables + ids + strs
