"""The Mini App's WebSocket messages, both ways, in one place.

In (the page to the bot), each a JSON object:

- ``{"init": "<initData>", "game": 17}``: the first message; ``game`` is optional (the
  private panel's button names it; the group's link carries it as ``start_param``).
- ``{"move": <record step>, "version": 5}``: a move as ``RECORDS.md`` writes it
  (``{"do": "defend", "attack": "7H", "card": "9H"}``) for the state the page showed.
- ``{"slot": 3, "version": 5}``: ``blind``: play face-down slot 3.

Out: ``{"state": {...}}`` (what the connection's seat may see: :func:`state`),
``{"error": "<code>", "text": "<in his language>"}``, ``{"texts": {...}}`` once after
the check (the page's labels in his language). Nothing else is ever sent.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, replace
from typing import Any

from durak import Attack, Defend, ExchangeTrump, Pass, ShowTrump, Take, Transfer, View
from durak.actions import Action, Beat, Lead, ReturnCard
from durak.cards import Card
from durak.view import PileView

from ..ui import render
from ..ui.i18n import N_, _, language

__all__ = [
    "MAX_MESSAGE",
    "BadMessage",
    "Init",
    "MoveIn",
    "SlotIn",
    "dumps",
    "error",
    "parse",
    "state",
    "texts",
]

#: The largest message a page may send (a move is under 100 bytes, initData under 1 KiB).
MAX_MESSAGE = 4096


class BadMessage(ValueError):
    """Not a message of this protocol; ``code`` is what the page is told."""

    def __init__(self, code: str = "bad_message") -> None:
        super().__init__(code)
        self.code = code


@dataclass(frozen=True, slots=True)
class Init:
    init_data: str
    game: int | None


@dataclass(frozen=True, slots=True)
class MoveIn:
    step: dict[str, Any]
    version: int


@dataclass(frozen=True, slots=True)
class SlotIn:
    slot: int
    version: int


Incoming = Init | MoveIn | SlotIn

_STEP_KEYS = frozenset({"do", "cards", "card", "attack"})
_CARD = re.compile(r"^(?:[2-9]|10|[JQKA])[SHDC]$")


def _version(data: dict[str, Any]) -> int:
    v = data.get("version")
    if type(v) is not int or not 0 <= v < 1_000_000:
        raise BadMessage()
    return v


def parse(text: str | bytes) -> Incoming:
    """One message of the page, or :class:`BadMessage` (too long, not JSON, not one of
    the three shapes, a field of the wrong type). The game decides what is legal; this
    only keeps what reaches the service small and well-formed."""
    if len(text) > MAX_MESSAGE:
        raise BadMessage("too_large")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # (1,900 nested brackets: RecursionError, issue 36)
        raise BadMessage() from None
    if not isinstance(data, dict):
        raise BadMessage()
    keys = set(data)
    if "init" in data and keys <= {"init", "game"}:
        game = data.get("game")
        if game is not None and (type(game) is not int or not 0 < game < 2**53):
            raise BadMessage()
        if not isinstance(data["init"], str):
            raise BadMessage()
        return Init(data["init"], game)
    if "move" in data and keys == {"move", "version"}:
        step = data["move"]
        if not isinstance(step, dict) or not set(step) <= _STEP_KEYS:
            raise BadMessage()
        if not isinstance(step.get("do"), str) or len(step["do"]) > 20:
            raise BadMessage()
        for key in ("card", "attack"):
            if key in step and not (isinstance(step[key], str) and _CARD.match(step[key])):
                raise BadMessage()
        if "cards" in step:
            cards = step["cards"]
            if not isinstance(cards, list) or not 0 < len(cards) <= 6:
                raise BadMessage()
            if not all(isinstance(c, str) and _CARD.match(c) for c in cards):
                raise BadMessage()
        return MoveIn(dict(step), _version(data))
    if "slot" in data and keys == {"slot", "version"}:
        slot = data["slot"]
        if type(slot) is not int or not 0 <= slot < 64:
            raise BadMessage()
        return SlotIn(slot, _version(data))
    raise BadMessage()


def dumps(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def error(code: str, lang: str) -> dict[str, Any]:
    """A refusal, its text in the player's language (the panel's own sentences)."""
    with language(lang):
        text = (
            _("Sign-in failed: open the table from Telegram again.")
            if code in ("unauthorized",)
            else (_(ERRORS[code]) if code in ERRORS else render.refusal(code))
        )
    return {"error": code, "text": text}


#: The page's own refusals (the game's are the panel's, ``render.refusal``).
ERRORS = {
    "unauthorized": N_("Sign-in failed: open the table from Telegram again."),
    "bad_message": N_("That message was not understood."),
    "too_large": N_("That message was too long."),
    "flood": N_("Too many messages at once: the table closed. Open it again."),
    "too_many_connections": N_("The table is open too often at once: close it elsewhere first."),
    "no_game": N_("No game of yours to show: open the table from the game's own buttons."),
    "not_member": N_("This game belongs to another group."),
    "idle": N_("The table closed after a long quiet: open it again."),
    "too_many_attempts": N_("Too many sign-ins at once: the table tries again in a moment."),
}

_TAG = re.compile(r"<[^>]+>")


def plain(text: str) -> str:
    """The rendered (HTML) line as the page shows it: text only."""
    return html.unescape(_TAG.sub("", text))


def texts(lang: str) -> dict[str, Any]:
    """The page's fixed labels in ``lang`` (from the bot's catalogs)."""
    with language(lang):
        return {
            "take": _("Take"),
            "pass": _("Pass"),
            "beaten": _("Beaten off"),
            "exchange": _("Exchange trump"),
            "return": _("Return the card"),
            "several": _("Several cards"),
            "back": _("Back"),
            "stock": _("Stock"),
            "discard": _("Discard"),
            "trump": _("Trump"),
            "you": _("(you)"),
            "out": _("out, safe"),
            "away": _("away"),
            "yourCards": _("Your cards"),
            "faceDown": _("Your cards (face down)"),
            "pile": _("Pile"),
            "lastDiscard": _("Last discarded"),
            "connecting": _("Connecting…"),
            "reconnecting": _("Connection lost: reconnecting…"),
            "spectator": _("You are watching: the cards in hands are hidden."),
            "over": _("The game is over: Play again is in the group chat."),
            "transferWith": "➡️ " + _("Transfer with {card}"),
            "cannotPlay": render.refusal("cannot_play"),
            "notYourTurn": render.refusal("not_your_turn"),
            "ranks": render.RANK_LETTERS.get(lang, {}),
        }


# ---- the state -------------------------------------------------------------------------


def _c(card: Card | None) -> str | None:
    return None if card is None else str(card)


def _legal(view: View | PileView) -> list[dict[str, Any]]:
    """Every legal action as its record step, with the label of a button where the
    panel has one (Take, Pass, ...): the page offers exactly these."""
    out: list[dict[str, Any]] = []
    for a in view.legal:
        entry: dict[str, Any] = {"step": a.step()}
        label = _label(view, a)
        if label is not None:
            entry["label"] = label
        out.append(entry)
    return out


def _label(view: View | PileView, a: Action) -> str | None:
    if isinstance(a, Take):
        if isinstance(view, PileView):
            if view.game == "road":
                return "🫴 " + _("Take the bottom card")
            return "🫴 " + _("Take ({n})").format(n=view.take_cost or 0)
        return "🫴 " + _("Take")
    if isinstance(a, Pass):
        covered = isinstance(view, View) and any(c is None for _a, c in view.table)
        return "✋ " + (_("Pass") if covered else _("Beaten off"))
    if isinstance(a, ExchangeTrump):
        return "🔄 " + _("Exchange trump")
    if isinstance(a, ShowTrump):
        return "👁 " + _("Show {card}").format(card=render.card(a.card))
    if isinstance(a, ReturnCard):
        return "↩️ " + _("Return the card")
    if isinstance(a, Attack | Defend | Transfer | Lead | Beat):
        return None
    return None


def _seats(t: render.Table) -> list[dict[str, Any]]:
    v = t.view
    out = []
    for i, s in enumerate(v.seats):
        seat = t.seats[i] if i < len(t.seats) else None
        entry: dict[str, Any] = {
            "name": s.name,
            "cards": s.cards,
            "out": s.out,
            "team": s.team,
            "ai": bool(seat and seat.is_ai),
            "away": bool(seat and (seat.away or seat.left)),
            "waiting": i in v.waiting_for,
        }
        if isinstance(v, View):
            entry["attacker"] = i == v.attacker
            entry["defender"] = i == v.defender
        else:
            entry["turn"] = i == v.turn
            if v.trumps and i < len(v.trumps):
                own = v.trumps[i]
                entry["suit"] = own.letter if own is not None else None
        out.append(entry)
    return out


def _notes(t: render.Table) -> list[str]:
    """The lines the panel shows beside the cards (the trump, a sprint's score,
    English's lead, the last event and timeouts), as plain text."""
    v = t.view
    lines: list[str] = []
    if isinstance(v, View):
        if v.match is not None:
            lines += render.match_lines(v.match, over=v.outcome is not None)
        lines.append(render._trump_line(v))
        if v.first_bout:
            lines.append(render._opening(t))
        lines.append(render._english_line(t))
    else:
        lines += render._pile_trump_lines(v)
    lines.append(render.last_event(t) or "")
    lines.append(render.timeout_line(t))
    return [plain(x) for x in lines if x]


def _status(t: render.Table) -> str:
    v = t.view
    if v.outcome is not None or t.ending is not None:
        end = render.outcome_line(t.seats, v.outcome, t.ending, getattr(v, "end_reason", None))
        return plain("🏁 " + end)
    if isinstance(v, PileView):
        mine = render.pile_turn_line(v)
        return plain("👉 " + mine if mine else "⏳ " + render.pile_waiting_line(t))
    mine = render.your_turn_line(v)
    if mine:
        return plain("👉 " + mine)
    wait = render.waiting_line(t)
    return plain("⏳ " + wait) if wait else ""


def state(t: render.Table, lang: str) -> dict[str, Any]:
    """``{"state": ...}`` for ``t`` (whose view is the reader's seat's, or the public
    one): counts of every hand, his own cards only, what he may do now."""
    v = t.view
    with language(lang):
        body: dict[str, Any] = {
            "game": t.game_id,
            "version": max(t.version, v.moves),
            "title": t.chat_title,
            "you": v.seat,
            "seats": _seats(t),
            "hand": [str(c) for c in v.hand],
            "legal": _legal(v),
            "clock": t.seconds_left,
            "over": v.outcome is not None or t.ending is not None,
            "status": _status(t),
            "notes": _notes(t),
        }
        if isinstance(v, PileView):
            body |= {
                "family": "pile",
                "kind": v.game,
                "pile": [str(c) for c in v.pile],
                "phase": v.phase,
                "trump": v.trump.letter if v.trump is not None else None,
                "trumpCard": _c(v.trump_card),
                "trumpInStock": v.trump_card_in_stock,
                "outOfPlay": _c(v.out_of_play),
                "stock": v.stock,
                "discard": v.discard,
                "takeCost": v.take_cost,
                "lastDiscard": [[str(c), None] for c in v.last_cleared] if v.last_cleared else None,
            }
        else:
            body |= {
                "family": "bout",
                "kind": "podkidnoy",
                "trump": v.trump.letter,
                "trumpCard": _c(v.trump_card),
                "trumpInStock": v.trump_card_in_stock,
                "secondTrump": _c(v.second_trump_card),
                "secondHidden": v.second_trump_hidden,
                "stock": v.stock,
                "discard": v.discard,
                "table": [[str(a), _c(c)] for a, c in v.table],
                "limit": v.limit,
                "taking": v.taking,
                "lastDiscard": [[str(a), _c(c)] for a, c in v.last_discard]
                if v.last_discard
                else None,
                "slots": None if v.slots is None else [_c(c) for c in v.slots],
                "slotsLive": v.slots is not None and v.seat in v.waiting_for,
                "shownHands": [[s, [str(c) for c in cs]] for s, cs in v.shown_hands],
            }
    return {"state": body}


def for_seat(t: render.Table, view: View | PileView) -> render.Table:
    """``t`` (the public table) as ``view``'s seat sees it."""
    return replace(t, view=view, version=max(t.version, view.moves))
