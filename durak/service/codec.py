"""The service's pure helpers: its JSON, the snapshot and record it stores, the replay
that checks a stored game, what an ending scores, a chat's stored settings. No I/O,
no state."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from ..actions import Action, action_from_step
from ..errors import IllegalAction, MalformedRecord
from ..games import Game
from ..records import replay
from ..rules import Rules
from ..snapshot import to_snapshot
from .errors import BadAction, DatabaseError, InvalidSetting, ServiceError
from .types import DEFAULT_TURN_TIMEOUT, HUMAN, LOBBY, PLAYED, ChatSettings, Ending, Seat

if TYPE_CHECKING:
    from ..store.base import GameRow, LoggedAction


log = logging.getLogger(__name__)


class Damaged(Exception):
    """A game whose log cannot be replayed."""


def json_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def rules_of(text: str) -> Rules:
    """A stored game's rules, as it was played (an option it does not name reads as
    :meth:`Rules.from_record` says)."""
    try:
        return Rules.from_record(json.loads(text))
    except (ValueError, TypeError) as e:
        raise DatabaseError(f"stored rules are unreadable: {e}") from None


def rules_json(rules: Rules) -> str:
    return json_text(rules.to_dict())


#: The option a game stored before it existed does not name (RECORDS.md).
NO_PROGRESS_DRAW = "no_progress_draw"


def rules_as_played(status: str, rules: str, snapshot: str | None) -> tuple[str, str | None] | None:
    """A stored game's ``rules`` and ``snapshot`` naming ``no_progress_draw`` as the
    game was played, or ``None`` if both already do (or cannot be read: the game's
    own reading reports that).

    Every game row has named every option since the option came; a row without it
    was written by the code before, or copied from such a row (Play again, a sprint's
    next deal) by the code that came with the option, which played it with the
    option on. The snapshot tells them apart: the code that played the game wrote it,
    naming every option it played with. A game whose snapshot does not name the
    option either was played without it; an open lobby, not played yet, takes a new
    game's default, as that code would have read it."""
    try:
        data = json.loads(rules)
        snap = json.loads(snapshot) if snapshot else None
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    played = snap.get("rules") if isinstance(snap, dict) else None
    if not isinstance(played, dict):
        played = None  # a lobby's suit choice, or no snapshot yet
    if NO_PROGRESS_DRAW in data and (played is None or NO_PROGRESS_DRAW in played):
        return None
    if NO_PROGRESS_DRAW in data:
        value = data[NO_PROGRESS_DRAW]
    elif played is not None and NO_PROGRESS_DRAW in played:
        value = played[NO_PROGRESS_DRAW]
    else:
        value = Rules().no_progress_draw if status == LOBBY else False
    new_rules = rules if NO_PROGRESS_DRAW in data else json_text({**data, NO_PROGRESS_DRAW: value})
    new_snapshot = snapshot
    if isinstance(snap, dict) and played is not None and NO_PROGRESS_DRAW not in played:
        new_snapshot = json_text({**snap, "rules": {**played, NO_PROGRESS_DRAW: value}})
    return new_rules, new_snapshot


def snapshot_dict(game: Game) -> dict[str, Any]:
    """The snapshot without what the store keeps elsewhere: the start (its own
    column, written once) and the history (the action log).

    ``to_snapshot`` would copy the whole history on every action (O(moves), a
    third of an apply's time), only for it to be dropped here; so it is handed an
    empty history for the duration of the call. Synchronous: nobody can observe it.
    """
    history = game.history
    game.history = []
    try:
        snap = to_snapshot(game)
    finally:
        game.history = history
    del snap["start"], snap["history"]
    return snap


def snapshot_text(game: Game) -> str:
    return json_text(snapshot_dict(game))


def record_of(
    row: GameRow, seats: tuple[Seat, ...] | list[Seat], entries: list[LoggedAction]
) -> dict[str, Any]:
    """A ``durak-record/1`` record straight from the stored rows."""
    names = [s.name for s in seats]
    return {
        "format": "durak-record/1",
        "name": f"game {row.game_id}",
        "rules": json.loads(row.rules),
        "players": names,
        "start": json.loads(row.start or "null"),
        "steps": [{"player": names[e.seat], **json.loads(e.step)} for e in entries],
    }


