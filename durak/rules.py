"""The options of every game as one frozen value.

``game`` names the game (RULES.md's podkidnoy by default, or one of
PILE-GAMES.md's pile games); the other options are RULES.md's and
VARIANTS.md's, which belong to podkidnoy, and ``own_trumps_take``, which
belongs to own trumps. A combination the specifications forbid is refused
here, so no engine ever sees one.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from .cards import DECK_SIZES

THROW_IN_CHOICES = ("neighbours", "all")
FIRST_BOUT_LIMITS = (5, 6)
BOUT_LIMITS = (5, 6)
PODKIDNOY = "podkidnoy"
PILE_GAMES = ("own_trumps", "piled", "road")
#: ``no_progress_draw``: this many takes in a row with no progress (no card to the
#: discard, none drawn from the stock, nobody out) end the game as a draw.
NO_PROGRESS_TAKES = 100
#: ``end_reason`` of that draw.
NO_PROGRESS = "no_progress"
#: Options that came after records did, each with the value a record (or a stored
#: game) that leaves it out was played with (RECORDS.md: without
#: ``no_progress_draw``), whatever a new game's default is. A record names each of
#: them, so it reads the same after any later change of a default.
RECORD_DEFAULTS: dict[str, Any] = {"no_progress_draw": False}
GAMES = (PODKIDNOY, *PILE_GAMES)
OWN_TRUMPS_TAKE = ("top", "pile")
JAPANESE_TRUMPS = ("S", "H", "D")

#: Options that are true or false.
_BOOLS = (
    "six_cap_after_stock",
    "attack_loser",
    "transfer",
    "transfer_by_showing_trump",
    "trump_exchange",
    "teams",
    "trump_change",
    "sprint",
    "blind",
    "partial_defence",
    "english",
    "return_last_card",
    "damka",
    "show_last_discard",
    "no_progress_draw",
)

#: VARIANTS.md section 11: (option, options it may not be played with, why).
_FORBIDDEN: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("sprint", ("trump_change", "trump_exchange"), "there is no stock"),
    (
        "sprint",
        ("teams", "attack_loser", "blind"),
        "the match fixes the dealer and the opener",
    ),
    (
        "blind",
        ("transfer", "trump_exchange", "partial_defence", "english", "return_last_card"),
        "blind is one card against one card",
    ),
    ("english", ("damka",), "two rules for the opening"),
    (
        "english",
        ("trump_exchange",),
        "the exchange can make or break a pair after the lead is settled",
    ),
    ("english", ("attack_loser", "return_last_card"), "English fixes who opens"),
    ("japanese", ("trump_change", "trump_exchange"), "there is no trump card"),
)
#: The same, for callers that explain a refusal (the bot's settings menu).
FORBIDDEN = _FORBIDDEN


@dataclass(frozen=True, slots=True)
class Rules:
    """Every option by its name, with its default: RULES.md, VARIANTS.md, PILE-GAMES.md."""

    game: str = PODKIDNOY
    deck: int = 36
    hand_size: int = 6
    throw_in: str = "neighbours"
    first_bout_limit: int = 6
    six_cap_after_stock: bool = True
    attack_loser: bool = False
    transfer: bool = False
    transfer_by_showing_trump: bool = False
    trump_exchange: bool = False
    teams: bool = False
    # VARIANTS.md
    trump_change: bool = False
    sprint: bool = False
    blind: bool = False
    partial_defence: bool = False
    english: bool = False
    return_last_card: bool = False
    damka: bool = False
    japanese: str | None = None
    bout_limit: int = 6
    show_last_discard: bool = False
    # PILE-GAMES.md
    own_trumps_take: str = "top"
    # RULES-NOTES.md 77: a game that makes no progress for NO_PROGRESS_TAKES takes is a draw
    no_progress_draw: bool = True

    def __post_init__(self) -> None:
        if self.game not in GAMES:
            raise ValueError(f"game must be one of {GAMES}, not {self.game!r}")
        if type(self.deck) is not int or self.deck not in DECK_SIZES:
            raise ValueError(f"deck must be one of {DECK_SIZES}, not {self.deck!r}")
        if self.hand_size != 6 or type(self.hand_size) is not int:
            raise ValueError("hand_size is fixed at 6")
        if self.throw_in not in THROW_IN_CHOICES:
            raise ValueError(f"throw_in must be one of {THROW_IN_CHOICES}, not {self.throw_in!r}")
        if type(self.first_bout_limit) is not int or self.first_bout_limit not in FIRST_BOUT_LIMITS:
            raise ValueError(f"first_bout_limit must be 5 or 6, not {self.first_bout_limit!r}")
        if type(self.bout_limit) is not int or self.bout_limit not in BOUT_LIMITS:
            raise ValueError(f"bout_limit must be 5 or 6, not {self.bout_limit!r}")
        for name in _BOOLS:
            if type(getattr(self, name)) is not bool:
                raise ValueError(f"{name} must be true or false")
        if self.japanese is not None and self.japanese not in JAPANESE_TRUMPS:
            raise ValueError(f"japanese must be null or one of {JAPANESE_TRUMPS} (never clubs)")
        if self.own_trumps_take not in OWN_TRUMPS_TAKE:
            raise ValueError(f"own_trumps_take must be one of {OWN_TRUMPS_TAKE}")
        if self.transfer_by_showing_trump and not self.transfer:
            raise ValueError("transfer_by_showing_trump needs transfer")
        if self.game != PODKIDNOY:
            self._check_pile_game()
            return
        if self.own_trumps_take != "top":
            raise ValueError("own_trumps_take belongs to the game own_trumps")
        for option, others, why in _FORBIDDEN:
            if not getattr(self, option):
                continue
            for other in others:
                if getattr(self, other):
                    raise ValueError(f"{option} cannot be played with {other}: {why}")

    def _check_pile_game(self) -> None:
        """PILE-GAMES.md 1.2: a pile game takes no podkidnoy option but the view-only
        ``show_last_discard``; its deck is 36 cards."""
        if self.deck != 36:
            raise ValueError(f"{self.game} is played with 36 cards")
        default = Rules()
        for f in fields(self):
            name = f.name
            if name in ("game", "show_last_discard", "own_trumps_take", "no_progress_draw"):
                continue
            if getattr(self, name) != getattr(default, name):
                raise ValueError(f"{name} is a podkidnoy option; {self.game} does not take it")
        if self.game != "own_trumps" and self.own_trumps_take != "top":
            raise ValueError("own_trumps_take belongs to the game own_trumps")

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle through the constructor: a mypyc-compiled frozen dataclass
        cannot be restored field by field (AI decisions run in worker processes)."""
        return (Rules, tuple(getattr(self, f.name) for f in fields(self)))

    @property
    def podkidnoy(self) -> bool:
        return self.game == PODKIDNOY

    @property
    def max_players(self) -> int:
        return self.player_range()[1]

    def player_range(self) -> tuple[int, int]:
        """The fewest and most players these rules allow."""
        if self.game == "own_trumps":
            return 3, 4
        if self.game == "piled":
            return 2, 6
        if self.game == "road":
            return 3, 6
        low, high = 2, self.deck // 6
        if self.blind:
            return 2, 2
        if self.trump_change:
            high = min(high, 3 if self.deck == 24 else 4)
        if self.sprint:
            high = min(high, 3 if self.deck == 24 else 5)
        return low, high

    def check_players(self, count: int) -> None:
        """Raise ``ValueError`` unless ``count`` players can play these rules."""
        low, high = self.player_range()
        if not low <= count <= high:
            what = self.game if not self.podkidnoy else f"{self.deck} cards"
            for name in ("blind", "sprint", "trump_change"):
                if self.podkidnoy and getattr(self, name):
                    what += f" and {name}"
            raise ValueError(f"{count} players cannot play with {what} ({low} to {high})")
        if self.teams and count not in (4, 6):
            raise ValueError("teams need 4 or 6 players")

    def to_dict(self) -> dict[str, Any]:
        """Every option by name (each value is a str, int, bool or None: what
        ``dataclasses.asdict`` gives, without its deep copy, as every snapshot has it)."""
        return {name: getattr(self, name) for name in _NAMES}

    def changed(self) -> dict[str, Any]:
        """Only the options that differ from a new game's defaults."""
        default = Rules()
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) != getattr(default, f.name)
        }

    def to_record(self) -> dict[str, Any]:
        """A record's ``rules``: the options that differ from the defaults, and every
        option of :data:`RECORD_DEFAULTS` whatever its value (``"no_progress_draw":
        true`` for a new game), so the record keeps its meaning if a default changes."""
        named = self.changed()
        for name in RECORD_DEFAULTS:
            named[name] = getattr(self, name)
        return {name: named[name] for name in _NAMES if name in named}

    @classmethod
    def from_record(cls, data: Any) -> Rules:
        """The rules of a record, a stored game or a snapshot: an option of
        :data:`RECORD_DEFAULTS` it leaves out takes the value the game was played
        with (``no_progress_draw`` off), not a new game's default."""
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ValueError("rules must be an object")
        return cls.from_dict({**RECORD_DEFAULTS, **data})

    @classmethod
    def from_dict(cls, data: Any) -> Rules:
        """A new game's rules: an option left out takes its default."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ValueError("rules must be an object")
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown rule option(s): {', '.join(map(str, unknown))}")
        try:
            return cls(**data)
        except TypeError as e:  # a compiled build checks field types itself
            raise ValueError(str(e)) from None


#: The option names in field order (``to_dict``'s keys).
_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Rules))
