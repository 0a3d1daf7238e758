"""Buttons by name: every kind routed to its own flow (never to another's), a group's
button refused elsewhere, a letter that names no kind refused, one /start parser."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from telegram import Chat, User

from bot.flows.context import Answer, Press
from bot.flows.router import Buttons
from bot.transport.topics import Pressed
from bot.ui import callbacks as cb
from bot.ui.callbacks import Kind

#: Each kind and the flow method that must handle it.
EXPECTED = {
    Kind.MOVE: "play.move",
    Kind.CONFIRM_LEAVE: "leaving.press",
    Kind.CONFIRM_CANCEL: "leaving.press",
    Kind.SUIT: "lobbies.suit",
    Kind.SKIP_VOTE: "skips.button",
    Kind.RECORD: "lobbies.record",
    Kind.PLAY_AGAIN: "lobbies.play_again",
    Kind.JOIN: "lobbies.join_button",
    Kind.CONFIRM_SEAT: "lobbies.confirm_seat",
    Kind.CAP: "lobbies.cap",
    Kind.AI_EASY: "lobbies.add_ai",
    Kind.AI_NORMAL: "lobbies.add_ai",
    Kind.AI_HARD: "lobbies.add_ai",
    Kind.LEAVE: "lobbies.leave_button",
    Kind.START: "lobbies.start_button",
}
FLOWS = {
    "lobbies": [
        "suit",
        "record",
        "play_again",
        "join_button",
        "confirm_seat",
        "cap",
        "add_ai",
        "leave_button",
        "start_button",
    ],
    "play": ["move"],
    "settings": ["button"],
    "lifecycle": ["language_button"],
    "leaving": ["press"],
    "skips": ["button"],
}


def _recording(flow: str, method: str) -> Any:
    async def run(press: Press) -> Answer:
        return Answer(f"{flow}.{method}")

    return run


def _buttons() -> Buttons:
    flows = {
        flow: SimpleNamespace(**{m: _recording(flow, m) for m in methods})
        for flow, methods in FLOWS.items()
    }
    return Buttons(SimpleNamespace(), **flows)  # type: ignore[arg-type]


def _press(data: cb.Callback, chat_type: str = Chat.SUPERGROUP) -> Press:
    chat = Chat(-1001, chat_type)
    user = User(7, "Ann", is_bot=False)
    return Press(SimpleNamespace(), user, Pressed(chat, 5, 0), data)  # type: ignore[arg-type]


def test_every_kind_reaches_its_own_flow() -> None:
    buttons = _buttons()
    assert set(buttons.routes) == set(Kind)
    for kind, flow in EXPECTED.items():
        answer = asyncio.run(buttons.routes[kind](_press(cb.Callback(kind, 17))))
        assert answer.text == flow, kind.name


def test_an_option_is_the_group_menu_or_ones_own_language() -> None:
    buttons = _buttons()
    menu = cb.Callback(Kind.OPTION, 0, setting="dk")
    own = cb.Callback(Kind.OPTION, 0, setting="uru")
    assert asyncio.run(buttons.routes[Kind.OPTION](_press(menu))).text == "settings.button"
    private = _press(own, Chat.PRIVATE)
    assert asyncio.run(buttons.routes[Kind.OPTION](private)).text == "lifecycle.language_button"
    # the group's menu pressed in a private chat is not the group's
    refused = asyncio.run(buttons.routes[Kind.OPTION](_press(menu, Chat.PRIVATE)))
    assert refused.alert and refused.text != "settings.button"


@pytest.mark.parametrize("kind", [Kind.START, Kind.JOIN, Kind.SKIP_VOTE, Kind.RECORD])
def test_a_groups_button_pressed_in_private_is_refused(kind: Kind) -> None:
    answer = asyncio.run(_buttons().routes[kind](_press(cb.Callback(kind, 17), Chat.PRIVATE)))
    assert answer.alert and answer.text != EXPECTED[kind]


def test_a_letter_that_names_no_kind_is_refused() -> None:
    with pytest.raises(ValueError):
        cb.encode(cb.Callback("b", 17))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        cb.lobby("g", 17)  # a move is not a lobby button
    with pytest.raises(cb.BadCallback):
        cb.decode("1b.h")
    assert cb.decode("1s.h").kind is Kind.START  # the wire letters stay


def test_deep_links_have_one_parser() -> None:
    assert cb.parse_start(cb.start_payload(cb.Link.JOIN, 17)) == (cb.Link.JOIN, 17)
    assert cb.parse_start(cb.start_payload(cb.Link.CARDS, 10**17)) == (cb.Link.CARDS, 10**17)
    for payload in ("", "j", "g", "x17", "j17x", "j²", "j" + "1" * 19, " j17"):
        assert cb.parse_start(payload) is None, payload


def test_the_mini_apps_start_parameter_has_one_parser() -> None:
    assert cb.parse_app(cb.app_payload(cb.AppLink.GAME, 17)) == (cb.AppLink.GAME, 17)
    assert cb.parse_app("17") == (cb.AppLink.GAME, 17)  # the tables' links of before
    assert cb.parse_app(cb.app_payload(cb.AppLink.REPLAY, 10**14)) == (cb.AppLink.REPLAY, 10**14)
    assert cb.app_payload(cb.AppLink.REPLAY, 5) == "r5"
    hostile = ("", "r", "0", "r0", "x17", "17x", "1" * 16, "r²", "١٧", " 17", "-17", "r-1")
    for payload in hostile:
        assert cb.parse_app(payload) is None, payload
    for bad in (0, -1, 10**15):
        with pytest.raises(ValueError):
            cb.app_payload(cb.AppLink.GAME, bad)


def test_an_answer_is_the_bot_apis_parameters() -> None:
    assert Answer().api() == {}
    assert Answer("no", alert=True).api() == {"text": "no", "show_alert": True}
    assert Answer(url="https://t.me/b?start=g1").api() == {"url": "https://t.me/b?start=g1"}
