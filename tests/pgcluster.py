"""A throwaway PostgreSQL cluster for tests and benchmarks.

``initdb`` and ``pg_ctl`` run as an unprivileged OS user (the server refuses to
run as root): the current user when it is not root, else ``postgres`` (Debian's
package creates it) or a system user ``durak-pg`` made with ``useradd``. The
cluster lives in a fresh temporary folder, listens on 127.0.0.1 and a free
port, trusts local connections, and is stopped and deleted by :meth:`stop`.

    python -m tests.pgcluster [--durable]   # start one, print its URL, stop on Ctrl-C

Binaries are looked up in ``$DURAK_PG_BIN``, on ``PATH`` (``pg_ctl``), then in
``/usr/lib/postgresql/*/bin`` (newest first). :func:`unavailable` says why none
can be used; tests skip with that reason, or fail when ``CI=true``.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUPERUSER = "durak"
#: For tests: nothing they check survives a server crash, so skip the fsyncs.
FAST = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")


def find_bin() -> Path | None:
    """The folder of ``initdb``/``pg_ctl``/``postgres``, or ``None``."""
    candidates = []
    if os.environ.get("DURAK_PG_BIN"):
        candidates.append(os.environ["DURAK_PG_BIN"])
    found = shutil.which("pg_ctl")
    if found:
        candidates.append(os.path.dirname(found))

    def major(folder: str) -> int:
        name = Path(folder).parent.name
        return int(name) if name.isdigit() else 0

    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=major, reverse=True)
    for folder in candidates:
        if all(os.access(os.path.join(folder, b), os.X_OK) for b in ("initdb", "pg_ctl")):
            return Path(folder)
    return None


def unavailable() -> str | None:
    """Why no cluster can be started here, or ``None`` if one can."""
    if find_bin() is None:
        return (
            "PostgreSQL is not installed (no initdb/pg_ctl on PATH, in $DURAK_PG_BIN or"
            " /usr/lib/postgresql/*/bin); apt-get install postgresql"
        )
    try:
        import asyncpg  # noqa: F401
    except ImportError:
        return "the asyncpg package is not installed"
    if os.geteuid() == 0 and not (_user_exists("postgres") or shutil.which("useradd")):
        return "running as root with no unprivileged user for the server (no useradd)"
    return None


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _os_user() -> str | None:
    """The user to run the server as; ``None`` means the current (non-root) user."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "durak-pg"):
        if _user_exists(name):
            return name
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "durak-pg"],
        check=True,
    )
    return "durak-pg"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """One running cluster. ``url`` connects as the superuser to ``postgres``."""

    def __init__(self, *, durable: bool = False, settings: tuple[str, ...] = ()) -> None:
        bin_dir = find_bin()
        if bin_dir is None:
            raise RuntimeError(unavailable() or "no PostgreSQL")
        self.bin = bin_dir
        self.user = _os_user()
        self.folder = Path(tempfile.mkdtemp(prefix="durak-pg-"))
        self.data = self.folder / "data"
        self.port = 0
        self.settings = settings if durable else FAST + settings
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
        try:
            self._run(
                "initdb",
                "-D",
                str(self.data),
                "-U",
                SUPERUSER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-instructions",
            )
            self._start()
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        return self.url_of("postgres")

    def url_of(self, database: str) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def _run(self, program: str, *args: str, timeout: float = 120) -> str:
        command = [str(self.bin / program), *args]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        done = subprocess.run(
            command,
            cwd=self.folder,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            output = done.stderr or done.stdout
            raise RuntimeError(f"{program} failed ({done.returncode}): {output}")
        return done.stdout

    def _start(self) -> None:
        """Start on a free port; another process may take the port first, so retry."""
        for _ in range(5):
            self.port = free_port()
            options = " ".join(
                [
                    "-c listen_addresses=127.0.0.1",
                    f"-c port={self.port}",
                    f"-c unix_socket_directories={self.folder}",
                    "-c max_connections=200",
                    *(f"-c {s}" for s in self.settings),
                ]
            )
            try:
                self._run(
                    "pg_ctl",
                    "-D",
                    str(self.data),
                    "-l",
                    str(self.folder / "server.log"),
                    "-o",
                    options,
                    "-w",
                    "-t",
                    "60",
                    "start",
                )
                return
            except RuntimeError as e:
                log = self.log()
                if "could not bind" not in log and "already in use" not in log:
                    raise RuntimeError(
                        f"the PostgreSQL server did not start:\n{log[-2000:]}"
                    ) from e
        raise RuntimeError("no free port for PostgreSQL")

    def log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.folder / "server.log").read_text(errors="replace")
        return ""

    def pid(self) -> int | None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int((self.data / "postmaster.pid").read_text().split()[0])
        return None

    def stop(self) -> None:
        """Stop the server at once and delete its folder."""
        if (self.data / "postmaster.pid").exists():
            try:
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
            except (RuntimeError, subprocess.TimeoutExpired):
                pid = self.pid()
                if pid is not None:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.pgcluster", description=__doc__)
    parser.add_argument(
        "--durable",
        action="store_true",
        help="PostgreSQL's default durability (fsync, synchronous_commit): for benchmarks",
    )
    parser.add_argument("-c", dest="settings", action="append", default=[], help="NAME=VALUE")
    args = parser.parse_args(argv)
    reason = unavailable()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    with Cluster(durable=args.durable, settings=tuple(args.settings)) as cluster:
        print(cluster.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
            while True:
                time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main())
