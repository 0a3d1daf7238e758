"""Text helpers for the fake Bot API: HTML parse mode, UTF-16 offsets, command entities.

Telegram measures entity offsets and lengths in UTF-16 code units, while length limits
("message is too long") are counted in Unicode code points, like TDLib does.
"""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

Entity = dict[str, Any]

# Tag -> entity type for the HTML parse mode (https://core.telegram.org/bots/api#html-style).
_SIMPLE_TAGS: dict[str, str] = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "code": "code",
    "pre": "pre",
}
_SPECIAL_TAGS = frozenset({"a", "span", "blockquote", "tg-emoji"})


class EntityParseError(ValueError):
    """The text cannot be parsed in the requested parse mode (Telegram answers 400)."""


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units, the unit Telegram uses for entity offsets."""
    return len(text.encode("utf-16-le")) // 2


class _TelegramHTMLParser(HTMLParser):
    """Collects plain text and message entities from Telegram-flavoured HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._position = 0  # plain text length so far, UTF-16 units (HTMLParser owns .offset)
        self.stack: list[tuple[str, Entity | None]] = []
        self.entities: list[Entity] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)
        self._position += utf16_len(data)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        entity = self._entity_for(tag, dict(attrs))
        self.stack.append((tag, entity))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raise EntityParseError(f'Unsupported start tag "{tag}" at byte offset {self._pos()}')

    def handle_endtag(self, tag: str) -> None:
        if not self.stack:
            raise EntityParseError(f"Unexpected end tag at byte offset {self._pos()}")
        open_tag, entity = self.stack.pop()
        if open_tag != tag:
            raise EntityParseError(
                f"Unmatched end tag at byte offset {self._pos()}, "
                f'expected "</{open_tag}>", found "</{tag}>"'
            )
        if entity is None:
            return
        entity["length"] = self._position - entity["offset"]
        if entity["length"] > 0:
            self._merge_code_into_pre(entity)
            self.entities.append(entity)

    def finish(self) -> tuple[str, list[Entity]]:
        self.close()
        if self.stack:
            tag = self.stack[-1][0]
            raise EntityParseError(f'Can\'t find end tag corresponding to start tag "{tag}"')
        self.entities.sort(key=lambda e: (e["offset"], -e["length"]))
        return "".join(self.parts), self.entities

    def _pos(self) -> int:
        return self.getpos()[1]

    def _entity_for(self, tag: str, attrs: dict[str, str | None]) -> Entity | None:
        if tag in _SIMPLE_TAGS:
            return {"type": _SIMPLE_TAGS[tag], "offset": self._position}
        if tag not in _SPECIAL_TAGS:
            raise EntityParseError(f'Unsupported start tag "{tag}" at byte offset {self._pos()}')
        if tag == "span":
            if attrs.get("class") != "tg-spoiler":
                raise EntityParseError(
                    f'Tag "span" must have class "tg-spoiler" at byte offset {self._pos()}'
                )
            return {"type": "spoiler", "offset": self._position}
        if tag == "blockquote":
            kind = "expandable_blockquote" if "expandable" in attrs else "blockquote"
            return {"type": kind, "offset": self._position}
        if tag == "tg-emoji":
            return {
                "type": "custom_emoji",
                "offset": self._position,
                "custom_emoji_id": attrs.get("emoji-id") or "",
            }
        href = attrs.get("href") or ""
        if not href:
            return None  # Telegram silently drops <a> without a URL
        return {"type": "text_link", "offset": self._position, "url": href}

    def _merge_code_into_pre(self, entity: Entity) -> None:
        """``<pre><code class="language-x">`` becomes one ``pre`` entity with a language."""
        if entity["type"] != "pre" or not self.entities:
            return
        inner = self.entities[-1]
        same_span = inner["offset"] == entity["offset"] and inner["length"] == entity["length"]
        if inner["type"] == "code" and same_span:
            self.entities.pop()


def parse_html(text: str) -> tuple[str, list[Entity]]:
    """Parse Telegram HTML into ``(plain_text, entities)`` or raise :class:`EntityParseError`."""
    parser = _TelegramHTMLParser()
    parser.feed(text)
    return parser.finish()


def parse_text(text: str, parse_mode: str | None) -> tuple[str, list[Entity]]:
    """Apply a parse mode. Only HTML is really parsed; Markdown modes keep the raw text."""
    if parse_mode and parse_mode.lower() == "html":
        return parse_html(text)
    return text, []


def strip_text(text: str, entities: list[Entity]) -> tuple[str, list[Entity]]:
    """Trim surrounding whitespace like Telegram does, shifting/clipping entities to match."""
    stripped = text.strip()
    if stripped == text:
        return text, entities
    lead = utf16_len(text) - utf16_len(text.lstrip())
    size = utf16_len(stripped)
    result: list[Entity] = []
    for entity in entities:
        start = max(entity["offset"] - lead, 0)
        end = min(entity["offset"] + entity["length"] - lead, size)
        if end > start:
            result.append({**entity, "offset": start, "length": end - start})
    return stripped, result


def command_entities(text: str) -> list[Entity]:
    """A ``bot_command`` entity for a leading ``/command`` or ``/command@bot``."""
    if not text.startswith("/") or len(text) < 2 or text[1].isspace():
        return []
    command = text.split(maxsplit=1)[0]
    return [{"type": "bot_command", "offset": 0, "length": utf16_len(command)}]


def command_target(text: str) -> tuple[str, str | None] | None:
    """``("/cmd", "botname")`` for ``/cmd@botname ...``; ``None`` when not a command."""
    if not command_entities(text):
        return None
    command, _, username = text.split(maxsplit=1)[0].partition("@")
    return command, username or None
