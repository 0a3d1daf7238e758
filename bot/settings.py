"""The /settings menu: every RULES.md option, the turn time and the group's
language, cycled one button press at a time. Pure: settings in, text and
buttons (or the changes a press makes) out."""

from __future__ import annotations

from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from durak.service_types import ChatSettings

from . import callbacks as cb
from .i18n import LANGUAGE_NAMES, N_, SUPPORTED, _, n_

#: (button code, setting name, the values a press cycles through)
OPTIONS: tuple[tuple[str, str, tuple[Any, ...]], ...] = (
    ("dk", "deck", (36, 52, 24)),
    ("ti", "throw_in", ("neighbours", "all")),
    ("fb", "first_bout_limit", (6, 5)),
    ("sc", "six_cap_after_stock", (True, False)),
    ("al", "attack_loser", (False, True)),
    ("tr", "transfer", (False, True)),
    ("st", "transfer_by_showing_trump", (False, True)),
    ("te", "trump_exchange", (False, True)),
    ("tm", "teams", (False, True)),
    ("tt", "turn_timeout", (60, 90, 120, 300, None, 15, 30)),
    ("lg", "language", (None, *SUPPORTED)),
)
CLOSE = "x"
CODES = {code: (name, values) for code, name, values in OPTIONS}

LABELS = {
    "deck": N_("Deck"),
    "throw_in": N_("Who throws in"),
    "first_bout_limit": N_("First bout"),
    "six_cap_after_stock": N_("6-card cap after the stock"),
    "attack_loser": N_("The fool defends first"),
    "transfer": N_("Transfer"),
    "transfer_by_showing_trump": N_("Transfer by showing a trump"),
    "trump_exchange": N_("Trump exchange"),
    "teams": N_("Teams (4 or 6 players)"),
    "turn_timeout": N_("Turn time"),
    "language": N_("Language"),
}


def current(settings: ChatSettings) -> dict[str, Any]:
    return settings.to_dict()


def value_text(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return _("on") if value else _("off")
    if name == "deck":
        return n_("{n} card", "{n} cards", value).format(n=value)
    if name == "first_bout_limit":
        return _("at most {n}").format(n=value)
    if name == "throw_in":
        return _("everyone") if value == "all" else _("neighbours")
    if name == "turn_timeout":
        return _("no limit") if value is None else _("{n} s").format(n=value)
    if name == "language":
        return _("the creator's") if value is None else LANGUAGE_NAMES[value]
    return str(value)


def press(code: str, settings: ChatSettings) -> dict[str, Any]:
    """The changes one press of ``code`` makes: the next value, and the options
    that have to follow it (no show-a-trump without transfer)."""
    name, values = CODES[code]
    now = current(settings)[name]
    nxt = values[(values.index(now) + 1) % len(values)] if now in values else values[0]
    changes = {name: nxt}
    if name == "transfer" and not nxt:
        changes["transfer_by_showing_trump"] = False
    if name == "transfer_by_showing_trump" and nxt:
        changes["transfer"] = True
    return changes


def menu_text(settings: ChatSettings) -> str:
    lines = ["⚙️ <b>" + _("Settings for new games") + "</b>", ""]
    values = current(settings)
    for _code, name, _values in OPTIONS:
        lines.append(f"• {_(LABELS[name])}: {value_text(name, values[name])}")
    lines += ["", _("Tap an option to change it. Changes apply from the next game.")]
    return "\n".join(lines)


def menu_keyboard(settings: ChatSettings) -> InlineKeyboardMarkup:
    values = current(settings)
    rows = [
        [
            InlineKeyboardButton(
                f"{_(LABELS[name])}: {value_text(name, values[name])}",
                callback_data=cb.setting(code),
            )
        ]
        for code, name, _values in OPTIONS
    ]
    rows.append([InlineKeyboardButton("✔ " + _("Done"), callback_data=cb.setting(CLOSE))])
    return InlineKeyboardMarkup(rows)
