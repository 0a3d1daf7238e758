"""Game records (``durak-record/1``): export, replay and the checker.

One format serves replays, rule test vectors and bug reports; see
``../shared/rules/RECORDS.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .actions import Action, action_from_step, action_from_words
from .cards import parse_card, parse_suit
from .errors import IllegalAction, MalformedRecord
from .games import Game
from .rules import Rules

FORMAT = "durak-record/1"
#: A whole sprint match (or knock-out): every deal's record in order (RULES-NOTES.md 76).
MATCH_FORMAT = "durak-match/1"
#: A match document holds at most this many deals (a knock-out repeats drawn deals).
MAX_DEALS = 1000


def export_record(game: Game, name: str = "", with_result: bool = True) -> dict[str, Any]:
    """The record of a game so far; a finished one ends with its result."""
    steps: list[dict[str, Any]] = [
        {"player": game.players[seat], **action.step()} for seat, action in game.history
    ]
    if with_result and game.result is not None:
        steps.append({"expect": {"result": result_json(game)}})
    return {
        "format": FORMAT,
        "name": name,
        "rules": game.rules.to_record(),
        "players": list(game.players),
        "start": game.start,
        "steps": steps,
    }


def result_json(game: Game) -> dict[str, Any] | None:
    """The record's ``result``: ``null``, ``{"loser": ...}``, ``{"draw": true}``, or
    ``{"losers": [...]}`` for a team."""
    value: dict[str, Any] | None = game.expected("result")
    return value


def game_from_record(record: Any) -> Game:
    """The game at the record's start (no steps applied); MalformedRecord if bad."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise MalformedRecord(f"not a {FORMAT} document")
    try:
        rules = Rules.from_record(record.get("rules", {}))
        players = record["players"]
        if not isinstance(players, list):
            raise MalformedRecord("players must be a list")
        start = record["start"]
        if not isinstance(start, dict):
            raise MalformedRecord("start must be an object")
        start = {k: v for k, v in start.items() if k != "comment"}
        return Game.from_start(rules, players, start)
    except MalformedRecord:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise MalformedRecord(f"{type(e).__name__}: {e}") from None


def replay(record: Any) -> Game:
    """Apply every action step (skipping expectations, comments and expected refusals)."""
    game = game_from_record(record)
    for i, step in enumerate(_steps(record)):
        if not _is_action(step) or "error" in step:
            continue
        seat, action = _read_action(game, step, i)
        game.apply(seat, action)
    return game


def _steps(record: dict[str, Any]) -> list[dict[str, Any]]:
    steps = record.get("steps", [])
    if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
        raise MalformedRecord("steps must be a list of objects")
    return steps


def _is_action(step: dict[str, Any]) -> bool:
    """A step is an action, an expectation, or (PILE-GAMES.md 6.2) only a comment."""
    return "expect" not in step and any(k != "comment" for k in step)


def _read_action(game: Game, step: dict[str, Any], index: int) -> tuple[int, Action]:
    try:
        seat = game.seat_of(step["player"])
        return seat, action_from_step(step)
    except (KeyError, ValueError, TypeError) as e:
        raise MalformedRecord(f"step {index}: malformed action: {e}") from None


# ---- the checker ------------------------------------------------------------------


@dataclass
class CheckReport:
    passed: int = 0
    failures: list[str] = field(default_factory=list)

    def ok(self) -> None:
        self.passed += 1

    def fail(self, where: str, text: str) -> None:
        self.failures.append(f"{where}: {text}")


def check_record(record: Any, label: str = "record") -> CheckReport:
    """Replay a record, checking every refusal and expectation (RECORDS.md)."""
    report = CheckReport()
    try:
        game = game_from_record(record)
        steps = _steps(record)
    except MalformedRecord as e:
        report.fail(label, f"malformed: {e}")
        return report
    for i, step in enumerate(steps):
        where = f"{label}: step {i}"
        if not _is_action(step) and "expect" not in step:
            continue  # a comment
        if "expect" in step:
            expect = step["expect"]
            if not isinstance(expect, dict):
                report.fail(where, "malformed: expect must be an object")
                continue
            for key, want in expect.items():
                _check_expectation(game, key, want, where, report)
            continue
        try:
            seat, action = _read_action(game, step, i)
        except MalformedRecord as e:
            report.fail(where, f"malformed: {e}")
            return report
        want_error = step.get("error")
        before = game.snapshot() if want_error else None
        try:
            game.apply(seat, action)
        except IllegalAction as e:
            if want_error == e.code:
                if game.snapshot() != before:
                    report.fail(where, f"refused with {e.code} but the game changed")
                else:
                    report.ok()
            elif want_error:
                report.fail(where, f"refused with {e.code}, expected {want_error} ({e})")
            else:
                report.fail(where, f"{step['player']} {action.words()} refused: {e.code} ({e})")
                return report  # the rest would replay a different game
            continue
        if want_error:
            report.fail(where, f"{step['player']} {action.words()} applied, expected {want_error}")
            return report
        report.ok()
    return report


