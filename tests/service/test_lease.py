"""The bot's lease (durak/store/lease.py): one holder at a time, handed over when the
holder goes, and a holder that loses its connection hears of it at once."""

from __future__ import annotations

import asyncio
import random
import time

import asyncpg
import pytest

from durak.service import GameService
from durak.store.lease import Lease, LeaseLost
from tests.dbaccess import db_rows
from tests.service.helpers import started, step


def test_one_holder_and_the_standby_takes_over(pg_db: str) -> None:
    async def main() -> None:
        first, second = Lease(pg_db, retry=0.05), Lease(pg_db, retry=0.05)
        lost: list[str] = []
        waited = asyncio.Event()
        await first.acquire(on_lost=lost.append)
        waiting = asyncio.create_task(second.acquire(on_lost=lost.append, on_wait=waited.set))
        await asyncio.wait_for(waited.wait(), 10)
        await asyncio.sleep(0.3)  # many tries, none may succeed
        assert not waiting.done() and first.held and not second.held
        await first.release()
        await asyncio.wait_for(waiting, 10)
        assert second.held and not first.held
        await second.release()
        assert lost == []  # a release is not a loss

    asyncio.run(main())


def test_a_dropped_connection_loses_the_lease_and_frees_it(pg_db: str) -> None:
    """The server ends the holder's session (as when the holder's machine is cut off and
    its keepalives fail): the holder is told, and the standby gets the lease."""

    async def main() -> None:
        holder, standby = Lease(pg_db, retry=0.05), Lease(pg_db, retry=0.05)
        lost: list[str] = []
        await holder.acquire(on_lost=lost.append)
        waiting = asyncio.create_task(standby.acquire(on_lost=lost.append))
        await asyncio.sleep(0.2)
        assert not waiting.done()
        db_rows(
            pg_db,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = 'durak lease' AND pid IN"
            " (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted)",
        )
        await asyncio.wait_for(waiting, 10)
        for _ in range(100):  # the heartbeat or the termination listener, whichever first
            if lost:
                break
            await asyncio.sleep(0.05)
        assert len(lost) == 1 and not holder.held and standby.held
        await holder.release()
        await standby.release()

    asyncio.run(main())


def test_a_silent_server_loses_the_lease(pg_db: str) -> None:
    """A heartbeat that is not answered in time (a server that hangs, a network that
    drops packets) loses the lease too, without waiting for the socket to close."""

    async def main() -> None:
        lease = Lease(pg_db, heartbeat=0.05, timeout=0.2)
        lost: list[str] = []
        await lease.acquire(on_lost=lost.append)
        lease.heartbeat_sql = "SELECT pg_sleep(30)"  # the server takes its time
        for _ in range(100):
            if lost:
                break
            await asyncio.sleep(0.05)
        assert lost and "heartbeat" in lost[0] and not lease.held
        await lease.release()

    asyncio.run(main())


def test_a_live_holder_is_never_replaced(pg_db: str) -> None:
    """A holder that beats keeps the lease however long a standby waits (several times
    ``stale``), and its fence never trips."""

    async def main() -> None:
        holder = Lease(pg_db, retry=0.05, heartbeat=0.1, stale=0.6)
        standby = Lease(pg_db, retry=0.05, heartbeat=0.1, stale=0.6)
        lost: list[str] = []
        await holder.acquire(on_lost=lost.append)
        waiting = asyncio.create_task(standby.acquire(on_lost=lost.append))
        for _ in range(40):
            await asyncio.sleep(0.05)
            await holder.fence()
        assert not waiting.done() and holder.held and lost == []
        waiting.cancel()
        await holder.release()

    asyncio.run(main())


