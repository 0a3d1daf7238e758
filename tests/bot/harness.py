"""Runs the real bot against the fake Bot API server and plays whole games with
simulated users who press buttons like people do (legal or not)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from telegram.ext import Application

from bot.app import DurakBot, build_application
from bot.config import Config
from bot.transport.outbox import SendLimits
from bot.transport.runner import ALLOWED_UPDATES, WEBHOOK_CONNECTIONS
from bot.transport.webhook import WebhookServer
from durak import Game
from durak.service import GameService
from tests.fake_telegram import FakeTelegram, RateLimits
from tests.fake_telegram.models import Button, Chat, Message, User

from .textcards import cards_in

#: Time runs this much faster in these tests: Telegram's minute is 3 s.
SCALE = 0.05
#: The webhook ``running_bot`` registers (https, as the bot's settings insist) and serves.
WEBHOOK_URL = "https://durak.example.org/hook"
WEBAPP_URL = "https://durak.example.org/durak/app"
WEBAPP_PATH = "/durak/app"
WEBHOOK_PATH = "hook"
WEBHOOK_SECRET = "harness-s3cret"


def free_port() -> int:
    """A port of 127.0.0.1 that nobody listens on (until someone takes it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ErrorLog(logging.Handler):
    """Collects every record at ERROR or above: a test asserts there are none."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@asynccontextmanager
async def running_bot(
    server: FakeTelegram,
    db: Path,
    limits: SendLimits | None = None,
    *,
    webhook_port: int | None = None,
    webapp_port: int | None = None,
    settings: Mapping[str, Any] | None = None,
    **tweaks: Any,
) -> AsyncIterator[Application]:  # type: ignore[type-arg]
    """The bot as ``python -m bot`` runs it (post_init, polling), stopped cleanly; with
    ``webhook_port``, in webhook mode instead, serving ``WEBHOOK_PATH`` on 127.0.0.1 (the
    fake server's ``webhook_target`` must say so: it may live in another process). The
    Mini App (``webapp_port``) has a listener of its own, or, on the webhook's port, is
    served beside the webhook as ``python -m bot`` serves it in webhook mode. ``settings``:
    more of the bot's :class:`Config` (what the environment would set)."""
    config = Config(token=server.token, db_path=str(db), api_url=server.base_url)
    config = replace(config, **(settings or {}))
    if webapp_port is not None:  # the Mini App on 127.0.0.1 (WEBAPP_URL's path)
        config = replace(
            config, webapp_url=WEBAPP_URL, webapp_listen="127.0.0.1", webapp_port=webapp_port
        )
    shared = webhook_port is not None and webapp_port == webhook_port
    if shared:  # post_init then leaves the Mini App to the webhook's server
        config = replace(
            config,
            webhook_url=WEBHOOK_URL,
            webhook_secret=WEBHOOK_SECRET,
            webhook_port=webhook_port,
        )
    app = build_application(config, limits or SendLimits().scaled(SCALE))
    bot = durak_of(app)
    bot.time_scale = SCALE
    bot.away_delay = 0.02
    bot.ai_pause = 0.02
    bot.hard_budget_ms = 50
    bot.sweep_every = 0.2
    for name, value in tweaks.items():
        assert hasattr(bot, name), name
        setattr(bot, name, value)
    await app.initialize()
    assert app.post_init is not None
    await app.post_init(app)
    await app.start()
    assert app.updater is not None
    hook = None
    if webhook_port is None:
        await app.updater.start_polling(poll_interval=0, timeout=1)
    else:
        also = bot.webapp if shared else None
        hook = WebhookServer(
            app, WEBHOOK_PATH, WEBHOOK_SECRET, "127.0.0.1", webhook_port, also=also
        )
        await hook.start()
        await app.bot.set_webhook(
            WEBHOOK_URL,
            secret_token=WEBHOOK_SECRET,
            allowed_updates=ALLOWED_UPDATES,
            max_connections=WEBHOOK_CONNECTIONS,
        )
    try:
        yield app
    finally:
        if hook is None:
            await app.updater.stop()
        else:
            await hook.stop()
        await app.stop()
        assert app.post_shutdown is not None
        await app.post_shutdown(app)
        await app.shutdown()


def durak_of(app: Application) -> DurakBot:  # type: ignore[type-arg]
    bot = app.bot_data["durak"]
    assert isinstance(bot, DurakBot)
    return bot


@dataclass
class Played:
    """The cards a game's actions have put face up, read on from where the last call
    stopped: a check after every press of a pile game that runs for thousands of
    actions re-read the whole history each time (minutes of a CI run)."""

    actions: int = 0
    cards: set[str] = field(default_factory=set)

    def of(self, game: Game) -> set[str]:
        history = game.history
        if len(history) < self.actions:  # another game, or one restored: read it all
            self.actions, self.cards = 0, set()
        for _seat, action in itertools.islice(history, self.actions, None):
            step = action.step()
            self.cards.update(step.get("cards", []))
            self.cards.update(step[k] for k in ("card", "attack") if k in step)
        self.actions = len(history)
        return self.cards


def secret_cards(game: Game, played: Played | None = None) -> set[str]:
    """Cards in hands that nobody has seen face up yet (never played, shown or
    turned as the trump card): a group message must never show one. ``played``
    carries what the game's earlier actions showed over from the last call."""
    public = set((played or Played()).of(game))
    view = game.view(None)
    shown = [
        view.trump_card,
        getattr(view, "opener_card", None),
        getattr(view, "second_trump_card", None),
        getattr(view, "out_of_play", None),  # road: the card that shows trump
    ]
    public.update(str(c) for c in shown if c is not None)
    return {str(c) for seat in range(game.n) for c in game.hand(seat)} - public


def unseen_own_cards(game: Game, seat: int) -> set[str]:
    """``blind``: the cards of ``seat``'s hand he has not seen (face-down slots). His
    opponents see his hand in slot order (``shown_hands``), which names them."""
    own = game.view(seat)
    slots = getattr(own, "slots", None)
    if slots is None:
        return set()
    for other in range(game.n):
        hands = dict(getattr(game.view(other), "shown_hands", ()))
        if other != seat and seat in hands:
            cards = hands[seat]
            assert len(cards) == len(slots)
            return {str(c) for c, s in zip(cards, slots, strict=True) if s is None}
    raise AssertionError(f"nobody sees seat {seat}'s hand")


#: Chooses a button of a user's panel to press, or ``None`` for a random one.
Prefer = Callable[[User, list[Button]], Button | None]
#: Called after each press; while it runs nobody else presses.
Settle = Callable[[], Awaitable[None]]


@dataclass
class Table:
    server: FakeTelegram
    group: Chat
    users: list[User]
    rng: random.Random
    presses: int = 0
    answers: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    _checked: int = 0
    #: The deal being watched (a sprint match moves on to its next deal) and the
    #: private texts checked so far, per user id.
    _watched: int | None = None
    _private: dict[int, int] = field(default_factory=dict)
    _previous: int | None = None
    #: ``ended`` looks only at messages after this one (the next game of a series).
    since: int = 0
    #: The forum topic of the group the table plays in (None: General / no topics).
    topic: int | None = None
    _one_at_a_time: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: What each watched game's actions have shown so far (see :class:`Played`).
    _played: dict[int, Played] = field(default_factory=dict)

    async def _current(self, service: GameService, game_id: int) -> int:
        """The chat's running game, or ``game_id`` (the last one watched) if none."""
        running = [i.game_id for i in await service.running_games() if i.chat_id == self.group.id]
        return max(running) if running else game_id

    async def check_group(self, service: GameService, game_id: int) -> None:
        """Every group text shown since the last check against the cards that are
        secret now; under ``blind`` also each player's private texts against his own
        unseen cards. Secrets only shrink, so a later check can miss a leak but
        never invent one; checking after every press catches a leaked hand. Once a
        sprint match has dealt again, a text may still be the previous deal's (the
        outbox renders late): the texts are checked against what both deals keep
        secret (the previous one as it ended)."""
        before = self._watched if self._watched is not None else game_id
        now = await self._current(service, before)
        if now != before:
            self._previous = before
        self._watched = now
        ids = (now,) if self._previous is None else (self._previous, now)
        infos = [await service.game(g) for g in ids]
        games = [(i.game, i.seats) for i in infos if i.game is not None]
        assert len(games) == len(infos)
        played = [self._played.setdefault(g, Played()) for g in ids]
        secret = set.intersection(
            *(secret_cards(g, p) for (g, _), p in zip(games, played, strict=True))
        )
        shown = self.group.shown[self._checked :]
        self._checked += len(shown)
        self._found(shown, secret, "the group")
        for seat in infos[-1].seats:
            if seat.is_ai:
                continue
            chat = self.server.private_chat(next(u for u in self.users if u.id == seat.user_id))
            start = self._private.get(seat.user_id, 0)
            self._private[seat.user_id] = len(chat.shown)
            hidden = set.intersection(
                *(
                    unseen_own_cards(g, s.seat)
                    for g, seats in games
                    for s in seats
                    if s.user_id == seat.user_id
                )
            )
            self._found(chat.shown[start:], hidden, f"{seat.name}'s own chat")

    def _found(self, shown: list, secret: set[str], where: str) -> None:
        for entry in shown:
            found = cards_in(" ".join([entry.plain_text, *entry.button_texts])) & secret
            if found:
                self.leaks.append(
                    f"{where}: message {entry.message_id} showed {sorted(found)}"
                    f" (watching {self._watched}): {entry.plain_text!r}"
                )

    def bot_messages(self, chat: Chat) -> list[Message]:
        """The bot's messages in ``chat``; in the group, only those in the table's topic."""
        return [
            m
            for m in self.server.messages(chat, include_deleted=False)
            if m.sender.is_bot
            and m.text is not None
            and (chat is not self.group or m.topic == self.topic)
        ]

    def lobby(self) -> Message | None:
        for m in reversed(self.bot_messages(self.group)):
            if any(b.callback_data and b.callback_data.startswith("1j.") for b in m.buttons):
                return m
        return None

    def panel(self, user: User) -> Message | None:
        for m in reversed(self.bot_messages(self.server.private_chat(user))):
            if any(b.callback_data and b.callback_data.startswith("1g.") for b in m.buttons):
                return m
        return None

    def ended(self) -> Message | None:
        """The newest end message with Play again (after message ``since``)."""
        for m in reversed(self.bot_messages(self.group)):
            if m.message_id <= self.since:
                return None
            if any(b.callback_data and b.callback_data.startswith("1r.") for b in m.buttons):
                return m
        return None

    async def play_again(self, ended: Message) -> None:
        """Play again: the first user opens the lobby, every other one confirms (I'm in)."""
        again = next(d for d in ended.callback_data if d.startswith("1r."))
        await self.press(self.users[0], ended, again)

        def lobby() -> Message | None:
            for m in reversed(self.bot_messages(self.group)):
                if m.message_id > ended.message_id and any(
                    d.startswith("1a.") for d in m.callback_data
                ):
                    return m
            return None

        found = await self.server.wait_for(lobby, 10, what="the Play-again lobby")
        confirm = next(d for d in found.callback_data if d.startswith("1a."))
        for user in self.users[1:]:
            await self.press(user, found, confirm)

    async def confirm_again(self, user: User, lobby_id: int) -> str:
        """``user`` presses "I'm in" on the group's Play-again lobby ``lobby_id``."""
        from bot.ui import callbacks as cb

        data = cb.lobby("a", lobby_id)

        def found() -> Message | None:
            return next(
                (m for m in reversed(self.bot_messages(self.group)) if data in m.callback_data),
                None,
            )

        lobby = await self.server.wait_for(found, 10, what="the Play-again lobby")
        return await self.press(user, lobby, data)

    async def press(self, user: User, message: Message, data: str, check: bool = True) -> str:
        press = await user.press(message, data, check=check)
        answer = await press.wait(10)
        self.presses += 1
        text = answer.text or answer.url or ""
        self.answers.append(text)
        return text

    async def choose_setting(
        self, user: User, message_id: int, code: str, index: int
    ) -> tuple[str, str]:
        """Two taps of /settings: open option ``code``'s value list, choose its value
        ``index``; the two answers. The menu comes back after a choice."""
        from bot.ui import callbacks as cb

        menu = self.server.message(self.group, message_id)
        first = await self.press(user, menu, cb.setting(code))
        if first:
            return first, ""
        value = cb.setting(code, index)
        await self.server.wait_for(
            lambda: value in self.server.message(self.group, message_id).callback_data,
            10,
            what=f"the values of {code}",
        )
        second = await self.press(user, self.server.message(self.group, message_id), value)
        if not second:
            await self.server.wait_for(
                lambda: (
                    cb.setting(code) in self.server.message(self.group, message_id).callback_data
                ),
                10,
                what="the menu again",
            )
        return first, second

    async def open_lobby(self) -> Message:
        await self.users[0].send(self.group, "/newgame", topic=self.topic)
        await self.server.wait_for(lambda: self.lobby() is not None, 10, what="a lobby")
        lobby = self.lobby()
        assert lobby is not None
        return lobby

    async def join_all(self) -> None:
        for user in self.users:
            lobby = self.lobby()
            assert lobby is not None
            join = next(b for b in lobby.buttons if b.callback_data and b.callback_data[1] == "j")
            press = await user.press(lobby, join.callback_data or "")
            answer = await press.wait(10)
            if answer.url:  # never talked to the bot: the deep link opens the chat
                assert "?start=j" in answer.url
                await user.start_bot(answer.url.split("?start=")[1])
            name = user.first_name
            await self.server.wait_for(
                lambda name=name, lobby=lobby: name in ((self.lobby() or lobby).plain_text or ""),
                10,
                what=f"{name} in the lobby",
            )

    async def start(self) -> None:
        lobby = self.lobby()
        assert lobby is not None
        start = next(b for b in lobby.buttons if b.callback_data and b.callback_data[1] == "s")
        await self.press(self.users[0], lobby, start.callback_data or "")
        await self.server.wait_for(
            lambda: all(self.panel(u) is not None for u in self.users), 10, what="every panel"
        )

    async def play(
        self,
        user: User,
        stop: asyncio.Event,
        watch: tuple[GameService, int] | None = None,
        max_presses: int = 3000,
        prefer: Prefer | None = None,
        settle: Settle | None = None,
        refused_pause: float = 0.0,
    ) -> None:
        """Press random buttons of one's newest panel until the game ends; with
        ``watch``, check the group's texts for secret cards after every press;
        ``prefer`` may choose the button instead (a player with a plan); with
        ``settle``, the players press one at a time, each press followed by it;
        ``refused_pause``: after a refused press he waits this long (a player beside
        players on slower pages, who would otherwise press thousands of times)."""
        for _ in range(max_presses):
            if watch is not None:
                await self.check_group(*watch)
            if stop.is_set() or self.ended() is not None:
                return
            if settle is None:
                answer = await self._press_one(user, prefer)
            else:
                async with self._one_at_a_time:
                    answer = await self._press_one(user, prefer)
                    if answer is not None:
                        await settle()
            if answer is None:
                await asyncio.sleep(0.01)
            else:  # (a refusal's answer has a text)
                await asyncio.sleep(max(self.rng.random() * 0.01, refused_pause if answer else 0))
        raise AssertionError(f"{user.first_name} pressed {max_presses} times without an end")

    async def _press_one(self, user: User, prefer: Prefer | None) -> str | None:
        """Press a random button (or ``prefer``'s) of his newest panel; its answer's text
        (empty unless refused or noted), None if he has no panel yet."""
        panel = self.panel(user)
        if panel is None:
            return None
        buttons = [b for b in panel.buttons if b.callback_data]
        playable = [b for b in buttons if not b.text.startswith("(") and "↻" not in b.text]
        pool = playable if playable and self.rng.random() < 0.8 else buttons
        button = (prefer and prefer(user, buttons)) or self.rng.choice(pool)
        return await self.press(user, panel, button.callback_data or "")

    async def play_to_the_end(
        self,
        watch: tuple[GameService, int] | None = None,
        timeout: float = 120,
        prefer: Prefer | None = None,
        max_presses: int = 3000,
        settle: Settle | None = None,
    ) -> Message:
        stop = asyncio.Event()
        players = [
            asyncio.create_task(self.play(u, stop, watch, max_presses, prefer, settle))
            for u in self.users
        ]
        end = asyncio.create_task(
            self.server.wait_for(lambda: self.ended() is not None, timeout, what="the end")
        )
        try:
            await asyncio.wait([end, *players], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.set()
            await asyncio.gather(end, *players)
        if watch is not None:
            await self.check_group(*watch)
        ended = self.ended()
        assert ended is not None
        return ended


async def friends_and_admin(make_fake_telegram, players: int = 2):
    """A server (time 20x faster), ``players`` users who started the bot, and an
    admin who does not play, all in one supergroup."""
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Player{i}", started=True) for i in range(players)]
    boss = server.add_user("Admin", started=True)
    group = server.add_group("Friends", [*users, boss], admins=[boss])
    return server, users, boss, group
