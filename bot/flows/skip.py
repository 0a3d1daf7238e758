"""``/skip``: the group hands an absent player's seat to the AI (issue 11).

A player the game waits on who does not answer costs everyone his turn timer; the
other humans at the table may vote him away before it runs out. A majority of them
(more than half of the other human seats) hands his seat to the AI, exactly as two
timeouts in a row do: the table marks him 🤖 away and he gets his seat back by
pressing any button of his panel.

It is no weapon against a player (issue 26 item 3): a vote counts only once the
game has waited on him for half his turn time (a minute without a turn limit), and
with two humans at the table, where "the majority of the others" is his opponent
alone, /skip hands no seat over: the timer does, or his own /leave.

Votes are kept in memory and count for one state of the game (RULES-NOTES.md): a
vote is about the wait the voter sees, and any move (his, or the clock's) ends it.

A member's /skip is answered as the other commands are, once a minute (issue 36: forty
/skip cost the group forty replies at its pace of one every 3 s): a refusal once a
minute, whichever it is; a vote once per state of the game and seat. So the member told
"too early" is answered again when his vote can count.
"""

from __future__ import annotations

import logging
import math

from telegram import Update

from durak.service import DEFAULT_TURN_TIMEOUT, RUNNING, GameInfo, ServiceError

from ..transport import topics
from ..ui import callbacks as cb
from ..ui import keyboards, render
from ..ui.i18n import _, n_
from .context import Answer, Context, FlowContext, Press

log = logging.getLogger(__name__)

#: A vote counts once the game has waited on the seat this share of its turn time.
WAITED_SHARE = 0.5
#: ... or, in a game without a turn limit, this many seconds.
WAITED_NO_LIMIT = float(DEFAULT_TURN_TIMEOUT)


def candidates(info: GameInfo) -> list[int]:
    """The seats /skip may hand to the AI now: people the game waits on, not away."""
    game = info.game
    if info.status != RUNNING or game is None or game.result is not None:
        return []
    return [s for s in game.actors() if not info.seats[s].is_ai and not info.seats[s].away]


def humans(info: GameInfo) -> int:
    """People still at the table (not AI seats, not those who /leave'd theirs)."""
    return sum(1 for s in info.seats if not s.is_ai and not s.left)


def needed(info: GameInfo, target: int) -> int:
    """Votes that hand ``target``'s seat over: a majority of the other humans."""
    others = sum(1 for s in info.seats if not s.is_ai and s.seat != target)
    return others // 2 + 1


def wait_needed(turn_timeout: int | None) -> float:
    """Seconds the game must have waited on a seat before a vote against it counts."""
    return WAITED_NO_LIMIT if turn_timeout is None else turn_timeout * WAITED_SHARE


