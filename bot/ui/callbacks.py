"""Callback data: a short versioned ASCII codec (Telegram allows 64 bytes).

``1<kind>.<game>[.<version>.<move>]`` with numbers in base 36:

- ``1j.h`` join lobby 17, ``1l.h`` leave it, ``1s.h`` start it
- ``1r.h`` play again after game 17; ``1h.h`` send game 17's record
- ``1x.h`` / ``1y.h`` / ``1z.h`` seat an easy / normal / hard AI player in lobby 17
- ``1o.dk`` a settings menu button: open the option ``dk``'s (the deck size's)
  list of values; ``1o.dk.2`` choose its value 2 (an index into the option's
  values, decimal; the settings menu checks it is one)
- ``1g.h.cTH`` in game 17: tap 10♥ (the bot works out what that means; a press
  is checked against the game when it arrives, so a panel whose table moved on
  need not be edited); ``1g.h.5.p`` a pass made at state version 5: a pass (and
  ``blind``'s face-down slot) needs the table its player saw, so only these
  buttons carry the version, and a panel that shows them changes with the table.
  Moves: ``a`` attack (one to six cards), ``d`` defend (two cards),
  ``t`` take, ``p`` pass, ``x`` transfer, ``w`` show trump, ``e`` exchange
  trump, ``r`` return the card(s) (``return_last_card``), ``l`` lead and ``b``
  beat (pile games), ``s3`` play face-down slot 3 (``blind``; decimal), ``m``
  with up to six cards: the several-card opening picker with those cards
  chosen so far, ``k`` back to the hand, ``f`` refresh.
- ``1c.h.S`` own trumps: choose spades as one's suit in lobby 17.
- ``1q.h.5.2`` ``/skip``: vote to hand seat 2 of game 17 to the AI, at state version 5
  (the vote is for the wait that state shows; seat in decimal).
- ``1a.h`` confirm one's seat in Play-again lobby 17.
- ``1n.h.4`` cap lobby 17 at 4 players (decimal, 2 to 16).
- ``1v.h.<token>.y`` / ``.n``: confirm / decline leaving running game 17 (``/leave``);
  ``1w.h.<token>.y`` / ``.n`` the same for cancelling it (``/cancel``). The token
  (base 36) is the bot's, one use, for one user and one game: a forged or replayed
  press names no pending confirmation and is refused.

Anything else, including data from a forged client, raises ``BadCallback``. The kind
letters are the values of :class:`Kind` (stored panels keep working); the move letters
after ``1g`` are another alphabet, read only by :func:`decode`'s move part.

The deep links of ``/start`` (``t.me/<bot>?start=<payload>``) are in this codec too:
``j<game>`` join lobby ``game``, ``g<game>`` my cards of game ``game`` (decimal), made
by :func:`start_payload` and read by :func:`parse_start` alone. So are the Mini App's
start parameters (``t.me/<bot>/<app>?startapp=<payload>``, handed to the page in its
initData): ``<game>`` the lobby, table or end of game ``game`` (whatever it is when
opened), ``r<game>`` the replay of finished game ``game``, made by :func:`app_payload`
and read by :func:`parse_app` alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from durak import Attack, Defend, ExchangeTrump, Pass, ShowTrump, Take, Transfer
from durak.actions import Action, Beat, Lead, ReturnCard
from durak.cards import Card, Rank, parse_card

VERSION = "1"


class Kind(StrEnum):
    """What a button is for; the value is its letter on the wire."""

    JOIN = "j"  # join the lobby
    LEAVE = "l"  # leave the lobby
    START = "s"  # start the lobby's game
    PLAY_AGAIN = "r"  # a Play-again lobby after a finished game
    RECORD = "h"  # send the finished game's record
    AI_EASY = "x"  # seat an AI player of a level in the lobby
    AI_NORMAL = "y"
    AI_HARD = "z"
    CONFIRM_SEAT = "a"  # confirm one's seat in a Play-again lobby
    MOVE = "g"  # a move (or a tap) on one's panel in a game
    OPTION = "o"  # the settings menu (or, ``u...``, one's own language)
    SUIT = "c"  # own trumps: choose one's suit
    SKIP_VOTE = "q"  # /skip: vote to hand a seat to the AI
    CAP = "n"  # cap the lobby's players
    CONFIRM_LEAVE = "v"  # yes / no to /leave in a running game
    CONFIRM_CANCEL = "w"  # yes / no to /cancel


#: The kinds whose data is only ``1<kind>.<game>``.
LOBBY_KINDS = frozenset(
    {
        Kind.JOIN,
        Kind.LEAVE,
        Kind.START,
        Kind.PLAY_AGAIN,
        Kind.RECORD,
        Kind.AI_EASY,
        Kind.AI_NORMAL,
        Kind.AI_HARD,
        Kind.CONFIRM_SEAT,
    }
)
#: Lobby buttons that seat an AI player of a level.
AI_KINDS = {Kind.AI_EASY: "easy", Kind.AI_NORMAL: "normal", Kind.AI_HARD: "hard"}
SETTING = re.compile(r"1o\.([a-z]{1,3})(?:\.(0|[1-9][0-9]?))?")
SUIT = re.compile(r"1c\.([0-9a-z]{1,12})\.([SHDC])")
SKIP = re.compile(r"1q\.([0-9a-z]{1,12})\.([0-9a-z]{1,12})\.(0|[1-9][0-9]?)")
CAP = re.compile(r"1n\.([0-9a-z]{1,12})\.([2-9]|1[0-6])")
CONFIRM = re.compile(r"1([vw])\.([0-9a-z]{1,12})\.([0-9a-z]{1,12})\.([yn])")
#: Confirmation kinds: what a confirmed press does.
CONFIRM_KINDS = {Kind.CONFIRM_LEAVE: "leave", Kind.CONFIRM_CANCEL: "cancel"}
MAX_BYTES = 64
#: At most this many cards in one attack button or one picker selection.
MAX_CARDS = 6

_DATA = re.compile(
    r"^1([jlsrhxyzag])\.([0-9a-z]{1,12})(?:(?:\.([0-9a-z]{1,12}))?\.([a-z][0-9A-Z]{0,12}))?"
)


class BadCallback(ValueError):
    """Callback data this bot did not make (old format, garbled or forged)."""


@dataclass(frozen=True, slots=True)
class Tap:
    """The player tapped one of his cards; what it does depends on the game."""

    card: Card


@dataclass(frozen=True, slots=True)
class Slot:
    """``blind``: the player plays his face-down hand slot ``index`` (the service
    turns it into the card, :meth:`durak.Game.slot_action`)."""

    index: int


@dataclass(frozen=True, slots=True)
class Pick:
    """The several-card opening picker, with ``cards`` chosen so far (in tap order)."""

    cards: tuple[Card, ...] = ()


@dataclass(frozen=True, slots=True)
class Back:
    """Leave a choice and show the hand again."""


@dataclass(frozen=True, slots=True)
class Refresh:
    """Show the panel afresh."""


Move = Action | Tap | Slot | Pick | Back | Refresh


@dataclass(frozen=True, slots=True)
class Callback:
    kind: Kind
    game_id: int
    #: ``g``: the state version the button was drawn for; only a pass and a slot carry it.
    version: int | None = None
    move: Move | None = None
    setting: str | None = None
    #: ``c``: the suit letter chosen (own trumps).
    suit: str | None = None
    #: ``o``: the index of the value chosen in the option's list (``None``: open the list);
    #: ``q``: the seat voted away (``version``: the state voted in); ``n``: the cap chosen.
    choice: int | None = None
    #: ``v``/``w``: the confirmation's token, and whether the press says yes.
    token: int | None = None
    yes: bool = False


def _b36(n: int) -> str:
    if n < 0:
        raise ValueError("negative")
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


def _card(card: Card) -> str:
    rank = "T" if card.rank == Rank.TEN else card.rank.text
    return rank + card.suit.letter


def _move(move: Move) -> str:
    if isinstance(move, Tap):
        return "c" + _card(move.card)
    if isinstance(move, Attack):
        if not 1 <= len(move.cards) <= MAX_CARDS:
            raise ValueError(f"a button attacks with one to {MAX_CARDS} cards")
        return "a" + "".join(_card(c) for c in move.cards)
    if isinstance(move, Pick):
        if len(move.cards) > MAX_CARDS:
            raise ValueError(f"a picker holds at most {MAX_CARDS} cards")
        return "m" + "".join(_card(c) for c in move.cards)
    if isinstance(move, Slot):
        if not 0 <= move.index < 1000:
            raise ValueError("no such slot")
        return "s" + str(move.index)
    if isinstance(move, Lead):
        return "l" + _card(move.card)
    if isinstance(move, Beat):
        return "b" + _card(move.card)
    if isinstance(move, Defend):
        return "d" + _card(move.attack) + _card(move.card)
    if isinstance(move, Transfer):
        return "x" + _card(move.card)
    if isinstance(move, ShowTrump):
        return "w" + _card(move.card)
    simple = {
        Take: "t",
        Pass: "p",
        ExchangeTrump: "e",
        ReturnCard: "r",
        Back: "k",
        Refresh: "f",
    }
    return simple[type(move)]


def encode(cb: Callback) -> str:
    kind = Kind(cb.kind)  # a letter that names no kind is refused (ValueError)
    if kind == Kind.OPTION:
        if cb.setting is None or not re.fullmatch(r"[a-z]{1,3}", cb.setting):
            raise ValueError("a settings button names a setting")
        if cb.choice is None:
            return f"{VERSION}o.{cb.setting}"
        if not 0 <= cb.choice < 100:
            raise ValueError("a value button names a value")
        return f"{VERSION}o.{cb.setting}.{cb.choice}"
    if kind == Kind.CAP:
        if cb.choice is None or not 2 <= cb.choice <= 16:
            raise ValueError("a cap button names 2 to 16 players")
        return f"{VERSION}n.{_b36(cb.game_id)}.{cb.choice}"
    if kind in CONFIRM_KINDS:
        if cb.token is None:
            raise ValueError("a confirmation button carries its token")
        answer = "y" if cb.yes else "n"
        return f"{VERSION}{kind.value}.{_b36(cb.game_id)}.{_b36(cb.token)}.{answer}"
    if kind == Kind.SUIT:
        if cb.suit not in ("S", "H", "D", "C"):
            raise ValueError("a suit button names a suit")
        return f"{VERSION}c.{_b36(cb.game_id)}.{cb.suit}"
    text = f"{VERSION}{kind.value}.{_b36(cb.game_id)}"
    if kind == Kind.SKIP_VOTE:
        if cb.version is None or cb.choice is None or not 0 <= cb.choice < 100:
            raise ValueError("a skip button names a state and a seat")
        return f"{text}.{_b36(cb.version)}.{cb.choice}"
    if kind == Kind.MOVE:
        if cb.move is None:
            raise ValueError("a game callback needs a move")
        if cb.version is not None:
            text += f".{_b36(cb.version)}"
        text += f".{_move(cb.move)}"
    assert len(text.encode()) <= MAX_BYTES
    return text


def lobby(kind: str, game_id: int) -> str:
    kind = Kind(kind)
    if kind not in LOBBY_KINDS:
        raise ValueError(f"{kind.name} is not a lobby button")
    return encode(Callback(kind, game_id))


def setting(code: str, choice: int | None = None) -> str:
    return encode(Callback(Kind.OPTION, 0, setting=code, choice=choice))


def cap(game_id: int, players: int) -> str:
    return encode(Callback(Kind.CAP, game_id, choice=players))


def confirm(kind: str, game_id: int, token: int, yes: bool) -> str:
    return encode(Callback(Kind(kind), game_id, token=token, yes=yes))


def suit(game_id: int, letter: str) -> str:
    return encode(Callback(Kind.SUIT, game_id, suit=letter))


def skip(game_id: int, version: int, seat: int) -> str:
    return encode(Callback(Kind.SKIP_VOTE, game_id, version, choice=seat))


def move(game_id: int, version: int | None, m: Move) -> str:
    return encode(Callback(Kind.MOVE, game_id, version, m))


class Link(StrEnum):
    """What a ``/start`` deep link opens; the value is its payload's first letter."""

    JOIN = "j"  # join the lobby, from the private chat
    CARDS = "g"  # my cards: the panel of a game one sits in


