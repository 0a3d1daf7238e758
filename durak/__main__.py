"""Command line: ``python -m durak check-record|selfplay|bench|arena|play ...``."""

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

    arena = sub.add_parser("arena", help="seeded games between AI agents: loss rates with 95% CIs")
    arena.add_argument("--agents", required=True, help="e.g. hard,greedy or hard,greedy*3")
    arena.add_argument("--games", type=int, default=100)
    arena.add_argument("--seed", type=int, default=0)
    arena.add_argument("--rules", type=_rules, default=Rules())
    arena.add_argument("--players", type=int, help="must equal the number of agents listed")
    arena.add_argument("--budget-ms", type=int, help="hard: time per decision (default 300)")
    arena.add_argument("--iterations", type=int, help="hard: search iterations per decision")
    arena.add_argument("--jobs", type=int, default=1, help="worker processes")

    play = sub.add_parser("play", help="play against AI players in this terminal")
    play.add_argument("--players", type=int, default=2)
    play.add_argument("--level", choices=("easy", "normal", "hard"), default="normal")
    play.add_argument("--rules", type=_rules, default=Rules())
    play.add_argument("--seed", type=int, help="the deal (default: a random one)")
    play.add_argument("--budget-ms", type=int, help="hard: time per decision (default 300)")

    args = parser.parse_args(argv)
    if args.command == "check-record":
        return check_files(args.files)
    if args.command == "arena":
        return _arena(parser, args)
    if args.command == "play":
        from .terminal import play_terminal

        try:
            args.rules.check_players(args.players)
        except ValueError as e:
            parser.error(str(e))
        return play_terminal(
            args.players, args.level, args.rules, args.seed, budget_ms=args.budget_ms
        )
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


def _arena(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    import time

    from .ai import arena

    try:
        agents = arena.parse_agents(args.agents)
    except ValueError as e:
        parser.error(str(e))
    if args.players is not None and args.players != len(agents):
        parser.error(f"--players {args.players} but {len(agents)} agents: list one per seat")
    try:
        args.rules.check_players(len(agents))
    except ValueError as e:
        parser.error(str(e))
    if args.games < 1 or args.jobs < 1:
        parser.error("--games and --jobs must be positive")
    began = time.perf_counter()
    results = arena.run(
        agents, args.games, args.seed, args.rules, args.budget_ms, args.iterations, args.jobs
    )
    print(arena.report(results, agents, args.rules, args.seed, time.perf_counter() - began))
    return 0


if __name__ == "__main__":
    sys.exit(main())
