"""The /settings menu: the game (``games_menu``: a list of every game by name),
every option that game takes, the turn time and the group's language. A press on
an option opens the list of its values with one line explaining it (a value is
two taps away, not up to seven cycling presses); the list offers only the values
``durak.rules`` allows with the other settings. Pure: settings in, text and
buttons (or the changes a choice makes) out."""

from __future__ import annotations

from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from durak.service import ChatSettings

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
    ("np", "no_progress_draw", (True, False)),
    ("tt", "turn_timeout", (60, 90, 120, 300, None, 15, 30)),
    ("lg", "language", (None, *SUPPORTED)),
    ("rc", "recap", (True, False)),
)
CLOSE = "x"
#: The value list's button back to the menu.
BACK = "ob"
CODES = {code: (name, values) for code, name, values in OPTIONS}

#: One line per option saying what it does (shown above its values).
EXPLAIN = {
    "deck": N_("The deck: 24 cards (from nines), 36 (from sixes) or 52 (from twos)."),
    "throw_in": N_("Who may add cards to an attack besides the attacker."),
    "first_bout_limit": N_("How many cards the first attack of a game may hold."),
    "six_cap_after_stock": N_("Whether a bout stays at six cards once the stock is empty."),
    "attack_loser": N_("In the next game the last game's fool defends the first bout."),
    "transfer": N_("The defender may pass the attack on with a card of the same rank."),
    "transfer_by_showing_trump": N_(
        "The defender may pass the attack on by only showing a trump of that rank."
    ),
    "trump_exchange": N_("The holder of the lowest trump may swap it for the face-up trump card."),
    "teams": N_("Players across the table play together (4 or 6 players)."),
    "trump_change": N_("A face-down card under the trump card becomes the new trump when drawn."),
    "damka": N_("An opening is of one suit; a queen of spades led cannot be covered."),
    "partial_defence": N_("On a take, the pairs already covered go to the discard."),
    "return_last_card": N_(
        "With two players left, a last card led may be handed back, once a game."
    ),
    "bout_limit": N_("How many cards every bout may hold."),
    "show_last_discard": N_("Everyone sees the last cards discarded."),
    "own_trumps_take": N_("What a player who cannot beat has to take."),
    "no_progress_draw": N_(
        "A game where 100 takes in a row change nothing (no card discarded or drawn,"
        " nobody out) ends as a draw, so it cannot go on for ever."
    ),
    "turn_timeout": N_("How long a player may think before the bot moves for him."),
    "language": N_("The language of the group's messages."),
    "recap": N_("Two short lines after each game: the decisive bout, cards taken, rating changes."),
}

LABELS = {
    **games_text.OPTION_NAMES,
    "turn_timeout": N_("Turn time"),
    "language": N_("Language"),
    "recap": N_("Game recap"),
}

#: What a pile game takes besides the turn time and the language (PILE-GAMES.md 1.2).
PILE_OPTIONS = {
    "own_trumps": ("own_trumps_take", "no_progress_draw"),
    "piled": ("no_progress_draw",),
    "road": ("show_last_discard", "no_progress_draw"),
}


def shown(name: str, settings: ChatSettings) -> bool:
    """Whether the menu offers ``name`` for the game in force: a pile game takes
    none of podkidnoy's options, podkidnoy not own trumps' take."""
    rules = settings.rules
    if name in ("turn_timeout", "language", "recap"):
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


def changes_for(code: str, index: int) -> dict[str, Any]:
    """The changes choosing value ``index`` of option ``code`` makes: the value,
    and the options that have to follow it (no show-a-trump without transfer).
    ``code`` and ``index`` come from callback data: the caller checks them with
    :func:`valid`."""
    name, values = CODES[code]
    value = values[index]
    changes = {name: value}
    if name == "transfer" and not value:
        changes["transfer_by_showing_trump"] = False
    if name == "transfer_by_showing_trump" and value:
        changes["transfer"] = True
    return changes


def valid(code: str, index: int | None) -> bool:
    """Whether a value button's data names an option of the menu and one of its values."""
    return code in CODES and (index is None or 0 <= index < len(CODES[code][1]))


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


def values_text(code: str, settings: ChatSettings) -> str:
    """The value list's text: the option, what it does, its value now."""
    name, _values = CODES[code]
    now = value_text(name, current(settings)[name])
    return "\n".join(
        [
            "⚙️ <b>" + _(LABELS[name]) + "</b>",
            "",
            _(EXPLAIN[name]),
            "",
            _("Now: {name}").format(name=now),
        ]
    )


def values_keyboard(
    code: str, settings: ChatSettings, allowed: tuple[int, ...]
) -> InlineKeyboardMarkup:
    """One button per value in ``allowed`` (the current one ticked), and Back."""
    name, values = CODES[code]
    now = current(settings)[name]
    rows = []
    for index in allowed:
        label = value_text(name, values[index])
        if values[index] == now:
            label = "✅ " + label
        rows.append([InlineKeyboardButton(label, callback_data=cb.setting(code, index))])
    rows.append([InlineKeyboardButton("↩ " + _("Back"), callback_data=cb.setting(BACK))])
    return InlineKeyboardMarkup(rows)


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
