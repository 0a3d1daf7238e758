"""Builds the python-telegram-bot Application: handlers, the database's life
cycle (``post_init`` / ``post_shutdown``), the outbox, and resuming games."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from telegram import BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats
from telegram.error import Forbidden, TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ExtBot,
)

from durak.service import RUNNING, DatabaseError, GameInfo, GameService, ServiceError

from . import dbguard
from .clock import MONOTONIC, WALL, Clock
from .config import Config
from .flows import Flows
from .screens.languages import Languages
from .screens.presenter import Presenter, Titles, parse_place, place
from .seats.ai_pool import HARD_BUDGET_MS, AiPool
from .seats.timers import TurnTimers
from .standby import hold_lease, release_lease
from .transport.members import Members, chat_member
from .transport.outbox import Outbox, SendLimits
from .transport.request import AiohttpRequest, UpdatesRequest
from .transport.runner import ALLOWED_UPDATES, StartError
from .ui import keyboards, render
from .ui.i18n import DEFAULT, SUPPORTED, _, language
from .webapp import LIMITS, Bridge, Limits, Registry, WebApp

if TYPE_CHECKING:
    from durak.store.lease import Lease

log = logging.getLogger(__name__)

__all__ = ["ALLOWED_UPDATES", "DurakBot", "build_application", "setup_logging"]


def use_fast_event_loop() -> bool:
    """Run on uvloop's event loop where it is installed (a dependency on Linux and macOS).

    A busy bot's latency is the event loop's: every press waits for the loop to come round
    several times (the database thread's answers, the HTTP replies). uvloop's loop costs
    less per turn: p99 press-to-answer 93-103 -> 79-95 ms in the benchmark (BENCHMARKS.md).
    The code is plain asyncio and runs the same on the standard loop (the tests use it)."""
    try:
        import uvloop
    except ImportError:
        return False
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return True


class Redact(logging.Filter):
    """Replaces every secret (the bot token) in a record's text: PTB quotes the token in
    InvalidToken, and API URLs (which contain it) appear at DEBUG."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        super().__init__()
        self._secrets = tuple(s for s in secrets if s)

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        hidden = text
        for secret in self._secrets:
            hidden = hidden.replace(secret, "<token>")
            if record.exc_text:
                record.exc_text = record.exc_text.replace(secret, "<token>")
        if hidden != text:
            record.msg, record.args = hidden, None
        return True


def setup_logging(level: str, secrets: tuple[str, ...] = ()) -> None:
    logging.basicConfig(
        format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=getattr(logging, level)
    )
    for handler in logging.getLogger().handlers:
        handler.addFilter(Redact(secrets))
    # httpx logs every request URL at INFO, and the URL contains the bot token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpcore").setLevel(logging.WARNING)


@dataclass(frozen=True)
class Parts:
    """The bot's moving parts, each built once with what it needs (``DurakBot.post_init``,
    when the bot knows itself): none is filled in later, none reaches back for another."""

    service: GameService
    outbox: Outbox
    langs: Languages
    ai: AiPool
    presenter: Presenter
    timers: TurnTimers
    flows: Flows
    #: Who is a member of a group (getChatMember, each answer kept for a minute).
    members: Members
    #: The Mini App (``DURAK_WEBAPP_URL``), served once this process is the active one.
    webapp: WebApp | None


class NotStarted(RuntimeError):
    """A part of the bot was asked for before ``post_init`` built them."""


@dataclass
class DurakBot:
    """The wiring: the settings of the bot's parts, and the parts once built (``parts``)."""

    config: Config
    limits: SendLimits = field(default_factory=SendLimits)
    away_delay: float = 1.0
    ai_pause: float = 1.2
    hard_budget_ms: int = HARD_BUDGET_MS  # the budget the arena measured
    sweep_every: float = 60.0
    lobby_idle: float = 15 * 60
    time_scale: float = 1.0  # tests: how much faster the turn clock runs
    turn_clock: Clock = WALL  # the turn clock's time (tests: one they move themselves)
    send_clock: Clock = MONOTONIC  # the outbox's (tests: the fake Bot API's too)
    drain_timeout: float = 5.0  # seconds the outbox may take to send what is queued at stop
    hurry: asyncio.Event | None = None  # set: stop draining now (a second stop signal)
    stop: asyncio.Event | None = None  # set: stop the bot (as a stop signal does)
    db_check_every: float = dbguard.CHECK_EVERY  # SQLite: how often its files are checked
    db_trouble: dbguard.Trouble | None = None  # its file (or lock) vanished: exit code 2
    _db_watch: asyncio.Task[None] | None = None
    lease: Lease | None = None  # PostgreSQL: this process is the active one (bot/standby.py)
    webapp_limits: Limits = LIMITS  # the Mini App's (tests: a shorter wait for initData)
    #: The clock of what counts per minute (the membership cache, the Mini App's sign-ins and
    #: log lines): tests give one they move by hand.
    clock: Callable[[], float] = time.monotonic
    #: The seconds of the group's table pace and of the phrases' 3 s, and sleeping on them:
    #: tests give one they move by hand.
    pace_clock: Clock = MONOTONIC
    #: The HTTP clients (everything, getUpdates): a start that never got through closes them.
    http: tuple[AiohttpRequest, ...] = ()
    #: Built in ``post_init``; ``None`` before it and once the database is closed.
    parts: Parts | None = None
    _warned: set[tuple[int, int]] = field(default_factory=set)

    def _built(self) -> Parts:
        if self.parts is None:
            raise NotStarted("the bot's parts are built in post_init")
        return self.parts

    @property
    def service(self) -> GameService:
        return self._built().service

    @property
    def outbox(self) -> Outbox:
        return self._built().outbox

    @property
    def presenter(self) -> Presenter:
        return self._built().presenter

    @property
    def flows(self) -> Flows:
        return self._built().flows

    @property
    def timers(self) -> TurnTimers:
        return self._built().timers

    @property
    def webapp(self) -> WebApp | None:
        return self._built().webapp

    @property
    def members(self) -> Members:
        return self._built().members

    async def post_init(self, app: Application) -> None:  # type: ignore[type-arg]
        self.lease = await hold_lease(self.config.db_path, self.config.lease_timeout, self.stop)
        if self.stop is not None and self.stop.is_set():  # a standby stopped: nothing to start
            return
        if self.lease is not None:  # from now on nothing is sent unless the lease is sure
            for http in self.http:
                http.fence = self.lease.fence
        check = "none" if dbguard.watching() else "quick"  # python -m bot checked it already
        try:
            service = await GameService.open(self.config.db_path, check=check)
        except DatabaseError as e:  # e.g. a running game whose log does not replay
            raise StartError(f"DURAK_DB: {e}") from None
        if self.lease is not None:
            service.fence_writes(self.lease.fence)
        try:
            parts = self.parts = self._build(app, service)
        except BaseException:
            await service.close()
            raise
        if dbguard.watching():  # python -m bot on a SQLite file: at start, then every 2 s
            service.after_checkpoints(dbguard.note)
            watch = dbguard.watch(self.db_check_every, self._db_vanished)
            self._db_watch = asyncio.create_task(watch, name="database file check")
        parts.flows.register(app)
        await parts.outbox.start()
        await self._set_commands(app)
        await self.resume(parts)
        if parts.webapp is not None and not self.config.webhook_url:  # webhook: runner.serve
            await parts.webapp.start(self.config.webapp_listen, self.config.webapp_port)
        parts.flows.lifecycle.start_sweeping(self.sweep_every, self.lobby_idle)
        parts.timers.start_sweeping(self.sweep_every)

    def _build(self, app: Application, service: GameService) -> Parts:  # type: ignore[type-arg]
        """Every part, in the order they need each other; nothing is started here."""
        outbox = Outbox(
            app.bot,
            self.limits,
            on_posted=self._posted,
            on_forbidden=self._forbidden,
            clock=self.send_clock,
        )
        langs = Languages(service)
        ai = AiPool(self.hard_budget_ms)
        clock = functools.partial(
            TurnTimers,
            service,
            settings=langs.chat_settings,
            decide=ai.decide,
            away_delay=self.away_delay,
            ai_pause=self.ai_pause,
            time_scale=self.time_scale,
            clock=self.turn_clock,
        )
        members = Members(functools.partial(chat_member, app.bot), clock=self.clock)
        pages = Registry(per_user=self.webapp_limits.per_user) if self.config.webapp_url else None
        presenter = Presenter(
            service,
            outbox,
            Titles(app.bot),
            app.bot.username,
            langs,
            clock=clock,
            live=pages,
            webapp_url=self.config.webapp_url,
            webapp_link=self._webapp_link(app.bot),
            time=self.pace_clock,
        )
        timers = presenter.timers
        assert timers is not None  # given a clock, the presenter made it
        webapp = None
        if pages is not None:
            bridge = Bridge(
                service, presenter, pages, members.is_member, reachable(app.bot), self.pace_clock
            )
            webapp = WebApp(
                self.config.webapp_path,
                self.config.token,
                bridge,
                pages,
                self.config.webapp_max_age,
                self.webapp_limits,
                forwarded=self.config.webapp_forwarded_header,
                clock=self.clock,
            )
        flows = Flows.build(service, presenter)
        return Parts(service, outbox, langs, ai, presenter, timers, flows, members, webapp)

    async def post_shutdown(self, app: Application) -> None:  # type: ignore[type-arg]
        """Stop the clocks, drain the outbox (at most ``drain_timeout``, less once
        ``hurry`` is set: a second stop signal), and always close the database: an open
        aiosqlite connection's thread would keep the process alive for ever. The
        PostgreSQL lease goes last: no other process is active before this one is done."""
        parts, self.parts = self.parts, None
        try:
            if self._db_watch is not None:
                self._db_watch.cancel()
            if parts is not None:
                await self._stop(parts)
        finally:
            if parts is not None:
                await self._close(parts.service)
            await release_lease(self.lease)

    async def _stop(self, parts: Parts) -> None:
        if parts.webapp is not None:
            await parts.webapp.stop()
        await parts.flows.lifecycle.stop()
        await parts.timers.close()
        await parts.presenter.pace.close()
        parts.ai.close()
        await parts.outbox.stop(drain=True, timeout=self.drain_timeout, hurry=self.hurry)

    async def _close(self, service: GameService) -> None:
        """Close the database; one whose file vanished is first copied out (bot/dbguard.py)."""
        if self.db_trouble is not None:
            await dbguard.rescue(self.db_trouble, service.copy_to, service.close)
        else:
            await service.close()
            log.info("database closed")

    async def _db_vanished(self, found: dbguard.Trouble) -> None:
        """The database's file (or its lock) is gone from its path, or was overwritten
        in place: stop taking presses now; post_shutdown saves the data and says so
        (bot/dbguard.py). Overwritten, nothing more is checkpointed into it meanwhile."""
        self.db_trouble = found
        if self.stop is not None:
            self.stop.set()
        if found.in_place and self.parts is not None:
            await self.parts.service.hold_checkpoints()

    def _webapp_link(self, bot: ExtBot) -> str | None:  # type: ignore[type-arg]
        """The Mini App's direct link in t.me: by its short name, or the main app's."""
        if not self.config.webapp_url:
            return None
        short = self.config.webapp_short_name
        if short is not None:
            return f"https://t.me/{bot.username}/{short}"
        if getattr(bot.bot, "has_main_web_app", False):
            return f"https://t.me/{bot.username}"
        return None

    async def _set_commands(self, app: Application) -> None:  # type: ignore[type-arg]
        """The command menus, per scope (groups / private chats) and per language."""
        try:
            for lang in SUPPORTED:
                with language(lang):
                    group, private = command_menus()
                code = None if lang == DEFAULT else lang
                await app.bot.set_my_commands(
                    group, scope=BotCommandScopeAllGroupChats(), language_code=code
                )
                await app.bot.set_my_commands(
                    private, scope=BotCommandScopeAllPrivateChats(), language_code=code
                )
        except TelegramError as e:
            log.warning("could not register the command menus: %s", e)

    async def resume(self, parts: Parts) -> None:
        """After a restart (or a standby's takeover): every running game's and open
        lobby's messages are known again and refreshed, so old panels keep working,
        the game can be finished, and a lobby goes on in its own message, showing
        whoever joined while the process before could not show it any more."""
        games = await parts.service.running_games()
        lobbies = await parts.service.open_lobbies()
        for info in [*games, *lobbies]:
            for m in info.messages:
                parts.outbox.remember(m.chat_id, place(m.kind, info.game_id), m.message_id)
        await parts.timers.resume(games)
        for info in games:
            parts.presenter.resumed(info)  # nothing still on screen is posted again
            await parts.presenter.game(info.game_id, info)
        if games:
            log.info("resumed %d running games", len(games))
        for info in lobbies:
            if info.suit_choice is None:
                await parts.presenter.lobby(info)
            else:  # own trumps: the clock runs on
                await parts.presenter.changed(info)

    async def _posted(self, chat_id: int, place: str, message_id: int) -> None:
        parsed = parse_place(place)
        if parsed is None or self.parts is None:
            return
        kind, game_id = parsed
        try:
            await self.parts.service.set_message(game_id, kind, chat_id, message_id)
        except ServiceError as e:
            log.warning("could not remember message %s of game %s: %s", kind, game_id, e)

    async def _forbidden(self, chat_id: int) -> None:
        """A player blocked the bot (or never started it): tell his group once; he
        gets no /notify_me messages any more (quietly)."""
        parts = self.parts
        if chat_id <= 0 or parts is None:
            return
        await parts.service.drop_subscriber(chat_id)
        for info in await parts.service.games_of_user(chat_id):
            if info.status != RUNNING or (info.game_id, chat_id) in self._warned:
                continue
            self._warned.add((info.game_id, chat_id))
            seat = info.seat_of(chat_id)
            if seat is not None and info.seats[seat].app:
                continue  # he plays in the Mini App: the bot knew, the group hears nothing
            name = info.seats[seat].name if seat is not None else str(chat_id)
            with language(await parts.langs.of_group(info.chat_id, info.creator_id)):
                warn_blocked(parts, info, name)


def reachable(bot: ExtBot) -> Callable[[int], Awaitable[bool]]:  # type: ignore[type-arg]
    """Whether the bot may write to a user (for a seat joined from the Mini App): a 403
    on a chat action means he never started it (or blocked it)."""

    async def probe(user_id: int) -> bool:
        try:
            await bot.send_chat_action(user_id, "typing")
        except Forbidden:
            return False
        except TelegramError:
            pass
        return True

    return probe


def warn_blocked(parts: Parts, info: GameInfo, name: str) -> None:
    """Once per game and player: one button that opens the private chat; its Start
    delivers his panel (the deep link of "My cards"), so the table need not wait on
    him finding it (issue 11 item 9)."""
    parts.outbox.send(
        info.chat_id,
        "⚠️ "
        + _(
            "{name} cannot get their cards: I may not write to them until they open"
            " our private chat. {name}, tap the button below and press Start there."
        ).format(name=render.esc(name)),
        keyboards.my_cards(parts.presenter.username, info.game_id, name),
        priority=2,
        thread=info.thread_id,
    )


def command_menus() -> tuple[list[BotCommand], list[BotCommand]]:
    """(group commands, private commands) in the current language."""
    group = [
        BotCommand("newgame", _("open a lobby for a new game")),
        BotCommand("rules", _("the rules in force")),
        BotCommand("stats", _("who was the durak how often")),
        BotCommand("leave", _("leave the lobby, or hand your seat in the game to the AI")),
        BotCommand("notify_me", _("a private message when a game opens here (again: stop)")),
        BotCommand("settings", _("house rules and turn time (admins)")),
        BotCommand("history", _("recent games and their fools")),
        BotCommand("cancel", _("cancel the lobby or game (creator or admin)")),
        BotCommand("kick", _("reply to a player: he leaves the game (admins)")),
        BotCommand("skip", _("vote to let the AI play for a player who does not answer")),
        BotCommand("help", _("how to play")),
    ]
    private = [
        BotCommand("start", _("start")),
        BotCommand("language", _("choose your language")),
        BotCommand("help", _("how to play")),
    ]
    return group, private


def send_limits(config: Config) -> SendLimits:
    """The outbox's limits: Telegram's per-chat pace, the budget settings of ``config``."""
    return SendLimits(
        global_per_second=config.global_per_second,
        global_mode=config.global_mode,
        global_ceiling=config.global_ceiling,
        max_in_flight=config.max_in_flight,
        cold_start=True,  # a restart: each chat's pace as if it had just sent
    )


def build_application(
    config: Config, limits: SendLimits | None = None, concurrency: int = 64
) -> Application:  # type: ignore[type-arg]
    limits = limits or send_limits(config)
    durak = DurakBot(config, limits)
    # The outbox's requests in flight, and the handlers' own (answers, getChat) beside them.
    pool = limits.max_in_flight + concurrency
    durak.http = (
        AiohttpRequest(pool_size=pool, pool_timeout=10.0),
        UpdatesRequest(pool_size=1, pool_timeout=10.0),
    )
    builder = (
        ApplicationBuilder()
        .token(config.token)
        .concurrent_updates(concurrency)
        .request(durak.http[0])
        .get_updates_request(durak.http[1])
        .post_init(durak.post_init)
        .post_shutdown(durak.post_shutdown)
    )
    if config.api_url:
        builder = builder.base_url(config.api_url)
        if config.file_url:
            builder = builder.base_file_url(config.file_url)
    app = builder.build()
    app.bot_data["durak"] = durak
    return app
