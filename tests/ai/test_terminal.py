"""Terminal play, driven by a scripted stdin."""

from __future__ import annotations

import io
import random
import re
import subprocess
import sys
from pathlib import Path

from durak import Rules, parse_cards
from durak.actions import PASS, TAKE, Attack, Defend
from durak.terminal import parse_choice, play_terminal

ROOT = Path(__file__).resolve().parents[2]


def script(*lines: str, then: str = "1", times: int = 2000) -> io.StringIO:
    return io.StringIO("\n".join([*lines, *[then] * times]) + "\n")


def test_a_whole_game_with_bad_input_on_the_way():
    out = io.StringIO()
    stdin = script("hello", "0", "99", "", "zz 7q", "take it")
    code = play_terminal(3, "normal", Rules(), seed=3, stdin=stdin, out=out)
    text = out.getvalue()
    assert code == 0
    assert "not understood: 'hello'" in text
    assert "choose 1 to" in text
    assert "your hand" in text and "table:" in text and "stock:" in text
    assert "Game over:" in text.splitlines()[-1]


class TextAnswers:
    """A stdin that reads the last menu printed and answers one of its options
    in words and card text (``7♥ 7♠``, ``8h 10h``, ``transfer 8d``, ``take``)."""

    def __init__(self, out: io.StringIO, seed: int) -> None:
        self.out = out
        self.rng = random.Random(seed)
        self.used: set[str] = set()

    def readline(self) -> str:
        tail = self.out.getvalue().rsplit("your hand", 1)[-1]
        options = re.findall(r"^  \d+\) (.*)$", tail, re.M)
        choice = self.rng.choice(options)
        kind, _, rest = choice.partition(" ")
        self.used.add(kind)
        if kind == "play":
            return rest + "\n"
        if kind == "cover":
            attack, _, card = rest.partition(" with ")
            return f"{attack} {card}\n"
        if choice.startswith("transfer by showing"):
            return "show " + choice.split()[-1] + "\n"
        if kind == "transfer":
            return "transfer " + choice.split()[-1] + "\n"
        if kind == "exchange":
            return "exchange\n"
        return choice + "\n"


def test_answers_in_words_and_card_text_under_the_variants():
    rules = Rules(transfer=True, transfer_by_showing_trump=True, trump_exchange=True)
    used: set[str] = set()
    for seed in range(6):
        out = io.StringIO()
        answers = TextAnswers(out, seed)
        code = play_terminal(3, "easy", rules, seed=seed, stdin=answers, out=out)
        text = out.getvalue()
        assert code == 0 and "Game over:" in text
        assert "not understood" not in text and "no such move" not in text
        assert "several moves" not in text
        used |= answers.used
    assert {"play", "cover", "take", "pass"} <= used


def test_end_of_input_leaves_the_game():
    out = io.StringIO()
    assert play_terminal(2, "easy", Rules(), seed=1, stdin=io.StringIO("1\n"), out=out) == 1
    assert "You left the game." in out.getvalue()


def test_parse_choice():
    seven, eight, nine, ten = parse_cards("7h 8h 9h 10h")
    legal = (Defend(seven, nine), Defend(seven, ten), Defend(eight, ten), TAKE)
    assert parse_choice("2", legal) == Defend(seven, ten)
    assert parse_choice(" t ", legal) == TAKE
    assert parse_choice("9h", legal) == Defend(seven, nine)
    assert parse_choice("7h 10♥", legal) == Defend(seven, ten)
    assert parse_choice("10h", legal) == "that could mean several moves: use the number"
    assert parse_choice("7h", legal) == "no such move now"
    assert parse_choice("pass", legal) == "you cannot pass now"
    assert parse_choice("5", legal) == "choose 1 to 4"
    throw = (Attack((seven,)), Attack((nine,)), Attack((seven, nine)), PASS)
    assert parse_choice("9h 7h", throw) == Attack((seven, nine))
    assert parse_choice("p", throw) == PASS
    assert parse_choice("8s", throw) == "no such move now"


def test_the_play_command():
    stdin = "\n".join(["1"] * 2000) + "\n"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "durak",
            "play",
            "--players",
            "2",
            "--level",
            "easy",
            "--seed",
            "4",
            "--rules",
            '{"deck": 24}',
        ],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "Game over:" in out.stdout
