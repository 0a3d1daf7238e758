"""Command line: ``python -m durak check-record|selfplay|bench ...``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import MalformedRecord
from .records import check_files
from .rules import Rules


def _players(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition("-")
    try:
        a, b = int(lo), int(hi or lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"players must be K or K-M, not {text!r}") from None
    if not 2 <= a <= b <= 8:
        raise argparse.ArgumentTypeError("players must be between 2 and 8")
    return a, b


def _rules(text: str) -> Rules:
    try:
        return Rules.from_dict(json.loads(text))
    except (ValueError, TypeError) as e:
        raise argparse.ArgumentTypeError(f"bad --rules: {e}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m durak", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check-record", help="replay records and check every expectation")
    check.add_argument("files", nargs="+")

    selfplay = sub.add_parser("selfplay", help="play random games and write their records")
    selfplay.add_argument("--games", type=int, default=10)
    selfplay.add_argument("--players", type=_players, default=(4, 4))
    selfplay.add_argument("--seed", type=int, default=0)
    selfplay.add_argument("--rules", type=_rules, default=Rules())
    selfplay.add_argument("--out", type=Path, required=True)

    bench = sub.add_parser("bench", help="complete random games per second on one core")
    bench.add_argument("--games", type=int, default=2000)
    bench.add_argument("--players", type=_players, default=(4, 4))
    bench.add_argument("--seed", type=int, default=0)
    bench.add_argument("--rules", type=_rules, default=Rules())

    args = parser.parse_args(argv)
    if args.command == "check-record":
        return check_files(args.files)
    from . import selfplay as sp

    lo, hi = args.players
    try:
        for k in range(lo, hi + 1):
            args.rules.check_players(k)
    except ValueError as e:
        parser.error(str(e))
    if args.command == "selfplay":
        try:
            written = sp.write_games(args.out, args.games, (lo, hi), args.seed, args.rules)
        except (OSError, MalformedRecord) as e:
            print(f"selfplay: {e}", file=sys.stderr)
            return 1
        print(f"wrote {written} records to {args.out}")
        return 0
    return sp.bench(args.games, (lo, hi), args.seed, args.rules)


if __name__ == "__main__":
    sys.exit(main())
