"""What just happened at a table, read from the game's action log (issue 11 item 5).

The engine keeps the state and the history (every decision, in order), not what
each decision did. The table's "last event" line ("Boris took 3 cards") and the
end message's order of going out are read by replaying the history on a fresh
copy of the game and comparing the public view before and after each decision.
So they come from what is stored (a restart replays the same log) and hold for
every game family; nothing new is stored and the engine is not touched.

A replay is incremental: the copy of each game is kept (a bounded memo) and only
the decisions made since the last call are applied, so a render costs one step.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from durak import Game, View
from durak.actions import Action, Attack, Defend, ReturnCard, ShowTrump, Take, Transfer
from durak.view import PileView

log = logging.getLogger(__name__)

TOOK, BEATEN_OFF, TRANSFERRED = "took", "beaten_off", "transferred"


@dataclass(frozen=True, slots=True)
class Event:
    """One decision's visible effect on the table (public: counts, never a hand).

    ``kind``: ``took`` (``seat`` picked up ``count`` cards), ``beaten_off`` (``count``
    cards went to the discard), ``transferred`` (``seat`` passed the defence to
    ``to``); ``None`` when the decision only put a card down. ``out``: the seats that
    went out (no cards left) with this decision."""

    kind: str | None
    seat: int | None = None
    count: int = 0
    to: int | None = None
    out: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Story:
    """What the log says so far: the latest event worth a line, and the order in
    which the seats went out."""

    last: Event | None
    out_order: tuple[int, ...]


_NOTHING = Story(None, ())


def _cards_on(view: View) -> int:
    return sum(1 + (c is not None) for _a, c in view.table)


def _added(action: Action) -> int:
    if isinstance(action, Attack):
        return len(action.cards)
    if isinstance(action, Defend | Transfer):
        return 1
    return 0


def step_event(before: View | PileView, seat: int, action: Action, after: View | PileView) -> Event:
    """The effect of ``seat``'s ``action`` that turned ``before`` into ``after``."""
    out = tuple(
        s.seat for s, t in zip(before.seats, after.seats, strict=True) if t.out and not s.out
    )
    if isinstance(before, PileView) or isinstance(after, PileView):
        if isinstance(action, Take) and isinstance(before, PileView):
            return Event(TOOK, seat, before.take_cost or 0, out=out)
        return Event(None, out=out)
    if isinstance(action, Transfer | ShowTrump):
        return Event(TRANSFERRED, seat, to=after.defender, out=out)
    if isinstance(action, ReturnCard):  # the cards go back to the attacker: no pick-up
        return Event(None, out=out)
    if not after.table and (before.table or _added(action)):  # the bout ended
        on_table = _cards_on(before) + _added(action)
        discarded = max(0, after.discard - before.discard)
        taken = on_table - discarded
        if taken > 0 and before.defender is not None:
            return Event(TOOK, before.defender, taken, out=out)
        if discarded > 0:
            return Event(BEATEN_OFF, None, discarded, out=out)
    return Event(None, out=out)


class _Replay:
    __slots__ = ("applied", "copy", "last", "order", "start", "told")

    def __init__(self, start: dict[str, Any], copy: Game) -> None:
        self.start = start
        self.copy = copy
        self.applied = 0
        self.last: Event | None = None
        self.order: list[int] = []
        #: the story up to ``applied`` decisions, once told (asked again per render)
        self.told: Story | None = None


#: game id -> its replay; the newest games kept, the oldest dropped.
_MEMO: OrderedDict[int, _Replay] = OrderedDict()
MEMO_SIZE = 256


def story(game_id: int, game: Game) -> Story:
    """The story of ``game`` (``game_id`` names its memo) up to its newest decision.
    Never raises: a log that cannot be replayed tells nothing (the table shows no
    event line) rather than breaking the table."""
    try:
        return _story(game_id, game)
    except Exception:  # a damaged or foreign log: no event line, never a crash
        log.warning("game %s: its log could not be replayed for the event line", game_id)
        _MEMO.pop(game_id, None)
        return _NOTHING


def _story(game_id: int, game: Game) -> Story:
    history = game.history
    replay = _MEMO.get(game_id)
    if replay is None or replay.start != game.start or replay.applied > len(history):
        if not history:
            return _NOTHING
        replay = _Replay(game.start, Game.from_start(game.rules, game.players, game.start))
    _MEMO[game_id] = replay
    _MEMO.move_to_end(game_id)
    while len(_MEMO) > MEMO_SIZE:
        _MEMO.popitem(last=False)
    if replay.told is not None and replay.applied == len(history):
        return replay.told  # nothing new: one move is rendered several times
    copy = replay.copy
    before = copy.view(None)
    for seat, action in history[replay.applied :]:
        copy.apply(seat, action)
        after = copy.view(None)
        event = step_event(before, seat, action, after)
        replay.order += [s for s in event.out if s not in replay.order]
        if event.kind is not None or event.out:
            replay.last = event
        before = after
        replay.applied += 1
    replay.told = Story(replay.last, tuple(replay.order))
    return replay.told


def forget(game_id: int) -> None:
    _MEMO.pop(game_id, None)
