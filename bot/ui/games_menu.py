"""The "game" screen of /settings: every game a group can choose, by its familiar
name, one button each; and the check that refuses a forbidden combination of
options with the reason. Pure: settings in, text and buttons (or changes) out."""

from __future__ import annotations

from typing import Any

from durak import Rules
from durak.service import ChatSettings

from . import callbacks as cb
from . import games_text
from .i18n import _
from .keyboards import Markup, button, markup

#: The settings button that opens the game list, and the one that goes back.
OPEN, BACK = "gm", "gb"
#: Button code -> the game list's entry.
CODES = {
    "gcl": "classic",
    "gpe": "perevodnoy",
    "gsp": "sprint",
    "gbl": "blind",
    "gen": "english",
    "gda": "damka",
    "gjs": "japanese_s",
    "gjh": "japanese_h",
    "gjd": "japanese_d",
    "gtc": "trump_change",
    "got": "own_trumps",
    "gpi": "piled",
    "gro": "road",
}
_BY_CHOICE = {choice: code for code, choice in CODES.items()}
PER_ROW = 2


def handles(code: str) -> bool:
    return code in (OPEN, BACK) or code in CODES


def game_button(settings: ChatSettings) -> dict[str, str]:
    """The first button of the settings menu: the game in force; it opens the list."""
    name = games_text.game_name(settings.rules)
    return button("🎲 " + _("Game: {name}").format(name=name), callback_data=cb.setting(OPEN))


def list_text(settings: ChatSettings) -> str:
    rules = settings.rules
    lines = [
        "🎲 <b>" + _("Choose the game") + "</b>",
        "",
        _("Now: {name}").format(name=games_text.game_name(rules)),
        "",
    ]
    lines += games_text.game_lines(rules)
    lines += [
        "",
        _(
            "Choosing a game keeps the house rules that fit it; sprint, blind and the "
            "others can be combined with the options of the menu."
        ),
    ]
    return "\n".join(lines)


def list_keyboard(settings: ChatSettings) -> Markup:
    now = games_text.choice_of(settings.rules).code
    rows: list[list[dict[str, str]]] = []
    row: list[dict[str, str]] = []
    for choice in games_text.CHOICES:
        label = _(choice.name)
        if choice.code == now:
            label = "✅ " + label
        row.append(button(label, callback_data=cb.setting(_BY_CHOICE[choice.code])))
        if len(row) == PER_ROW:
            rows.append(row)
            row = []
    if row:
        rows.append(row)
    rows.append([button("↩ " + _("Back"), callback_data=cb.setting(BACK))])
    return markup(rows)


def pick(code: str, settings: ChatSettings) -> games_text.Chosen:
    """The rules the game button ``code`` makes of the group's settings."""
    return games_text.choose(games_text.BY_CODE[CODES[code]], settings.rules)


def changes_of(before: Rules, after: Rules) -> dict[str, Any]:
    """The rule options that differ between two rules (what to store)."""
    old, new = before.to_dict(), after.to_dict()
    return {k: v for k, v in new.items() if old[k] != v}


def why_not(settings: ChatSettings, changes: dict[str, Any], seated: int | None) -> str | None:
    """Why ``changes`` cannot be made, in the current language: a forbidden
    combination (``durak.rules``' reason), an option the game does not take, or an
    open lobby with more players than the new rules seat. ``None`` if they can."""
    values = {**settings.rules.to_dict(), **{k: v for k, v in changes.items() if k in _RULES}}
    why = games_text.conflict(values)
    if why is not None:
        return why
    try:
        rules = Rules.from_dict(values)
    except ValueError:
        return _("These rules do not go together.")
    if seated is not None and seated > rules.max_players:
        return _("{game}: {players}; the lobby already seats {n}.").format(
            game=games_text.game_name(rules), players=games_text.players_text(rules), n=seated
        )
    return None


_RULES = frozenset(Rules().to_dict())
