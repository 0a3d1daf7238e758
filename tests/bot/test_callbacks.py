from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.ui import callbacks as cb
from durak import Attack, Defend, ExchangeTrump, Pass, ShowTrump, Take, Transfer, parse_card
from durak.cards import deck

CARDS = deck(52)
MOVES = st.one_of(
    st.sampled_from(CARDS).map(cb.Tap),
    st.sampled_from(CARDS).map(lambda c: Attack((c,))),
    st.tuples(st.sampled_from(CARDS), st.sampled_from(CARDS)).map(lambda p: Defend(*p)),
    st.sampled_from(CARDS).map(Transfer),
    st.sampled_from(CARDS).map(ShowTrump),
    st.sampled_from([Take(), Pass(), ExchangeTrump(), cb.Back(), cb.Refresh()]),
)


@given(st.integers(0, 36**12 - 1), st.none() | st.integers(0, 36**12 - 1), MOVES)
def test_moves_round_trip_within_64_bytes(game_id, version, move):
    """With the state version (a pass, a slot) or without (any other button)."""
    data = cb.move(game_id, version, move)
    assert len(data.encode()) <= 64 and data.isascii()
    assert cb.decode(data) == cb.Callback("g", game_id, version, move)


@given(st.sampled_from("jlsrhxyz"), st.integers(0, 10**15))
def test_lobby_buttons_round_trip(kind, game_id):
    assert cb.decode(cb.lobby(kind, game_id)) == cb.Callback(kind, game_id)


@given(st.from_regex(r"[a-z]{1,3}", fullmatch=True), st.none() | st.integers(0, 99))
def test_settings_buttons_round_trip(code, choice):
    """An option's button (``choice`` None: open its list) and its value buttons."""
    data = cb.setting(code, choice)
    assert cb.decode(data) == cb.Callback("o", 0, setting=code, choice=choice)


@pytest.mark.parametrize(
    "data",
    [
        "",
        "x",
        "2j.1",
        "1j",
        "1j.",
        "1j.A",
        "1q.1",
        "1g.1",
        "1g.1.2",
        "1g.1.2.z",
        "1g.1.2.cXX",
        "1g.1.2.c10H",
        "1g.1.2.dTH",
        "1g.1.2.tt",
        "1j.1.2.t",
        "1g.-1.2.t",
        "1g.1.2.t\n",
        "1g." + "1" * 40 + ".1.t",
        "1o.dk.01",
        "1o.dk.100",
        "1o.dk.",
        "1o.dk.-1",
        "1o.dk.a",
        "1o.dk.1.2",
        "💥",
        None,
        5,
    ],
)
def test_garbage_is_refused(data):
    with pytest.raises(cb.BadCallback):
        cb.decode(data)


@given(st.text(max_size=80))
def test_any_text_either_decodes_or_is_refused(text):
    try:
        decoded = cb.decode(text)
    except cb.BadCallback:
        return
    assert cb.encode(decoded) == text


def test_ten_is_written_as_t():
    assert cb.move(1, 1, Attack((parse_card("10H"),))) == "1g.1.1.aTH"
    assert cb.move(1, None, Attack((parse_card("10H"),))) == "1g.1.aTH"
    assert cb.decode("1g.1.p") == cb.Callback("g", 1, None, Pass())
