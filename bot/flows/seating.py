"""A lobby's change shown, one way for the group's buttons and the Mini App's page: the
lobby again (its message and its pages), or the game it became (dealt: the lobby says
who plays, the table, the panels and the pages show the game). Flows and the Mini App's
bridge import it; it imports no flow."""

from __future__ import annotations

from durak.service import LOBBY, GameInfo

from ..screens.presenter import Presenter
from ..ui import render
from ..ui.i18n import N_

__all__ = ["Seating"]


class Seating:
    def __init__(self, presenter: Presenter) -> None:
        self.presenter = presenter

    async def shown(self, info: GameInfo, note: str = "") -> None:
        """After a lobby changed: own trumps' suit choice, the lobby (``note``: why it
        closed, a message id), or the game it was dealt as."""
        if info.status == LOBBY and info.suit_choice is not None:
            await self.presenter.changed(info)
        elif info.status == LOBBY or info.game is None:
            await self.presenter.lobby(info, note=note)
        else:
            await self.dealt(info)

    async def dealt(self, info: GameInfo) -> None:
        """A lobby became a game: the lobby says who plays, the table and panels appear."""
        names = ", ".join(render.player(s) for s in info.seats)
        await self.presenter.lobby(info, note=N_("The game started: {names}."), names=names)
        await self.presenter.changed(info)
