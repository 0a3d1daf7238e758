"""Issue 12 item 1 and issue 11 items 1 and 6: a panel is edited only when it
changes for its reader, whoever the game waits on is told once per wait, and only
a pass carries the table it was made for."""

from __future__ import annotations

import asyncio
import random
from typing import Any

from bot.screens.presenter import Presenter, acting, role
from bot.ui import callbacks as cb
from durak import Game, Pass, Rules
from durak.selfplay import random_step
from durak.service import FINISHED, RUNNING, GameInfo, Seat


class Outbox:
    """Records what the presenter asks to show, as if it were sent at once (a content
    made when sent is decided on then: here, the state it was queued in)."""

    def __init__(self) -> None:
        self.shown: list[tuple[int, str, Any, bool, int]] = []

    def show_later(
        self,
        chat_id: int,
        slot: str,
        render: Any,
        *,
        notify: bool = False,
        priority: int = 0,
        thread: int = 0,
        decide: Any = None,
    ) -> None:
        if decide is not None:
            notify = decide() or notify
        self.shown.append((chat_id, slot, render, notify, priority))

    def show(
        self,
        chat_id: int,
        slot: str,
        text: str,
        markup: Any = None,
        *,
        notify: bool = False,
        priority: int = 0,
        thread: int = 0,
    ) -> None:
        self.shown.append((chat_id, slot, lambda: (text, markup), notify, priority))

    def message_id(self, chat_id: int, slot: str) -> int | None:
        return 1

    def remember(self, chat_id: int, slot: str, message_id: int) -> None:
        pass


class Titles:
    async def get(self, chat_id: int) -> str:
        return "Friends"


class Langs:
    async def of_user(self, user_id: int) -> str:
        return "en"

    async def of_group(self, chat_id: int, user_id: int | None = None) -> str:
        return "en"


def info_of(game: Game, game_id: int = 1, timeouts: int = 0) -> GameInfo:
    seats = tuple(Seat(s, 100 + s, name, timeouts=timeouts) for s, name in enumerate("ABCD"))
    version = game.view(None).moves
    return GameInfo(game_id, -5, RUNNING, version, seats, 100, Rules(), game, 0.0, 0.0)


def play(
    rng_seed: int = 7,
    steps: int = 400,
    movers: list[int] | None = None,
    timeouts: int = 0,
    other_game: bool = False,
):
    """A random 4-player game shown after every action: (before, after, shows) each step.
    ``movers`` gets the seat that made each step; ``timeouts``: every seat's count of
    timed-out decisions in a row, as the service reports it; ``other_game``: the same
    four also play a second game (its panels are in their chats too)."""
    outbox = Outbox()
    presenter = Presenter(None, outbox, Titles(), "durakbot", Langs())  # type: ignore[arg-type]
    if other_game:
        asyncio.run(presenter.game(2, info_of(Game.from_seed(Rules(), "ABCD", 99), 2)))
    game = Game.from_seed(Rules(), ("A", "B", "C", "D"), rng_seed)
    rng = random.Random(rng_seed)
    outbox.shown.clear()
    asyncio.run(presenter.game(1, info_of(game, timeouts=timeouts)))
    dealt = [game.view(s) for s in range(4)]
    yield dealt, dealt, list(outbox.shown)  # the deal: the opener is told
    for _ in range(steps):
        if game.result is not None:
            return
        before = [game.view(s) for s in range(4)]
        seat, action = random_step(game, rng)
        game.apply(seat, action)
        if movers is not None:
            movers.append(seat)
        outbox.shown.clear()
        asyncio.run(presenter.game(1, info_of(game, timeouts=timeouts)))
        yield before, [game.view(s) for s in range(4)], list(outbox.shown)


def panels(shows: list[tuple[int, str, Any, bool, int]]) -> dict[int, tuple[Any, bool]]:
    return {chat - 100: (render, notify) for chat, slot, render, notify, _p in shows if chat > 0}


def test_a_panel_changes_only_when_its_reader_has_something_new():
    edited = waiting_skipped = 0
    for before, after, shows in play():
        if before is after:
            continue  # the deal: every panel is new
        shown = panels(shows)
        for s in range(4):
            b, a = before[s], after[s]
            same_for_him = (
                not acting(b, s)
                and not acting(a, s)
                and b.hand == a.hand
                and (b.attacker == s, b.defender == s) == (a.attacker == s, a.defender == s)
                and a.outcome is None
            )
            if acting(a, s) or a.outcome is not None:
                assert s in shown  # who must act sees the table as it is now
            if same_for_him:
                assert s not in shown  # nothing new for him: no edit
                waiting_skipped += 1
            if s in shown:
                edited += 1
                text, _markup = shown[s][0]()
                if not acting(a, s) and a.outcome is None:
                    assert "Stock:" not in text and "Your cards" in text  # no table
    assert waiting_skipped > 50 and edited > 50  # both happened in this game


