"""House rules played from the panel, and a whole game in another language."""

from __future__ import annotations

import random

from tests.fake_telegram import RateLimits
from tests.fake_telegram.fixtures import async_test

from .harness import SCALE, Table, durak_of, running_bot


@async_test
async def test_variants_are_played_from_the_panel_in_russian(make_fake_telegram, tmp_path, errors):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users = [server.add_user(f"Игрок{i}", started=True, language_code="ru") for i in range(4)]
    group = server.add_group("Друзья", users, admins=[users[0]])
    async with running_bot(server, tmp_path / "db.sqlite3") as app:
        bot = durak_of(app)
        await bot.service.set_chat_settings(
            group.id,
            transfer=True,
            transfer_by_showing_trump=True,
            trump_exchange=True,
            teams=True,
            throw_in="all",
        )
        table = Table(server, group, users, random.Random(11))
        await table.open_lobby()
        await table.join_all()
        await table.start()
        info = (await bot.service.running_games())[0]
        assert info.rules.teams and info.rules.transfer
        await table.play_to_the_end(watch=(bot.service, info.game_id))
        record = await bot.service.export_record(info.game_id)
    assert not table.leaks
    done = {s["do"] for s in record["steps"] if "do" in s}
    assert {"attack", "defend"} <= done
    assert "result" in record["steps"][-1]["expect"]
    group_texts = " ".join(server.texts_ever_shown(group)).lower()
    assert "козыр" in group_texts and "trump" not in group_texts, "the group reads Russian"
    panels = " ".join(
        t for u in users for t in server.texts_ever_shown(server.private_chat(u))
    ).lower()
    assert "козыр" in panels and "your cards" not in panels, "the players read Russian"
    assert not errors.records, [r.getMessage() for r in errors.records]


@async_test
async def test_command_menus_per_language_and_scope(make_fake_telegram, tmp_path):
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    async with running_bot(server, tmp_path / "db.sqlite3"):
        pass
    groups = {"type": "all_group_chats"}
    privates = {"type": "all_private_chats"}
    english = {c["command"]: c["description"] for c in server.commands(groups)}
    assert {"newgame", "settings", "stats", "cancel", "kick", "history"} <= set(english)
    assert "language" in {c["command"] for c in server.commands(privates)}
    for lang in ("ru", "uk", "pl"):
        local = {c["command"]: c["description"] for c in server.commands(groups, lang)}
        assert set(local) == set(english)
        assert local["newgame"] != english["newgame"], lang
