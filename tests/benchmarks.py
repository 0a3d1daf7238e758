"""Every benchmark of BENCHMARKS.md at a tiny size: a crash fails, figures are not judged.

    python -m tests.benchmarks [--no-postgres] [--jobs N]

Runs each command as BENCHMARKS.md gives it, with a few games and seconds
instead of thousands, so that a benchmark nobody ran for a while cannot rot
(``.ci/run`` runs this). The PostgreSQL runs use a throwaway cluster
(``tests/pgcluster.py``); without PostgreSQL they are skipped with the reason,
unless ``CI=true``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.pgcluster import Cluster, unavailable

ROOT = Path(__file__).resolve().parent.parent

ENGINE = [
    ["-m", "durak", "bench", "--games", "20", "--players", "4"],
    ["-m", "durak", "bench", "--games", "5", "--players", "4", "--rules", '{"game": "own_trumps"}'],
    ["-m", "durak", "bench", "--games", "5", "--players", "4", "--rules", '{"game": "piled"}'],
    ["-m", "durak", "bench", "--games", "5", "--players", "4", "--rules", '{"game": "road"}'],
    ["-m", "durak", "arena", "--agents", "hard,greedy", "--games", "2", "--seed", "1",
     "--budget-ms", "20"],
    ["-m", "durak", "arena", "--agents", "hard,greedy,greedy,greedy", "--players", "4",
     "--games", "2", "--seed", "1", "--budget-ms", "20", "--jobs", "2"],
    ["-m", "durak", "arena", "--agents", "normal,random,random", "--games", "2", "--seed", "1",
     "--rules", '{"game": "road"}'],
    ["-m", "durak", "arena", "--agents", "normal,random*2", "--games", "2", "--seed", "1",
     "--rules", '{"english": true}'],
    ["-m", "durak", "selfplay", "--games", "5", "--players", "2-6", "--seed", "1",
     "--rules", '{"transfer": true}', "--out", "records"],  # README's self-play
    ["-m", "tests.bot.bench_render", "--steps", "10"],
    ["-m", "tests.bot.bench_answers", "--asks", "2", "--scale", "0.05"],
    ["-m", "durak.ai.endings", "--games", "1", "--iterations", "2"],
    ["-m", "tests.bot.webapp.bench_webapp", "--games", "2", "--players", "2", "--seconds", "3"],
    ["-m", "tests.bot.webapp.bench_crowds", "--crowd", "80", "--cap", "70", "--seconds", "2"],
    ["-m", "tests.bot.webapp.bench_crowds", "--mode", "pages", "--crowd", "60", "--cap", "70",
     "--seconds", "2"],
    ["-m", "tests.service.bench_ratings", "--games", "5"],
]  # fmt: skip

SERVICE = ["-m", "durak.service.bench"]
SERVICE_SIZE = ["--games", "2", "--players", "2", "--actions", "500"]
BOT = ["-m", "tests.bot.bench_bot", "--games", "2", "--players", "2", "--seconds", "2"]


def commands(pg_url: str | None) -> list[list[str]]:
    runs = list(ENGINE)
    # 2 players, 500 actions: games end and "play again" runs (the crash issue 24 names)
    runs.append([*SERVICE, *SERVICE_SIZE])
    runs.append([*SERVICE, *SERVICE_SIZE, "--parallel"])
    runs.append([*BOT, "--time-scale", "0.05"])
    runs.append([*BOT, "--time-scale", "0.05", "--webhook", "--delay", "0.01"])
    runs.append([*BOT, "--think", "0.2"])
    runs.append([*BOT, "--think", "0.2", "--webapp-share", "0.5"])  # a page and a panel
    # every player on the page, joined from the group's link (issue 35)
    runs.append([*BOT, "--think", "0.2", "--webapp-share", "1.0"])
    # the soak's sampling (RSS, descriptors, tasks) and its tracemalloc report
    runs.append([*BOT, "--seconds", "5", "--sample", "1", "--tracemalloc", "5"])
    if pg_url is not None:
        runs.append([*SERVICE, *SERVICE_SIZE, "--db", pg_url + "service"])
        runs.append([*BOT, "--time-scale", "0.05", "--db", pg_url + "bot"])
        runs.append(
            ["-m", "tests.service.bench_ratings", "--games", "5", "--db", pg_url + "ratings"]
        )
    return runs


def run(pg_url: str | None, jobs: int) -> int:
    """Every command, ``jobs`` at a time (each mostly waits on its bot and sockets), each
    in a folder of its own; a command's output is printed whole when it ends."""
    failed = 0
    with tempfile.TemporaryDirectory(prefix="durak-bench-") as work:

        def one(k: int, args: list[str]) -> tuple[str, int, float]:
            folder = Path(work) / str(k)
            folder.mkdir()
            started = time.monotonic()
            done = subprocess.run(
                [sys.executable, *args],
                cwd=folder,
                check=False,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            return done.stdout, done.returncode, time.monotonic() - started

        runs = commands(pg_url)
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            ends = [pool.submit(one, k, args) for k, args in enumerate(runs)]
            for args, end in zip(runs, ends, strict=True):
                output, code, seconds = end.result()
                shown = " ".join(a if " " not in a else repr(a) for a in args)
                print(f"== python {shown}\n{output}", end="", flush=True)
                if code != 0:
                    failed += 1
                    print(f"   FAILED with exit code {code} ({seconds:.1f} s)", flush=True)
                else:
                    print(f"   ok ({seconds:.1f} s)", flush=True)
    print(f"== benchmarks at a tiny size: {'FAILED ' + str(failed) if failed else 'all ran'}")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks")
    parser.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL runs")
    parser.add_argument(
        "--jobs", type=int, default=3, help="commands at a time (default 3; 1: one by one)"
    )
    args = parser.parse_args(argv)
    if not 1 <= args.jobs <= 16:
        parser.error("--jobs must be 1-16")
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    reason = "--no-postgres" if args.no_postgres else unavailable()
    if reason is not None:
        if os.environ.get("CI") == "true" and not args.no_postgres:
            print(f"CI must run the PostgreSQL benchmarks: {reason}", file=sys.stderr)
            return 1
        print(f"== the PostgreSQL runs are skipped: {reason}", flush=True)
        return run(None, args.jobs)
    from tests.dbaccess import pg_run

    with Cluster() as cluster:
        for name in ("service", "bot", "ratings"):
            pg_run(cluster.url, [(f"CREATE DATABASE bench{name}", ())])
        return run(cluster.url_of("bench"), args.jobs)


if __name__ == "__main__":
    sys.exit(main())
