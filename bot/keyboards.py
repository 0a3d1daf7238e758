"""Inline keyboards: pure functions from a view to buttons."""

from __future__ import annotations

from typing import Any

from durak import Attack, Defend, ExchangeTrump, Pass, ShowTrump, Take, Transfer, View
from durak.actions import Action
from durak.cards import Card

from . import callbacks as cb
from .i18n import _
from .render import card

CARDS_PER_ROW = 6

#: A keyboard as the Bot API's JSON: cheaper to build and send than PTB's objects, which
#: took a quarter of a busy bot's CPU to construct and serialise (BENCHMARKS.md).
Markup = dict[str, Any]
Button = dict[str, str]


def button(text: str, callback_data: str | None = None, url: str | None = None) -> Button:
    if (callback_data is None) == (url is None):
        raise ValueError("a button has either callback data or a URL")
    if callback_data is not None:
        return {"text": text, "callback_data": callback_data}
    return {"text": text, "url": url or ""}


def markup(rows: list[list[Button]]) -> Markup:
    return {"inline_keyboard": rows}


def deep_link(bot_username: str, payload: str) -> str:
    return f"https://t.me/{bot_username}?start={payload}"


def lobby(game_id: int, room: bool = True) -> Markup:
    """Join / Leave, AI players of three levels while there is a free seat, Start."""
    rows = [
        [
            button("✋ " + _("Join"), callback_data=cb.lobby("j", game_id)),
            button(_("Leave"), callback_data=cb.lobby("l", game_id)),
        ]
    ]
    if room:
        levels = {"easy": _("easy"), "normal": _("normal"), "hard": _("hard")}
        rows.append(
            [
                button("🤖 " + levels[level], callback_data=cb.lobby(kind, game_id))
                for kind, level in cb.AI_KINDS.items()
            ]
        )
    rows.append([button("▶️ " + _("Start"), callback_data=cb.lobby("s", game_id))])
    return markup(rows)


def ended(bot_username: str, game_id: int, again: bool = True) -> Markup:
    """Under the end-of-game message: the next game of the series (not after a cancelled
    game: it has none), and the record."""
    play = [button("🔁 " + _("Play again"), callback_data=cb.lobby("r", game_id))]
    record = [button("📄 " + _("Game record"), callback_data=cb.lobby("h", game_id))]
    return markup([play, record] if again else [record])


def table(bot_username: str, game_id: int, over: bool) -> Markup:
    """The group's table: a way to one's cards while playing, the record after."""
    if over:
        record = cb.lobby("h", game_id)
        return markup([[button("📄 " + _("Game record"), callback_data=record)]])
    url = deep_link(bot_username, f"g{game_id}")
    return markup([[button("🃏 " + _("My cards"), url=url)]])


def playable(view: View) -> set[Card]:
    """The cards of the hand that some legal action plays or shows."""
    out: set[Card] = set()
    for a in view.legal:
        if isinstance(a, Attack):
            out.update(a.cards)
        elif isinstance(a, Defend | Transfer | ShowTrump):
            out.add(a.card)
    return out


def card_actions(view: View, c: Card) -> list[Action]:
    """What tapping ``c`` could mean now (single-card attacks, covers, transfers)."""
    out: list[Action] = []
    for a in view.legal:
        if (isinstance(a, Attack) and a.cards == (c,)) or (
            isinstance(a, Defend | Transfer) and a.card == c
        ):
            out.append(a)
    return out


def panel(game_id: int, version: int, view: View) -> Markup:
    """The hand as buttons (cards that can be played now plain, others in
    brackets) and the actions that are legal now."""
    can = playable(view)
    rows: list[list[Button]] = []
    row: list[Button] = []
    for c in view.hand:
        label = card(c) if c in can else f"({card(c)})"
        row.append(button(label, callback_data=cb.move(game_id, version, cb.Tap(c))))
        if len(row) == CARDS_PER_ROW:
            rows.append(row)
            row = []
    if row:
        rows.append(row)
    actions: list[Button] = []
    for a in view.legal:
        if isinstance(a, Take):
            actions.append(_button("🫴 " + _("Take"), game_id, version, a))
        elif isinstance(a, Pass):
            label = _("Pass") if any(c is None for _a, c in view.table) else _("Beaten off")
            actions.append(_button("✋ " + label, game_id, version, a))
        elif isinstance(a, ExchangeTrump):
            actions.append(_button("🔄 " + _("Exchange trump"), game_id, version, a))
        elif isinstance(a, ShowTrump):
            text = _("Show {card}").format(card=card(a.card))
            actions.append(_button("👁 " + text, game_id, version, a))
    if actions:
        rows.append(actions)
    rows.append(
        [button("↻ " + _("Refresh"), callback_data=cb.move(game_id, version, cb.Refresh()))]
    )
    return markup(rows)


def choice(game_id: int, version: int, options: list[Action]) -> Markup:
    """When a tap could mean several things: one button each, and Back."""
    rows = []
    for a in options:
        if isinstance(a, Defend):
            text = _("Cover {attack} with {card}").format(attack=card(a.attack), card=card(a.card))
        elif isinstance(a, Transfer):
            text = _("Transfer with {card}").format(card=card(a.card))
        elif isinstance(a, Attack):
            text = _("Play {card}").format(card=card(a.cards[0]))
        else:
            continue
        rows.append([_button(text, game_id, version, a)])
    rows.append([button("↩ " + _("Back"), callback_data=cb.move(game_id, version, cb.Back()))])
    return markup(rows)


def _button(text: str, game_id: int, version: int, action: Action) -> Button:
    return button(text, callback_data=cb.move(game_id, version, action))
