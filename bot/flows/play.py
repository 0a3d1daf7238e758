"""Playing: a press on one's private panel (a move, a tap on a card, the several-card
picker, back and refresh), checked against the game when it arrives."""

from __future__ import annotations

import logging
from dataclasses import replace

from durak import Pass, View
from durak.actions import Action, Attack
from durak.cards import Card
from durak.service import FINISHED, RUNNING, GameInfo, IllegalMove, StaleVersion
from durak.view import PileView

from ..screens.presenter import place
from ..ui import callbacks as cb
from ..ui import keyboards, render
from ..ui.i18n import _
from .context import Answer, FlowContext, Press

log = logging.getLogger(__name__)


class Play:
    def __init__(self, ctx: FlowContext) -> None:
        self.ctx = ctx
        self.service = ctx.service
        self.presenter = ctx.presenter
        self.outbox = ctx.outbox
        self.langs = ctx.langs

    async def move(self, press: Press) -> Answer:
        """A button of one's panel: a move, a tap on a card, the picker, back, refresh."""
        user, where, data = press.user, press.where, press.data
        info = await self.service.game(data.game_id)
        seat = info.seat_of(user.id)
        if seat is None:
            return Answer(render.refusal("not_in_game"), alert=True)
        if info.status != RUNNING or info.game is None:
            return Answer(render.refusal("game_over"), alert=True)
        if info.seats[seat].left:
            return Answer(_("You left this game: the AI plays your seat."))
        if info.seats[seat].away or info.seats[seat].timeouts:
            was_away = info.seats[seat].away
            await self.service.mark_present(info.game_id, user.id)
            info = await self.service.game(info.game_id)
            if info.status != RUNNING or info.game is None:
                return Answer(render.refusal("game_over"), alert=True)
            if was_away:  # back: the table drops his 🤖 mark, his own clock runs again
                await self.presenter.changed(info)
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
        view = game.view(seat)
        # a button edited away before he pressed it: the press and the edit crossed
        crossed = where is not None and where.on_keyboard is False
        if isinstance(move, cb.Slot):
            return await self._play(
                info, user.id, None, data.version, data.version, crossed, slot_index=move.index
            )
        if isinstance(move, cb.Pick):
            if not isinstance(view, View) or not keyboards.several_card_openings(view):
                return Answer(render.refusal("cannot_play"))
            if not set(move.cards) <= set(view.hand):
                return Answer(render.refusal("not_in_hand"))
            await self.presenter.picker(info, user.id, view, move.cards)
            return Answer()
        action: Action
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
            action = options[0]
        else:
            assert move is not None
            action = move
        # A pass means "I have seen the table and add nothing": only for the table seen.
        return await self._play(
            info,
            user.id,
            action,
            data.version if isinstance(action, Pass) else None,
            data.version,
            crossed,
        )

    async def _play(
        self,
        info: GameInfo,
        user_id: int,
        action: Action | None,
        version: int | None,
        seen: int | None,
        crossed: bool = False,
        slot_index: int | None = None,
    ) -> Answer:
        """Apply the action (or ``blind``'s face-down slot: only for the table seen,
        since the player cannot tell what the slot holds) and show the result.

        ``seen`` is the version of the table the pressed panel showed, if known; ``crossed``:
        the panel was edited before the press arrived (its newer content is on screen)."""
        user = user_id
        try:
            if action is None:
                assert slot_index is not None
                result = await self.service.play_slot(info.game_id, user, slot_index, version)
            else:
                result = await self.service.apply(info.game_id, user, action, version)
        except StaleVersion:
            await self.presenter.panel(await self.service.game(info.game_id), user)
            return Answer(render.refusal("stale_version"))
        except IllegalMove as e:
            behind = seen is not None and seen != info.version
            if behind or crossed or self.outbox.pending(user, place("panel", info.game_id)):
                # pressed on a panel the game has left behind (the buttons carry no
                # version: its newer content may still be on its way): look again
                if behind:
                    await self.presenter.panel(await self.service.game(info.game_id), user)
                return Answer(render.refusal("stale_version"))
            # Nothing is lost by a move that cannot be made now: a toast, not an alert
            # that has to be closed (issue 11); alerts are for what needs reading.
            return Answer(render.refusal(e.code))
        after = replace(
            info,
            version=result.version,
            status=FINISHED if result.finished else RUNNING,
            ending=result.ending,
        )
        return Answer(then=self.presenter.changed(after, result.finished))


def face_up(view: View | PileView, card: Card) -> bool:
    """Whether ``card`` lies face up on the table (or the pile) that ``view`` shows."""
    if isinstance(view, View):
        return any(card in pair for pair in view.table)
    return card in view.pile
