"""The crash test's child: plays random games through the service until killed.

``python -m tests.service.crash_child DB SEED``. It prints one line per change
*after* the service returned, i.e. after the change was committed:

    ready
    start GAME_ID
    act GAME_ID VERSION SEAT STEP_JSON
    surrender GAME_ID SEAT
    cancel GAME_ID

The parent kills it with SIGKILL at a random moment and checks the database
against these acknowledgements.

``python -m tests.service.crash_child --fork`` is the fast way to many kills: it
imports everything once, then for each line ``DB SEED ACKS`` on its stdin forks a
child that runs the above with its stdout in the file ``ACKS`` (stderr in
``ACKS.err``), prints the child's pid, waits for it to die and prints ``dead N``
(N the signal that killed it, -1 if it exited by itself). A fork starts in
milliseconds where a new interpreter takes up to seconds on a busy machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys

from durak.selfplay import random_step
from durak.service import GameInfo, GameService

CHATS = (-1, -2, -3)
PLAYERS = 3


def user(chat: int, k: int) -> int:
    return -chat * 100 + k


async def play_again_all(service: GameService, game_id: int, first: int) -> GameInfo:
    """Play again: ``first`` opens the lobby, every other human confirms (it starts)."""
    info = await service.play_again(game_id, first)
    for seat in info.seats:
        if info.status == "lobby" and not seat.is_ai and not seat.ready:
            info = await service.confirm(info.game_id, seat.user_id)
    return info


def out(*words: object) -> None:
    print(*words, flush=True)


async def seat_and_start(service: GameService, chat: int) -> GameInfo:
    """Start the chat's game, finishing a lobby an earlier kill left half-built."""
    info = await service.active_game(chat)
    if info is not None and info.status == "running":
        return info
    if info is not None and info.again:  # a Play-again lobby: its players confirm
        for seat in info.seats:
            if info.status == "lobby" and not seat.ready:
                info = await service.confirm(info.game_id, seat.user_id)
        if info.status == "running":
            out("start", info.game_id)
            return info
    if info is None:
        info = await service.create_lobby(chat, user(chat, 0), "P0")
    seated = {s.user_id for s in info.seats}
    for k in range(PLAYERS):
        if user(chat, k) not in seated:
            await service.join(chat, user(chat, k), f"P{k}")
    info = await service.start(chat, user(chat, 0))
    out("start", info.game_id)
    return info


async def main(path: str, seed: int) -> None:
    service = await GameService.open(path)
    out("ready")
    rng = random.Random(seed)
    games: dict[int, GameInfo] = {g.chat_id: g for g in await service.running_games()}
    versions = {chat: g.version for chat, g in games.items()}
    finished: dict[int, int] = {}
    while True:
        chat = rng.choice(CHATS)
        info = games.get(chat)
        if info is None:
            if chat in finished and rng.random() < 0.7:
                info = await play_again_all(service, finished[chat], user(chat, 1))
                out("start", info.game_id)
            else:
                info = await seat_and_start(service, chat)
            games[chat], versions[chat] = info, info.version
            continue
        roll = rng.random()
        if roll < 0.002:
            seat = rng.randrange(PLAYERS)
            await service.surrender(info.game_id, info.seats[seat].user_id)
            out("surrender", info.game_id, seat)
            finished[chat] = info.game_id
            del games[chat]
            continue
        if roll < 0.003:
            await service.cancel(chat, user(chat, 0), is_admin=True)
            out("cancel", info.game_id)
            del games[chat]
            # Play again on the game before would return the cancelled one
            finished.pop(chat, None)
            continue
        assert info.game is not None
        seat, action = random_step(info.game, rng)
        result = await service.apply(info.game_id, info.seats[seat].user_id, action, versions[chat])
        versions[chat] = result.version
        out(
            "act",
            info.game_id,
            result.version,
            seat,
            json.dumps(action.step(), separators=(",", ":")),
        )
        if result.finished:
            finished[chat] = info.game_id
            del games[chat]


def serve_forks() -> None:
    """Fork one child per request line (see the module's docstring)."""
    for line in sys.stdin:
        db, seed, acks = line.split()
        pid = os.fork()
        if pid == 0:  # the child: never returns into the loop above
            try:
                flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                os.dup2(os.open(acks, flags), 1)
                os.dup2(os.open(acks + ".err", flags), 2)
                asyncio.run(main(db, int(seed)))
            finally:
                os._exit(1)
        print(pid, flush=True)
        _, status = os.waitpid(pid, 0)
        print("dead", os.WTERMSIG(status) if os.WIFSIGNALED(status) else -1, flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--fork"]:
        serve_forks()
    else:
        asyncio.run(main(sys.argv[1], int(sys.argv[2])))
