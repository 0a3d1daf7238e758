"""A pile game to and from JSON, exactly, at any moment.

The snapshot holds the whole state, the start and the actions applied (so a
restored game can still be exported as a record). Restoring checks what a damaged
snapshot could break: every card at most once, seats in range, out players empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...cards import TEXTS, deck_mask, ids_of, parse_card, parse_suit
from ...errors import MalformedRecord
from ...rules import Rules
from ...view import Outcome
from ..base import read_start_and_history

if TYPE_CHECKING:
    from .game import PileGame

FORMAT = "durak-snapshot/1"


def _card(i: int) -> str | None:
    return TEXTS[i] if i >= 0 else None


def _list(ids: list[int]) -> list[str]:
    return [TEXTS[i] for i in ids]


def _cards(mask: int) -> list[str]:
    return [TEXTS[i] for i in ids_of(mask)]


def write(g: PileGame) -> dict[str, Any]:
    r = g.result
    return {
        "format": FORMAT,
        "rules": g.rules.to_dict(),
        "players": list(g.players),
        "suits": ["SHDC"[s] for s in g.suits],
        "trump": "SHDC"[g.trump] if g.trump >= 0 else None,
        "trump_card": _card(g.trump_card),
        "out_of_play": _card(g.out_of_play),
        "stock": _list(g.stock),
        "hands": [_cards(h) for h in g.hands],
        "out": list(g.out),
        "pile": _list(g.pile),
        "discard": g.discard,
        "discard_cards": _cards(g.discard_mask),
        "last_cleared": None if g.last_cleared is None else _list(g.last_cleared),
        "turn": g.turn,
        "phase": g.phase,
        "dealer": g.dealer,
        "result": None if r is None else {"losers": list(r.losers), "draw": r.draw},
        "start": g.start,
        "history": [[seat, action.step()] for seat, action in g.history],
        **({"stall": g.stall} if g.stall else {}),
    }


def read(cls: type[PileGame], data: Any) -> PileGame:
    """Restore a game; :class:`MalformedRecord` if the snapshot is damaged."""
    try:
        return _read(cls, data)
    except MalformedRecord:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise MalformedRecord(f"damaged snapshot: {type(e).__name__}: {e}") from None


def _ids(value: Any) -> list[int]:
    if not isinstance(value, list):
        raise MalformedRecord("a card list is not a list")
    return [parse_card(t).id for t in value]


def _seat(value: Any, n: int, allow_none: bool = False) -> int:
    if allow_none and value == -1:
        return -1
    if type(value) is not int or not 0 <= value < n:
        raise MalformedRecord(f"bad seat {value!r}")
    return value


def _opt_card(value: Any) -> int:
    return -1 if value is None else parse_card(value).id


def _read(cls: type[PileGame], data: Any) -> PileGame:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise MalformedRecord(f"not a {FORMAT} document")
    g = cls(Rules.from_record(data["rules"]), data["players"])
    n = g.n
    suits = data["suits"]
    if not isinstance(suits, list) or len(suits) != n:
        raise MalformedRecord("suits must list every seat")
    g.suits = [int(parse_suit(s)) for s in suits]
    g.trump = -1 if data["trump"] is None else int(parse_suit(data["trump"]))
    g.trump_card = _opt_card(data["trump_card"])
    g.out_of_play = _opt_card(data["out_of_play"])
    g.stock = _ids(data["stock"])
    hands = data["hands"]
    if not isinstance(hands, list) or len(hands) != n:
        raise MalformedRecord("hands must list every seat")
    seen = list(g.stock)
    for s, texts in enumerate(hands):
        ids = _ids(texts)
        seen += ids
        g.hands[s] = sum(1 << i for i in set(ids))
    out = data["out"]
    if not isinstance(out, list) or len(out) != n or any(type(o) is not bool for o in out):
        raise MalformedRecord("out must list every seat")
    g.out = list(out)
    if any(g.out[s] and g.hands[s] for s in range(n)):
        raise MalformedRecord("a player who is out holds cards")
    g.pile = _ids(data["pile"])
    seen += g.pile
    g.discard = data["discard"]
    if type(g.discard) is not int or g.discard < 0:
        raise MalformedRecord("bad discard count")
    discarded = _ids(data["discard_cards"])
    if len(discarded) > g.discard:
        raise MalformedRecord("more discarded cards than the discard count")
    seen += discarded
    g.discard_mask = sum(1 << i for i in set(discarded))
    lc = data["last_cleared"]
    g.last_cleared = None if lc is None else _ids(lc)
    if g.out_of_play >= 0:
        seen.append(g.out_of_play)
    if g.stock and g.stock[0] != g.trump_card:
        raise MalformedRecord("the bottom of the stock is not the trump card")
    if len(set(seen)) != len(seen) or any(not deck_mask(36) >> i & 1 for i in seen):
        raise MalformedRecord("a card appears twice or is not in the deck")
    if data["phase"] not in ("lead", "answer"):
        raise MalformedRecord("bad phase")
    g.phase = data["phase"]
    g.dealer = _seat(data["dealer"], n, allow_none=True)
    result = data["result"]
    if result is None:
        g.turn = _seat(data["turn"], n)
        if g.out[g.turn] or (g.phase == "answer" and not g.pile):
            raise MalformedRecord("the player on turn cannot act")
    else:
        g.turn = _seat(data["turn"], n, allow_none=True)
        losers = result["losers"]
        if not isinstance(losers, list) or type(result["draw"]) is not bool:
            raise MalformedRecord("bad result")
        g.result = Outcome(tuple(_seat(s, n) for s in losers), result["draw"])
    g.start, g.history = read_start_and_history(data, n)
    stall = data.get("stall", 0)
    if type(stall) is not int or stall < 0:
        raise MalformedRecord("stall must be a count")
    g.stall = stall
    return g
