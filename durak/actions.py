"""Actions: the decisions players send, the same vocabulary as game records.

Every game shares this vocabulary (RECORDS.md, VARIANTS.md, PILE-GAMES.md): an
action of another game is a refusal (``variant_off``), never a parse error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .cards import Card, parse_card


@dataclass(frozen=True, slots=True, eq=False)
class Attack:
    """Open the bout, or throw in: one or more cards.

    The cards keep the order they were given in (the table shows them so), but
    two attacks with the same cards are the same decision, whatever the order:
    a user's tap order must not matter.
    """

    cards: tuple[Card, ...]
    #: The card ids in ascending order: what equality and hashing compare.
    key: tuple[int, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", tuple(sorted(c.id for c in self.cards)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Attack) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle through the constructor (see ``Card.__reduce__``)."""
        return (Attack, (self.cards,))

    def step(self) -> dict[str, Any]:
        return {"do": "attack", "cards": [str(c) for c in self.cards]}

    def words(self) -> str:
        return "attack " + " ".join(str(c) for c in self.cards)


@dataclass(frozen=True, slots=True)
class Defend:
    """Cover the uncovered attack card ``attack`` with ``card``."""

    attack: Card
    card: Card

    def __reduce__(self) -> tuple[object, ...]:
        return (Defend, (self.attack, self.card))

    def step(self) -> dict[str, Any]:
        return {"do": "defend", "attack": str(self.attack), "card": str(self.card)}

    def words(self) -> str:
        return f"defend {self.attack} {self.card}"


@dataclass(frozen=True, slots=True)
class Take:
    """The defender takes the table."""

    def step(self) -> dict[str, Any]:
        return {"do": "take"}

    def words(self) -> str:
        return "take"


@dataclass(frozen=True, slots=True)
class Pass:
    """A thrower has nothing (more) to add now."""

    def step(self) -> dict[str, Any]:
        return {"do": "pass"}

    def words(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class Transfer:
    """Transfer variant: pass the defence on by playing ``card``."""

    card: Card

    def __reduce__(self) -> tuple[object, ...]:
        return (Transfer, (self.card,))

    def step(self) -> dict[str, Any]:
        return {"do": "transfer", "card": str(self.card)}

    def words(self) -> str:
        return f"transfer {self.card}"


@dataclass(frozen=True, slots=True)
class ShowTrump:
    """Transfer by showing a trump of the attack rank; it stays in the hand."""

    card: Card

    def __reduce__(self) -> tuple[object, ...]:
        return (ShowTrump, (self.card,))

    def step(self) -> dict[str, Any]:
        return {"do": "show_trump", "card": str(self.card)}

    def words(self) -> str:
        return f"show_trump {self.card}"


@dataclass(frozen=True, slots=True)
class ExchangeTrump:
    """Swap the deck's lowest trump for the face-up trump card."""

    def step(self) -> dict[str, Any]:
        return {"do": "exchange_trump"}

    def words(self) -> str:
        return "exchange_trump"


@dataclass(frozen=True, slots=True)
class ReturnCard:
    """VARIANTS.md ``return_last_card``: hand the attacker's last card(s) back."""

    def step(self) -> dict[str, Any]:
        return {"do": "return_card"}

    def words(self) -> str:
        return "return_card"


@dataclass(frozen=True, slots=True)
class Lead:
    """Pile games: put ``card`` on the pile (phase ``lead``)."""

    card: Card

    def __reduce__(self) -> tuple[object, ...]:
        return (Lead, (self.card,))

    def step(self) -> dict[str, Any]:
        return {"do": "lead", "card": str(self.card)}

    def words(self) -> str:
        return f"lead {self.card}"


@dataclass(frozen=True, slots=True)
class Beat:
    """Pile games: beat the top card of the pile with ``card`` (phase ``answer``)."""

    card: Card

    def __reduce__(self) -> tuple[object, ...]:
        return (Beat, (self.card,))

    def step(self) -> dict[str, Any]:
        return {"do": "beat", "card": str(self.card)}

    def words(self) -> str:
        return f"beat {self.card}"


Action = (
    Attack | Defend | Take | Pass | Transfer | ShowTrump | ExchangeTrump | ReturnCard | Lead | Beat
)

TAKE = Take()
PASS = Pass()
EXCHANGE_TRUMP = ExchangeTrump()
RETURN_CARD = ReturnCard()


def action_from_step(step: dict[str, Any]) -> Action:
    """Read the action part of a record step; ``ValueError`` if malformed."""
    do = step.get("do")
    try:
        if do == "attack":
            cards = step.get("cards")
            if not isinstance(cards, list) or not cards:
                raise ValueError("attack needs a non-empty list of cards")
            return Attack(tuple(parse_card(c) for c in cards))
        if do == "defend":
            return Defend(parse_card(step["attack"]), parse_card(step["card"]))
        if do == "take":
            return TAKE
        if do == "pass":
            return PASS
        if do == "transfer":
            return Transfer(parse_card(step["card"]))
        if do == "show_trump":
            return ShowTrump(parse_card(step["card"]))
        if do == "exchange_trump":
            return EXCHANGE_TRUMP
        if do == "return_card":
            return RETURN_CARD
        if do == "lead":
            return Lead(parse_card(step["card"]))
        if do == "beat":
            return Beat(parse_card(step["card"]))
    except KeyError as e:
        raise ValueError(f"{do} step misses {e.args[0]!r}") from None
    raise ValueError(f"unknown action {do!r}")


def action_from_words(words: list[str]) -> Action:
    """Read the ``legal``/``illegal`` form after the player name: ``defend 8H 9H``."""
    if not words:
        raise ValueError("empty action")
    do, args = words[0], words[1:]
    if do == "attack":
        return action_from_step({"do": do, "cards": args})
    if do == "defend" and len(args) == 2:
        return action_from_step({"do": do, "attack": args[0], "card": args[1]})
    if do in ("transfer", "show_trump", "lead", "beat") and len(args) == 1:
        return action_from_step({"do": do, "card": args[0]})
    if do in ("take", "pass", "exchange_trump", "return_card") and not args:
        return action_from_step({"do": do})
    raise ValueError(f"cannot read action {' '.join(words)!r}")
