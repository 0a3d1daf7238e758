"""The engine's refusals: one exception type, one code from RECORDS.md."""

from __future__ import annotations

#: Every refusal code, in the order of precedence RECORDS.md gives for the
#: general ones (the action's own codes follow).
CODES = (
    "game_over",
    "not_your_turn",
    "variant_off",
    "not_in_hand",
    "mixed_ranks",
    "rank_not_on_table",
    "limit",
    "not_on_table",
    "cannot_beat",
    "cannot_take",
    "cannot_transfer",
    "cannot_exchange",
)


class IllegalAction(ValueError):
    """An action the rules refuse; the game is unchanged.

    ``code`` is one of :data:`CODES`; ``str(error)`` is a readable sentence.
    """

    def __init__(self, code: str, message: str) -> None:
        assert code in CODES, code
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"IllegalAction({self.code!r}, {self.message!r})"


class MalformedRecord(ValueError):
    """A record, snapshot, position or step that does not follow the format."""