class Skips:
    def __init__(self, ctx: FlowContext) -> None:
        self.ctx = ctx
        self.service = ctx.service
        #: game -> (the state version the votes are for, target seat -> voters' user ids)
        self._votes: dict[int, tuple[int, dict[int, set[int]]]] = {}

    async def command(self, update: Update, context: Context) -> None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None or not self.ctx.in_group(update):
            return

        def refuse(text: str) -> None:
            if not self.ctx.repeated(chat.id, user.id, ("skip", "refused")):
                self.ctx.reply(chat.id, text)

        info = await self.service.active_game(chat.id, topics.here())
        if info is None or info.status != RUNNING:
            refuse(_("/skip works during a game, for a player it waits on."))
            return
        voter = info.seat_of(user.id)
        if voter is None or info.seats[voter].is_ai:
            refuse(_("Only the players of this game may vote to skip."))
            return
        waited = candidates(info)
        targets = [s for s in waited if s != voter]
        if not targets:
            refuse(
                _("It is your own turn: you cannot skip yourself.")
                if voter in waited
                else _("The game waits on nobody who could be skipped.")
            )
            return
        state = ("skip", info.game_id, info.version)
        if len(targets) == 1:
            too_soon = await self._too_soon(info, targets[0])
            if too_soon is not None:
                refuse(too_soon)
            elif not self.ctx.repeated(chat.id, user.id, (*state, targets[0])):
                self.ctx.reply(chat.id, await self._count(info, voter, targets[0]))
            return
        if self.ctx.repeated(chat.id, user.id, state):
            return
        rows = [
            [
                keyboards.button(
                    render.player(info.seats[s]),
                    callback_data=cb.skip(info.game_id, info.version, s),
                )
            ]
            for s in targets
        ]
        self.ctx.reply(
            chat.id, _("Whose seat should the AI play?"), keyboards.markup(rows), info.thread_id
        )

    async def button(self, press: Press) -> Answer:
        """A name button of /skip's question (hostile input: every field is checked)."""
        chat_id, user_id, data = press.chat.id, press.user.id, press.data
        try:
            info = await self.service.game(data.game_id)
        except ServiceError:
            return Answer(render.refusal("bad_callback"), alert=True)
        target = data.choice
        if info.chat_id != chat_id or target is None or not 0 <= target < len(info.seats):
            return Answer(render.refusal("bad_callback"), alert=True)
        voter = info.seat_of(user_id)
        if voter is None or info.seats[voter].is_ai:
            return Answer(_("Only the players of this game may vote to skip."))
        if target == voter:
            return Answer(_("It is your own turn: you cannot skip yourself."))
        if data.version != info.version or target not in candidates(info):
            return Answer(_("The game has moved on: this vote is over."))
        return Answer(await self._vote(info, voter, target))

    async def _too_soon(self, info: GameInfo, target: int) -> str | None:
        """Why no vote against ``target`` counts now: two humans at the table, or the
        game has not waited on him long enough yet."""
        name = render.player(info.seats[target])
        if humans(info) <= 2:
            return _(
                "With two players /skip hands over no seat: the turn timer does"
                " (or the player's own /leave)."
            )
        timers = self.ctx.presenter.timers
        waited = timers.waited(info.game_id, info.version) if timers is not None else None
        need = wait_needed((await self.service.chat_settings(info.chat_id)).turn_timeout)
        if waited is not None and waited >= need:
            return None
        wait = max(1, math.ceil(need - (waited or 0.0)))
        return n_(
            "Too early to skip {name}: a vote counts once the game has waited on him"
            " {seconds} second longer.",
            "Too early to skip {name}: a vote counts once the game has waited on him"
            " {seconds} seconds longer.",
            wait,
        ).format(name=name, seconds=wait)

    async def _vote(self, info: GameInfo, voter: int, target: int) -> str:
        refused = await self._too_soon(info, target)
        if refused is not None:
            return refused
        return await self._count(info, voter, target)

    async def _count(self, info: GameInfo, voter: int, target: int) -> str:
        """The vote counted (the wait is long enough): its answer, or the seat handed over."""
        version, votes = self._votes.get(info.game_id, (info.version, {}))
        if version != info.version:  # a move ended the wait the older votes were for
            votes = {}
        voters = votes.setdefault(target, set())
        voters.add(info.seats[voter].user_id)
        self._votes[info.game_id] = (info.version, votes)
        name = render.player(info.seats[target])
        need = needed(info, target)
        if len(voters) < need:
            return _("{name}: {votes} of {needed} votes to hand the seat to the AI.").format(
                name=name, votes=len(voters), needed=need
            )
        self._votes.pop(info.game_id, None)
        try:
            await self.service.hand_to_ai(info.game_id, target)
        except ServiceError as e:
            return render.refusal(e.code)
        await self.ctx.presenter.changed(await self.service.game(info.game_id))
        return _("The AI plays for {name} until a button of his is pressed.").format(name=name)

    def forget(self, game_id: int) -> None:
        self._votes.pop(game_id, None)
