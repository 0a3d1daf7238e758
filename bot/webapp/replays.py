"""A finished game in the Mini App, step by step (issue 35 item 4).

It reads the stored game as the record button sends it (``durak-record/1``, or a sprint
match's ``durak-match/1``: one deal at a time) and replays it with the engine: each frame
is the table after one step, with every hand (after the end the record is public to the
group's members; a running game is never replayed) and the step said in words. The page
holds no rule of its own: it shows frames, forward and back, at the speed it likes.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Any

from durak import Game, View
from durak.actions import (
    Action,
    Attack,
    Beat,
    Defend,
    ExchangeTrump,
    Lead,
    Pass,
    ReturnCard,
    ShowTrump,
    Take,
    Transfer,
    action_from_step,
)
from durak.errors import IllegalAction, MalformedRecord
from durak.records import game_from_record
from durak.service import GameInfo, Seat
from durak.view import PileView

from ..ui import events, games_text, render
from ..ui.i18n import _, language

__all__ = ["CACHED", "Replays", "deal_message"]

#: Replays kept made (a game one group watches again): (game, deal, language) -> text.
CACHED = 32


def _c(card: object) -> str | None:
    return None if card is None else str(card)


def step_text(name: str, action: Action) -> str:
    """What ``name`` did, in words (the replay's line under each step)."""
    if isinstance(action, Attack):
        cards = render.cards(action.cards)
        return _("{name} plays {cards}").format(name=name, cards=cards)
    if isinstance(action, Defend):
        return _("{name} covers {attack} with {card}").format(
            name=name, attack=render.card(action.attack), card=render.card(action.card)
        )
    if isinstance(action, Transfer):
        return _("{name} transfers with {card}").format(name=name, card=render.card(action.card))
    if isinstance(action, ShowTrump):
        card = render.card(action.card)
        return _("{name} transfers, showing the trump {card}").format(name=name, card=card)
    if isinstance(action, Lead):
        return _("{name} leads {card}").format(name=name, card=render.card(action.card))
    if isinstance(action, Beat):
        return _("{name} beats with {card}").format(name=name, card=render.card(action.card))
    simple = {
        Take: _("{name} takes"),
        Pass: _("{name} passes"),
        ExchangeTrump: _("{name} exchanges the trump card"),
        ReturnCard: _("{name} returns the card"),
    }
    return simple.get(type(action), "{name}").format(name=name)


def _frame(
    game: Game, table: render.Table, said: str, seat: int | None, status: str
) -> dict[str, Any]:
    """One step's table: the public view's, every hand, what was done and what followed."""
    v = table.view
    frame: dict[str, Any] = {
        "seat": seat,
        "said": said,
        "event": render.last_event(table) or "",
        "status": status,
        "hands": [[str(c) for c in game.hand(s)] for s in range(game.n)],
        "cards": [s.cards for s in v.seats],
        "out": [s.out for s in v.seats],
        "waiting": list(v.waiting_for),
        "trumpCard": _c(v.trump_card),
        "trumpInStock": v.trump_card_in_stock,
        "stock": v.stock,
        "discard": v.discard,
    }
    if isinstance(v, View):
        frame |= {
            "trump": v.trump.letter,
            "attacker": v.attacker,
            "defender": v.defender,
            "table": [[str(a), _c(c)] for a, c in v.table],
        }
    else:
        frame |= {
            "trump": v.trump.letter if v.trump is not None else None,
            "turn": v.turn,
            "pile": [str(c) for c in v.pile],
            "trumps": [t.letter if t is not None else None for t in v.trumps],
        }
    return frame


def _actions(record: dict[str, Any]) -> list[dict[str, Any]]:
    steps = record.get("steps", [])
    if not isinstance(steps, list):
        raise MalformedRecord("steps must be a list")
    return [
        s
        for s in steps
        if isinstance(s, dict) and "expect" not in s and "error" not in s and "do" in s
    ]


def deal_frames(
    record: dict[str, Any], seats: tuple[Seat, ...], info: GameInfo | None
) -> list[dict[str, Any]]:
    """Every step of one deal's record as frames (the deal first, then one per action),
    in the current language; ``info``: the stored game when this deal is it (its ending:
    a surrender or a cancel says so on the last frame)."""
    game = game_from_record(record)
    order: list[int] = []
    table = render.Table(0, 0, "", seats, game.view(None), story=None, rules=game.rules, html=False)
    frames = [_frame(game, table, _("The deal"), None, render.page_status(table))]
    steps = _actions(record)
    for k, step in enumerate(steps):
        seat = game.seat_of(step["player"])
        action = action_from_step(step)
        before = game.view(None)  # (a view is a frozen value: it stays as it was)
        game.apply(seat, action)
        event = events.step_event(before, seat, action, game.view(None))
        order += [s for s in event.out if s not in order]
        news = event if event.kind is not None or event.out else None  # this step's only
        ending = info.ending if info is not None and k == len(steps) - 1 else None
        table = replace(
            table,
            version=k + 1,
            view=game.view(None),
            ending=ending,
            story=events.Story(news, tuple(order)),
        )
        name = render.player(seats[seat], html=False) if seat < len(seats) else step["player"]
        frames.append(_frame(game, table, step_text(name, action), seat, render.page_status(table)))
    return frames


def deal_message(
    info: GameInfo, document: dict[str, Any], deal: int, lang: str, title: str
) -> dict[str, Any]:
    """``{"replay": ...}``: deal ``deal`` (1 is the first) of the stored game ``info``
    (``document``: its record, or its match's document), in ``lang``."""
    records = document["deals"] if document.get("format") == "durak-match/1" else [document]
    record = records[deal - 1]
    names = [str(p) for p in record["players"]]
    by_name = {s.name: s for s in info.seats}
    seats = tuple(by_name.get(n, Seat(k, 0, n)) for k, n in enumerate(names))
    seats = tuple(replace(s, seat=k) for k, s in enumerate(seats))
    last = deal == len(records)
    start = game_from_record(record)
    with language(lang):
        frames = deal_frames(record, seats, info if last else None)
        return {
            "replay": {
                "game": info.game_id,
                "title": title,
                "name": games_text.game_name(start.rules),
                "options": render.rules_lines(start.rules),
                "family": "pile" if isinstance(start.view(None), PileView) else "bout",
                "players": names,
                "ai": [s.is_ai for s in seats],
                "deal": deal,
                "deals": len(records),
                "frames": frames,
            }
        }


class Replays:
    """The replays made lately, as sent (one group watching a game again costs one)."""

    def __init__(self, size: int = CACHED) -> None:
        self.size = size
        self._made: OrderedDict[tuple[int, int, str], str] = OrderedDict()

    def get(self, game_id: int, deal: int, lang: str) -> str | None:
        key = (game_id, deal, lang)
        text = self._made.get(key)
        if text is not None:
            self._made.move_to_end(key)
        return text

    def put(self, game_id: int, deal: int, lang: str, text: str) -> None:
        self._made[(game_id, deal, lang)] = text
        while len(self._made) > self.size:
            self._made.popitem(last=False)


#: What a stored record that the engine cannot replay raises here.
BROKEN = (MalformedRecord, IllegalAction, ValueError, KeyError, TypeError, IndexError)
