"""The bot's lease (durak/store/lease.py): one holder at a time, handed over when the
holder goes, and a holder that loses its connection hears of it at once."""

from __future__ import annotations

import asyncio
import random
import time

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
            holder.fence()
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
        assert holder._watch is not None
        holder._watch.cancel()  # as a stuck loop: no more heartbeats, the socket stays open
        await asyncio.wait_for(standby.acquire(on_lost=lost.append), 10)
        assert standby.held
        with pytest.raises(LeaseLost):
            holder.fence()
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
        lease.fence()
        assert lease._watch is not None
        lease._watch.cancel()
        time.sleep(0.45)  # the whole process stands still, as under SIGSTOP
        with pytest.raises(LeaseLost):
            lease.fence()
        assert len(lost) == 1 and "no heartbeat answered" in lost[0]
        with pytest.raises(LeaseLost):
            lease.fence()  # and refuses every time after
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

            def fence() -> None:
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
