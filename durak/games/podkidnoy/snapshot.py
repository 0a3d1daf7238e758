"""A podkidnoy game to and from JSON, exactly, at any moment (mid-bout included).

The snapshot holds the state and also the start and the actions applied, so a
restored game can still be exported as a record. Derived values (the throwers,
the ranks on the table) are recomputed, not stored, so a damaged snapshot cannot
make them disagree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...cards import TEXTS, deck_mask, ids_of, parse_card, parse_suit
from ...errors import MalformedRecord
from ...rules import Rules
from ...view import Outcome
from ..base import read_start_and_history
from . import match as matches

if TYPE_CHECKING:
    from .game import Podkidnoy

FORMAT = "durak-snapshot/1"


# Written on every action (the service stores it with each move): cards go straight
# from their ids to their record form (``TEXTS``), no Card object in between.


def _card(i: int) -> str | None:
    return TEXTS[i] if i >= 0 else None


def _cards(mask: int) -> list[str]:
    return [TEXTS[i] for i in ids_of(mask)]


def write(game: Podkidnoy) -> dict[str, Any]:
    result = game.result
    data = {
        "format": FORMAT,
        "rules": game.rules.to_dict(),
        "players": list(game.players),
        "trump": "SHDC"[game.trump],
        "trump_card": _card(game.trump_card),
        "stock": [TEXTS[i] for i in reversed(game.stock)],
        "hands": [_cards(h) for h in game.hands],
        "discard": game.discard,
        "discard_cards": _cards(game.discard_mask),
        "out": list(game.out),
        "attacker": game.attacker,
        "defender": game.defender,
        "table": [[_card(a), _card(c)] for a, c in zip(game.table, game.covers, strict=True)],
        "limit": game.limit,
        "taking": game.taking,
        "passed": [s for s in range(game.n) if game.passed >> s & 1],
        "primary_passed": game.primary_passed,
        "shown": _cards(game.shown),
        "first_bout": game.first_bout,
        "result": None if result is None else {"losers": list(result.losers), "draw": result.draw},
        "dealer": game.dealer,
        "opener": game.opener,
        "opener_reason": game.opener_reason,
        "opener_card": _card(game.opener_card),
        "second_trump": _card(game.second_trump),
        "out_of_play": _cards(game.out_of_play),
        "match": game.match.to_json() if game.rules.sprint else None,
        "last_discard": [[_card(a), _card(c)] for a, c in game.last_discard],
        "start": game.start,
        "history": [[seat, action.step()] for seat, action in game.history],
    }
    if game.stall:
        data["stall"] = game.stall
    if game.varied:
        data.update(_write_variants(game))
    elif game.end_reason is not None:
        data["end_reason"] = game.end_reason
    return data


def _write_variants(game: Podkidnoy) -> dict[str, Any]:
    """VARIANTS.md's bout-side state (only when one of those options is on)."""
    return {
        "slots": None if game.slots is None else [[_card(c) for c in s] for s in game.slots],
        "seen": [_cards(m) for m in game.seen],
        "taker": game.taker,
        "no_pair": list(game.no_pair),
        "single_lead": game.single_lead,
        "positions": sorted(
            [opener, [_cards(h) for h in hands]] for opener, hands in game.positions
        ),
        "end_reason": game.end_reason,
        "return_used": game.return_used,
        "transferred": game.transferred,
    }


