"""Between two deals of a sprint match the group reads which deal ended, who lost
it, the score after it, and that the next deal follows (issue 27 item 4), in every
language; a knock-out says who is out and who is still in."""

from __future__ import annotations

import asyncio
import random

import pytest

from bot.screens.presenter import Presenter
from bot.ui import render
from durak import Game, Rules
from durak.selfplay import random_step
from durak.service import FINISHED, RUNNING, GameInfo, Seat

from .test_panels import ReleasingOutbox, Titles


class Langs:
    def __init__(self, lang: str) -> None:
        self.lang = lang

    async def of_user(self, user_id: int) -> str:
        return self.lang

    async def of_group(self, chat_id: int, user_id: int | None = None) -> str:
        return self.lang


def first_deal(names: str, seed: int) -> tuple[GameInfo, GameInfo]:
    """The first deal of a match played to its end, and the deal after it."""
    rules = Rules(sprint=True)
    for s in range(seed, seed + 50):  # a deal with a fool (a drawn deal is rarer)
        game = Game.from_seed(rules, tuple(names), s)
        rng = random.Random(s)
        while game.result is None:
            game.apply(*random_step(game, rng))
        if len(game.result.losers) == 1:
            break
    series = game.next_game()
    assert series.continues
    seats = tuple(Seat(i, 100 + i, n) for i, n in enumerate(names))
    ended = GameInfo(1, -5, FINISHED, game.view(None).moves, seats, 100, rules, game, 0.0, 0.0)
    left = series.players or game.players
    nxt = Game.from_seed(rules, left, 4, series)
    nseats = tuple(Seat(i, 100 + names.index(n), n) for i, n in enumerate(left))
    following = GameInfo(2, -5, RUNNING, 0, nseats, 100, rules, nxt, 0.0, 0.0, previous_game_id=1)
    return ended, following


def between(ended: GameInfo, following: GameInfo, lang: str) -> str:
    outbox = ReleasingOutbox()
    presenter = Presenter(None, outbox, Titles(), "durakbot", Langs(lang))  # type: ignore[arg-type]
    asyncio.run(presenter.ended(ended, following))
    (text,) = outbox.sent
    return text


WORDS = {  # (deal ended, lost it, score, deal follows)
    "en": ("Deal 1 of 10 is over", "lost it", "score", "Deal 2 follows."),
    "ru": ("Сдача 1 из 10 сыграна", "проиграл", "Счёт матча", "Дальше сдача 2."),
    "uk": ("Роздачу 1 з 10 зіграно", "програв", "Рахунок матчу", "Далі роздача 2."),
    "pl": ("Rozdanie 1 z 10 zakończone", "przegrał", "Wynik meczu", "Teraz rozdanie 2."),
}


@pytest.mark.parametrize("lang", sorted(WORDS))
def test_a_sprint_deal_says_which_deal_ended_who_lost_the_score_and_the_next(lang):
    ended, following = first_deal("AB", 3)
    assert ended.game is not None and ended.game.result is not None
    (loser,) = ended.game.result.losers
    winner = 1 - loser
    text = between(ended, following, lang)
    done, lost, score, follows = WORDS[lang]
    first, *rest = text.splitlines()
    assert first.startswith("🏁 " + done) and lost in first and "AB"[loser] in first, text
    names = "AB"
    expected = " : ".join(f"{n} {int(i == winner)}" for i, n in enumerate(names))
    assert any(score in line and expected in line for line in rest), text
    assert rest[-1] == follows, text
    assert "deal 2 of 10" not in text.lower()  # the next deal's number beside the old score


def test_a_knock_out_deal_says_who_is_out_and_who_is_still_in():
    ended, following = first_deal("ABC", 5)
    assert ended.game is not None and ended.game.result is not None
    (loser,) = ended.game.result.losers
    text = between(ended, following, "en")
    lines = text.splitlines()
    assert lines[0] == f"🏁 Knock-out, deal 1 is over: {'ABC'[loser]} lost it and is out.", text
    still = ", ".join(n for i, n in enumerate("ABC") if i != loser)
    assert f"Still in: {still}" in lines and lines[-1] == "Deal 2 follows.", text


def test_the_table_of_an_ended_deal_gives_that_deals_number_beside_its_score():
    ended, following = first_deal("AB", 3)
    table = render.Table(1, 9, "Friends", ended.seats, ended.game.view(None))
    text = render.table_text(table)
    assert "Sprint match, deal 1 of 10 is over: A" in text and "deal 2 of 10" not in text
    nxt = render.Table(2, 0, "Friends", following.seats, following.game.view(None))
    assert "Sprint match, deal 2 of 10: A" in render.table_text(nxt)  # the next deal's own
    three, _ = first_deal("ABC", 5)
    text = render.table_text(render.Table(1, 9, "x", three.seats, three.game.view(None)))
    assert "Knock-out, deal 1; still in:" in text
