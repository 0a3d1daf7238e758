"""The crash test's checker: what must hold in the database after any kill.

It reads the database with plain ``sqlite3`` or ``asyncpg`` (:mod:`tests.dbaccess`)
and replays games with the engine, so it does not trust the service code it checks.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from durak import replay, to_snapshot
from tests.dbaccess import Db, db_rows, is_pg, pg_run


@dataclass
class Acks:
    """What the child acknowledged, over all rounds."""

    acts: dict[tuple[int, int], tuple[int, dict[str, object]]] = field(default_factory=dict)
    surrenders: dict[int, int] = field(default_factory=dict)
    cancels: set[int] = field(default_factory=set)
    duplicates: list[str] = field(default_factory=list)
    # Games already replayed and found consistent, by their whole row and log
    # length, with whether they ended in a draw: an unchanged game is not
    # replayed again after the next kill (that would make the test quadratic).
    verified: dict[tuple[Any, ...], bool] = field(default_factory=dict)
    logged: int = 0  # the actions in the log at the last check

    def read(self, line: str) -> str:
        words = line.split(" ", 4)
        kind = words[0]
        if kind == "act":
            key = (int(words[1]), int(words[2]))
            if key in self.acts:
                self.duplicates.append(line)
            self.acts[key] = (int(words[3]), json.loads(words[4]))
        elif kind == "surrender":
            self.surrenders[int(words[1])] = int(words[2])
        elif kind == "cancel":
            self.cancels.add(int(words[1]))
        return kind


def has_schema(db: Db) -> bool:
    """Whether the store was ever set up (a kill may land before it is)."""
    if is_pg(db):
        return bool(db_rows(db, "SELECT to_regclass('actions') IS NOT NULL")[0][0])
    if not Path(db).exists():
        return False
    found = db_rows(db, "SELECT count(*) FROM sqlite_master WHERE name = 'actions'")
    return bool(found[0][0])


def action_count(db: Db) -> int:
    return int(db_rows(db, "SELECT count(*) FROM actions")[0][0])


_GAMES = (
    "SELECT game_id, chat_id, status, rules, start, version, snapshot, end_reason, losers"
    " FROM games ORDER BY game_id"
)
_SEATS = "SELECT game_id, seat, user_id, name, kind FROM seats ORDER BY game_id, seat"
_LOG = "SELECT game_id, version, seat, step FROM actions ORDER BY game_id, version"
_TALLIES = "SELECT chat_id, user_id, played, losses, draws FROM tallies"


def _tables(db: Db) -> tuple[list[tuple[Any, ...]], ...] | str:
    """Every row the check needs, read in one transaction (no rows at all before the
    store was ever set up); or what SQLite's integrity check found wrong with the file."""
    queries = (_GAMES, _SEATS, _LOG, _TALLIES)
    if is_pg(db):
        if not has_schema(db):
            return ([], [], [], [])
        return tuple(pg_run(str(db), [(q, ()) for q in queries], snapshot=True))
    if not has_schema(db):
        return ([], [], [], [])
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        integrity = [r[0] for r in conn.execute("PRAGMA integrity_check")]
        if integrity != ["ok"]:
            return f"integrity_check: {integrity[:3]}"
        conn.execute("BEGIN")
        return tuple(conn.execute(q).fetchall() for q in queries)
    finally:
        conn.close()