def _check_expectation(game: Game, key: str, want: Any, where: str, report: CheckReport) -> None:
    """One check per expectation key (PILE-GAMES.md 6.8); a failed key reports
    every entry that differs."""
    try:
        problems = _differences(game, key, want)
    except MalformedRecord as e:
        report.fail(where, f"malformed: {e}")
        return
    if problems:
        report.fail(where, "; ".join(problems))
    else:
        report.ok()


def _differences(game: Game, key: str, want: Any) -> list[str]:
    if key in ("legal", "illegal"):
        if not isinstance(want, list):
            raise MalformedRecord(f"{key} must be a list")
        problems = []
        for text in want:
            try:
                words = str(text).split()
                seat = game.seat_of(words[0])
                action = action_from_words(words[1:])
            except (KeyError, ValueError, IndexError) as e:
                raise MalformedRecord(f"{key} {text!r}: {e}") from None
            listed = action in game.legal_actions(seat)
            applies = game.can_apply(seat, action)
            if not (
                (key == "legal" and listed and applies)
                or (key == "illegal" and not listed and not applies)
            ):
                problems.append(f"{text!r} expected {key}, got listed={listed} applies={applies}")
        return problems
    if key in ("hands", "hand_sizes"):
        if not isinstance(want, dict):
            raise MalformedRecord(f"{key} must be an object")
        problems = []
        sizes = game.hand_sizes()
        for name, value in want.items():
            try:
                seat = game.seat_of(name)
            except KeyError:
                raise MalformedRecord(f"{key}: unknown player {name!r}") from None
            if key == "hand_sizes":
                got: Any = sizes[seat]
            else:
                got = sorted(str(c) for c in game.hand(seat))
                value = sorted(_card_texts(value, f"{key}.{name}"))
            if got != value:
                problems.append(f"{key}.{name}: expected {value}, got {got}")
        return problems
    try:
        got = game.expected(key)
    except KeyError:
        raise MalformedRecord(f"unknown expectation {key!r} for {game.rules.game}") from None
    want = _normal(key, want)
    if key in _PARTIAL and isinstance(want, dict) and isinstance(got, dict):
        if key == "match" and "next_dealer" not in got:
            want = {k: v for k, v in want.items() if k != "next_dealer"}  # VARIANTS.md 12.3
        got = {k: got.get(k) for k in want}
        if key == "match" and isinstance(got.get("remaining"), list):
            got["remaining"] = sorted(got["remaining"])
    if key in ("out", "remaining") and isinstance(got, list):
        got = sorted(got)
    if got == want:
        return []
    return [f"{key}: expected {json.dumps(want)}, got {json.dumps(got)}"]


#: Keys compared only on the fields the record gives.
_PARTIAL = ("trumps", "match")


def _card_texts(value: Any, what: str) -> list[str]:
    if not isinstance(value, list):
        raise MalformedRecord(f"{what} must be a list of cards")
    try:
        return [str(parse_card(c)) for c in value]
    except (ValueError, TypeError) as e:
        raise MalformedRecord(f"{what}: {e}") from None


def _normal(key: str, want: Any) -> Any:
    """The record's value in the form ``Game.expected`` gives (cards as ``10H``)."""
    try:
        if key == "out" and isinstance(want, list):
            return sorted(want)
        if key == "table" and isinstance(want, list):
            return [
                [str(parse_card(a)), None if c is None else str(parse_card(c))] for a, c in want
            ]
        if key == "pile" and isinstance(want, list):
            return _card_texts(want, "pile")
        if key == "trump" and isinstance(want, str):
            return parse_suit(want).letter
        if key == "trumps" and isinstance(want, dict):
            return {name: parse_suit(s).letter for name, s in want.items()}
        if key == "match" and isinstance(want, dict) and isinstance(want.get("remaining"), list):
            return {**want, "remaining": sorted(want["remaining"])}
    except (ValueError, TypeError) as e:
        raise MalformedRecord(f"{key}: {e}") from None
    return want