def _read_bout_variants(game: Podkidnoy, data: dict[str, Any]) -> None:
    """The inverse of :func:`_write_variants`; a snapshot written without the
    options' state (none was on) keeps the defaults."""
    n = game.n
    if game.slots is not None:
        slots = data.get("slots")
        if slots is not None:
            if not isinstance(slots, list) or len(slots) != n:
                raise MalformedRecord("slots must list every seat")
            game.slots = [[parse_card(t).id for t in s] for s in slots]
        else:
            game.slots = [[i for i in range(64) if h >> i & 1] for h in game.hands]
        for s in range(n):
            held = [c for c in game.slots[s] if game.hands[s] >> c & 1]
            if sum(1 << c for c in held) != game.hands[s] or len(set(held)) != len(held):
                raise MalformedRecord("the slots do not hold the hand")
    seen = data.get("seen", [[] for _ in range(n)])
    if not isinstance(seen, list) or len(seen) != n:
        raise MalformedRecord("seen must list every seat")
    game.seen = [_mask(t)[0] for t in seen]
    game.taker = _seat(data.get("taker", -1), n, allow_none=True)
    no_pair = data.get("no_pair", [])
    if not isinstance(no_pair, list):
        raise MalformedRecord("no_pair must be a list of seats")
    game.no_pair = tuple(_seat(s, n) for s in no_pair)
    game.single_lead = _bool(data.get("single_lead", False))
    positions = data.get("positions", [])
    if not isinstance(positions, list):
        raise MalformedRecord("positions must be a list")
    for entry in positions:
        if not isinstance(entry, list) or len(entry) != 2 or not isinstance(entry[1], list):
            raise MalformedRecord("a position is [opener, hands]")
        if len(entry[1]) != n:
            raise MalformedRecord("a position lists every hand")
        game.positions.add((_seat(entry[0], n), tuple(_mask(h)[0] for h in entry[1])))
    game.window = (game.discard, len(game.stock))
    reason = data.get("end_reason")
    if reason is not None and not isinstance(reason, str):
        raise MalformedRecord("end_reason must be a string or null")
    game.end_reason = reason
    game.return_used = _bool(data.get("return_used", False))
    game.transferred = _bool(data.get("transferred", False))


def read(cls: type[Podkidnoy], data: Any) -> Podkidnoy:
    """Restore a game; :class:`MalformedRecord` if the snapshot is damaged."""
    try:
        return _read(cls, data)
    except MalformedRecord:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise MalformedRecord(f"damaged snapshot: {type(e).__name__}: {e}") from None


def _mask(texts: Any) -> tuple[int, int]:
    if not isinstance(texts, list):
        raise MalformedRecord("a card list is not a list")
    mask = 0
    for t in texts:
        mask |= 1 << parse_card(t).id
    return mask, len(texts)


def _seat(value: Any, n: int, allow_none: bool = False) -> int:
    if allow_none and value == -1:
        return -1
    if type(value) is not int or not 0 <= value < n:
        raise MalformedRecord(f"bad seat {value!r}")
    return value


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise MalformedRecord(f"expected true or false, not {value!r}")
    return value