def told_per_wait(seed: int, continuing: bool = True, **kwargs: Any) -> tuple[int, int, int]:
    """Plays a game (``play``) and checks every panel shown as the player sees it: a
    push only for what he must do, at most one per bout, and a bout's first panel
    that asks him is a push unless it continues the wait he is in on screen (his
    last panel asked him and he has acted since: RULES-NOTES.md 75); then it is an
    edit (``continuing=False``: never). Returns (waits, pushes, continued waits)."""
    told: set[tuple[int, int]] = set()
    bout, last, had_cards = 0, None, False  # bouts so far, who attacks whom and the stock
    asking = dict.fromkeys(range(4), False)  # his last panel shown asked him
    acted = dict.fromkeys(range(4), False)  # he made a move since
    movers: list[int] = []
    waits = pushes = continued = 0
    for _before, after, shows in play(seed, movers=movers, **kwargs):
        if movers:
            acted[movers[-1]] = True
        now = (after[0].attacker, after[0].defender, after[0].stock, after[0].discard)
        if now != last or (had_cards and not after[0].table):
            bout += 1  # a new bout: another pair, stock or discard, or the table cleared
        last, had_cards = now, bool(after[0].table)
        for s, (_render, notify) in panels(shows).items():
            pushes += notify
            if role(after[s], s) is None:
                assert not notify  # a push only for what he must do
                asking[s] = False
                continue
            if (s, bout) in told:
                assert not notify  # once per wait (a bout)
            else:
                told.add((s, bout))
                waits += 1
                continues = continuing and asking[s] and acted[s]
                continued += continues
                assert notify == (not continues), (s, bout, continues)
            asking[s], acted[s] = True, False
    return waits, pushes, continued


def test_whoever_the_game_waits_on_is_told_once_per_wait():
    waits = pushes = continued = 0
    for seed in (11, 12, 13):
        w, p, c = told_per_wait(seed)
        waits, pushes, continued = waits + w, pushes + p, continued + c
    assert waits > 60 and pushes > 40 and continued > 10


def test_a_wait_continues_only_for_who_pressed_himself_in_his_only_game():
    """A timed-out player (the clock decided for him) and one with a second game's
    panel in his chat (his panel may not be the newest message) get a push for every
    wait: nothing continues."""
    for kwargs in ({"timeouts": 1}, {"other_game": True}):
        waits, pushes, _continued = told_per_wait(11, continuing=False, **kwargs)
        assert pushes == waits > 20


def test_only_a_pass_carries_the_table_it_was_made_for():
    for _before, _after, shows in play(3, 60):
        for _s, (render, _n) in panels(shows).items():
            _text, markup = render()
            if markup is None:
                continue
            for row in markup["inline_keyboard"]:
                for b in row:
                    data = cb.decode(b["callback_data"])
                    assert (data.version is not None) == isinstance(data.move, Pass)


