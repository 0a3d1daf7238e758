"""What a finished game's play adds up to, read by replaying its history: the order
the players went out (the ratings rank by it), the cards each one took, the bout
that decided it, and the feats of its play (a defence against six cards, a chain of
transfers the durak took). Pure: a copy of the game is replayed, never the game."""

from __future__ import annotations

from dataclasses import dataclass

from ..actions import Attack, ShowTrump, Transfer
from ..errors import IllegalAction, MalformedRecord
from ..games import Game
from ..view import View
from .ratings import CHAIN, SIX

#: Attack cards beaten off in one bout that make :data:`~durak.service.ratings.SIX`.
SIX_CARDS = 6


@dataclass(frozen=True, slots=True)
class Bout:
    """A bout the defender took: who, how many cards, after how many transfers."""

    seat: int
    cards: int
    transfers: int
    #: The seat that made the last transfer onto the taker (``None``: no transfer).
    transferred_by: int | None = None


@dataclass(frozen=True, slots=True)
class Summary:
    """A finished game's play: ``out`` the groups of seats that went out on one move,
    in order; ``taken`` the cards each seat took; ``decisive`` the bout in which the
    durak took the most cards (``None`` if he took none, or no single durak); ``feats``
    ``(seat, feat)`` earned by the play itself."""

    out: tuple[tuple[int, ...], ...]
    taken: tuple[int, ...]
    decisive: Bout | None
    feats: tuple[tuple[int, str], ...]


def summarize(game: Game) -> Summary:
    """Replay ``game``'s history from its start; an unreadable history gives what
    was read up to there (the summary only decorates, it never refuses a game)."""
    n = game.n
    out: list[tuple[int, ...]] = []
    taken = [0] * n
    takes: list[Bout] = []
    feats: list[tuple[int, str]] = []
    try:
        copy = Game.from_start(game.rules, game.players, game.start)
    except (MalformedRecord, ValueError):
        return Summary((), tuple(taken), None, ())
    gone = [False] * n
    transfers: list[int] = []  # the seats that transferred in this bout
    before = _probe(copy)
    for seat, action in game.history:
        try:
            copy.apply(seat, action)
        except (IllegalAction, ValueError):
            break
        after = _probe(copy)
        now_out = tuple(s for s in range(n) if after.out[s] and not gone[s])
        for s in now_out:
            gone[s] = True
        if now_out:
            out.append(now_out)
        if isinstance(action, Transfer | ShowTrump):
            transfers.append(seat)
        if before.cards and (not after.cards or after.discard != before.discard):
            bout = _bout_end(before, after, action, transfers)
            if bout is not None:
                taken[bout.seat] += bout.cards
                takes.append(bout)
            elif before.attacks >= SIX_CARDS and before.defender is not None:
                feats.append((before.defender, SIX))
            transfers = []
        before = after
    result = game.result
    durak = result.loser if result is not None else None
    decisive = None
    if durak is not None:
        own = [b for b in takes if b.seat == durak]
        decisive = max(own, key=lambda b: (b.cards, b.transfers), default=None)
        for b in takes:
            if b.seat == durak and b.transfers >= 2 and b.transferred_by is not None:
                feats.append((b.transferred_by, CHAIN))
    return Summary(tuple(out), tuple(taken), decisive, tuple(dict.fromkeys(feats)))


@dataclass(frozen=True, slots=True)
class _Probe:
    """What the replay looks at after each step: who is out, and the bout's table
    (attack cards, cards in all, its defender) and the discard's size."""

    out: tuple[bool, ...]
    attacks: int = 0
    cards: int = 0
    defender: int | None = None
    discard: int = 0


def _probe(game: Game) -> _Probe:
    """The state's few numbers: read off a bout game's own fields (a view costs
    most of a replay), through the public view for any other game."""
    table = getattr(game, "table", None)
    covers = getattr(game, "covers", None)
    discard = getattr(game, "discard", None)
    defender = getattr(game, "defender", None)
    out = getattr(game, "out", None)
    if (
        isinstance(table, list)
        and isinstance(covers, list)
        and isinstance(discard, int)
        and isinstance(defender, int)
        and isinstance(out, list)
    ):
        cards = len(table) + sum(1 for c in covers if c >= 0)
        return _Probe(tuple(out), len(table), cards, defender if defender >= 0 else None, discard)
    view = game.view()
    if isinstance(view, View):
        cards = sum(1 + (d is not None) for _, d in view.table)
        return _Probe(
            tuple(s.out for s in view.seats), len(view.table), cards, view.defender, view.discard
        )
    return _Probe(tuple(s.out for s in view.seats))


def _bout_end(before: _Probe, after: _Probe, action: object, transfers: list[int]) -> Bout | None:
    """The bout just ended: a :class:`Bout` if its defender took the cards, ``None``
    if they went to the discard."""
    if after.discard > before.discard or before.defender is None:
        return None
    cards = before.cards + (len(action.cards) if isinstance(action, Attack) else 0)
    last = transfers[-1] if transfers else None
    return Bout(before.defender, cards, len(transfers), last)
