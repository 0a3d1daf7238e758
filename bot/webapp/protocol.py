"""The Mini App's WebSocket messages, both ways, in one place.

In (the page to the bot), each a JSON object:

- ``{"init": "<initData>", "game": 17}``: the first message; ``game`` is optional (the
  private panel's button names it; the group's link carries it as ``start_param``).
- ``{"move": <record step>, "version": 5}``: a move as ``RECORDS.md`` writes it
  (``{"do": "defend", "attack": "7H", "card": "9H"}``) for the state the page showed.
- ``{"slot": 3, "version": 5}``: ``blind``: play face-down slot 3.
- ``{"sync": 5}``: the page (back from the background, or having seen a gap in the
  versions) asks for the whole state; 5 is the version it shows.
- ``{"lobby": "join"}``: a lobby's button (:data:`LOBBY_ACTIONS`): ``join``, ``leave``,
  ``start``, ``confirm`` (Play again's "I'm in"), ``{"lobby": "ai", "level": "easy"}``,
  ``{"lobby": "cap", "players": 4}``, ``{"lobby": "suit", "suit": "S"}`` (own trumps).
- ``{"again": true}``: Play again, from a game's end; ``{"leave": true}``: leave the
  running game (the AI plays his seat; the page asked him first).
- ``{"say": "take"}``: one of the quick phrases (:data:`PHRASES`), to the table.
- ``{"deal": 2}``: a replay's deal 2 (a sprint match's deals, one at a time); from an
  ended game's own page, ``{"deal": 0}``: its replay (the deal it is).

Out: ``{"state": {...}}`` (what the connection's seat may see: :func:`state`),
``{"lobby": {...}}`` (a lobby: :func:`lobby`), ``{"replay": {...}}`` (a finished game,
every step with every hand: ``bot/webapp/replays.py``), ``{"said": {...}}`` (a phrase
said at the table), ``{"watchers": 3}`` (how many members watch the game),
``{"error": "<code>", "text": "<in his language>"}``, ``{"texts": {...}}`` once after
the check (the page's labels in his language). Nothing else is ever sent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from durak import Attack, Defend, Transfer, View
from durak.actions import Action
from durak.cards import Card
from durak.service import LOBBY, GameInfo
from durak.view import PileView

from ..ui import games_text, keyboards, render
from ..ui.i18n import N_, _, language, n_

__all__ = [
    "MAX_MESSAGE",
    "BadMessage",
    "Init",
    "MoveIn",
    "SlotIn",
    "Sync",
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


@dataclass(frozen=True, slots=True)
class Sync:
    version: int


@dataclass(frozen=True, slots=True)
class LobbyIn:
    """A lobby's button: one of :data:`LOBBY_ACTIONS`, with ``ai``'s level, ``cap``'s
    players or ``suit``'s suit."""

    action: str
    level: str | None = None
    players: int | None = None
    suit: str | None = None


@dataclass(frozen=True, slots=True)
class AgainIn:
    """Play again, from the end of a game."""


@dataclass(frozen=True, slots=True)
class LeaveIn:
    """Leave the running game: the AI plays his seat to the end (``/leave``)."""


@dataclass(frozen=True, slots=True)
class SayIn:
    """A quick phrase (its key, :data:`PHRASES`) said at the table."""

    phrase: str


@dataclass(frozen=True, slots=True)
class DealIn:
    """A replay's deal (1 is a match's first; 0: the deal the game is)."""

    deal: int


Incoming = Init | MoveIn | SlotIn | Sync | LobbyIn | AgainIn | LeaveIn | SayIn | DealIn

#: A lobby's buttons on the page, and which field each takes besides ``lobby``.
LOBBY_ACTIONS: dict[str, str | None] = {
    "join": None,
    "leave": None,
    "start": None,
    "confirm": None,
    "ai": "level",
    "cap": "players",
    "suit": "suit",
}
AI_LEVELS = ("easy", "normal", "hard")
#: The quick phrases a player may say at the table (issue 35 item 6), by key: a few
#: words in his language, or an emoji (the same in every language).
PHRASES: dict[str, str] = {
    "take": N_("I take"),
    "beaten": N_("Beaten"),
    "good": N_("Well played"),
    "hurry": N_("Hurry up"),
    "thumbs": "👍",
    "laugh": "😂",
    "wow": "😮",
    "think": "🤔",
}

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
    if "sync" in data and keys == {"sync"}:
        shown = data["sync"]
        if type(shown) is not int or not -1 <= shown < 1_000_000:
            raise BadMessage()
        return Sync(shown)
    return _other(data, keys)