class ReleasingOutbox(Outbox):
    """Keeps message ids as the real outbox does when nothing is queued for a slot:
    ``release`` drops the id at once."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[tuple[int, str], int] = {}
        self.sent: list[str] = []

    def message_id(self, chat_id: int, slot: str) -> int | None:
        return self.ids.get((chat_id, slot))

    def remember(self, chat_id: int, slot: str, message_id: int) -> None:
        self.ids[(chat_id, slot)] = message_id

    def release(self, chat_id: int, slot: str) -> None:
        self.ids.pop((chat_id, slot), None)

    def forget(self, chat_id: int, slot: str) -> None:
        self.ids.pop((chat_id, slot), None)

    def send(
        self, chat_id: int, text: str, markup: Any = None, *, priority: int = 0, thread: int = 0
    ) -> None:
        self.sent.append(text)


def test_a_sprint_deal_hands_its_table_message_to_the_next_deal():
    """Even when the ended deal's last table edit was already sent (its slot let go
    as its panels are shown for the last time), and the next deal's info does not
    know the message yet (the service copies it after starting the deal)."""
    rules = Rules(sprint=True)
    game = Game.from_seed(rules, ("A", "B"), 3)
    rng = random.Random(3)
    while game.result is None:
        game.apply(*random_step(game, rng))
    assert game.next_game().continues
    seats = tuple(Seat(s, 100 + s, name) for s, name in enumerate("AB"))
    ended = GameInfo(1, -5, FINISHED, game.view(None).moves, seats, 100, rules, game, 0.0, 0.0)
    nxt = Game.from_seed(rules, ("A", "B"), 4, game.next_game())
    following = GameInfo(2, -5, RUNNING, 0, seats, 100, rules, nxt, 0.0, 0.0, previous_game_id=1)

    class Service:
        async def next_deal(self, game_id: int) -> GameInfo:
            assert game_id == 1
            return following

    outbox = ReleasingOutbox()
    outbox.remember(-5, "table:1", 77)
    presenter = Presenter(Service(), outbox, Titles(), "durakbot", Langs())  # type: ignore[arg-type]
    asyncio.run(presenter.changed(ended, finished=True))
    assert outbox.ids.get((-5, "table:2")) == 77
    assert any(chat == -5 and slot == "table:2" for chat, slot, *_ in outbox.shown)
    assert any("Deal 2 follows." in text for text in outbox.sent)


class LaggingOutbox(Outbox):
    """As the real outbox paces a private chat (about one message a second, the game
    moves faster): a slot's content waits in the chat's queue, newer content replaces
    it (a notification asked for stays); when the chat's turn comes it is made, and
    decided on, from the game as it is then, and reaches the reader a while later
    (the request in flight), while newer content queues behind it."""

    def __init__(self) -> None:
        super().__init__()
        self.queued: dict[int, list[Any]] = {}  # chat: [render, notify, decide]
        self.in_flight: dict[int, tuple[str, bool]] = {}  # chat: (text, notifies)

    def show_later(
        self,
        chat_id: int,
        slot: str,
        render: Any,
        *,
        notify: bool = False,
        priority: int = 0,
        thread: int = 0,
        decide: Any = None,
    ) -> None:
        if chat_id < 0:
            return  # the group's table: not what this outbox is about
        queued = self.queued.setdefault(chat_id, [render, False, None])
        queued[0], queued[1], queued[2] = render, queued[1] or notify, decide or queued[2]

    def step(self, chat_id: int, rng: random.Random) -> tuple[str, bool] | None:
        """A moment of the chat: the request in flight may arrive (its text and whether
        it notified are returned), or the queued content may be sent."""
        if chat_id in self.in_flight:
            return self.in_flight.pop(chat_id) if rng.random() < 0.5 else None
        queued = self.queued.get(chat_id)
        if queued is not None and rng.random() < 0.5:
            del self.queued[chat_id]
            render, notify, decide = queued
            text, _markup = render()
            self.in_flight[chat_id] = (text, (decide() or notify) if decide else notify)
        return None


def bout_shown(text: str) -> str:
    """The bout a panel with the table shows (constant within a bout), "" without."""
    return "|".join(x for x in text.split("\n") if x.startswith("Stock:") or " attacks " in x)


def test_every_wait_begins_with_a_push_when_panels_are_sent_late():
    """As the player sees his chat: a panel that asks something of him arrives as a
    notification, unless a notification earlier in the same bout asked him already
    (RULES-NOTES.md), and no notification asks nothing of him. The panels are sent a
    while after the moves that queued them (the chat's pace), so what one shows is
    newer than the state that queued it; the bot shows the game after most moves, not
    all (two moves in quick succession are shown once, as the game is then); and now
    and then a player's own press shows his panel afresh over what is queued."""
    waits = pushes = 0
    for seed in range(8):
        outbox = LaggingOutbox()
        presenter = Presenter(None, outbox, Titles(), "durakbot", Langs())  # type: ignore[arg-type]
        game = Game.from_seed(Rules(), ("A", "B", "C", "D"), seed)
        rng = random.Random(seed)
        asking = dict.fromkeys(range(4), False)
        pushed_in: dict[int, str] = {}
        asyncio.run(presenter.game(1, info_of(game)))
        for _ in range(500):
            if game.result is not None:
                break
            if rng.random() < 0.7:
                asyncio.run(presenter.game(1, info_of(game)))
            if rng.random() < 0.1:  # a Refresh, or a press on a panel left behind
                asyncio.run(presenter.panel(info_of(game), 100 + rng.randrange(4)))
            for s in range(4):
                sent = outbox.step(100 + s, rng)
                if sent is None:
                    continue
                text, notified = sent
                now, bout = "👉" in text, bout_shown(text)
                if notified:
                    pushes += 1
                    assert now, text  # a push only for what he can do now
                    pushed_in[s] = bout
                if now and not asking[s]:
                    waits += 1
                    assert notified or pushed_in.get(s) == bout, text
                asking[s] = now
            game.apply(*random_step(game, rng))
    assert waits > 100 and pushes > 100


def test_an_away_player_and_one_who_left_get_no_push():
    """The AI plays their seats: nothing asks anything of them (issue 11), even when a
    panel of theirs is shown afresh (a press, Refresh) or sent late."""
    seats = (
        Seat(0, 100, "A"),
        Seat(1, 101, "B"),
        Seat(2, 102, "C", away=True),
        Seat(3, 103, "D", away=True, left=True),
    )
    outbox = LaggingOutbox()
    presenter = Presenter(None, outbox, Titles(), "durakbot", Langs())  # type: ignore[arg-type]
    game = Game.from_seed(Rules(), ("A", "B", "C", "D"), 5)
    rng = random.Random(5)
    pushes: dict[int, int] = dict.fromkeys(range(4), 0)
    for _ in range(400):
        if game.result is not None:
            break
        info = GameInfo(1, -5, RUNNING, game.view(None).moves, seats, 100, Rules(), game, 0, 0)
        asyncio.run(presenter.game(1, info))
        asyncio.run(presenter.panel(info, 100 + rng.randrange(4)))
        for s in range(4):
            sent = outbox.step(100 + s, rng)
            pushes[s] += sent is not None and sent[1]
        game.apply(*random_step(game, rng))
    assert pushes[0] > 0 and pushes[1] > 0  # the others are told
    assert pushes[2] == pushes[3] == 0
