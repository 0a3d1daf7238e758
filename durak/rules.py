"""The options of RULES.md as one frozen value."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from .cards import DECK_SIZES

THROW_IN_CHOICES = ("neighbours", "all")
FIRST_BOUT_LIMITS = (5, 6)


@dataclass(frozen=True, slots=True)
class Rules:
    """Every option of RULES.md by its name, with its default."""

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

    def __post_init__(self) -> None:
        if type(self.deck) is not int or self.deck not in DECK_SIZES:
            raise ValueError(f"deck must be one of {DECK_SIZES}, not {self.deck!r}")
        if self.hand_size != 6 or type(self.hand_size) is not int:
            raise ValueError("hand_size is fixed at 6")
        if self.throw_in not in THROW_IN_CHOICES:
            raise ValueError(f"throw_in must be one of {THROW_IN_CHOICES}, not {self.throw_in!r}")
        if type(self.first_bout_limit) is not int or self.first_bout_limit not in FIRST_BOUT_LIMITS:
            raise ValueError(f"first_bout_limit must be 5 or 6, not {self.first_bout_limit!r}")
        for name in (
            "six_cap_after_stock",
            "attack_loser",
            "transfer",
            "transfer_by_showing_trump",
            "trump_exchange",
            "teams",
        ):
            if type(getattr(self, name)) is not bool:
                raise ValueError(f"{name} must be true or false")
        if self.transfer_by_showing_trump and not self.transfer:
            raise ValueError("transfer_by_showing_trump needs transfer")

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle through the constructor: a mypyc-compiled frozen dataclass
        cannot be restored field by field (AI decisions run in worker processes)."""
        return (Rules, tuple(getattr(self, f.name) for f in fields(self)))

    @property
    def max_players(self) -> int:
        return self.deck // 6

    def check_players(self, count: int) -> None:
        """Raise ``ValueError`` unless ``count`` players can play these rules."""
        if not 2 <= count <= self.max_players:
            raise ValueError(
                f"{count} players cannot play with {self.deck} cards (2 to {self.max_players})"
            )
        if self.teams and count not in (4, 6):
            raise ValueError("teams need 4 or 6 players")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def changed(self) -> dict[str, Any]:
        """Only the options that differ from the defaults (what a record needs)."""
        default = Rules()
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) != getattr(default, f.name)
        }

    @classmethod
    def from_dict(cls, data: Any) -> Rules:
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
