"""The shard key (bot/sharding.py): every update of a game maps to its group's key,
whatever kind of update it is and wherever it was sent from."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from telegram import Update

from bot import callbacks as cb
from bot.request import slim_update
from bot.sharding import ShardKeys, shard_key, shard_of
from durak import Pass, Take

BOT = {"id": 42, "is_bot": True, "first_name": "Durak", "username": "durak_bot"}
COMMANDS = [
    "/newgame",
    "/durak",
    "/newgame road",
    "/start",
    "/help",
    "/rules",
    "/stats",
    "/leave",
    "/settings",
    "/cancel",
    "/kick",
    "/history",
    "/language",
    "/newgame@durak_bot",
]
_ids = iter(range(1, 10**9))


def _user(user_id: int) -> dict[str, Any]:
    return {"id": user_id, "is_bot": False, "first_name": f"U{user_id}"}


def _message(chat: dict[str, Any], user_id: int, **fields: Any) -> dict[str, Any]:
    return {"message_id": next(_ids), "date": 0, "chat": chat, "from": _user(user_id), **fields}


def _group(chat_id: int) -> dict[str, Any]:
    return {"id": chat_id, "type": "supergroup", "title": "Friends"}


def _private(user_id: int) -> dict[str, Any]:
    return {"id": user_id, "type": "private", "first_name": f"U{user_id}"}


def _update(**body: Any) -> Update:
    update = Update.de_json({"update_id": next(_ids), **body}, None)
    assert update is not None
    return update


def _press(chat: dict[str, Any], user_id: int, data: str, slim: bool = True) -> Update:
    """A press as the bot gets it: its message slimmed as getUpdates and the webhook do
    (``slim``), or as PTB builds the whole message."""
    body = {
        "update_id": next(_ids),
        "callback_query": {
            "id": str(next(_ids)),
            "from": _user(user_id),
            "chat_instance": "x",
            "data": data,
            "message": _message(chat, BOT["id"], text="panel"),
        },
    }
    if slim:
        slim_update(body)
        assert "message" not in body["callback_query"]
    update = Update.de_json(body, None)
    assert update is not None
    return update


def test_a_press_routes_the_same_slimmed_or_not() -> None:
    game = cb.lobby("j", 7)
    for chat, expected in ((_group(-1001), -1001), (_private(5), 70)):
        keys = {
            shard_key(_press(chat, 5, data, slim), {7: 70}.get)
            for data in (game, "junk")
            for slim in (True, False)
        }
        assert keys == {expected, -1001 if chat["id"] < 0 else None}


def updates_of_a_game(draw: st.DrawFn, chat_id: int, game_id: int) -> list[Update]:
    """Every kind of update the bot handles that concerns this game."""
    players = draw(st.lists(st.integers(1, 10**9), min_size=2, max_size=6, unique=True))
    group = _group(chat_id)
    out = []
    for user_id in players:
        private = _private(user_id)
        text = draw(st.sampled_from(COMMANDS))
        out.append(_update(message=_message(group, user_id, text=text)))
        for kind in sorted(cb.LOBBY_KINDS):  # join, leave, start, AI seats, again, record
            out.append(_press(group, user_id, cb.lobby(kind, game_id)))
        out.append(_press(group, user_id, cb.setting("dk")))  # the group's settings menu
        version = draw(st.integers(0, 500))
        move = draw(st.sampled_from([Take(), Pass(), cb.Refresh(), cb.Back()]))
        out.append(_press(private, user_id, cb.move(game_id, version, move)))
        out.append(_press(group, user_id, cb.move(game_id, version, move)))
        for payload in ("j", "g"):  # deep links into the private chat
            out.append(
                _update(message=_message(private, user_id, text=f"/start {payload}{game_id}"))
            )
    out.append(
        _update(
            my_chat_member={
                "chat": group,
                "from": _user(players[0]),
                "date": 0,
                "old_chat_member": {"status": "member", "user": BOT},
                "new_chat_member": {"status": "left", "user": BOT},
            }
        )
    )
    return out


@st.composite
def games(draw: st.DrawFn) -> list[tuple[int, int, list[Update]]]:
    """A few games, each in its own group: (chat id, game id, its updates)."""
    chats = draw(st.lists(st.integers(-(10**13), -1), min_size=1, max_size=4, unique=True))
    ids = draw(
        st.lists(st.integers(1, 10**9), min_size=len(chats), max_size=len(chats), unique=True)
    )
    return [
        (chat, game, updates_of_a_game(draw, chat, game))
        for chat, game in zip(chats, ids, strict=True)
    ]


@settings(max_examples=60, deadline=None)
@given(games())
def test_all_updates_of_one_game_map_to_its_group(
    found: list[tuple[int, int, list[Update]]],
) -> None:
    chat_of = {game: chat for chat, game, _ in found}
    keys = ShardKeys(chat_of.get)
    for chat, _game, updates in found:
        assert {keys.shard_key(u) for u in updates} == {chat}
        assert len({shard_of(keys.shard_key(u), 4) for u in updates}) == 1


def test_updates_of_no_game_go_anywhere() -> None:
    user = 7
    private = _private(user)
    unknown = {}.get
    for text in ("/start", "/help", "/language", "/start x12", "hello"):
        assert shard_key(_update(message=_message(private, user, text=text)), unknown) is None
    assert shard_key(_press(private, user, cb.setting("uen")), unknown) is None  # own language
    assert shard_key(_press(private, user, "forged"), unknown) is None
    # a game the router does not know (long gone): no key, not a wrong one
    assert shard_key(_press(private, user, cb.move(99, 1, Take())), unknown) is None
    blocked = _update(
        my_chat_member={
            "chat": private,
            "from": _user(user),
            "date": 0,
            "old_chat_member": {"status": "member", "user": BOT},
            "new_chat_member": {"status": "kicked", "user": BOT, "until_date": 0},
        }
    )
    assert shard_key(blocked, unknown) is None


def test_a_group_becoming_a_supergroup_stays_with_the_old_worker() -> None:
    """Both migration messages go to the worker of the old id, which moves the games."""
    old, new = -100, -1000000000100
    basic = {"id": old, "type": "group", "title": "Friends"}
    moved_out = _update(message=_message(basic, 1, migrate_to_chat_id=new))
    moved_in = _update(message=_message(_group(new), 1, migrate_from_chat_id=old))
    assert shard_key(moved_out, {}.get) == old
    assert shard_key(moved_in, {}.get) == old