def _other(data: dict[str, Any], keys: set[str]) -> Incoming:
    """The messages of the lobby, the end, the phrases and the replay."""
    if "lobby" in data:
        action = data["lobby"]
        if not isinstance(action, str) or action not in LOBBY_ACTIONS:
            raise BadMessage()
        field_name = LOBBY_ACTIONS[action]
        if keys != {"lobby"} | ({field_name} if field_name else set()):
            raise BadMessage()
        value = data.get(field_name) if field_name else None
        if action == "ai" and value not in AI_LEVELS:
            raise BadMessage()
        if action == "cap" and (type(value) is not int or not 2 <= value <= 16):
            raise BadMessage()
        if action == "suit" and value not in ("S", "H", "D", "C"):
            raise BadMessage()
        return LobbyIn(
            action,
            level=value if action == "ai" else None,
            players=value if action == "cap" else None,
            suit=value if action == "suit" else None,
        )
    if keys == {"again"} and data["again"] is True:
        return AgainIn()
    if keys == {"leave"} and data["leave"] is True:
        return LeaveIn()
    if keys == {"say"} and isinstance(data["say"], str) and data["say"] in PHRASES:
        return SayIn(data["say"])
    if keys == {"deal"} and type(data["deal"]) is int and 0 <= data["deal"] <= 1000:
        return DealIn(data["deal"])
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
    "no_replay": N_("Only a finished game can be replayed."),
    "too_fast": N_("One phrase every 3 seconds."),
    "too_many_attempts": N_("Too many sign-ins at once: the table tries again in a moment."),
}


def more_texts(lang: str) -> dict[str, Any]:
    """The labels of the page's lobby, end, phrases and replay in ``lang`` (beside
    :func:`texts`' table labels)."""
    with language(lang):
        return {
            "over": _("The game is over."),
            "lobby": _("Lobby"),
            "join": "✋ " + _("Join"),
            "leave": _("Leave"),
            "start": "▶️ " + _("Start"),
            "confirm": "✅ " + _("I'm in"),
            "aiSeats": _("Short of players? The creator can seat AI players (🤖)."),
            "levels": {"easy": _("easy"), "normal": _("normal"), "hard": _("hard")},
            "capTitle": _("Players at most: the game starts when that many sit."),
            "youSit": _("You are in: the game starts here."),
            "againButton": "🔁 " + _("Play again"),
            "replayButton": "🎞 " + _("Watch the replay"),
            "leaveGame": _("Leave the game"),
            "leaveAsk": _(
                "Leave the game? The AI plays your seat to the end;"
                " you are the durak only if it loses."
            ),
            "leaveYes": "✅ " + _("Yes, leave"),
            "no": "↩️ " + _("No"),
            "phrases": phrases(lang),
            "say": _("Say"),
            "watching": _("Watching: {n}"),
            "replay": _("Replay"),
            "deal": _("Deal {n} of {m}"),
            "step": _("Step {n} of {m}"),
            "toFirst": _("To the deal"),
            "stepBack": _("One step back"),
            "stepForward": _("One step forward"),
            "toLast": _("To the end"),
            "playOn": _("Play"),
            "pause": _("Pause"),
            "speed": _("Speed"),
        }


def texts(lang: str) -> dict[str, Any]:
    """The page's fixed labels in ``lang`` (from the bot's catalogs)."""
    with language(lang):
        return {
            "lang": lang,
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
            "faceDownCard": _("face-down card {n}"),
            "pile": _("Pile"),
            "table": _("Table"),
            "players": _("Players"),
            "lastDiscard": _("Last discarded"),
            "connecting": _("Connecting…"),
            "reconnecting": _("Connection lost: reconnecting…"),
            "spectator": _("You are watching: the cards in hands are hidden."),
            "over": _("The game is over: Play again is in the group chat."),
            "whatShould": _("What should {card} do?"),
            "choose": _("Choose the cards to open with, then play them."),
            "settings": _("Settings"),
            "fourColours": _("Four-colour deck"),
            "close": _("Close"),
            "cannotPlay": render.refusal("cannot_play"),
            "notYourTurn": render.refusal("not_your_turn"),
            "ranks": render.RANK_LETTERS.get(lang, {}),
            "cards": render.card_words(),
        }


# ---- the state -------------------------------------------------------------------------


def _c(card: Card | None) -> str | None:
    return None if card is None else str(card)


def _option(a: Action) -> dict[str, Any]:
    """One thing a card may do, as the panel's choice offers it: the record step to send,
    the choice's label, and what the page shows it by (the attack card it covers, a
    transfer, the cards of an opening)."""
    out: dict[str, Any] = {"step": a.step()}
    label = keyboards.choice_label(a)
    if label is not None:
        out["label"] = label
    if isinstance(a, Defend):
        out["covers"] = str(a.attack)
    elif isinstance(a, Transfer):
        out["transfer"] = True
    elif isinstance(a, Attack):
        out["cards"] = [str(c) for c in a.cards]
    return out