def test_a_stuck_holder_is_replaced_and_its_fence_trips(pg_db: str) -> None:
    """A holder whose heartbeats stop (its event loop stuck, its process frozen) keeps its
    socket and so its lock; the standby ends its session once the last heartbeat is older
    than ``stale`` and takes over, and the old holder may send nothing more."""

    async def main() -> None:
        holder = Lease(pg_db, retry=0.05, heartbeat=0.1, stale=0.6)
        standby = Lease(pg_db, retry=0.05, heartbeat=0.1, stale=0.6)
        lost: list[str] = []
        await holder.acquire(on_lost=lost.append)
        for task in holder._tasks:
            task.cancel()  # as a stuck loop: no more heartbeats, the socket stays open
        await asyncio.wait_for(standby.acquire(on_lost=lost.append), 10)
        assert standby.held
        with pytest.raises(LeaseLost):
            await holder.fence()
        assert len(lost) == 1 and not holder.held
        await holder.release()
        await standby.release()

    asyncio.run(main())


def test_the_fence_refuses_once_a_heartbeat_is_overdue(pg_db: str) -> None:
    """No standby needed: the holder's own fence refuses as soon as its last answered
    heartbeat was sent more than ``stale - heartbeat`` seconds ago (a freeze counts)."""

    async def main() -> None:
        lease = Lease(pg_db, heartbeat=0.1, stale=0.5)
        lost: list[str] = []
        await lease.acquire(on_lost=lost.append)
        await lease.fence()
        for task in lease._tasks:
            task.cancel()
        time.sleep(0.45)  # the whole process stands still, as under SIGSTOP
        with pytest.raises(LeaseLost):
            await lease.fence()
        assert len(lost) == 1 and "no heartbeat answered" in lost[0]
        with pytest.raises(LeaseLost):
            await lease.fence()  # and refuses every time after
        assert len(lost) == 1
        await lease.release()

    asyncio.run(main())


def test_a_process_whose_lease_may_be_gone_writes_nothing(pg_db: str) -> None:
    """The fence guards the database's writes too: a thawed process's turn clock must
    not play a move the new holder does not know of."""

    async def main() -> None:
        service = await GameService.open(pg_db)
        try:
            refused = False

            async def fence() -> None:
                if refused:
                    raise LeaseLost("gone")

            service.fence_writes(fence)
            info = await started(service, 2)
            game = info.game
            assert game is not None
            refused = True
            with pytest.raises(LeaseLost):  # a transaction
                await service.leave(info.chat_id, info.seats[0].user_id)
            with pytest.raises(LeaseLost):  # a hot write (an action)
                await step(service, info, random.Random(1), info.version)
            assert (await service.game(info.game_id)).version == info.version
        finally:
            await service.close()
        rows = db_rows(pg_db, "SELECT version FROM games WHERE game_id = ?", (info.game_id,))
        assert rows == [(info.version,)]

    asyncio.run(main())


class PausedVM:
    """The clocks of a machine its host can pause: real time, plus what each clock
    (monotonic, boot, wall) was told of the pauses. A hypervisor may leave the monotonic
    clock standing through a pause and set the wall clock right after it."""

    def __init__(self) -> None:
        self.counted = [0.0, 0.0, 0.0]

    def read(self) -> tuple[float, float, float]:
        now = time.monotonic(), time.clock_gettime(time.CLOCK_BOOTTIME), time.time()
        return now[0] + self.counted[0], now[1] + self.counted[1], now[2] + self.counted[2]

    def pause(self, seconds: float, *, by: tuple[str, ...]) -> None:
        for k, name in enumerate(("monotonic", "boot", "wall")):
            if name in by:
                self.counted[k] += seconds


HOLD = (36, 2)  # advisory locks the test holds to keep a heartbeat waiting
THEN = (36, 3)


async def waiting_on(conn: asyncpg.Connection) -> int | None:
    """The advisory lock (its second key) the lease's session waits for, if any."""
    found: int | None = await conn.fetchval(
        "SELECT l.objid::int FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE a.application_name = 'durak lease' AND l.locktype = 'advisory'"
        " AND NOT l.granted"
    )
    return found


async def until_waiting_on(conn: asyncpg.Connection, lock: tuple[int, int]) -> None:
    for _ in range(1000):  # a hang guard: the heartbeat takes the lock within a beat
        if await waiting_on(conn) == lock[1]:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"no heartbeat waited on the lock {lock}")