def rebuild(
    row: GameRow, seats: tuple[Seat, ...], entries: list[LoggedAction]
) -> tuple[Game, list[str]]:
    """Replay a game from its start and log; also say where the stored version
    and snapshot disagree with that replay. :class:`Damaged` if it cannot."""
    for k, entry in enumerate(entries, 1):
        if entry.version != k:
            raise Damaged(f"the log skips from version {k - 1} to {entry.version}")
    try:
        game = replay(record_of(row, seats, entries))
    except (MalformedRecord, IllegalAction, ValueError, KeyError, TypeError, IndexError) as e:
        raise Damaged(f"{type(e).__name__}: {e}") from None
    problems = []
    if row.version != len(entries):
        problems.append(f"version ({row.version}, log has {len(entries)})")
    try:
        stored = json.loads(row.snapshot) if row.snapshot else None
    except ValueError:
        stored = None
    if comparable(stored) != comparable(json.loads(json_text(snapshot_dict(game)))):
        problems.append("snapshot")
    return game, problems


def comparable(snapshot: Any) -> Any:
    """A snapshot with its rules as every option's value: a snapshot stored before
    an option existed lists fewer options and means the same game."""
    if isinstance(snapshot, dict) and isinstance(snapshot.get("rules"), dict):
        try:
            return {**snapshot, "rules": Rules.from_record(snapshot["rules"]).to_dict()}
        except ValueError:
            return snapshot
    return snapshot


def as_action(action: Action | Mapping[str, Any]) -> Action:
    if isinstance(action, Mapping):
        try:
            return action_from_step(dict(action))
        except (ValueError, TypeError, AttributeError) as e:
            raise BadAction(f"not a readable action: {e}") from None
    if isinstance(action, Action):
        return action
    raise BadAction(f"not an action: {action!r}")


def continues(game: Game) -> bool:
    """Whether the next game follows at once, without anyone asking (a sprint match)."""
    return game.over and game.next_game().continues


def scored_rows(seats: tuple[Seat, ...], game: Game) -> list[tuple[int, int, int]]:
    """The tally rows of a game that ended: what it scores (VARIANTS.md 2.6: a sprint
    match counts its losses, not each deal's), nothing while its match scores nothing."""
    scored = game.scored
    if scored is None:
        return []
    return tally_rows(seats, Ending(PLAYED, scored.losers, scored.draw))


def tally_rows(seats: tuple[Seat, ...], ending: Ending) -> list[tuple[int, int, int]]:
    """``(user_id, losses, draws)`` for every human seat of a finished game."""
    return [
        (s.user_id, int(s.seat in ending.losers), int(ending.draw))
        for s in seats
        if s.kind == HUMAN
    ]


# ---- a chat's stored settings -----------------------------------------------------------

RULE_NAMES = frozenset(f.name for f in fields(Rules))
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})?$")
_MAX_TIMEOUT = 24 * 3600


def check_timeout(value: Any) -> None:
    if value is None:
        return
    if type(value) is not int or not 5 <= value <= _MAX_TIMEOUT:
        raise InvalidSetting(
            f"turn_timeout must be whole seconds from 5 to {_MAX_TIMEOUT}, or none"
        )


def check_recap(value: Any) -> None:
    if type(value) is not bool:
        raise InvalidSetting("recap is on or off (true or false)")


def check_language(value: Any) -> None:
    if value is not None and (not isinstance(value, str) or not _LANGUAGE.match(value)):
        raise InvalidSetting(f"not a language code: {value!r}")


def settings_of(chat_id: int, text: str | None) -> ChatSettings:
    return read_settings(chat_id, text)[0]


def read_settings(chat_id: int, text: str | None) -> tuple[ChatSettings, set[str]]:
    """The stored settings, and which of ``turn_timeout`` and ``language`` the
    chat chose (a missing ``turn_timeout`` is the default, ``None`` is off)."""
    if not text:
        return ChatSettings(chat_id, Rules()), set()
    try:
        data = json.loads(text)
        rules = Rules.from_dict({k: v for k, v in data.items() if k in RULE_NAMES})
        language = data.get("language")
        check_language(language)
    except (ValueError, TypeError, AttributeError, ServiceError) as e:
        log.warning("chat %d: stored settings are unreadable (%s); using defaults", chat_id, e)
        return ChatSettings(chat_id, Rules()), set()
    chosen = {k for k in ("turn_timeout", "language", "recap") if k in data}
    recap = data.get("recap", True)
    if not isinstance(recap, bool):
        log.warning("chat %d: stored recap %r is not on or off", chat_id, recap)
        recap = True
        chosen.discard("recap")
    timeout = data.get("turn_timeout", DEFAULT_TURN_TIMEOUT)
    try:
        check_timeout(timeout)
    except InvalidSetting:
        log.warning("chat %d: stored turn_timeout %r is out of range", chat_id, timeout)
        timeout = DEFAULT_TURN_TIMEOUT
        chosen.discard("turn_timeout")
    return ChatSettings(chat_id, rules, timeout, language, recap), chosen
