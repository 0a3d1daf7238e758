"""The /settings menu: the game (``games_menu``: a list of every game by name),
every option that game takes, the turn time and the group's language, cycled one
button press at a time. Pure: settings in, text and buttons (or the changes a
press makes) out."""

from __future__ import annotations

from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from durak.service_types import ChatSettings

from . import callbacks as cb
from . import games_menu, games_text
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
    # VARIANTS.md's options that combine with the game chosen (PILE-GAMES.md's one)
    ("tc", "trump_change", (False, True)),
    ("dm", "damka", (False, True)),
    ("pd", "partial_defence", (False, True)),
    ("rl", "return_last_card", (False, True)),
    ("bl", "bout_limit", (6, 5)),
    ("sd", "show_last_discard", (False, True)),
    ("ot", "own_trumps_take", ("top", "pile")),
    ("tt", "turn_timeout", (60, 90, 120, 300, None, 15, 30)),
    ("lg", "language", (None, *SUPPORTED)),
)
CLOSE = "x"
CODES = {code: (name, values) for code, name, values in OPTIONS}

LABELS = {
    **games_text.OPTION_NAMES,
    "turn_timeout": N_("Turn time"),
    "language": N_("Language"),
}

#: What a pile game takes besides the turn time and the language (PILE-GAMES.md 1.2).
PILE_OPTIONS = {"own_trumps": ("own_trumps_take",), "road": ("show_last_discard",)}


def shown(name: str, settings: ChatSettings) -> bool:
    """Whether the menu offers ``name`` for the game in force: a pile game takes
    none of podkidnoy's options, podkidnoy not own trumps' take."""
    rules = settings.rules
    if name in ("turn_timeout", "language"):
        return True
    if not rules.podkidnoy:
        return name in PILE_OPTIONS.get(rules.game, ())
    return name != "own_trumps_take"


def current(settings: ChatSettings) -> dict[str, Any]:
    return settings.to_dict()


def value_text(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return _("on") if value else _("off")
    if name == "deck":
        return n_("{n} card", "{n} cards", value).format(n=value)
    if name in ("first_bout_limit", "bout_limit"):
        return _("at most {n}").format(n=value)
    if name == "throw_in":
        return _("everyone") if value == "all" else _("neighbours")
    if name == "turn_timeout":
        return _("no limit") if value is None else _("{n} s").format(n=value)
    if name == "own_trumps_take":
        return _("the whole pile") if value == "pile" else _("3 cards, 10 on one's own suit")
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
    lines.append("🎲 " + _("Game: {name}").format(name=games_text.game_name(settings.rules)))
    for _code, name, _values in OPTIONS:
        if not shown(name, settings):
            continue
        lines.append(f"• {_(LABELS[name])}: {value_text(name, values[name])}")
    lines += ["", _("Tap an option to change it. Changes apply from the next game.")]
    return "\n".join(lines)


def menu_keyboard(settings: ChatSettings) -> InlineKeyboardMarkup:
    values = current(settings)
    game = games_menu.game_button(settings)
    rows = [[InlineKeyboardButton(game["text"], callback_data=game["callback_data"])]]
    rows += [
        [
            InlineKeyboardButton(
                f"{_(LABELS[name])}: {value_text(name, values[name])}",
                callback_data=cb.setting(code),
            )
        ]
        for code, name, _values in OPTIONS
        if shown(name, settings)
    ]
    rows.append([InlineKeyboardButton("✔ " + _("Done"), callback_data=cb.setting(CLOSE))])
    return InlineKeyboardMarkup(rows)