def test_after_a_pause_only_a_heartbeat_sent_after_it_opens_the_fence(pg_db: str) -> None:
    """Issue 36 item 2, a paused VM: the monotonic clock did not count the 3 s pause,
    the wall clock did. The fence holds every send back until a heartbeat sent after the
    pause is answered; one sent before it and answered after it proves nothing."""

    async def main() -> None:
        vm = PausedVM()
        lease = Lease(pg_db, heartbeat=0.1, timeout=60.0)  # a heartbeat may wait: the test's
        lease.clocks = vm.read
        lost: list[str] = []
        await lease.acquire(on_lost=lost.append)
        test = await asyncpg.connect(pg_db)
        try:
            await test.execute("SELECT pg_advisory_lock($1, $2)", *HOLD)
            await test.execute("SELECT pg_advisory_lock($1, $2)", *THEN)
            lease.heartbeat_sql = f"SELECT pg_advisory_xact_lock{HOLD}"
            await until_waiting_on(test, HOLD)  # a heartbeat sent before the pause waits
            await lease.fence()  # no pause yet: nothing to wait for

            vm.pause(3.0, by=("wall",))
            fenced = asyncio.create_task(lease.fence())
            lease.heartbeat_sql = f"SELECT pg_advisory_xact_lock{THEN}"
            await test.execute("SELECT pg_advisory_unlock($1, $2)", *HOLD)
            await until_waiting_on(test, THEN)  # the one from before is answered; the next waits
            assert not fenced.done(), "a heartbeat sent before the pause opened the fence"

            await test.execute("SELECT pg_advisory_unlock($1, $2)", *THEN)
            await asyncio.wait_for(fenced, 30)  # a hang guard: answered, the fence opens
            assert lost == [] and lease.held
        finally:
            await test.close()
            await lease.release()

    asyncio.run(main())


def test_a_pause_whose_heartbeat_goes_unanswered_loses_the_lease(pg_db: str) -> None:
    """The same pause, and the server does not answer the heartbeat that follows it
    (its session is gone, or the network): the waiting fence refuses, the lease is lost."""

    async def main() -> None:
        vm = PausedVM()
        lease = Lease(pg_db, heartbeat=0.1, timeout=0.5)
        lease.clocks = vm.read
        lost: list[str] = []
        await lease.acquire(on_lost=lost.append)
        try:
            lease.heartbeat_sql = "SELECT pg_sleep(30)"
            vm.pause(3.0, by=("wall",))
            with pytest.raises(LeaseLost):
                await lease.fence()
            assert len(lost) == 1 and "not answered within 0.5 s" in lost[0], lost
        finally:
            await lease.release()

    asyncio.run(main())


def test_the_fence_sees_a_closed_session_before_the_loop_does(pg_db: str) -> None:
    """The server ends the lease's session while the process is stopped (here: its
    event loop does not run in between): the fence, called first on waking, peeks at
    the socket and refuses, naming the real cause."""

    async def main() -> None:
        lease = Lease(pg_db, heartbeat=10.0, stale=20.0)
        lost: list[str] = []
        await lease.acquire(on_lost=lost.append)
        try:
            # on a thread of its own: this loop does not run meanwhile
            lease_session = "FROM pg_stat_activity WHERE application_name = 'durak lease'"
            db_rows(pg_db, f"SELECT pg_terminate_backend(pid) {lease_session}")
            for _ in range(3000):  # a hang guard; once the session is gone its goodbye
                if db_rows(pg_db, f"SELECT count(*) {lease_session}") == [(0,)]:
                    break  # is in the socket, unread by the loop
                time.sleep(0.01)
            with pytest.raises(LeaseLost):
                await lease.fence()
            assert lost == [
                'its connection closed, the server saying "terminating connection due to'
                ' administrator command"'
            ]
        finally:
            await lease.release()

    asyncio.run(main())
