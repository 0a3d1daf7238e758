"""Durak: a pure rules engine for podkidnoy (with its variants) and the pile
games behind one game interface, game records, and (in ``durak.service``) an
async game service with a SQLite store.

The engine's public API::

    from durak import Game, Rules, parse_card, Attack, Defend, Take, Pass

    game = Game.from_seed(Rules(), ["Ann", "Bob", "Cid"], seed=7)
    seat = game.actors()[0]
    game.apply(seat, game.legal_actions(seat)[0])   # or raise IllegalAction
    game.view(seat)                                 # own hand, counts of the others
"""

from __future__ import annotations

from .actions import (
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
from .cards import Card, Rank, Suit, format_cards, parse_card, parse_cards
from .errors import CODES, IllegalAction, MalformedRecord
from .games import Game, Podkidnoy, Series
from .records import check_record, export_record, game_from_record, replay
from .rules import Rules
from .snapshot import from_snapshot, to_snapshot
from .view import MatchView, Outcome, PileView, SeatInfo, View

__all__ = [
    "CODES",
    "Action",
    "Attack",
    "Beat",
    "Card",
    "Defend",
    "ExchangeTrump",
    "Game",
    "IllegalAction",
    "Lead",
    "MalformedRecord",
    "MatchView",
    "Outcome",
    "Pass",
    "PileView",
    "Podkidnoy",
    "Rank",
    "ReturnCard",
    "Rules",
    "SeatInfo",
    "Series",
    "ShowTrump",
    "Suit",
    "Take",
    "Transfer",
    "View",
    "action_from_step",
    "check_record",
    "export_record",
    "format_cards",
    "from_snapshot",
    "game_from_record",
    "parse_card",
    "parse_cards",
    "replay",
    "to_snapshot",
]
