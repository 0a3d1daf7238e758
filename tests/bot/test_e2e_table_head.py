"""Every version of the table message names the game in force and, on one short
line, the options that differ from that game's defaults (issue 27 item 1): partial
defence, whose table has no line of its own that would name it, and a pile game in
Russian."""

from __future__ import annotations

import random

from bot.ui import games_text
from bot.ui.i18n import language
from durak import Rules
from tests.fake_telegram import RateLimits
from tests.fake_telegram.fixtures import async_test

from .harness import SCALE, Table, durak_of, running_bot
from .test_e2e import friends


def table_versions(table: Table, message_ids: set[int]) -> list[str]:
    return [e.plain_text for e in table.group.shown if e.message_id in message_ids]


async def whole_game(make_fake_telegram, tmp_path, players: int, **settings: object) -> list[str]:
    server = await make_fake_telegram(rate_limits=RateLimits().scaled(SCALE))
    users, group = friends(server, players)
    table = Table(server, group, users, random.Random(5))
    async with running_bot(server, tmp_path / "durak.sqlite3") as app:
        service = durak_of(app).service
        await service.set_chat_settings(group.id, **settings)
        await table.open_lobby()
        await table.join_all()
        await table.start()
        game_id = (await service.running_games())[0].game_id
        await table.play_to_the_end(watch=(service, game_id), timeout=240)
        await durak_of(app).outbox.idle(10)
        ids = {m.message_id for m in await service.messages(game_id) if m.kind == "table"}
    versions = table_versions(table, ids)
    assert len(versions) >= 3  # the deal, moves, the end
    return versions


def options_plain(rules: Rules, lang: str) -> str:
    """The game's line, then the lobby's lines that differ from the game's defaults."""
    usual = Rules() if rules.podkidnoy else Rules(game=rules.game)
    with language(lang):
        defaults = set(games_text.option_lines(usual))
        name, *rest = games_text.option_lines(rules)
    return "📜 " + " · ".join([name, *(x for x in rest if x not in defaults)])


@async_test
async def test_every_table_version_names_partial_defence(make_fake_telegram, tmp_path):
    versions = await whole_game(make_fake_telegram, tmp_path, 2, partial_defence=True)
    line = options_plain(Rules(partial_defence=True), "en")
    assert line == "📜 Game: Classic · Variants: partial defence"
    for text in versions:
        assert text.splitlines()[1] == line, text


@async_test
async def test_every_table_version_names_a_pile_game_in_the_groups_language(
    make_fake_telegram, tmp_path
):
    versions = await whole_game(make_fake_telegram, tmp_path, 3, game="road", language="ru")
    line = options_plain(Rules(game="road"), "ru")
    with language("ru"):
        assert games_text.game_name(Rules(game="road")) in line
    for text in versions:
        assert text.splitlines()[1] == line, text
