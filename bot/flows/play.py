"""Playing: a press on one's private panel (a move, a tap on a card, the several-card
picker, back and refresh), checked against the game when it arrives."""

from __future__ import annotations

import logging

from durak import Pass, View
from durak.actions import Attack
from durak.cards import Card
from durak.view import PileView

from ..screens.presenter import place
from ..ui import callbacks as cb
from ..ui import keyboards, render
from .context import Answer, FlowContext, Press
from .moves import Move, Played, Refused, Seated

log = logging.getLogger(__name__)


class Play:
    def __init__(self, ctx: FlowContext) -> None:
        self.ctx = ctx
        self.service = ctx.service
        self.presenter = ctx.presenter
        self.outbox = ctx.outbox
        self.langs = ctx.langs
        self.moves = ctx.moves

    async def move(self, press: Press) -> Answer:
        """A button of one's panel: a move, a tap on a card, the picker, back, refresh."""
        user, where, data = press.user, press.where, press.data
        seated = await self.moves.seated(data.game_id, user.id)
        if isinstance(seated, Refused):
            return Answer(render.refusal(seated.code), alert=seated.alert)
        info = seated.info
        current = self.outbox.message_id(user.id, place("panel", info.game_id))
        if current is not None and where is not None and where.message_id != current:
            await self.presenter.panel(info, user.id)
            return Answer(render.refusal("old_panel"))
        move = data.move
        if isinstance(move, cb.Refresh | cb.Back):
            await self.presenter.panel(info, user.id, full=isinstance(move, cb.Refresh))
            return Answer()
        if isinstance(move, Pass | cb.Slot) and data.version is None:
            return Answer(render.refusal("bad_callback"))  # made without the table seen
        game = info.game
        assert game is not None  # a running game has one
        view = game.view(seated.seat)
        # a button edited away before he pressed it: the press and the edit crossed
        crossed = where is not None and where.on_keyboard is False
        if isinstance(move, cb.Pick):
            if not isinstance(view, View) or not keyboards.several_card_openings(view):
                return Answer(render.refusal("cannot_play"))
            if not set(move.cards) <= set(view.hand):
                return Answer(render.refusal("not_in_hand"))
            await self.presenter.picker(info, user.id, view, move.cards)
            return Answer()
        if isinstance(move, cb.Tap):
            options = keyboards.card_actions(view, move.card)
            if not options:
                code = "cannot_play" if view.legal else "not_your_turn"
                if move.card not in view.hand:
                    # face up: a card he has played, pressed again on a panel whose newer
                    # content is on its way (or was on its way when he pressed)
                    code = "stale_version" if face_up(view, move.card) else "not_in_hand"
                return Answer(render.refusal(code))  # a mis-tap: a toast (issue 11)
            several = isinstance(options[0], Attack) and len(options[0].cards) > 1
            if len(options) > 1 or several:  # a pair is confirmed, not played by one tap
                await self.presenter.choice(info, user.id, view, move.card, options)
                return Answer()
            move = options[0]
        assert move is not None
        return await self._play(seated, move, data.version, crossed)

    async def _play(self, seated: Seated, move: Move, seen: int | None, crossed: bool) -> Answer:
        """Apply the move through the one step every move takes (bot/flows/moves.py) and
        show the result. ``seen`` is the version of the table the pressed panel showed,
        if known; ``crossed``: the panel was edited before the press arrived (its newer
        content is on screen)."""
        info, user = seated.info, seated.info.seats[seated.seat].user_id
        played = await self.moves.play(seated, move, seen)
        if isinstance(played, Played):
            return Answer(then=self.moves.shown(played))
        if played.behind:
            # pressed on a panel the game has left behind: look again
            await self.presenter.panel(await self.service.game(info.game_id), user)
            return Answer(render.refusal("stale_version"))
        if played.illegal and (crossed or self.outbox.pending(user, place("panel", info.game_id))):
            # the buttons carry no version: its newer content may still be on its way
            return Answer(render.refusal("stale_version"))
        # Nothing is lost by a move that cannot be made now: a toast, not an alert
        # that has to be closed (issue 11); alerts are for what needs reading.
        return Answer(render.refusal(played.code), alert=played.alert)


def face_up(view: View | PileView, card: Card) -> bool:
    """Whether ``card`` lies face up on the table (or the pile) that ``view`` shows."""
    if isinstance(view, View):
        return any(card in pair for pair in view.table)
    return card in view.pile