def _read(cls: type[Podkidnoy], data: Any) -> Podkidnoy:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise MalformedRecord(f"not a {FORMAT} document")
    game = cls(Rules.from_record(data["rules"]), data["players"])
    n = game.n
    game.trump = int(parse_suit(data["trump"]))
    tc = data["trump_card"]
    game.trump_card = parse_card(tc).id if tc is not None else -1
    game.stock = [parse_card(t).id for t in reversed(data["stock"])]
    hands = data["hands"]
    if not isinstance(hands, list) or len(hands) != n:
        raise MalformedRecord("hands must list every seat")
    counted: list[int] = list(game.stock)
    for s, texts in enumerate(hands):
        game.hands[s], count = _mask(texts)
        counted += [i for i in range(64) if game.hands[s] >> i & 1]
        if count != game.hands[s].bit_count():
            raise MalformedRecord("a card appears twice in a hand")
    game.discard = data["discard"]
    if type(game.discard) is not int or game.discard < 0:
        raise MalformedRecord("bad discard count")
    game.discard_mask, count = _mask(data["discard_cards"])
    if count > game.discard:
        raise MalformedRecord("more discarded cards than the discard count")
    counted += [i for i in range(64) if game.discard_mask >> i & 1]
    out = data["out"]
    if not isinstance(out, list) or len(out) != n:
        raise MalformedRecord("out must list every seat")
    game.out = [_bool(o) for o in out]
    table = data["table"]
    if not isinstance(table, list):
        raise MalformedRecord("table must be a list")
    for pair in table:
        if not isinstance(pair, list) or len(pair) != 2 or pair[0] is None:
            raise MalformedRecord("a table entry is [attack, cover]")
        game.table.append(parse_card(pair[0]).id)
        game.covers.append(parse_card(pair[1]).id if pair[1] is not None else -1)
        counted += [game.table[-1]] + ([game.covers[-1]] if game.covers[-1] >= 0 else [])
        game.table_ranks |= 1 << (game.table[-1] & 15)
        if game.covers[-1] >= 0:
            game.table_ranks |= 1 << (game.covers[-1] & 15)
    game.open = game.covers.count(-1)
    if len(set(counted)) != len(counted):
        raise MalformedRecord("a card appears twice")
    full = deck_mask(game.rules.deck)
    if any(not full >> i & 1 for i in counted):
        raise MalformedRecord("a card is not in this deck")
    _read_variants(game, data, counted)
    game.first_bout = _bool(data["first_bout"])
    game.taking = _bool(data["taking"])
    game.primary_passed = _bool(data["primary_passed"])
    game.shown, _ = _mask(data["shown"])
    game.limit = data["limit"]
    if type(game.limit) is not int or game.limit < 0 or len(game.table) > game.limit:
        raise MalformedRecord("bad bout limit")
    game.dealer = _seat(data["dealer"], n, allow_none=True)
    game.opener = _seat(data["opener"], n, allow_none=True)
    game.opener_reason = str(data["opener_reason"])
    oc = data["opener_card"]
    game.opener_card = parse_card(oc).id if oc is not None else -1
    result = data["result"]
    if result is None:
        game.attacker = _seat(data["attacker"], n)
        game.defender = _seat(data["defender"], n)
        if game.attacker == game.defender or game.out[game.attacker] or game.out[game.defender]:
            raise MalformedRecord("the attacker and defender must be two active players")
        game.throwers = game.throwers_for(game.attacker, game.defender)
        passed = data["passed"]
        if not isinstance(passed, list):
            raise MalformedRecord("passed must be a list of seats")
        for s in passed:
            game.passed |= 1 << _seat(s, n)
    else:
        losers = result["losers"]
        if not isinstance(losers, list):
            raise MalformedRecord("result.losers must be a list")
        game.result = Outcome(tuple(_seat(s, n) for s in losers), _bool(result["draw"]))
    game.start, game.history = read_start_and_history(data, n)
    stall = data.get("stall", 0)
    if type(stall) is not int or stall < 0:
        raise MalformedRecord("stall must be a count")
    game.stall = stall
    if game.varied:
        _read_bout_variants(game, data)
    else:
        reason = data.get("end_reason")
        if reason is not None and not isinstance(reason, str):
            raise MalformedRecord("end_reason must be a string or null")
        game.end_reason = reason
    return game


def _read_variants(game: Podkidnoy, data: dict[str, Any], counted: list[int]) -> None:
    """VARIANTS.md state (missing in older snapshots: each key has its default),
    and the bottom of the stock: the second trump card, then the trump card."""
    st = data.get("second_trump")
    game.second_trump = parse_card(st).id if st is not None else -1
    if game.second_trump >= 0 and not game.rules.trump_change:
        raise MalformedRecord("a second trump card without trump_change")
    bottom = [game.second_trump] if game.second_trump >= 0 else []
    if game.trump_card >= 0 and not game.rules.sprint:
        bottom.append(game.trump_card)
    if game.stock[: len(bottom)] != bottom[: len(game.stock)]:
        raise MalformedRecord("the bottom of the stock is not the trump card")
    game.out_of_play, _ = _mask(data.get("out_of_play", []))
    if game.out_of_play & sum(1 << c for c in counted):
        raise MalformedRecord("a card out of play is also in the game")
    counted += [i for i in range(64) if game.out_of_play >> i & 1]
    if any(not deck_mask(game.rules.deck) >> i & 1 for i in counted):
        raise MalformedRecord("a card is not in this deck")
    if game.rules.sprint:
        game.match = matches.read(data.get("match"), game.players)
    pairs = data.get("last_discard", [])
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        raise MalformedRecord("last_discard is a list of [attack, cover]")
    game.last_discard = tuple(
        (parse_card(a).id, parse_card(c).id if c is not None else -1) for a, c in pairs
    )