def offer(view: View | PileView) -> dict[str, Any]:
    """What the reader may do now, exactly as his panel offers it (``bot/ui/keyboards.py``):
    each hand card's options (``ask``: a tap asks which, as the panel's choice does: more
    than one, or a pair to confirm), the buttons, and the several-card openings where the
    panel offers its picker. The page decides nothing of the rules: it shows these."""
    cards: dict[str, Any] = {}
    for c in view.hand:
        options = keyboards.card_actions(view, c)
        if options:
            several = isinstance(options[0], Attack) and len(options[0].cards) > 1
            cards[str(c)] = {
                "options": [_option(a) for a in options],
                "ask": len(options) > 1 or several,
            }
    buttons = [{"step": a.step(), "label": label} for label, a in keyboards.actions(view)]
    openings = []
    if isinstance(view, View) and keyboards.several_card_openings(view):
        openings = [_option(a) for a in view.legal if isinstance(a, Attack) and len(a.cards) > 1]
    return {"cards": cards, "actions": buttons, "openings": openings}


def _seat_label(name: str, cards: int, out: bool) -> str:
    """A seat as a screen reader says it: his name and his cards."""
    if out:
        return f"{name}: " + _("out, safe")
    return n_("{name}: {n} card", "{name}: {n} cards", cards).format(name=name, n=cards)


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
            "label": _seat_label(s.name, s.cards, s.out),
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
            "offer": offer(v),
            "clock": t.seconds_left,
            "over": v.outcome is not None or t.ending is not None,
            "status": render.page_status(t),
            "notes": render.page_notes(t),
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


# ---- the lobby, the phrases, the watchers -------------------------------------------------


def lobby(
    info: GameInfo,
    user_id: int,
    lang: str,
    title: str,
    note: str = "",
    fields: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``{"lobby": ...}``: the lobby as its page shows it to ``user_id``: who sits (the AI
    seats, who confirmed a Play again), the game and its options, the cap, and the buttons
    he may press (``may``; the creator's: the AI seats, the cap and Start). A lobby that
    closed says why (``note``, a message id formatted with ``fields``, in his language);
    a dealt one is a game (:func:`state`)."""
    you = info.seat_of(user_id)
    creator = info.creator_id == user_id
    open_now = info.status == LOBBY
    choice = info.suit_choice if open_now else None
    with language(lang):
        creator_name = next((s.name for s in info.seats if s.user_id == info.creator_id), "")
        may: list[str] = []
        if open_now and choice is None:
            room = len(info.seats) < info.room
            if you is None and room:
                may.append("join")
            if you is not None:
                may.append("leave")
            if info.again and you is not None and not info.seats[you].ready:
                may.append("confirm")
            if creator:
                may += ["start", *(["ai"] if room and not info.again else [])]
        if not open_now:
            status = _(note).format(**(fields or {})) if note else ""
        elif choice is not None:
            turn = choice.seat
            status = (
                _("{name}, tap a free suit: it is your trump for the whole series.").format(
                    name=info.seats[turn].name
                )
                if turn is not None
                else ""
            )
        elif info.again:
            status = _(
                "Press “I'm in” to play the next game, or Leave. It starts when everyone"
                " has confirmed, or when {name} presses Start."
            ).format(name=creator_name)
        else:
            status = _("{name} is gathering players.").format(name=creator_name)
            if info.cap is not None:
                status += " " + render.cap_line(info.room)
        counts = keyboards.cap_counts(info) if creator and open_now and not info.again else []
        body: dict[str, Any] = {
            "game": info.game_id,
            "title": title,
            "open": open_now,
            "again": info.again,
            "name": games_text.game_name(info.rules),
            "options": render.rules_lines(info.rules),
            "seats": [
                {
                    "name": s.name,
                    "ai": s.is_ai,
                    "ready": s.ready or s.is_ai,
                    "creator": s.user_id == info.creator_id,
                }
                for s in info.seats
            ],
            "you": you,
            "room": info.room,
            "cap": info.cap,
            "caps": counts if len(counts) > 1 else [],
            "may": may,
            "status": status,
        }
        if choice is not None:
            body["suits"] = {
                "order": list(choice.order),
                "chosen": list(choice.chosen),
                "free": list(choice.free),
                "turn": choice.seat,
            }
    return {"lobby": body}


def said(seat: int, phrase: str, lang: str) -> dict[str, Any]:
    """``{"said": ...}``: a quick phrase of the player at ``seat``, in ``lang``."""
    with language(lang):
        return {"said": {"seat": seat, "phrase": phrase, "text": _(PHRASES[phrase])}}


def phrases(lang: str) -> list[dict[str, str]]:
    """The quick phrases as the page offers them, in ``lang``."""
    with language(lang):
        return [{"key": key, "text": _(text)} for key, text in PHRASES.items()]


def for_seat(t: render.Table, view: View | PileView) -> render.Table:
    """``t`` (the public table) as ``view``'s seat sees it."""
    return replace(t, view=view, version=max(t.version, view.moves))