#: ``/start`` payloads: Telegram allows 64 characters of ``[A-Za-z0-9_-]``.
_START = re.compile(r"([jg])([0-9]{1,18})")


def start_payload(link: Link, game_id: int) -> str:
    if game_id < 0:
        raise ValueError("negative")
    return f"{Link(link).value}{game_id}"


def parse_start(payload: str) -> tuple[Link, int] | None:
    """The deep link of ``/start <payload>``; None for a plain /start or one this bot
    did not make (ASCII digits only: ``str.isdigit`` also takes "²")."""
    found = _START.fullmatch(payload)
    if found is None:
        return None
    return Link(found.group(1)), int(found.group(2))


class AppLink(StrEnum):
    """What the Mini App's start parameter opens; the value is its payload's prefix."""

    GAME = ""  # the lobby, the table, or the end of the game: whatever it is now
    REPLAY = "r"  # a finished game, step by step


#: ``startapp`` payloads: Telegram allows 512 characters of ``[A-Za-z0-9_-]``.
_APP = re.compile(r"(r?)([0-9]{1,15})")


def app_payload(link: AppLink, game_id: int) -> str:
    if not 0 < game_id < 10**15:
        raise ValueError("no such game")
    return f"{AppLink(link).value}{game_id}"


def parse_app(payload: str) -> tuple[AppLink, int] | None:
    """The Mini App's start parameter; None for one this bot did not make (ASCII
    digits only, a game id of at most 15 of them, not 0)."""
    found = _APP.fullmatch(payload)
    if found is None or int(found.group(2)) == 0:
        return None
    return AppLink(found.group(1)), int(found.group(2))


