"""VARIANTS.md section 2, ``sprint``: the match a deal belongs to.

A deal is one :class:`~.game.Podkidnoy`; it keeps the match *as it stood before
the deal* (:class:`Match`, what a record's ``match`` start field says), and
everything after it (deals played, wins, who remains, the winner, the next
dealer) is derived from the deal's result. So however a deal ends, the match
can never disagree with it, and a snapshot needs only the state before.

Two players play a match of :data:`DEALS` deals, stopped as soon as it is
decided; three to five play a knock-out, each deal's durak leaving the match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import MalformedRecord
from ...view import MatchView, Outcome
from ..base import FIRST, Series

if TYPE_CHECKING:
    from .game import Podkidnoy

#: The deals of a two-player match (VARIANTS.md 2.4).
DEALS = 10


@dataclass(frozen=True, slots=True)
class Match:
    """The match before this deal. Two players: ``played`` deals finished and each
    player's ``wins`` (seat order). Knock-out: the players ``eliminated`` so far,
    in the order they went (the deal's own players are the ones remaining)."""

    knockout: bool
    played: int = 0
    wins: tuple[tuple[str, int], ...] = ()
    eliminated: tuple[str, ...] = ()

    def __reduce__(self) -> tuple[object, ...]:
        return (Match, (self.knockout, self.played, self.wins, self.eliminated))

    def to_json(self) -> dict[str, Any]:
        """The record's ``match`` start field (``eliminated`` only when known)."""
        if self.knockout:
            data: dict[str, Any] = {"knockout": True}
            if self.played:
                data["played"] = self.played
            if self.eliminated:
                data["eliminated"] = list(self.eliminated)
            return data
        return {"played": self.played, "wins": dict(self.wins)}


#: What a game without ``sprint`` holds (it belongs to no match).
NO_MATCH = Match(False)


def fresh(players: tuple[str, ...]) -> Match:
    """The first deal of a match: a 10-deal match for two, a knock-out for more."""
    if len(players) == 2:
        return Match(False, 0, tuple((p, 0) for p in players))
    return Match(True)


def read(value: Any, players: tuple[str, ...]) -> Match:
    """A record's ``match`` field (VARIANTS.md 12.3); ``None`` is a first deal, and a
    field left out means what 12.3 says (0 played, none knocked out, no wins).
    :class:`MalformedRecord` for a match naming other players, with more wins than
    deals, ten deals played or more, one already decided, or a knock-out that lists
    more players knocked out than deals played."""
    if value is None:
        if len(players) == 2:
            return fresh(players)
        return Match(True)
    if not isinstance(value, dict):
        raise MalformedRecord("match must be an object")
    # "knockout": true is required with 2 players, optional with more (12.3)
    if value.get("knockout") is True or ("knockout" not in value and len(players) > 2):
        if set(value) - {"knockout", "played", "eliminated"}:
            raise MalformedRecord("a knock-out match has no wins")
        played = value.get("played", 0)
        if type(played) is not int or played < 0:
            raise MalformedRecord("match.played must be a count")
        gone = value.get("eliminated", [])
        if not isinstance(gone, list) or not all(isinstance(p, str) and p for p in gone):
            raise MalformedRecord("match.eliminated must be a list of names")
        if len(set(gone)) != len(gone) or set(gone) & set(players):
            raise MalformedRecord("match.eliminated names a player twice or one still playing")
        if len(gone) > played:  # each deal knocks out one player at most
            raise MalformedRecord("match.eliminated lists more players than deals played")
        return Match(True, played, eliminated=tuple(gone))
    if set(value) - {"played", "wins"} or "knockout" in value:
        raise MalformedRecord("a match is {played, wins} or {knockout: true}")
    if len(players) != 2:
        raise MalformedRecord("a 10-deal match is for two players; more play a knock-out")
    played = value.get("played", 0)
    wins = value.get("wins", {})
    if type(played) is not int or not 0 <= played < DEALS:
        raise MalformedRecord(f"match.played must be 0 to {DEALS - 1}")
    if not isinstance(wins, dict) or set(wins) - set(players):
        raise MalformedRecord("match.wins names other players")
    if not all(type(w) is int and w >= 0 for w in wins.values()):
        raise MalformedRecord("match.wins must be counts")
    counts = tuple((p, wins.get(p, 0)) for p in players)
    if sum(w for _, w in counts) > played:
        raise MalformedRecord("more wins than deals played")
    if _decided(played, counts) is not None:
        raise MalformedRecord("the match is already decided")
    return Match(False, played, counts)


def _decided(played: int, wins: tuple[tuple[str, int], ...]) -> str | None:
    """The winner's name, ``""`` for a drawn match, ``None`` while undecided:
    a lead greater than the deals left wins; ten deals with equal wins draw."""
    (a, wa), (b, wb) = wins
    left = DEALS - played
    if abs(wa - wb) > left:
        return a if wa > wb else b
    if left == 0:
        return ""
    return None


@dataclass(frozen=True, slots=True)
class Standing:
    """The match with this deal counted once it has ended."""

    played: int
    wins: tuple[tuple[str, int], ...]
    remaining: tuple[str, ...]
    eliminated: tuple[str, ...]
    winner: str | None
    draw: bool

    @property
    def decided(self) -> bool:
        return self.winner is not None or self.draw


def standing(g: Podkidnoy) -> Standing:
    m: Match = g.match
    r = g.result
    names = g.players
    if m.knockout:
        remaining, gone = names, m.eliminated
        if r is not None and not r.draw:
            remaining = tuple(p for s, p in enumerate(names) if s not in r.losers)
            gone = gone + tuple(names[s] for s in r.losers)
        winner = remaining[0] if len(remaining) == 1 else None
        return Standing(m.played + (r is not None), (), remaining, gone, winner, False)
    played, wins = m.played, m.wins
    if r is None:
        return Standing(played, wins, names, (), None, False)
    played += 1
    if not r.draw:
        loser = names[r.losers[0]]
        wins = tuple((p, w + (p != loser)) for p, w in wins)
    won = _decided(played, wins)
    return Standing(played, wins, names, (), won or None, won == "")


def next_dealer(g: Podkidnoy, st: Standing) -> int:
    """The next deal's dealer as a seat of this deal, ``-1`` if unknown or none:
    two players alternate; a knock-out passes the deal to the next remaining
    player clockwise after this deal's dealer (VARIANTS.md 2.4, 2.5)."""
    if g.result is None or st.decided or g.dealer < 0:
        return -1
    gone = set(g.result.losers) if g.match.knockout else set()
    for k in range(1, g.n + 1):
        s = (g.dealer + k) % g.n
        if s not in gone:
            return s
    return -1


def expected(g: Podkidnoy) -> dict[str, Any]:
    """The record's ``match`` expectation (VARIANTS.md 12.7). ``next_dealer`` is
    left out when it cannot be known (a position without its dealer), so a record
    naming it is not checked there."""
    st = standing(g)
    data: dict[str, Any] = (
        {"remaining": list(st.remaining)}
        if g.match.knockout
        else {"played": st.played, "wins": dict(st.wins)}
    )
    if st.winner is not None:
        data["result"] = {"winner": st.winner}
    else:
        data["result"] = {"draw": True} if st.draw else None
    nxt = next_dealer(g, st)
    if nxt >= 0 or g.result is None or st.decided or g.dealer >= 0:
        data["next_dealer"] = g.players[nxt] if nxt >= 0 else None
    return data


def view(g: Podkidnoy) -> MatchView:
    st = standing(g)
    return MatchView(
        deals=None if g.match.knockout else DEALS,
        played=st.played,
        wins=st.wins,
        remaining=st.remaining,
        eliminated=st.eliminated,
        winner=st.winner,
        draw=st.draw,
    )


def scored(g: Podkidnoy) -> Outcome | None:
    """What the tally records (VARIANTS.md 2.6): a two-player match only once
    decided (its loser, or a draw); a knock-out deal its durak, so each player
    knocked out gets one loss. A drawn knock-out deal records nothing."""
    r = g.result
    if r is None:
        return None
    if g.match.knockout:
        return None if r.draw else r
    st = standing(g)
    if st.draw:
        return Outcome(draw=True)
    if st.winner is None:
        return None
    return Outcome(losers=(1 - g.players.index(st.winner),))


def next_game(g: Podkidnoy) -> Series:
    """The next deal of the match (``continues``), or a new match once decided."""
    st = standing(g)
    if st.decided:
        return Series(FIRST)
    nxt = next_dealer(g, st)
    dealer = g.players[nxt if nxt >= 0 else 0]
    after = Match(g.match.knockout, st.played, st.wins, st.eliminated if g.match.knockout else ())
    return Series(FIRST, dealer=dealer, players=st.remaining, match=after.to_json(), continues=True)
