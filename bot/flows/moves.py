"""One move, one way: a press on one's private panel and a move on the Mini App's page go
through this one step: the same checks of the seat (in the game, the game running, not
left; an away seat is back), the same service call with the same version fence, the same
refusal codes, and the same showing of the move afterwards. Flows and the Mini App's
bridge import it; it imports no flow."""

from __future__ import annotations

from collections.abc import Coroutine
from dataclasses import dataclass, replace
from typing import Any

from durak import Pass
from durak.actions import Action
from durak.service import (
    FINISHED,
    RUNNING,
    GameInfo,
    GameService,
    IllegalMove,
    ServiceError,
    StaleVersion,
)

from ..screens.presenter import Presenter
from ..ui import callbacks as cb

__all__ = ["Moves", "Played", "Refused", "Seated"]

#: What a player may ask to play: an engine action, or ``blind``'s face-down slot.
Move = Action | cb.Slot


@dataclass(frozen=True, slots=True)
class Refused:
    """A move that is not made. ``code`` is a refusal code (``render.refusal`` says it);
    ``alert``: the move cannot be made at all (not his game, the game over); ``behind``:
    it was made for a table the game has left behind, so the player should look again;
    ``illegal``: the game refused it (the engine's code)."""

    code: str
    alert: bool = False
    behind: bool = False
    illegal: bool = False


@dataclass(frozen=True, slots=True)
class Seated:
    """A player whose move may be tried: his game (running) and his seat in it."""

    info: GameInfo
    seat: int


@dataclass(frozen=True, slots=True)
class Played:
    """A move made: the game after it (``finished``: it ended the game)."""

    after: GameInfo
    finished: bool


class Moves:
    def __init__(self, service: GameService, presenter: Presenter) -> None:
        self.service = service
        self.presenter = presenter

    async def seated(self, game_id: int, user_id: int) -> Seated | Refused:
        """The checks every move passes first: he sits in the game, it runs, he has not
        left it. A seat the AI played while he was away (or whose clock ran out) is his
        again from this press on: the table drops his 🤖 mark, his own clock runs."""
        info = await self.service.game(game_id)
        seat = info.seat_of(user_id)
        if seat is None:
            return Refused("not_in_game", alert=True)
        if info.status != RUNNING or info.game is None:
            return Refused("game_over", alert=True)
        if info.seats[seat].left:
            return Refused("left_game")
        if info.seats[seat].away or info.seats[seat].timeouts:
            was_away = info.seats[seat].away
            await self.service.mark_present(info.game_id, user_id)
            info = await self.service.game(info.game_id)
            if info.status != RUNNING or info.game is None:
                return Refused("game_over", alert=True)
            if was_away:
                await self.presenter.changed(info)
        return Seated(info, seat)

    async def play(self, seated: Seated, move: Move, seen: int | None) -> Played | Refused:
        """Apply ``move`` for the seated player. ``seen``: the version of the table he
        saw, if known. It fences a pass ("I have seen the table and add nothing") and a
        face-down slot (he cannot tell what it holds): both only for the table seen. Any
        other move is checked against the game as it is when it arrives, so a move made
        while the table changed under it still counts if it is still legal."""
        info = seated.info
        user_id = info.seats[seated.seat].user_id
        fence = seen if isinstance(move, Pass | cb.Slot) else None
        try:
            if isinstance(move, cb.Slot):
                result = await self.service.play_slot(info.game_id, user_id, move.index, fence)
            else:
                result = await self.service.apply(info.game_id, user_id, move, fence)
        except StaleVersion:
            return Refused("stale_version", behind=True)
        except IllegalMove as e:
            if seen is not None and seen != info.version:
                return Refused("stale_version", behind=True, illegal=True)
            return Refused(e.code, illegal=True)
        except ServiceError as e:
            return Refused(e.code, alert=True)
        after = replace(
            info,
            version=result.version,
            status=FINISHED if result.finished else RUNNING,
            ending=result.ending,
        )
        return Played(after, result.finished)

    def shown(self, played: Played) -> Coroutine[Any, Any, None]:
        """Showing the move everywhere: the group's table, the panels, the pages."""
        return self.presenter.changed(played.after, played.finished)
