"""The engine's refusals: one exception type, one code from RECORDS.md."""

from __future__ import annotations

#: Every refusal code, in the order of precedence RECORDS.md, VARIANTS.md
#: section 12 and PILE-GAMES.md section 6.6 give for the general ones (the
#: action's own codes follow).
CODES = (
    "game_over",
    "not_your_turn",
    "variant_off",
    "must_answer",  # PILE-GAMES.md 6.6
    "must_lead",  # PILE-GAMES.md 6.6
    "not_in_hand",
    "opening_size",  # VARIANTS.md 12.5
    "mixed_ranks",
    "mixed_suits",  # VARIANTS.md 12.5
    "rank_not_on_table",
    "limit",
    "not_on_table",
    "cannot_beat",
    "cannot_take",
    "cannot_transfer",
    "cannot_exchange",
    "cannot_return",  # VARIANTS.md 12.5
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
