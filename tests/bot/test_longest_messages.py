"""Issue 26 item 8: the longest messages the bot can send fit Telegram's limits.

Six players with 64-character names (longer than the bot keeps: it cuts a name at 48;
with HTML's escaped characters and emoji), a 128-character group title, a 52-card deck,
in every game family (classic, perevodnoy, each variant of VARIANTS.md the bot offers,
own trumps, piled, road: with their 36 cards) and every language: at every state of a
random game the group's table and every seat's panel (acting, waiting, and as Refresh
shows it), the end, the lobby, the rules, /help, /stats and /history. Every text is under
4,096 characters (after its HTML is parsed, in UTF-16 code units as Telegram counts),
every callback under 64 bytes, and the table stays readable: each seat has a line of his
own that names him."""

from __future__ import annotations

import random
import time

import pytest

from bot.screens import presenter
from bot.ui import events, keyboards, ratings_text, render
from bot.ui.i18n import language
from durak import Game, Rules
from durak.selfplay import random_step
from durak.service import Ending, GameInfo, Seat, Tally
from durak.service.standings import Fools, GroupStats, RatingLine
from tests.fake_telegram._text import parse_html, utf16_len

LANGS = ("en", "ru", "uk", "pl")
TEXT_MAX = 4096
CALLBACK_MAX = 64
TITLE = ("Длинная группа & <друзья> 🃏 " * 8)[:128]
GAME_ID = 2**31 - 1  # a database's ids grow: the longest callbacks
VERSION = 99_999  # a long game's version
STEPS = 3000  # a random game's actions at most (the pile games take the longest)


def names(n: int) -> list[str]:
    """Six different 64-character names, with characters HTML escapes and emoji."""
    return [(f"{i} Ёлка & <Ann> 🂡😀 Łukasz " * 4)[:64] for i in range(1, n + 1)]


FAMILIES = {
    "classic": Rules(deck=52),
    "perevodnoy": Rules(
        deck=52, transfer=True, transfer_by_showing_trump=True, trump_exchange=True
    ),
    "sprint": Rules(deck=52, sprint=True),
    "blind": Rules(deck=52, blind=True),
    "english": Rules(deck=52, english=True),
    "damka": Rules(deck=52, damka=True, return_last_card=True),
    "japanese": Rules(deck=52, japanese="S"),
    "trump_change": Rules(deck=52, trump_change=True, show_last_discard=True),
    "partial_defence": Rules(deck=52, partial_defence=True, bout_limit=5),
    # the pile games are played with 36 cards (PILE-GAMES.md)
    "own_trumps": Rules(game="own_trumps"),
    "piled": Rules(game="piled"),
    "road": Rules(game="road", show_last_discard=True),
}


def plain_length(html: str) -> int:
    plain, _entities = parse_html(html)
    return utf16_len(plain)


def check(where: str, text: str, markup: keyboards.Markup | None) -> None:
    length = plain_length(text)
    assert length <= TEXT_MAX, f"{where}: {length} characters"
    for row in (markup or {}).get("inline_keyboard", ()):
        for b in row:
            data = b.get("callback_data")
            if data is not None:
                assert len(data.encode()) <= CALLBACK_MAX, f"{where}: callback {data!r}"


def readable(where: str, text: str, seats: tuple[Seat, ...]) -> None:
    """Each seat has a line of its own: one that names him (his whole name) and no other."""
    plain, _entities = parse_html(text)
    lines = plain.split("\n")
    for seat in seats:
        own = [x for x in lines if seat.name in x and sum(s.name in x for s in seats) == 1]
        assert own, f"{where}: no line of his own for {seat.name!r}"


@pytest.mark.long
@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_longest_table_and_panels_fit_telegram(family):
    rules = FAMILIES[family]
    _low, high = rules.player_range()
    n = min(6, high)
    g = Game.from_seed(rules, names(n), 7)
    seats = tuple(Seat(i, 100 + i, name) for i, name in enumerate(g.players))
    rng = random.Random(family)
    for step in range(STEPS):
        story = events.story(GAME_ID, g)
        t = render.Table(GAME_ID, VERSION + step, TITLE, seats, g.view(None), None, 20, story, ())
        for lang in LANGS:
            where = f"{family} {lang} step {step}"
            text, markup = presenter._table_content(lang, t, g, "a" * 32, False, "x" * 60)
            check(f"{where} table", text, markup)
            if step % 25 == 0:
                readable(f"{where} table", text, seats)
            for s in range(n):
                for full in (False, True):
                    text, panel = presenter._panel_content(lang, t, g, s, False, full)
                    check(f"{where} seat {s}", text, panel)
        if g.result is not None:
            break
        g.apply(*random_step(g, rng))
    assert g.result is not None, f"{family}: no end in {STEPS} steps"
    info = GameInfo(GAME_ID, -100, "finished", VERSION, seats, 1, rules, g, 0.0, 0.0, ending=None)
    for lang in LANGS:
        with language(lang):
            check(f"{family} {lang} end", end_text(info, g, seats), None)
            check(f"{family} {lang} rules", render.rules_text(rules), None)
            lobby = render.lobby_text(seats, rules, seats[0].name, "")
            check(f"{family} {lang} lobby", lobby, keyboards.lobby(GAME_ID))
            for s in range(n):  # the end's panels
                text, panel = presenter._panel_content(lang, t, g, s, True)
                check(f"{family} {lang} end panel {s}", text, panel)


def end_text(info: GameInfo, g: Game, seats: tuple[Seat, ...]) -> str:
    """The group's end message as ``Presenter.ended`` writes it (with the series line)."""
    view = g.view(None)
    reason = getattr(view, "end_reason", None)
    lines = ["🏁 " + render.outcome_line(seats, g.result, info.ending, reason)]
    order = render.out_order_line(seats, events.story(info.game_id, g).out_order)
    if order:
        lines.append(order)
    match = getattr(view, "match", None)
    if match is not None:
        lines += render.match_lines(match)
    tallies = [Tally(-100, s.user_id, s.name, 99_999, 99_999, 99_999) for s in seats]
    lines.append(render.series_line(tallies))
    lines.append("The next deal follows.")
    return "\n".join(line for line in lines if line)


@pytest.mark.parametrize("lang", LANGS)
def test_stats_history_and_help_fit_telegram(lang):
    seats = tuple(Seat(i, 100 + i, name) for i, name in enumerate(names(6)))
    table = tuple(
        RatingLine(100 + i, "", name, 1999 - i, 99_999, 99_999, 99, 99_999, 99_999)
        for i, name in enumerate(names(10))
    )
    stats = GroupStats(table, Fools(table, 99_999), Fools(table, 99_999), Fools(table, 99_999))
    rules = Rules(deck=52)
    endings = [
        Ending("played", (5,)),
        Ending("surrender", (2,), by_user=102),
        Ending("cancelled", by_user=100),
        Ending("played", draw=True),
    ]
    games = [
        GameInfo(
            GAME_ID - k, -100, "finished", VERSION, seats, 100, rules, None, 0.0,
            time.time(), ending=endings[k % len(endings)],
        )
        for k in range(10)  # /history shows the last 10
    ]  # fmt: skip
    with language(lang):
        check(f"{lang} stats", ratings_text.group_stats_text(stats, TITLE), None)
        check(f"{lang} history", render.history_text(games), None)
        check(f"{lang} help", render.help_text(), None)
