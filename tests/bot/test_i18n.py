"""Translations: every message of the bot in every catalog, placeholders and tags
intact, the three plural forms of ru/uk/pl, languages per task, and whole games
rendered in each language with no English left over."""

from __future__ import annotations

import ast
import asyncio
import io
import random
import re
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract

from bot.locales import catalogs
from bot.locales.__main__ import main as locales_cli
from bot.ui import i18n, keyboards, ratings_text, render
from bot.ui import settings_menu as menu
from bot.ui.i18n import N_, _, language, n_
from durak import Game, Rules, Series
from durak.selfplay import random_step
from durak.service import SURRENDER, ChatSettings, Ending, Seat
from durak.service.ratings import FEATS
from durak.service.standings import (
    Fools,
    GameRatings,
    GroupStats,
    Meeting,
    PlayerRecord,
    RatingChange,
    RatingLine,
)
from durak.service.summary import Bout, Summary
from durak.view import Outcome

LANGS = catalogs.languages()
TEMPLATE = catalogs.template()


def catalog(lang: str) -> Catalog:
    return catalogs.read(i18n.catalog_path(lang), lang)


def template_ids() -> dict[str, str | None]:
    """msgid -> its plural (None for a plain message), as Babel extracts them."""
    out: dict[str, str | None] = {}
    for m in TEMPLATE:
        if m.id:
            out[m.id[0] if m.pluralizable else m.id] = m.id[1] if m.pluralizable else None
    return out


def forms(m) -> tuple[str, ...]:
    return tuple(m.string) if m.pluralizable else (m.string,)


# ---- extraction finds what it should -------------------------------------------------


def test_extraction_reads_our_markers():
    source = (
        "x = _('plain')\n"
        "y = N_('marked ' 'later')\n"
        "z = n_('{n} card', '{n} cards', k)\n"
        "u = _(note)\n"
        "t = other('not a message')\n"
    )
    found = extract("python", io.BytesIO(source.encode()), keywords=catalogs.KEYWORDS)
    assert [(line, msg) for line, msg, _c, _x in found] == [
        (1, "plain"),
        (2, "marked later"),
        (3, ("{n} card", "{n} cards")),
    ]


MARKERS = {"_": 1, "N_": 1, "n_": 2}