def _cards(text: str, count: int | None) -> list[Card]:
    """``count`` cards (``None``: zero to :data:`MAX_CARDS`), each at most once."""
    if len(text) % 2 or (count is not None and len(text) != 2 * count):
        raise BadCallback("wrong number of cards")
    try:
        found = [parse_card(text[i : i + 2]) for i in range(0, len(text), 2)]
    except ValueError:
        raise BadCallback("not a card") from None
    if count is None and (len(found) > MAX_CARDS or len(set(found)) != len(found)):
        raise BadCallback("not a set of cards")
    return found


_SIMPLE: dict[str, Move] = {
    "t": Take(),
    "p": Pass(),
    "e": ExchangeTrump(),
    "r": ReturnCard(),
    "k": Back(),
    "f": Refresh(),
}


def decode(data: object) -> Callback:
    if not isinstance(data, str) or len(data.encode("utf-8", "replace")) > MAX_BYTES:
        raise BadCallback("not callback data of this bot")
    option = SETTING.fullmatch(data)
    if option:
        index = option.group(2)
        return Callback(
            Kind.OPTION, 0, setting=option.group(1), choice=None if index is None else int(index)
        )
    chosen = SUIT.fullmatch(data)
    if chosen:
        return Callback(Kind.SUIT, int(chosen.group(1), 36), suit=chosen.group(2))
    vote = SKIP.fullmatch(data)
    if vote:
        game_text, version_text, seat_text = vote.groups()
        return Callback(
            Kind.SKIP_VOTE, int(game_text, 36), int(version_text, 36), choice=int(seat_text)
        )
    capped = CAP.fullmatch(data)
    if capped:
        return Callback(Kind.CAP, int(capped.group(1), 36), choice=int(capped.group(2)))
    asked = CONFIRM.fullmatch(data)
    if asked:
        kind, game, token, answer = asked.groups()
        return Callback(Kind(kind), int(game, 36), token=int(token, 36), yes=answer == "y")
    m = _DATA.fullmatch(data)
    if not m:
        raise BadCallback("not callback data of this bot")
    letter, game, version, move_text = m.groups()
    kind = Kind(letter)
    game_id = int(game, 36)
    if kind in LOBBY_KINDS:
        if move_text is not None:
            raise BadCallback("a lobby button has no move")
        return Callback(kind, game_id)
    if move_text is None:
        raise BadCallback("a game button needs a move")
    op, rest = move_text[0], move_text[1:]
    parsed: Move
    if op == "c":
        parsed = Tap(_cards(rest, 1)[0])
    elif op == "a":
        attack = _cards(rest, None)
        if not attack:
            raise BadCallback("an attack needs a card")
        parsed = Attack(tuple(attack))
    elif op == "m":
        parsed = Pick(tuple(_cards(rest, None)))
    elif op == "s" and re.fullmatch(r"0|[1-9][0-9]{0,2}", rest):
        parsed = Slot(int(rest))
    elif op == "l":
        parsed = Lead(_cards(rest, 1)[0])
    elif op == "b":
        parsed = Beat(_cards(rest, 1)[0])
    elif op == "d":
        a, c = _cards(rest, 2)
        parsed = Defend(a, c)
    elif op == "x":
        parsed = Transfer(_cards(rest, 1)[0])
    elif op == "w":
        parsed = ShowTrump(_cards(rest, 1)[0])
    elif op in _SIMPLE and not rest:
        parsed = _SIMPLE[op]
    else:
        raise BadCallback("unknown move")
    return Callback(Kind.MOVE, game_id, None if version is None else int(version, 36), parsed)
