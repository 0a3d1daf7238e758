"""The group's ratings: OpenSkill's Weng-Lin Plackett-Luce model, pure functions.

Every rated game ranks its players: the order they went out (those who went out on
the same move tie), the durak last; a draw ties everyone; with ``teams`` the two
teams are rated as teams; a sprint match is rated once, as its result (a knock-out:
the winner, then the players knocked out, the last to go first). Each player of a
group has one rating there (``mu``, ``sigma``); an AI seat is rated per level
(:data:`AI`, its ``level``), so a group sees how it stands against them.

What a group sees is the conservative ordinal ``mu - 3 sigma`` on a friendly scale
(:func:`public`): a new player shows 1000. :func:`settle` takes the stored standings
of a game's players and gives their new ones, the game's rating changes and the
achievements it earned: the store writes them in the transaction that ends the game.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from openskill.models import PlackettLuce

#: The model (the package's defaults: mu 25, sigma 25/3, beta 25/6, tau 25/300).
MODEL = PlackettLuce()
MU, SIGMA = MODEL.mu, MODEL.sigma
#: The public number: ``BASE + SCALE * (mu - 3 sigma)``, 1000 for a new player.
BASE, SCALE = 1000, 40
#: Reliability is shown once a player has this many rated games.
RELIABLE_AFTER = 10
#: The ``user_id`` of an AI level's rating (its ``level`` names it); a human's level is "".
AI = 0

#: The achievements, in the order they are listed.
FIRST_WIN = "first_win"  # went out first (by play) for the first time
STREAK_5 = "streak5"  # five rated games in a row without being the durak
HARD_AI = "hard_ai"  # finished ahead of every hard AI of a game
SIX = "six"  # beat off an attack of six cards
CHAIN = "chain"  # made the last transfer of a chain of two or more that the durak took
FEATS = (FIRST_WIN, STREAK_5, HARD_AI, SIX, CHAIN)
#: Games in a row without being the durak that earn :data:`STREAK_5`.
STREAK_FEAT = 5


def public(mu: float, sigma: float) -> int:
    """The rating a group sees: the conservative ordinal on a friendly scale."""
    return round(BASE + SCALE * (mu - 3 * sigma))


@dataclass(frozen=True, slots=True)
class Entrant:
    """One rated seat of a game: who (a human's id, or :data:`AI` and a level), where
    he finished (0 is best; equal places tie), and what the group keeps of it."""

    user_id: int
    level: str  # "" for a human
    place: int
    durak: bool
    #: He left (/leave, /kick, /skip), surrendered, or was away after timeouts.
    flaky: bool = False
    team: int | None = None

    @property
    def key(self) -> tuple[int, str]:
        return self.user_id, self.level

    @property
    def human(self) -> bool:
        return self.level == ""


@dataclass(frozen=True, slots=True)
class RatedGame:
    """A game to rate: its players, and the achievements its play itself earned
    (``(user_id, feat)``, e.g. a defence against six cards). ``by_play``: the places
    are the order the play put them out in (a surrender's are not: the others tie,
    and whoever went out first before it is among the ``feats``)."""

    game_id: int
    chat_id: int
    at: float
    entrants: tuple[Entrant, ...]
    feats: tuple[tuple[int, str], ...] = ()
    by_play: bool = True


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's rating in a group, and what goes with it."""

    mu: float = MU
    sigma: float = SIGMA
    games: int = 0  # rated games
    flaky: int = 0  # of those, the ones he left, was skipped in or timed out of
    streak: int = 0  # rated games in a row, up to now, without being the durak
    best: int = 0  # the longest such run

    @property
    def rating(self) -> int:
        return public(self.mu, self.sigma)


@dataclass(frozen=True, slots=True)
class Change:
    """One player's rating change in one game (public numbers)."""

    user_id: int
    level: str
    place: int
    durak: bool
    before: int
    after: int

    @property
    def delta(self) -> int:
        return self.after - self.before


@dataclass(frozen=True, slots=True)
class Settlement:
    """What a rated game writes: new standings, changes, new achievements."""

    standings: tuple[tuple[tuple[int, str], Standing], ...]
    changes: tuple[Change, ...]
    feats: tuple[tuple[int, str], ...]


def rate(
    teams: Sequence[Sequence[tuple[float, float]]], ranks: Sequence[int]
) -> list[list[tuple[float, float]]]:
    """The model's update: ``(mu, sigma)`` of each player of each team after a game
    whose teams finished at ``ranks`` (lower is better, equal ties)."""
    rated = [[MODEL.rating(mu, sigma) for mu, sigma in team] for team in teams]
    out = MODEL.rate(rated, ranks=[float(r) for r in ranks])
    return [[(p.mu, p.sigma) for p in team] for team in out]


def settle(
    game: RatedGame,
    current: Mapping[tuple[int, str], Standing],
    earned: Iterable[tuple[int, str]] = (),
) -> Settlement:
    """The game rated: every entrant's new standing (``current`` holds the stored
    ones; a player without one starts at the model's prior), the changes, and the
    achievements earned now that ``earned`` (the ones they already have) lacks.

    Seats of one key in one game (two AI seats of one level) are rated as copies
    of the same prior; the key keeps their mean, and one change: the durak if any
    of its seats is, at the place of its last seat (RULES-NOTES.md 79)."""
    entrants = game.entrants
    groups = _groups(entrants)
    before = {e.key: current.get(e.key, Standing()) for e in entrants}
    teams = [[(before[e.key].mu, before[e.key].sigma) for e in g] for g in groups]
    ranks = [min(e.place for e in g) for g in groups]
    after = rate(teams, ranks)
    new_by_key: dict[tuple[int, str], list[tuple[float, float]]] = {}
    for group, values in zip(groups, after, strict=True):
        for e, value in zip(group, values, strict=True):
            new_by_key.setdefault(e.key, []).append(value)
    seats_by_key: dict[tuple[int, str], list[Entrant]] = {}
    for e in entrants:
        seats_by_key.setdefault(e.key, []).append(e)
    standings: dict[tuple[int, str], Standing] = {}
    changes: list[Change] = []
    for key, seats in seats_by_key.items():
        old, values = before[key], new_by_key[key]
        mu = sum(v[0] for v in values) / len(values)
        sigma = sum(v[1] for v in values) / len(values)
        durak = any(e.durak for e in seats)
        streak = 0 if durak else old.streak + 1
        standings[key] = replace(
            old,
            mu=mu,
            sigma=sigma,
            games=old.games + 1,
            flaky=old.flaky + int(any(e.flaky for e in seats)),
            streak=streak,
            best=max(old.best, streak),
        )
        place = max(e.place for e in seats)
        changes.append(Change(*key, place, durak, old.rating, standings[key].rating))
    feats = _feats(game, standings, set(earned))
    return Settlement(tuple(standings.items()), tuple(changes), feats)


def _groups(entrants: Sequence[Entrant]) -> list[list[Entrant]]:
    """The model's teams: each team with ``teams``, else each player alone."""
    if any(e.team is not None for e in entrants):
        by_team: dict[int | None, list[Entrant]] = {}
        for e in entrants:
            by_team.setdefault(e.team, []).append(e)
        return [by_team[t] for t in sorted(by_team, key=lambda t: -1 if t is None else t)]
    return [[e] for e in entrants]


def _feats(
    game: RatedGame,
    standings: Mapping[tuple[int, str], Standing],
    earned: set[tuple[int, str]],
) -> tuple[tuple[int, str], ...]:
    """The achievements the game earned that nobody had yet (RULES-NOTES.md 82): the
    humans' who played their seats to the end themselves (a seat he left, was
    skipped in, surrendered or was away from at the end earns him nothing, though
    its result counts for his rating)."""
    flaky = {e.user_id for e in game.entrants if e.human and e.flaky}
    found = [f for f in game.feats if f[0] not in flaky]
    humans = [e for e in game.entrants if e.human and not e.flaky]
    hard = [e for e in game.entrants if e.level == "hard"]
    everyone_tied = len({e.place for e in game.entrants}) == 1
    for e in humans:
        by_play = game.by_play and e.team is None and not everyone_tied
        if by_play and e.place == 0 and not e.durak:
            found.append((e.user_id, FIRST_WIN))
        if standings[e.key].streak >= STREAK_FEAT:
            found.append((e.user_id, STREAK_5))
        if hard and not e.durak and all(e.place < h.place for h in hard):
            found.append((e.user_id, HARD_AI))
    human_ids = {e.user_id for e in humans}
    new: list[tuple[int, str]] = []
    for feat in found:
        if feat[0] in human_ids and feat not in earned and feat not in new:
            new.append(feat)
    return tuple(sorted(new, key=lambda f: (f[0], FEATS.index(f[1]))))


# ---- who finished where ---------------------------------------------------------------


def places(
    order: Sequence[Sequence[int]], seats: int, losers: Sequence[int], draw: bool
) -> list[int]:
    """Each seat's place: ``order`` lists the groups of seats that went out on one
    move, in order; the losers (the durak, a losing team) come last. A draw ties
    everyone; a seat that neither went out nor lost (the game ended first) ties
    with the last to go out."""
    if draw:
        return [0] * seats
    place = [-1] * seats
    for k, group in enumerate(order):
        for s in group:
            if s not in losers and place[s] < 0:
                place[s] = k
    last = len(order)
    for s in range(seats):
        if place[s] < 0 and s not in losers:
            place[s] = max(last - 1, 0)
    for s in losers:
        place[s] = last
    return place