def marked_in_source() -> tuple[set[str], list[str]]:
    """Every literal in a marker call, read with ``ast`` (so also inside f-strings
    and nested calls, where Babel's tokenizer does not look), and every marker
    call whose text is built at run time (no catalog can hold it)."""
    texts, built = set(), []
    for path in sorted(catalogs.BOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id not in MARKERS:
                continue
            for arg in node.args[: MARKERS[node.func.id]]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    texts.add(arg.value)
                elif isinstance(arg, (ast.JoinedStr, ast.BinOp)):
                    built.append(f"{path.name}:{node.lineno}")
    return texts, built


def test_babel_sees_every_text_the_bot_marks():
    """A marked text Babel's extraction misses (an ``_()`` inside an f-string, a
    nested call, a text built with ``+``) would never be translated."""
    texts, built = marked_in_source()
    assert built == []
    extracted = set(template_ids()) | {p for p in template_ids().values() if p}
    assert texts - extracted == set()


def test_tables_translated_later_are_marked():
    """Strings kept in tables and translated where shown must be marked ``N_``."""
    ids = set(template_ids())
    assert len(ids) > 100
    assert set(render.REFUSALS.values()) <= ids
    assert render.refusal("no such code") in ids
    assert set(menu.LABELS.values()) <= ids


# ---- the catalogs are complete ---------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_every_message_is_translated(lang):
    """The test that fails when a catalog misses a message: run
    ``python -m bot.locales extract`` and translate what it adds."""
    entries = {(m.id[0] if m.pluralizable else m.id): m for m in catalog(lang) if m.id}
    missing, empty = [], []
    for msgid, plural in template_ids().items():
        e = entries.get(msgid)
        if e is None or (e.id[1] if e.pluralizable else None) != plural:
            missing.append(repr(msgid))
        elif e.fuzzy or not all(forms(e)):
            empty.append(repr(msgid))
    assert not missing, f"{lang}: not in the catalog:\n" + "\n".join(missing)
    assert not empty, f"{lang}: untranslated or fuzzy:\n" + "\n".join(empty)


@pytest.mark.parametrize("lang", LANGS)
def test_catalogs_hold_no_message_the_code_dropped(lang):
    """No hand-made drift: a text removed from the code is obsolete in the catalog."""
    active = {(m.id[0] if m.pluralizable else m.id) for m in catalog(lang) if m.id}
    assert active == set(template_ids()), "run: python -m bot.locales extract"


@pytest.mark.parametrize("lang", LANGS)
def test_catalog_headers_carry_cldr_plural_rules(lang):
    c = catalog(lang)
    assert str(c.locale) == lang
    assert c.charset == "utf-8"
    assert c.plural_forms == Catalog(locale=lang).plural_forms  # from CLDR, via Babel
    assert c.num_plurals == 3
    for m in c:
        if m.id:
            assert len(forms(m)) == (3 if m.pluralizable else 1), m.id


def test_the_check_command_passes_and_compile_writes_catalogs(tmp_path: Path, capsys):
    import gettext

    assert locales_cli(["check"]) == 0
    assert "ru: " in capsys.readouterr().out
    assert locales_cli(["compile", str(tmp_path)]) == 0
    with (tmp_path / "pl" / "LC_MESSAGES" / "durak.mo").open("rb") as f:
        assert gettext.GNUTranslations(f).gettext("Rules in force") == "Obowiązujące zasady"


# ---- placeholders and tags survive translation ---------------------------------------


def fields(text: str) -> set[str]:
    """The ``{placeholders}`` of a text; ``ValueError`` for stray braces."""
    return {name for _lit, name, _spec, _conv in string.Formatter().parse(text) if name is not None}


def tags(text: str) -> list[str]:
    return sorted(re.findall(r"<[^>]*>", text))


def mismatches(msgid: str, msgstr: str) -> list[str]:
    out = []
    try:
        if fields(msgstr) != fields(msgid):
            out.append(f"placeholders {sorted(fields(msgstr))} != {sorted(fields(msgid))}")
    except ValueError as e:
        out.append(f"braces: {e}")
    if tags(msgstr) != tags(msgid):
        out.append(f"tags {tags(msgstr)} != {tags(msgid)}")
    return out


def test_the_placeholder_check_can_fail():
    assert mismatches("Show {card}", "Показать {card}") == []
    assert mismatches("Show {card}", "Показать {karta}")
    assert mismatches("Show {card}", "Показать {card")
    assert mismatches('<a href="{link}">Back</a>', '<a href="{link}">Назад')
    assert mismatches("<b>Durak</b>", "<i>Дурак</i>")


@pytest.mark.parametrize("lang", LANGS)
def test_placeholders_and_tags_match(lang):
    bad = []
    for e in catalog(lang):
        if not e.id:
            continue
        sources = [e.id[1]] * len(e.string) if e.pluralizable else [e.id]
        for source, text in zip(sources, forms(e), strict=True):
            if text:
                bad += [f"{e.id!r} -> {text!r}: {p}" for p in mismatches(source, text)]
    assert not bad, "\n".join(bad)


# ---- plural forms ---------------------------------------------------------------------

PLURALS = {
    "en": {1: "1 card", 2: "2 cards", 5: "5 cards", 11: "11 cards", 21: "21 cards"},
    "ru": {1: "1 карта", 2: "2 карты", 5: "5 карт", 11: "11 карт", 21: "21 карта", 22: "22 карты",
           25: "25 карт", 111: "111 карт", 0: "0 карт"},
    "uk": {1: "1 карта", 2: "2 карти", 5: "5 карт", 11: "11 карт", 21: "21 карта", 22: "22 карти",
           25: "25 карт", 112: "112 карт", 0: "0 карт"},
    "pl": {1: "1 karta", 2: "2 karty", 5: "5 kart", 11: "11 kart", 21: "21 kart", 22: "22 karty",
           25: "25 kart", 12: "12 kart", 0: "0 kart"},
}  # fmt: skip


@pytest.mark.parametrize("lang", sorted(PLURALS))
def test_plural_forms(lang):
    with language(lang):
        got = {k: n_("{n} card", "{n} cards", k).format(n=k) for k in PLURALS[lang]}
    assert got == PLURALS[lang]


def test_every_plural_form_is_used_in_each_language():
    """ru/uk/pl each pick all three forms for the counts a game shows (0 to 36)."""
    for lang in LANGS:
        with language(lang):
            forms = {n_("{n} player:", "{n} players:", k).format(n=k) for k in (1, 2, 5)}
        assert len(forms) == 3, (lang, forms)


# ---- the language belongs to the task --------------------------------------------------


def test_languages_do_not_mix_between_concurrent_tasks():
    async def main() -> None:
        ru_in, pl_in, ru_checked = asyncio.Event(), asyncio.Event(), asyncio.Event()

        async def russian() -> str:
            with language("ru"):
                ru_in.set()
                await pl_in.wait()  # the Polish task is inside its own block now
                text = _("Rules in force")
                ru_checked.set()
                return text

        async def polish() -> str:
            await ru_in.wait()
            with language("pl"):
                pl_in.set()
                await ru_checked.wait()
                return _("Rules in force")

        ru, pl = await asyncio.gather(russian(), polish())
        assert (ru, pl) == ("Действующие правила", "Obowiązujące zasady")
        assert i18n.current() == i18n.DEFAULT and _("Rules in force") == "Rules in force"

    asyncio.run(main())


def test_unknown_language_and_english_read_the_msgids():
    for lang in ("en", "xx"):
        with language(lang):
            assert _("Rules in force") == "Rules in force"
            assert N_("Durak") == "Durak"


# ---- whole games in every language ------------------------------------------------------

VARIANTS = [
    (Rules(), 3, "first"),
    (Rules(transfer=True, transfer_by_showing_trump=True, trump_exchange=True), 4, "first"),
    (Rules(teams=True, throw_in="all"), 4, "first"),
    (Rules(deck=52, first_bout_limit=5, six_cap_after_stock=False), 5, "first"),
    (Rules(deck=24, attack_loser=True), 2, "after_loss"),
    (Rules(), 2, "after_loss"),
]


def names(n: int) -> tuple[Seat, ...]:
    return tuple(Seat(i, 100 + i, f"P<{i}>") for i in range(n))


def rendered_game(rules: Rules, players: int, series: str, seed: int) -> Iterator[str]:
    """Every text and button label the bot shows for one random game."""
    seats = names(players)
    loser = seats[0].name if series == "after_loss" else None
    game = Game.from_seed(
        rules, [s.name for s in seats], seed, Series(series, dealer=loser, previous_loser=loser)
    )
    rng = random.Random(seed)
    step = 0
    while True:
        left = (None, 250, 75, 25, 5)[step % 5]
        yield render.table_text(render.Table(1, step, "Group", seats, game.view(None), None, left))
        for s in range(players):
            view = game.view(s)
            yield render.panel_text(render.Table(1, step, "Group", seats, view, None, left))
            yield from labels(keyboards.panel(1, step, view))
            for c in view.hand:
                options = keyboards.card_actions(view, c)
                if len(options) > 1:
                    yield from labels(keyboards.choice(1, step, options))
        if game.result is not None:
            break
        game.apply(*random_step(game, rng))
        step += 1
    yield render.outcome_line(seats, game.result, None)
    yield from labels(keyboards.ended("durakbot", 1))
    yield from labels(keyboards.table("durakbot", 1, over=True))


def labels(markup) -> list[str]:
    if isinstance(markup, dict):  # bot/ui/keyboards.py: the Bot API's JSON
        return [b["text"] for row in markup["inline_keyboard"] for b in row]
    return [b.text for row in markup.inline_keyboard for b in row]


def ratings_texts(seats: tuple[Seat, ...]) -> Iterator[str]:
    """The group's memory (issue 28): /stats, /stats Name, the recap, /leave's cost."""
    humans = [
        RatingLine(100 + k, "", f"P<{k}>", 1100 - k, 10 + k, k, 1, k, k + 1) for k in range(3)
    ]
    table = (*humans, RatingLine(0, "hard", "", 990, 12, 5, 0, 0, 2))
    yield ratings_text.group_stats_text(GroupStats((), Fools(), Fools(), Fools()), "Group")
    yield ratings_text.group_stats_text(
        GroupStats(table, Fools(table[:1], 1), Fools(table[:2], 2), Fools(table[1:2], 5)), "Group"
    )
    meetings = tuple(Meeting(x, 1 + k, k, 2) for k, x in enumerate(table[1:]))
    yield ratings_text.player_text(PlayerRecord(table[0], meetings, FEATS))
    yield ratings_text.no_record_text("P<9>")
    rated = GameRatings(
        (RatingChange(100, "", 0, False, 1000, 1040), RatingChange(101, "", 1, True, 1000, 960)),
        ((100, "first_win"),),
    )
    yield from ratings_text.recap_lines(
        seats, Summary(((0,),), (0, 7, 0, 0), Bout(1, 7, 1, 0), ()), rated
    )
    yield ratings_text.history_suffix(seats, rated)
    yield ratings_text.leave_cost_text(None)
    yield ratings_text.leave_cost_text(table[0])


def other_texts() -> Iterator[str]:
    seats = names(4)
    for rules, players, _series in VARIANTS:
        yield render.lobby_text(names(players), rules, "P<0>")
        yield render.lobby_text(names(1), rules, "P<0>", closed=_("The game was cancelled."))
        yield render.rules_text(rules)
    yield render.help_text()
    yield from ratings_texts(seats)
    yield render.outcome_line(seats, None, Ending(SURRENDER, (2,)))
    yield render.outcome_line(seats, None, Ending("cancelled"))
    yield render.outcome_line(seats, Outcome((0, 2)), None)
    yield render.outcome_line(seats, Outcome(draw=True), None)
    yield from labels(keyboards.lobby(1))
    yield from labels(keyboards.table("durakbot", 1, over=False))
    yield from (render.refusal(code) for code in [*render.REFUSALS, "unknown"])
    for seconds in (600, 95, 61, 31, 29, 3):
        yield render.time_left(seconds)
    settings = ChatSettings(1, Rules())
    changed = ChatSettings(1, Rules(deck=52, transfer=True, throw_in="all"), None, "pl")
    for s in (settings, changed):
        yield menu.menu_text(s)
        yield from labels(menu.menu_keyboard(s))


def english_phrases() -> set[str]:
    """Runs of more than three words of the msgids, between placeholders and tags."""
    out = set()
    for m in TEMPLATE:
        for text in m.id if m.pluralizable else (m.id,):
            for piece in re.split(r"\{\w*\}|<[^>]*>", text):
                piece = piece.strip(" .,:;!?()")
                if len(piece.split()) > 3:
                    out.add(piece)
    return out


def all_texts(seed: int) -> list[str]:
    texts = list(other_texts())
    for i, (rules, players, series) in enumerate(VARIANTS):
        texts += rendered_game(rules, players, series, seed + i)
    return texts


@pytest.mark.parametrize("lang", ["en", *LANGS])
def test_whole_games_render_in_every_language(lang):
    phrases = english_phrases()
    with language(lang):
        texts = all_texts(seed=7)
    blob = "\n".join(texts)
    leftover = sorted(p for p in phrases if p in blob)
    if lang == "en":
        assert len(leftover) > 30  # the check below would see English
    else:
        assert not leftover, f"{lang}: English left in the texts:\n" + "\n".join(leftover)
        assert not re.search(r"\{\w*\}", blob)  # a placeholder the format did not fill


def test_the_games_render_every_kind_of_text():
    """The games above reach the texts that matter: openings, waits, takes, endings."""
    with language("en"):
        blob = "\n".join(all_texts(seed=7))
    for needle in (
        "opened the game with the lowest trump",
        "opened against last game's fool",
        "Last game's fool dealt",
        "to cover or take",
        "to throw in or pass",
        "takes the cards",
        "The table is empty",
        "is the durak!",
        "Team P&lt;0&gt;, P&lt;2&gt; lost",
        "out, safe",
        "about 4 minutes left",
    ):
        assert needle in blob, needle


def test_a_broken_catalog_falls_back_to_english(tmp_path: Path, monkeypatch):
    (tmp_path / "ru" / "LC_MESSAGES").mkdir(parents=True)
    real = i18n.catalog_path("ru").read_text("utf-8")
    broken = real.replace(Catalog(locale="ru").plural_expr, "n++ (")
    assert broken != real
    (tmp_path / "ru" / "LC_MESSAGES" / "durak.po").write_text(broken, "utf-8")
    monkeypatch.setattr(i18n, "LOCALES", tmp_path)
    i18n._catalog.cache_clear()
    try:
        with language("ru"):
            assert _("Rules in force") == "Rules in force"
    finally:
        monkeypatch.undo()
        i18n._catalog.cache_clear()
    with language("ru"):
        assert _("Rules in force") == "Действующие правила"


# ---- compiling and updating (Babel underneath; what the bot relies on) ---------------------

SAMPLE = r"""# A comment
msgid ""
msgstr ""
"Language: ru\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=3; plural=RU_PLURALS;\n"

#: bot/ui/render.py
#, python-brace-format
msgid "Say \"{word}\"\tnow"
msgstr ""
"Скажи «{word}»\n"
"сейчас"

msgid "{n} card"
msgid_plural "{n} cards"
msgstr[0] "{n} карта"
msgstr[1] "{n} карты"
msgstr[2] "{n} карт"

#, fuzzy
msgid "Guess"
msgstr "Догадка"

msgid "Empty"
msgstr ""

#~ msgid "Old"
#~ msgstr "Старое"
""".replace("RU_PLURALS", Catalog(locale="ru").plural_expr)


@pytest.fixture
def sample_locales(tmp_path: Path, monkeypatch) -> Iterator[Path]:
    """``i18n`` reading its catalogs from a folder holding only SAMPLE as Russian."""
    path = tmp_path / "ru" / "LC_MESSAGES" / "durak.po"
    path.parent.mkdir(parents=True)
    path.write_text(SAMPLE, "utf-8")
    monkeypatch.setattr(i18n, "LOCALES", tmp_path)
    i18n._catalog.cache_clear()
    yield path
    monkeypatch.undo()
    i18n._catalog.cache_clear()


def test_the_bot_compiles_a_catalog_as_gettext_would(sample_locales):
    with language("ru"):
        assert _('Say "{word}"\tnow') == "Скажи «{word}»\nсейчас"
        assert [n_("{n} card", "{n} cards", k) for k in (1, 3, 7, 12, 22)] == [
            "{n} карта",
            "{n} карты",
            "{n} карт",
            "{n} карт",
            "{n} карты",
        ]
        assert _("Guess") == "Guess"  # fuzzy: not used
        assert _("Empty") == "Empty"
        assert _("Old") == "Old"


def test_extraction_update_keeps_translations_and_marks_the_rest(sample_locales):
    pot = Catalog()
    for msgid in ("Guess!", "Empty", "New one"):
        pot.add(msgid, locations=[("bot/x.py", 1)])
    assert catalogs.update("ru", pot)
    c = catalogs.read(sample_locales, "ru")
    active = {m.id: m for m in c if m.id}
    assert list(active) == ["Guess!", "Empty", "New one"]
    assert active["Guess!"].fuzzy and active["Guess!"].string == "Догадка"
    assert active["New one"].string == "" and not active["New one"].fuzzy
    assert set(c.obsolete) == {'Say "{word}"\tnow', "{n} card", "Old"}
    assert c.plural_forms == Catalog(locale="ru").plural_forms
    assert not catalogs.update("ru", pot)  # a second run changes nothing