def check_database(db: Db, acks: Acks) -> list[str]:
    """Every problem found; an empty list means the database is consistent."""
    problems = [f"acknowledged twice: {line}" for line in acks.duplicates]
    tables = _tables(db)
    if isinstance(tables, str):
        return [tables]
    games, seat_rows, log_rows, tally_rows = tables
    acks.logged = len(log_rows)
    seats_of: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    for game_id, *seat in seat_rows:
        seats_of[game_id].append(tuple(seat))
    log_of: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    for game_id, *entry in log_rows:
        log_of[game_id].append(tuple(entry))
    logged: set[tuple[int, int]] = set()
    tally: Counter[tuple[int, int, str]] = Counter()
    for row in games:
        game_id, chat, status, _, start, version, _, reason, losers = row
        where = f"game {game_id}"
        seats = seats_of[game_id]
        log = log_of[game_id]
        if [v for v, _, _ in log] != list(range(1, len(log) + 1)):
            problems.append(f"{where}: the log's versions are not 1..{len(log)}")
        if version != len(log):
            problems.append(f"{where}: version {version} but {len(log)} logged actions")
        for v, seat, step in log:
            logged.add((game_id, v))
            ack = acks.acts.get((game_id, v))
            if ack is not None and ack != (seat, json.loads(step)):
                problems.append(f"{where} v{v}: logged {seat} {step}, acknowledged {ack}")
        if game_id in acks.surrenders and (reason, json.loads(losers or "[]")) != (
            "surrender",
            [acks.surrenders[game_id]],
        ):
            problems.append(f"{where}: acknowledged surrender missing ({status}/{reason})")
        if game_id in acks.cancels and status != "cancelled":
            problems.append(f"{where}: acknowledged cancel missing ({status})")
        if start is None:
            if log:
                problems.append(f"{where}: a lobby with logged actions")
            continue
        fingerprint = (*row, len(log))
        draw = acks.verified.get(fingerprint)
        if draw is None:
            found, draw = _replay_problems(row, seats, log)
            problems += [f"{where}: {p}" for p in found]
            if not found:
                acks.verified[fingerprint] = draw
        if status == "finished" and reason in ("played", "surrender"):
            out = set(json.loads(losers))
            for seat, user_id, _, kind in seats:
                if kind == "human":
                    tally[chat, user_id, "played"] += 1
                    tally[chat, user_id, "losses"] += seat in out
                    tally[chat, user_id, "draws"] += draw
    for key in sorted(set(acks.acts) - logged):
        problems.append(f"acknowledged action missing from the log: game {key[0]} v{key[1]}")
    stored = {(chat, user): (p, lo, d) for chat, user, p, lo, d in tally_rows}
    expected = {
        (chat, user): (n, tally[chat, user, "losses"], tally[chat, user, "draws"])
        for (chat, user, what), n in tally.items()
        if what == "played" and n
    }
    if stored != expected:
        problems.append(f"tallies {stored} != finished games {expected}")
    return problems


def _replay_problems(
    row: tuple[Any, ...], seats: list[tuple[Any, ...]], log: list[tuple[Any, ...]]
) -> tuple[list[str], bool]:
    """Replay one game from its rows; what disagrees, and whether it is a draw."""
    _, _, status, rules, start, _, snapshot, reason, _ = row
    names = [name for _, _, name, _ in seats]
    record = {
        "format": "durak-record/1",
        "rules": json.loads(rules),
        "players": names,
        "start": json.loads(start),
        "steps": [{"player": names[seat], **json.loads(step)} for _, seat, step in log],
    }
    try:
        game = replay(record)
    except Exception as e:  # any failure to replay is a finding
        return [f"the log does not replay: {e!r}"], False
    problems = []
    expected = json.loads(
        json.dumps({k: v for k, v in to_snapshot(game).items() if k not in ("start", "history")})
    )
    stored = json.loads(snapshot or "null") or {}
    if stored != expected:
        keys = sorted(k for k in set(expected) | set(stored) if stored.get(k) != expected.get(k))
        problems.append(f"the stored snapshot is not the replay of the log (differs in {keys})")
    if game.result is not None and (status, reason) != ("finished", "played"):
        problems.append(f"the log ends the game but it is {status}/{reason}")
    if game.result is None and reason == "played":
        problems.append("marked played to the end, but the log does not end it")
    draw = reason == "played" and game.result is not None and game.result.draw
    return problems, draw
