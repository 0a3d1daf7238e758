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
from .cards import card_of, parse_card
from .errors import IllegalAction, MalformedRecord
from .game import Game
from .rules import Rules
from .snapshot import to_snapshot

FORMAT = "durak-record/1"


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
        "rules": game.rules.changed(),
        "players": list(game.players),
        "start": game.start,
        "steps": steps,
    }


def result_json(game: Game) -> dict[str, Any] | None:
    r = game.result
    if r is None:
        return None
    if r.draw:
        return {"draw": True}
    if game.rules.teams:
        return {"losers": [game.players[s] for s in r.losers]}
    return {"loser": game.players[r.losers[0]]}


def game_from_record(record: Any) -> Game:
    """The game at the record's start (no steps applied); MalformedRecord if bad."""
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise MalformedRecord(f"not a {FORMAT} document")
    try:
        rules = Rules.from_dict(record.get("rules", {}))
        players = record["players"]
        if not isinstance(players, list):
            raise MalformedRecord("players must be a list")
        start = record["start"]
        if not isinstance(start, dict):
            raise MalformedRecord("start must be an object")
        if "deck_order" in start:
            order = [parse_card(c) for c in start["deck_order"]]
            dealer = players.index(start["dealer"])
            series = start.get("series", "first")
            loser = start.get("previous_loser")
            return Game.from_deck(
                rules,
                players,
                order,
                dealer,
                series,
                None if loser is None else players.index(loser),
            )
        return Game.from_position(rules, players, start)
    except MalformedRecord:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise MalformedRecord(f"{type(e).__name__}: {e}") from None


def replay(record: Any) -> Game:
    """Apply every action step (skipping expectations and expected refusals)."""
    game = game_from_record(record)
    for i, step in enumerate(_steps(record)):
        if "expect" in step or "error" in step:
            continue
        seat, action = _read_action(game, step, i)
        game.apply(seat, action)
    return game


def _steps(record: dict[str, Any]) -> list[dict[str, Any]]:
    steps = record.get("steps", [])
    if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
        raise MalformedRecord("steps must be a list of objects")
    return steps


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
        before = to_snapshot(game) if want_error else None
        try:
            game.apply(seat, action)
        except IllegalAction as e:
            if want_error == e.code:
                if to_snapshot(game) != before:
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


def _names(game: Game, seats: list[int] | tuple[int, ...]) -> list[str]:
    return [game.players[s] for s in seats]


def _actual(game: Game, key: str) -> Any:
    over = game.result is not None
    getters: dict[str, Callable[[], Any]] = {
        "attacker": lambda: None if over else game.players[game.attacker],
        "defender": lambda: None if over else game.players[game.defender],
        "trump": lambda: "SHDC"[game.trump],
        "stock": lambda: len(game.stock),
        "discard": lambda: game.discard,
        "table": lambda: [
            [str(card_of(a)), str(card_of(c)) if c >= 0 else None]
            for a, c in zip(game.table, game.covers, strict=True)
        ],
        "limit": game.next_limit,
        "out": lambda: sorted(_names(game, [s for s in range(game.n) if game.out[s]])),
        "result": lambda: result_json(game),
    }
    return getters[key]()


def _check_expectation(game: Game, key: str, want: Any, where: str, report: CheckReport) -> None:
    if key in ("legal", "illegal"):
        if not isinstance(want, list):
            report.fail(where, f"malformed: {key} must be a list")
            return
        for text in want:
            try:
                words = str(text).split()
                seat = game.seat_of(words[0])
                action = action_from_words(words[1:])
            except (KeyError, ValueError, IndexError) as e:
                report.fail(where, f"malformed: {key} {text!r}: {e}")
                continue
            listed = action in game.legal_actions(seat)
            applies = game.can_apply(seat, action)
            if (key == "legal" and listed and applies) or (
                key == "illegal" and not listed and not applies
            ):
                report.ok()
            else:
                report.fail(
                    where,
                    f"{text!r} expected {key}, got listed={listed} applies={applies}",
                )
        return
    if key in ("hands", "hand_sizes"):
        if not isinstance(want, dict):
            report.fail(where, f"malformed: {key} must be an object")
            return
        for name, value in want.items():
            try:
                seat = game.seat_of(name)
            except KeyError:
                report.fail(where, f"{key}: unknown player {name!r}")
                continue
            if key == "hand_sizes":
                got: Any = game.hands[seat].bit_count()
            else:
                got = sorted(str(c) for c in game.hand(seat))
                try:
                    value = sorted(str(parse_card(c)) for c in value)
                except (ValueError, TypeError) as e:
                    report.fail(where, f"malformed: {key}.{name}: {e}")
                    continue
            if got == value:
                report.ok()
            else:
                report.fail(where, f"{key}.{name}: expected {value}, got {got}")
        return
    if key not in (
        "attacker",
        "defender",
        "trump",
        "stock",
        "discard",
        "table",
        "limit",
        "out",
        "result",
    ):
        report.fail(where, f"malformed: unknown expectation {key!r}")
        return
    got = _actual(game, key)
    if key == "out" and isinstance(want, list):
        want = sorted(want)
    if key == "table" and isinstance(want, list):
        try:
            want = [
                [str(parse_card(a)), None if c is None else str(parse_card(c))] for a, c in want
            ]
        except (ValueError, TypeError) as e:
            report.fail(where, f"malformed: table: {e}")
            return
    if key == "trump" and isinstance(want, str):
        want = want.strip().upper()[:1]
    if got == want:
        report.ok()
    else:
        report.fail(where, f"{key}: expected {json.dumps(want)}, got {json.dumps(got)}")


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
        report = check_record(record, path)
        for line in report.failures:
            out(line)
        passed += report.passed
        failed += len(report.failures)
    out(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