def match_document(records: list[dict[str, Any]], name: str = "") -> dict[str, Any]:
    """A ``durak-match/1`` document: the deals' ``durak-record/1`` records, first to last."""
    return {"format": MATCH_FORMAT, "name": name, "deals": records}


def _deals(document: Any) -> list[Any]:
    if not isinstance(document, dict) or document.get("format") != MATCH_FORMAT:
        raise MalformedRecord(f"not a {MATCH_FORMAT} document")
    deals = document.get("deals")
    if not isinstance(deals, list) or not deals:
        raise MalformedRecord("deals must be a list of one record or more")
    if len(deals) > MAX_DEALS:
        raise MalformedRecord(f"more than {MAX_DEALS} deals")
    return deals


def check_match(document: Any, label: str = "match") -> CheckReport:
    """Check every deal of a match document as a record, and that each deal after
    the first is the one its previous deal's end calls for (its players, dealer and
    ``match`` start field), and that no deal is missing after the last one."""
    report = CheckReport()
    try:
        deals = _deals(document)
    except MalformedRecord as e:
        report.fail(label, f"malformed: {e}")
        return report
    previous: Game | None = None
    for k, record in enumerate(deals):
        where = f"{label}: deal {k + 1}"
        deal = check_record(record, where)
        report.passed += deal.passed
        report.failures += deal.failures
        if deal.failures:
            return report  # the deals after it would not follow from it
        game = replay(record)
        if previous is not None:
            _check_follows(previous, game, where, report)
        elif game.rules.sprint and _played_before(game):
            report.fail(where, "the match's first deal is missing")
            return report
        if not game.rules.sprint and len(deals) > 1:
            report.fail(where, "a match of several deals is a sprint match")
            return report
        previous = game
    if previous is not None and previous.result is not None and previous.next_game().continues:
        report.fail(f"{label}: deal {len(deals)}", "the match goes on after the last deal")
    else:
        report.ok()
    return report


def _played_before(game: Game) -> int:
    """The deals a sprint deal's start says were finished before it."""
    match = game.start.get("match")
    played = match.get("played", 0) if isinstance(match, dict) else 0
    return played if isinstance(played, int) else 0


def _check_follows(previous: Game, game: Game, where: str, report: CheckReport) -> None:
    """``game`` is the deal the end of ``previous`` calls for: its players, rules and
    dealer, and its start's ``match`` meaning the match as ``previous`` left it (read
    as the deal reads it: an omitted field means what 12.3 says, so it is compared by
    meaning, not as text)."""
    if previous.result is None:
        report.fail(where, "follows a deal that did not end")
        return
    series = previous.next_game()
    if not series.continues:
        report.fail(where, "follows the deal that decided the match")
        return
    dealer = previous.expected("match").get("next_dealer")
    if dealer is None:  # RECORDS.md: every deal of a document of several names its dealer
        report.fail(where, "follows a deal whose start names no dealer: the next dealer is unknown")
        return
    players = series.players or previous.players
    want = {"players": list(players), "rules": previous.rules.changed(), "dealer": dealer}
    got = {
        "players": list(game.players),
        "rules": game.rules.changed(),
        "dealer": game.start.get("dealer"),
    }
    before = Game.from_start(game.rules, game.players, game.start)
    match = getattr(before.view(None), "match", None)
    if got != want or match != getattr(previous.view(None), "match", None):
        report.fail(
            where, f"is not the deal that follows: expected {want | {'match': series.match}}"
        )
    else:
        report.ok()


def check_document(document: Any, label: str = "record") -> CheckReport:
    """A record or a match document, as its ``format`` says."""
    if isinstance(document, dict) and document.get("format") == MATCH_FORMAT:
        return check_match(document, label)
    return check_record(document, label)


def check_files(paths: list[str], out: Callable[[str], None] = print) -> int:
    """The ``check-record`` command: one line per failed check, then the totals."""
    passed = failed = 0
    for path in paths:
        try:
            record = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            out(f"{path}: malformed: {e}")
            failed += 1
            continue
        report = check_document(record, path)
        for line in report.failures:
            out(line)
        passed += report.passed
        failed += len(report.failures)
    out(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
