"""Puts games on screen: the lobby and table messages in the group, one private
panel per player, the end-of-game message. Everything goes through the outbox,
which paces and coalesces; this module only decides *what* each message says.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

from telegram import Bot
from telegram.error import TelegramError

from durak import Game, View
from durak.actions import Action
from durak.cards import Card
from durak.service import (
    FINISHED,
    LOBBY,
    PLAYED,
    RUNNING,
    GameInfo,
    GameService,
    ServiceError,
    Tally,
)
from durak.view import PileView

from .. import clock as clocks
from ..seats.timers import Changed, Show, TurnTimers
from ..transport.outbox import ANSWER, Outbox
from ..ui import callbacks as cb
from ..ui import events, keyboards, ratings_text, render
from ..ui.i18n import _, language
from . import pace
from .languages import Languages

log = logging.getLogger(__name__)

# Outbox priorities: the player the game waits for first, then the group table.
PRIORITY_ACTOR, PRIORITY_GROUP, PRIORITY_PANEL = 3, 2, 0


class Live(Protocol):
    """The Mini App's pages (``bot.webapp``): told of every change of a game or a lobby,
    and asked whether a player has the game open there (then his private panel is not
    edited per move; with everyone's open, the group's table goes at a spectator's pace)."""

    def push(self, info: GameInfo, game: Game, table: render.Table) -> None: ...

    def lobby(
        self, info: GameInfo, title: str, note: str = "", fields: dict[str, str] | None = None
    ) -> None: ...

    def watching(self, user_id: int, game_id: int) -> bool: ...

    def moved(self, old: int, new: int) -> None: ...


#: How the presenter's turn clock is made, given what the clock calls when a turn is
#: decided for a player (``changed``) and when the time shown must be redrawn (``show``).
Clock = Callable[[Changed, Show], TurnTimers]


def place(kind: str, game_id: int) -> str:
    """The outbox's name of a game's message place: ``lobby``, ``table``, ``panel``..."""
    return f"{kind}:{game_id}"


def parse_place(text: str) -> tuple[str, int] | None:
    kind, _sep, game = text.partition(":")
    if kind in ("lobby", "table", "panel") and game.isdigit():
        return kind, int(game)
    return None


class Titles:
    """Group titles for panel headers, learnt from updates (asked once after a restart)."""

    def __init__(self, bot: Bot) -> None:
        self._bot = bot
        self._titles: dict[int, str] = {}

    def note(self, chat_id: int, title: str | None) -> None:
        if title:
            self._titles[chat_id] = title

    async def get(self, chat_id: int) -> str:
        title = self._titles.get(chat_id)
        if title is None:
            try:
                title = (await self._bot.get_chat(chat_id)).title or ""
            except TelegramError:
                title = ""
            self._titles[chat_id] = title
        return self._titles[chat_id] or _("your group")  # in the reader's language


def role(view: View | PileView, seat: int) -> str | None:
    """What the game waits for from this seat (from the public view): ``open``,
    ``defend`` or ``throw`` (throw in or pass; ``blind``: the defender's answer is
    ``defend``), a pile game's ``lead`` or ``answer``; ``None`` when it does not wait
    on him. Each is a wait that deserves a notification (issue 11)."""
    if view.outcome is not None:
        return None
    if isinstance(view, PileView):
        return view.phase if view.turn == seat else None
    if seat not in view.waiting_for:
        return None
    if not view.table and seat == view.attacker:
        return "open"
    if seat == view.defender:
        return "defend"
    return "throw"


def acting(view: View | PileView, seat: int) -> bool:
    """Whether his panel shows the table: the game waits on him, or he may act now."""
    if view.outcome is not None:
        return False
    if isinstance(view, PileView) and view.turn == seat:
        return True
    return seat in view.waiting_for or bool(view.legal)


def panel_key(view: View | PileView, seat: int, left: int | None) -> tuple[object, ...]:
    """What this seat's panel shows, as a value: the panel is edited only when it
    changes (issue 12). A player who must act sees the table (the state's version and
    the clock's mark); any other sees his hand and his place in the game."""
    if view.outcome is not None:
        return ("over",)
    if acting(view, seat):
        return ("act", view.moves, None if left is None else render.time_left(left))
    position: tuple[object, ...] = ()
    if isinstance(view, View):
        position = (view.attacker == seat, view.defender == seat, view.slots, view.shown_hands)
    return ("wait", view.hand, view.seats[seat].out, position)


def bout_of(view: View) -> tuple[object, ...]:
    """Constant within a bout: who attacks whom, the stock and the discard (a bout
    draws and discards only at its end)."""
    return (view.attacker, view.defender, view.stock, view.discard)


def _table_content(
    lang: str,
    table: render.Table,
    game: Game,
    username: str,
    over: bool,
    app: str | None = None,
    paced: bool = False,
) -> tuple[str, keyboards.Markup]:
    """The group's table as it is when sent (never a hand: the public view); ``app``: the
    Mini App's direct link for this game; ``paced``: every player plays there, and this
    message follows the game at a spectator's pace (it says so, with the link)."""
    with language(lang):
        now = _now(table, game.view(None))
        text = render.table_text(now)
        if paced and app is not None and not over:
            text += "\n\n" + render.live_in_app_line(app)
        return text, keyboards.table(username, table.game_id, over, app)


def _panel_content(
    lang: str,
    table: render.Table,
    game: Game,
    seat: int,
    over: bool,
    full: bool = False,
    app: str | None = None,
    left: bool = False,
) -> tuple[str, keyboards.Markup | None]:
    """A player's panel as it is when sent: the table, his hand, what he may do; for a
    player the game does not wait on, his hand and one line (``full``: the table too,
    as he asked for it with Refresh). ``left``: he left or was kicked, the AI plays his
    seat: the table as the group sees it and a line saying so, never the AI's hand."""
    with language(lang):
        if left:
            now = _now(table, game.view(None))
            if over or now.ending is not None or now.view.outcome is not None:
                return render.table_text(now), None
            line = "🤖 " + _("The AI plays your seat to the end; its result counts as yours.")
            return render.table_text(now) + "\n\n" + line, None
        now = _now(table, game.view(seat))
        over = over or now.ending is not None or now.view.outcome is not None
        if over:
            return render.panel_text(now), None
        markup = keyboards.panel(table.game_id, now.version, now.view)
        if app is not None:  # the Mini App's button (inline web_app buttons: private chats)
            markup = keyboards.with_table_app(markup, app)
        if acting(now.view, seat):
            return render.panel_text(now), markup
        if full:
            return render.panel_text(now) + "\n" + "↻ " + _(
                "The table as you asked for it; the group's is kept up to date."
            ), markup
        return render.waiting_panel_text(now), markup


def _suit_content(lang: str, title: str) -> str:
    with language(lang):
        return "🃏 " + _("Own trumps in {group}: your turn to choose your trump suit.").format(
            group=render.esc(title)
        )


def _now(table: render.Table, view: View | PileView) -> render.Table:
    """``table`` with the game's view at this moment, and the version that view shows."""
    return replace(table, view=view, version=max(table.version, view.moves))


class Presenter:
    def __init__(
        self,
        service: GameService,
        outbox: Outbox,
        titles: Titles,
        username: str,
        langs: Languages,
        *,
        clock: Clock | None = None,
        live: Live | None = None,
        webapp_url: str | None = None,
        webapp_link: str | None = None,
        time: clocks.Clock = clocks.MONOTONIC,
    ) -> None:
        """``clock``: the turn clock, made here as it shows what it decides (none: no
        clock, as in tests of the screens alone); ``live``: the Mini App's open pages;
        ``time``: the seconds the group's table is paced by (a test's own clock)."""
        self.service = service
        self.outbox = outbox
        self.titles = titles
        self.username = username
        self.langs = langs
        self.timers: TurnTimers | None = clock(self.changed, self.show) if clock else None
        self.live = live
        #: The Mini App's page (``DURAK_WEBAPP_URL``), and its direct link in t.me
        #: (``https://t.me/<bot>/<short name>`` or the main app's ``https://t.me/<bot>``).
        self.webapp_url = webapp_url
        self.webapp_link = webapp_link
        #: (game, seat): what his panel shows (``panel_key``) as last queued.
        self._shown: dict[tuple[int, int], tuple[object, ...]] = {}
        #: (game, seat): the wait he was last notified of (``_wait_of``).
        self._told: dict[tuple[int, int], tuple[object, ...]] = {}
        #: (game, seat): away or gone (or the game over), as last shown: never notified.
        self._quiet: set[tuple[int, int]] = set()
        #: (game, seat): the panel last sent to him asks him to act, since this many
        #: actions of the game (``_continues``).
        self._asking: dict[tuple[int, int], int] = {}
        #: user: the games whose panels he has (a continuation needs just one).
        self._games_of: dict[int, set[int]] = {}
        #: game: (bout or pile turn as last seen, whether the table had cards, a count
        #: of the bouts or turns seen): names the bout (a pile game's turn) a wait is in.
        self._bouts: dict[int, tuple[tuple[object, ...], bool, int]] = {}
        #: game: (the version its last timeouts led to, the bout they were first shown in)
        self._timed_out: dict[int, tuple[int, int]] = {}
        #: own trumps: the (game, user) told to choose his suit.
        self._choosers: set[tuple[int, int]] = set()
        #: the group's tables of games everyone plays in the Mini App: a spectator's pace
        self.pace = pace.TablePace(self.show, time)

    def app_url(self, game_id: int) -> str | None:
        """The Mini App's page for this game (the private panel's web_app button)."""
        return None if self.webapp_url is None else f"{self.webapp_url}?game={game_id}"

    def app_link(self, game_id: int, link: cb.AppLink = cb.AppLink.GAME) -> str | None:
        """The Mini App's direct link for this game (the lobby, the group's table), or
        for its replay (``/history``); ``None`` without one."""
        if self.webapp_link is None:
            return None
        return f"{self.webapp_link}?startapp={cb.app_payload(link, game_id)}"

    async def changed(self, info: GameInfo, finished: bool = False) -> None:
        """A game moved: show it everywhere, announce the end, start the next clock.
        A sprint deal that ended with the match going on hands its table message
        to the next deal, which the service has started."""
        if info.status == LOBBY and info.suit_choice is not None:
            await self.lobby(info)  # own trumps: the suits are being chosen
            if self.timers is not None:
                self.timers.arm_suits(info)
            return
        following = await self._next_deal(info) if finished or info.status == FINISHED else None
        if following is not None:
            # before the ended deal's panels are shown for the last time, which lets its
            # table place go (the outbox drops the id once nothing is queued for it)
            self._carry_table(info, following)
            if self.live is not None:
                self.live.moved(info.game_id, following.game_id)
            await self.game(info.game_id, info, table=False)
            await self.ended(info, following)
            if self.timers is not None:
                self.timers.cancel(info.game_id)
            await self.changed(following)
            return
        if self.timers is not None and info.status == RUNNING:
            # first, so the table shows the new turn's clock from its start (issue 11)
            await self.timers.arm(info)
        await self.game(info.game_id, info)
        if finished or (info.status != RUNNING and info.ending is not None):
            await self.ended(info)
        if self.timers is not None and info.status != RUNNING:
            self.timers.forget(info.game_id)

    def resumed(self, info: GameInfo) -> None:
        """After a restart: the panels on screen are the newest (their ids were stored and
        are known again), and whoever must act had his notification before the restart.
        So showing the game edits them in place: nothing is re-posted, and a press made
        on one while the bot was down still counts."""
        game = info.game
        if game is None:
            return
        public = game.view(None)
        bout = self._bout(info.game_id, public)
        for seat in info.seats:
            wait = self._wait_of(public, seat.seat, bout)
            if not seat.is_ai and wait is not None:
                # his wait now was told before the restart: the same wait, no new push
                self._told[(info.game_id, seat.seat)] = wait

    async def show(self, game_id: int) -> None:
        await self.game(game_id)

    async def lobby(
        self, info: GameInfo, note: str = "", repost: bool = False, **fields: str
    ) -> None:
        """Show the lobby as it is now; ``note`` is a message id (marked ``N_``),
        translated here into the group's language and formatted with ``fields``.

        The lobby is read again right before it is shown (nothing awaited in between):
        shows then reach the outbox in the order of their reads, so a caller holding an
        older state (the admin's /settings, a join handled beside another) never
        overwrites a newer one (issue 33 item 8). A lobby closed meanwhile is shown by
        whoever closed it, with why (``note``): a show without one is left out."""
        lang = await self.langs.of_group(info.chat_id, info.creator_id)
        try:
            info = await self.service.game(info.game_id)
        except ServiceError as e:  # the state in hand is still worth showing
            log.warning("lobby %s shown as last read: %s", info.game_id, e.code)
        if info.status != LOBBY and not note:
            return
        creator = next((s.name for s in info.seats if s.user_id == info.creator_id), "")
        with language(lang):
            self._lobby(info, creator, _(note).format(**fields) if note else "", repost)
        if self.live is not None:  # the pages open on it, each in its reader's language
            self.live.lobby(info, await self.titles.get(info.chat_id), note, fields)
        await self._tell_chooser(info)

    async def _tell_chooser(self, info: GameInfo) -> None:
        """Own trumps: the player whose turn it is to choose his suit gets a private
        message with the free suits (a notification, once per choice)."""
        choice = info.suit_choice
        if info.status != LOBBY or choice is None or len(choice.chosen) >= len(choice.order):
            return
        seat = info.seats[choice.order[len(choice.chosen)]]
        if seat.is_ai or seat.app or (info.game_id, seat.user_id) in self._choosers:
            return  # (a player of the Mini App chooses there, or in the group)
        self._choosers.add((info.game_id, seat.user_id))
        lang = await self.langs.of_user(seat.user_id)
        text = _suit_content(lang, await self.titles.get(info.chat_id))
        self.outbox.show(
            seat.user_id,
            place("panel", info.game_id),
            text,
            keyboards.suits(info.game_id, choice.free),
            notify=True,
            priority=PRIORITY_ACTOR,
        )

    def _lobby(self, info: GameInfo, creator: str, note: str, repost: bool) -> None:
        choice = info.suit_choice
        if info.status == LOBBY and choice is not None:
            left = None if choice.deadline is None else max(0, round(choice.deadline - time.time()))
            text = render.suit_choice_text(info.seats, choice.order, choice.chosen, left)
            markup: keyboards.Markup | None = keyboards.suits(info.game_id, choice.free)
        elif info.status == "lobby" and info.again:
            text = render.again_lobby_text(info.seats, info.rules, creator)
            markup = keyboards.again_lobby(info.game_id, self.app_link(info.game_id))
        elif info.status == "lobby":
            text = render.lobby_text(info.seats, info.rules, creator)
            if info.cap is not None:
                text += "\n" + render.cap_line(info.room)
            counts = keyboards.cap_counts(info)
            cap_row = keyboards.caps(info.game_id, counts, info.cap or max(counts, default=0))
            room = len(info.seats) < info.room
            markup = keyboards.lobby(info.game_id, room, cap_row, self.app_link(info.game_id))
        else:
            text = render.lobby_text(info.seats, info.rules, creator, closed=note)
            markup = None
        self.outbox.show(
            info.chat_id,
            place("lobby", info.game_id),
            text,
            markup,
            notify=repost,
            priority=ANSWER,  # someone just joined, left or started: before the tables
            thread=info.thread_id,
        )
        if info.status != "lobby":  # closed for good: its id need not be kept
            self.outbox.release(info.chat_id, place("lobby", info.game_id))

    async def _next_deal(self, info: GameInfo) -> GameInfo | None:
        """The next deal of a sprint match that goes on after this ended deal."""
        game = info.game
        ending = info.ending
        if game is None or not game.over or (ending is not None and ending.reason != PLAYED):
            return None
        if not game.next_game().continues:
            return None
        return await self.service.next_deal(info.game_id)

    def _carry_table(self, ended: GameInfo, following: GameInfo) -> None:
        """One table message for the whole match: the next deal edits the same one."""
        old = place("table", ended.game_id)
        message_id = self.outbox.message_id(ended.chat_id, old)
        if message_id is None:  # e.g. after a restart: the id as stored for the deal
            message_id = ended.message("table", ended.chat_id)
        self.outbox.forget(ended.chat_id, old)
        if message_id is not None:
            self.outbox.remember(ended.chat_id, place("table", following.game_id), message_id)

    async def game(self, game_id: int, info: GameInfo | None = None, table: bool = True) -> None:
        """Show the game's current state everywhere; notify whoever must open or defend
        (``table=False``: the players' panels only)."""
        info = info or await self.service.game(game_id)
        game = info.game
        if game is None:
            return
        over = info.status != RUNNING
        bout = self._bout(game_id, game.view(None))
        shown = await self.table(info, game, self._timeouts_for(game_id, bout))
        public = shown.view
        if self.live is not None:
            self.live.push(info, game, shown)
        # The texts are made when the outbox sends them (show_later): a chat takes about
        # one edit a second, a game moves faster, and most renderings would be replaced.
        group_lang = await self.langs.of_group(info.chat_id, info.creator_id)
        table_place = place("table", game_id)
        if self.outbox.message_id(info.chat_id, table_place) is None:
            known = info.message("table", info.chat_id)  # e.g. a match's earlier deal
            if known is not None:
                self.outbox.remember(info.chat_id, table_place, known)
        paced = not over and self._paced(info)
        out = sum(s.out for s in public.seats)
        if table and (over or self.pace.edit(game_id, bout, out, paced)):
            self.outbox.show_later(
                info.chat_id,
                table_place,
                functools.partial(
                    _table_content,
                    group_lang,
                    shown,
                    game,
                    self.username,
                    over,
                    self.app_link(game_id),
                    paced,
                ),
                priority=PRIORITY_GROUP,
                thread=info.thread_id,
            )
        for seat in info.seats:
            if seat.is_ai or seat.app:  # (his place is the Mini App's page: nothing private)
                continue
            key = (game_id, seat.seat)
            mine = game.view(seat.seat)
            shows = panel_key(mine, seat.seat, shown.seconds_left) if not over else ("over",)
            if seat.left and not over:  # shown once: the AI's hand is not his to follow
                shows = ("left",)
            # away or gone: the AI plays his seat, nothing asks anything of him (issue 11)
            quiet = over or seat.away or seat.left
            if quiet:
                self._quiet.add(key)
            else:
                self._quiet.discard(key)
            if seat.timeouts:  # the clock decided for him: he is not looking (_continues)
                self._asking.pop(key, None)
            self._games_of.setdefault(seat.user_id, set()).add(game_id)
            if not over and self.live is not None and self.live.watching(seat.user_id, game_id):
                # he plays in the Mini App: his panel is edited once, when he closes it
                self._shown.pop(key, None)
                continue
            wait = None if quiet else self._wait_of(public, seat.seat, bout)
            untold = wait is not None and self._told.get(key) != wait
            if not untold and self._shown.get(key) == shows:
                continue  # his panel would read the same: no edit (issue 12)
            self._shown[key] = shows
            self.outbox.show_later(
                seat.user_id,
                place("panel", game_id),
                functools.partial(
                    _panel_content,
                    await self.langs.of_user(seat.user_id),
                    shown,
                    game,
                    seat.seat,
                    over,
                    app=self.app_url(game_id),
                    left=seat.left,
                ),
                priority=PRIORITY_ACTOR if acting(mine, seat.seat) else PRIORITY_PANEL,
                decide=functools.partial(self._notify, game_id, game, seat.seat, seat.user_id),
            )
        if over:  # shown for the last time: nothing of the game is kept (bounded memory)
            self.pace.forget(game_id)
            self.outbox.release(info.chat_id, place("table", game_id))
            for seat in info.seats:
                if not seat.is_ai:
                    self.outbox.release(seat.user_id, place("panel", game_id))
            self._forget(game_id, info)

    def _paced(self, info: GameInfo) -> bool:
        """Whether the group's table goes at a spectator's pace: the Mini App has a link
        to show, and every person seated (not the AI, not who left) has the page open."""
        live = self.live
        if live is None or self.webapp_link is None:
            return False
        people = [s for s in info.seats if not s.is_ai and not s.left]
        return bool(people) and all(live.watching(s.user_id, info.game_id) for s in people)

    def _timeouts_for(self, game_id: int, bout: int) -> tuple[tuple[int, str], ...]:
        """The last timeouts, shown for the rest of their bout and the next one: a
        defender's timeout (a take) ends its bout, and the group, whose table is edited
        about every 3 s, must still get to read it (RULES-NOTES.md)."""
        found = self.timers.last_timeouts(game_id) if self.timers is not None else None
        if found is None:
            return ()
        version, entries = found
        seen = self._timed_out.get(game_id)
        if seen is None or seen[0] != version:
            seen = (version, bout)
            self._timed_out[game_id] = seen
        return entries if bout <= seen[1] + 1 else ()

    def _bout(self, game_id: int, public: View | PileView) -> int:
        """A number for the bout now on: it changes when who attacks whom, the stock or
        the discard does, or the table was seen empty after cards were on it; in a pile
        game, for the turn: it changes when whose turn or its phase does."""
        if isinstance(public, PileView):
            now: tuple[object, ...] = (public.turn, public.phase)
            table = False
        else:
            now, table = bout_of(public), bool(public.table)
        last, had_cards, count = self._bouts.get(game_id, ((), False, 0))
        if now != last or (had_cards and not table):
            count += 1
        self._bouts[game_id] = (now, table, count)
        return count

    @staticmethod
    def _wait_of(public: View | PileView, seat: int, bout: int) -> tuple[object, ...] | None:
        """The wait the game has him in now, as a value (``None``: it waits not on
        him). A pile game's wait is a turn; in a bout, being asked to throw in or to
        cover again after a pass is the same wait as the first time (his panel is
        still the newest message of his chat; RULES-NOTES.md), and so is an opener's
        throwing in after his opening."""
        waits = role(public, seat)
        if waits is None:
            return None
        if waits in ("lead", "answer"):  # a pile game: each turn is a wait
            return ("turn", bout)
        return ("bout", bout)

    def _notify(self, game_id: int, game: Game, seat: int, user_id: int) -> bool:
        """Asked by the outbox right after it rendered his panel from ``game`` as it is
        then: whether that panel goes as a notification. Decided for the content sent,
        not for the state that queued it: the game moves on while the panel waits for
        its turn in the chat (about one message a second), and a decision made earlier
        would push a panel that asks nothing of him, or edit one that does in place
        (issue 11: once per wait, and never for what he cannot act on)."""
        key = (game_id, seat)
        asked = self._asking.pop(key, None)
        if key in self._quiet or game.result is not None or game_id not in self._bouts:
            return False  # away or gone, or the game over (forgotten: shown for the last time)
        public = game.view(None)
        wait = self._wait_of(public, seat, self._bout(game_id, public))
        if wait is None:
            return False
        self._asking[key] = public.moves
        if self._told.get(key) == wait:
            return False
        self._told[key] = wait
        return not self._continues(game, seat, user_id, asked)

    def _continues(self, game: Game, seat: int, user_id: int, asked: int | None) -> bool:
        """Whether a new wait continues the one he is in on screen: the panel last sent
        to him asked him to act (``asked``: the game's actions then), he has acted
        since himself (not the clock for him), and it is his only game's panel, so the
        newest message of his chat. His screen never stopped saying "your move" and he
        just pressed on it, so he is looking: an edit (which never notifies) is seen as
        soon as a push would be, and a push would tell him twice (RULES-NOTES.md 75)."""
        if asked is None or len(self._games_of.get(user_id, ())) != 1:
            return False
        return any(s == seat for s, _action in game.history[asked:])

    def _forget(self, game_id: int, info: GameInfo) -> None:
        for seat in info.seats:
            key = (game_id, seat.seat)
            for memo in (self._shown, self._told, self._asking):
                memo.pop(key, None)
            games = self._games_of.get(seat.user_id)
            if games is not None:
                games.discard(game_id)
                if not games:
                    del self._games_of[seat.user_id]
            self._quiet.discard(key)
            self._choosers.discard((game_id, seat.user_id))
        self._bouts.pop(game_id, None)
        self._timed_out.pop(game_id, None)

    async def panel(
        self, info: GameInfo, user_id: int, notify: bool = False, full: bool = False
    ) -> None:
        """Show one player's panel afresh (``/start g<id>``, Refresh, Back); ``full``:
        with the table even if the game does not wait on him (he asked for it)."""
        game = info.game
        seat = info.seat_of(user_id)
        if game is None or seat is None or info.seats[seat].app:
            return  # (a player of the Mini App only: his place is the page)
        over = info.status != RUNNING
        left = info.seats[seat].left
        table = await self.table(info, game)
        lang = await self.langs.of_user(user_id)
        if not over:
            shows = ("left",) if left else panel_key(game.view(seat), seat, table.seconds_left)
            self._shown[(info.game_id, seat)] = shows
        self.outbox.show_later(
            user_id,
            place("panel", info.game_id),
            functools.partial(
                _panel_content,
                lang,
                table,
                game,
                seat,
                over,
                full,
                self.app_url(info.game_id),
                left,
            ),
            notify=notify,
            priority=PRIORITY_ACTOR,
            # a push of his still queued goes with this content, if it asks him then
            decide=None
            if over
            else functools.partial(self._notify, info.game_id, game, seat, user_id),
        )
        if over:
            self.outbox.release(user_id, place("panel", info.game_id))

    async def choice(
        self,
        info: GameInfo,
        user_id: int,
        view: View | PileView,
        card: Card,
        options: list[Action],
    ) -> None:
        """A tapped card that can do more than one thing (or a pair to confirm): the
        panel asks what it should do."""
        prompt = _("What should {card} do?").format(card=render.card(card))
        markup = keyboards.choice(info.game_id, info.version, options)
        await self._with_question(info, user_id, view, prompt, markup)

    async def picker(
        self, info: GameInfo, user_id: int, view: View, chosen: tuple[Card, ...]
    ) -> None:
        """The several-card opening picker, with ``chosen`` so far."""
        prompt = _("Choose the cards to open with, then play them.")
        markup = keyboards.picker(info.game_id, info.version, view, chosen)
        await self._with_question(info, user_id, view, prompt, markup)

    async def _with_question(
        self,
        info: GameInfo,
        user_id: int,
        view: View | PileView,
        prompt: str,
        markup: keyboards.Markup,
    ) -> None:
        """The panel with a question in place of the hand's buttons: the player's own
        view of the table as it is now (no clock: he is answering), then the question."""
        title = await self.titles.get(info.chat_id)
        story = events.story(info.game_id, info.game) if info.game is not None else None
        table = render.Table(
            info.game_id,
            info.version,
            title,
            info.seats,
            view,
            info.ending,
            story=story,
            rules=info.rules,
        )
        self.outbox.show(
            user_id,
            place("panel", info.game_id),
            render.panel_text(table) + "\n\n" + prompt,
            markup,
            priority=PRIORITY_ACTOR,
        )

    async def table(
        self, info: GameInfo, game: Game, timeouts: tuple[tuple[int, str], ...] = ()
    ) -> render.Table:
        """The public table of ``game`` now, for the group's message, the panels and the
        Mini App's pages alike. Two moves can be shown concurrently: the
        buttons carry the version of the state they show (the number of actions
        applied), not of a slower caller's info."""
        public = game.view(None)
        version = max(info.version, public.moves)
        left = self.timers.left(info.game_id, version) if self.timers is not None else None
        title = await self.titles.get(info.chat_id)
        story = events.story(info.game_id, game)
        return render.Table(
            info.game_id,
            version,
            title,
            info.seats,
            public,
            info.ending,
            left,
            story,
            timeouts,
            game.rules,
        )

    async def _tallies(self, info: GameInfo) -> list[Tally]:
        """The group's tally of each human player of this game, in seat order."""
        found = []
        for seat in info.seats:
            if not seat.is_ai:
                tally = await self.service.tally(info.chat_id, seat.user_id)
                found.append(replace(tally, name=tally.name or seat.name))
        return found

    async def _recap(self, info: GameInfo, game: Game | None) -> list[str]:
        """The recap's two lines (issue 28); with the recap off, only the achievements
        the game earned (each is announced once, in the end message that earned it)."""
        if game is None or info.ending is None or info.ending.reason == "cancelled":
            return []
        rated = (await self.service.game_ratings([info.game_id])).get(info.game_id)
        if not (await self.service.chat_settings(info.chat_id)).recap:
            return ratings_text.feats_lines(info.seats, rated)
        return ratings_text.game_recap(info.seats, game, rated)

    async def ended(self, info: GameInfo, following: GameInfo | None = None) -> None:
        """The group hears who is the durak, with a Play again button; a sprint deal
        the match goes on after: the deal's fool and the score, without buttons; the
        match's last deal: the match result too."""
        game = info.game
        outcome = game.result if game is not None else None
        view = game.view(None) if game is not None else None
        reason = view.end_reason if view is not None else None
        match = view.match if isinstance(view, View) else None
        with language(await self.langs.of_group(info.chat_id, info.creator_id)):
            lines = ["🏁 " + render.outcome_line(info.seats, outcome, info.ending, reason)]
            if following is not None and match is not None:  # a sprint deal, the match goes on
                head, *rest = render.deal_ended_lines(match, info.seats, outcome)
                lines = ["🏁 " + head, *rest]
            scored = info.ending is None or info.ending.reason != "cancelled"
            if game is not None and scored:
                order = render.out_order_line(
                    info.seats, events.story(info.game_id, game).out_order
                )
                if order:
                    lines.insert(1, order)
            if match is not None and following is None:
                lines += render.match_lines(match)
            if following is None and scored:
                series = render.series_line(await self._tallies(info))
                if series:
                    lines.append(series)
            recap = await self._recap(info, game)
            if following is not None and match is not None:
                lines[-1:-1] = recap  # before "Deal N+1 follows."
            else:
                lines += recap
            self.outbox.send(
                info.chat_id,
                "\n".join(lines),
                None
                if following is not None
                else keyboards.ended(
                    self.username,
                    info.game_id,
                    again=info.ending is None or info.ending.reason != "cancelled",
                ),
                priority=PRIORITY_GROUP,
                thread=info.thread_id,
            )
        events.forget(info.game_id)  # bounded memory: its story is told
