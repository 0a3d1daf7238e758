"""The games by their familiar names, and what /rules and the lobby say of them.

A group does not pick ``sprint: true``; it picks "Sprint". This module names each
game a group can choose (VARIANTS.md's variants and PILE-GAMES.md's games), turns a
name into the rule changes it makes, describes the game in force in a few lines of
the group's language, and translates ``durak.rules``' refusals of a forbidden
combination. Pure: rules in, text or changes out.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from durak import Rules
from durak.rules import FORBIDDEN, PODKIDNOY

from .i18n import N_, SUPPORTED, _, language, n_

SUITS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}

#: The podkidnoy options that make a game of their own; choosing a game sets one
#: of them and clears the others (``transfer`` is perevodnoy's, kept otherwise).
GAME_FLAGS = ("sprint", "blind", "english", "damka", "trump_change")


@dataclass(frozen=True, slots=True)
class Choice:
    """One entry of the game list: its code (in buttons and ``/newgame CODE``), its
    name (marked for translation) and the options it sets."""

    code: str
    name: str
    sets: tuple[tuple[str, Any], ...]

    @property
    def rules_game(self) -> str:
        return str(dict(self.sets).get("game", PODKIDNOY))


CHOICES: tuple[Choice, ...] = (
    Choice("classic", N_("Classic"), (("transfer", False),)),
    Choice("perevodnoy", N_("Perevodnoy"), (("transfer", True),)),
    Choice("sprint", N_("Sprint"), (("sprint", True),)),
    Choice("blind", N_("Blind"), (("blind", True),)),
    Choice("english", N_("English"), (("english", True),)),
    Choice("damka", N_("Damka"), (("damka", True),)),
    Choice("japanese_s", N_("Japanese ♠"), (("japanese", "S"),)),
    Choice("japanese_h", N_("Japanese ♥"), (("japanese", "H"),)),
    Choice("japanese_d", N_("Japanese ♦"), (("japanese", "D"),)),
    Choice("trump_change", N_("Trump change"), (("trump_change", True),)),
    Choice("own_trumps", N_("Own trumps"), (("game", "own_trumps"),)),
    Choice("piled", N_("Piled"), (("game", "piled"),)),
    Choice("road", N_("Road"), (("game", "road"),)),
)
BY_CODE = {c.code: c for c in CHOICES}

#: Other words a group may type after /newgame (``/newgame podkidnoy``).
ALIASES = {
    "podkidnoy": "classic",
    "podkidnoi": "classic",
    "transfer": "perevodnoy",
    "japanese": "japanese_h",
    "own": "own_trumps",
    "owntrumps": "own_trumps",
    "trumpchange": "trump_change",
}

#: Every option's name as a group reads it (the settings menu uses these too).
OPTION_NAMES = {
    "game": N_("Game"),
    "deck": N_("Deck"),
    "throw_in": N_("Who throws in"),
    "first_bout_limit": N_("First bout"),
    "six_cap_after_stock": N_("6-card cap after the stock"),
    "attack_loser": N_("The fool defends first"),
    "transfer": N_("Transfer"),
    "transfer_by_showing_trump": N_("Transfer by showing a trump"),
    "trump_exchange": N_("Trump exchange"),
    "teams": N_("Teams (4 or 6 players)"),
    "trump_change": N_("Trump change"),
    "sprint": N_("Sprint"),
    "blind": N_("Blind"),
    "partial_defence": N_("Partial defence"),
    "english": N_("English"),
    "return_last_card": N_("Return the last card"),
    "damka": N_("Damka"),
    "japanese": N_("Japanese"),
    "bout_limit": N_("Cards in a bout"),
    "show_last_discard": N_("Show the last discard"),
    "own_trumps_take": N_("Own trumps: a take costs"),
    "no_progress_draw": N_("Draw when nothing changes"),
}

#: Why a pile game dropped an option: it takes none of podkidnoy's (PILE-GAMES.md 1.2).
PILE_RESET = "pile"

#: ``durak.rules.FORBIDDEN``'s reasons, translated where they are shown.
REASONS = {
    "there is no stock": N_("there is no stock"),
    "the match fixes the dealer and the opener": N_("the match fixes the dealer and the opener"),
    "blind is one card against one card": N_("blind is one card against one card"),
    "two rules for the opening": N_("two rules for the opening"),
    "the exchange can make or break a pair after the lead is settled": N_(
        "the exchange can make or break a pair after the lead is settled"
    ),
    "English fixes who opens": N_("English fixes who opens"),
    "there is no trump card": N_("there is no trump card"),
}


# ---- choosing ------------------------------------------------------------------------


def choice_of(rules: Rules) -> Choice:
    """The entry of the game list that names these rules best (the main game; the
    options on top of it are listed apart)."""
    if not rules.podkidnoy:
        return BY_CODE[rules.game]
    if rules.japanese is not None:
        return BY_CODE["japanese_" + rules.japanese.lower()]
    for flag in ("sprint", "blind", "english", "damka", "trump_change"):
        if getattr(rules, flag):
            return BY_CODE[flag]
    return BY_CODE["perevodnoy" if rules.transfer else "classic"]


def game_name(rules: Rules) -> str:
    """The game in force by its familiar name, with the variants played on top of
    the main one (``Sprint + damka``), in the current language."""
    main = choice_of(rules)
    parts = [_(main.name)]
    if rules.podkidnoy:
        for flag in GAME_FLAGS:
            if getattr(rules, flag) and flag != main.code:
                parts.append(_(OPTION_NAMES[flag]).lower())
        if rules.transfer and main.code != "perevodnoy":
            parts.append(_("transfer"))
    return " + ".join(parts)


def lookup(word: str) -> Choice | None:
    """The game a word after /newgame names: a code, an alias, or a game's name in
    any of the bot's languages (``/newgame дорожный``)."""
    key = word.strip().casefold().replace("-", "_")
    key = ALIASES.get(key.replace("_", ""), key)
    if key in BY_CODE:
        return BY_CODE[key]
    for lang in SUPPORTED:
        with language(lang):
            for c in CHOICES:
                if _(c.name).casefold() == word.strip().casefold():
                    return c
    return None


def unknown_game_text() -> str:
    """The reply to ``/newgame`` with a word that names no game: the names to use."""
    codes = ", ".join(c.code for c in CHOICES)
    return _("No game by that name. Try /newgame road, or one of: {codes}.").format(codes=codes)


@dataclass(frozen=True, slots=True)
class Chosen:
    """The rules a game choice makes, and the options it had to switch off (each with
    the reason, for the group to read)."""

    rules: Rules
    dropped: tuple[tuple[str, str], ...]


def choose(choice: Choice, current: Rules) -> Chosen:
    """``current`` with ``choice`` as the game. A pile game takes no podkidnoy
    option, so they return to their defaults; a podkidnoy game keeps the group's
    house rules but switches off those that its variant forbids."""
    sets = dict(choice.sets)
    if choice.rules_game != PODKIDNOY:
        base = Rules(game=choice.rules_game, show_last_discard=current.show_last_discard)
        if choice.rules_game == "own_trumps" and current.game == "own_trumps":
            base = Rules(
                game="own_trumps",
                own_trumps_take=current.own_trumps_take,
                show_last_discard=current.show_last_discard,
            )
        base = replace(base, no_progress_draw=current.no_progress_draw)
        reset = tuple(
            (f.name, PILE_RESET)
            for f in fields(Rules)
            if f.name not in ("game", "own_trumps_take", "show_last_discard", "no_progress_draw")
            and getattr(current, f.name) != getattr(Rules(), f.name)
        )
        return Chosen(base, reset)
    values = current.to_dict() if current.podkidnoy else Rules().to_dict()
    values["show_last_discard"] = current.show_last_discard
    values["no_progress_draw"] = current.no_progress_draw
    values.update(game=PODKIDNOY, own_trumps_take="top", japanese=None)
    for flag in GAME_FLAGS:
        values[flag] = False
    values.update(sets)
    if values["blind"] or not values["transfer"]:
        values["transfer_by_showing_trump"] = False
    dropped: list[tuple[str, str]] = []
    for option, others, why in FORBIDDEN:
        if not values.get(option):
            continue
        for other in others:
            if values.get(other) and other not in sets:
                values[other] = False
                dropped.append((other, why))
                if other == "transfer":
                    values["transfer_by_showing_trump"] = False
    return Chosen(Rules.from_dict(values), tuple(dropped))


def conflict(values: dict[str, Any]) -> str | None:
    """Why ``values`` is a forbidden combination, in the current language; ``None``
    if ``durak.rules`` forbids nothing in it."""
    for option, others, why in FORBIDDEN:
        if not values.get(option):
            continue
        for other in others:
            if values.get(other):
                return forbidden_text(option, other, why)
    return None


def forbidden_text(option: str, other: str, why: str) -> str:
    return _("{option} cannot be played with {other}: {why}.").format(
        option=_(OPTION_NAMES.get(option, option)),
        other=_(OPTION_NAMES.get(other, other)).lower(),
        why=_(REASONS.get(why, why)),
    )


def dropped_text(chosen: Chosen) -> str:
    """What choosing a game switched off, and why, in one short line."""
    if not chosen.dropped:
        return ""
    if any(why == PILE_RESET for _name, why in chosen.dropped):
        return _("A pile game takes no podkidnoy option: the house rules went back to normal.")
    parts = [
        _("{option} is off: {why}").format(
            option=_(OPTION_NAMES.get(name, name)), why=_(REASONS.get(why, why))
        )
        for name, why in chosen.dropped
    ]
    return "; ".join(parts) + "."


def players_text(rules: Rules) -> str:
    low, high = rules.player_range()
    if low == high:
        return n_("{n} player", "{n} players", low).format(n=low)
    return _("{low} to {high} players").format(low=low, high=high)


# ---- describing ----------------------------------------------------------------------


def game_lines(rules: Rules) -> list[str]:
    """How the game in force plays, in a few lines (what /rules adds to the options)."""
    if rules.game == "own_trumps":
        take = (
            _("or takes the whole pile")
            if rules.own_trumps_take == "pile"
            else _("or takes the 3 top cards of the pile (10 if the top card is of his suit)")
        )
        return [
            _(
                "Each player picks his own trump suit in the lobby; all 36 cards are dealt, "
                "and each six of a player's suit goes to him for a card drawn at random."
            ),
            _(
                "Lead one card; the next player beats it (his own suit is his trump) "
                "and leads again, {take}."
            ).format(take=take),
            _("Whoever is left holding cards is the durak."),
        ]
    if rules.game == "piled":
        return [
            _("3 cards each, refilled from the stock after every card you play."),
            _("Lead one card; the next player beats it and leads again, or takes the whole pile."),
            _("Whoever is left holding cards is the durak."),
        ]
    if rules.game == "road":
        return [
            _("All the cards are dealt; the dealer's last card shows trump."),
            _(
                "Beat the top card of the pile or take its bottom card; when the pile holds "
                "as many cards as there are players, it is cleared and its last beater leads."
            ),
            _("Whoever is left holding cards is the durak."),
        ]
    lines = [
        _(
            "Attack with a card; the defender covers every card or takes them; "
            "the others throw in cards of the ranks on the table."
        )
    ]
    if rules.sprint:
        lines.append(
            _(
                "Sprint: 6 cards each and no stock; the dealer's left neighbour opens. "
                "Two players play a match of 10 deals; three to five play knock-out, "
                "each deal's durak leaves the match."
            )
        )
    if rules.blind:
        lines.append(
            _(
                "Blind: you see your opponent's cards, not your own; tap a face-down slot to "
                "play it. One card against one: if the answer does not beat, the defender "
                "takes both."
            )
        )
    if rules.english:
        lines.append(
            _(
                "English: open with a pair of one rank; the lead passes to the first player "
                "who holds a pair, and if nobody has one, the opener leads one card."
            )
        )
    if rules.damka:
        lines.append(
            _(
                "Damka: open with one card or several of one suit; "
                "the queen of spades cannot be covered."
            )
        )
    if rules.japanese is not None:
        lines.append(
            _(
                "Japanese: trump {suit} is set before the game and no card is turned; "
                "a club is beaten only by a higher club."
            ).format(suit=SUITS[rules.japanese])
        )
    if rules.trump_change:
        lines.append(
            _(
                "Trump change: a face-down card lies under the trump card; whoever draws it "
                "turns it, and its suit is trump from then on."
            )
        )
    if rules.transfer:
        lines.append(
            _(
                "Transfer: the defender may pass the attack on with a card of its rank, "
                "before covering anything."
            )
        )
    if rules.partial_defence:
        lines.append(
            _(
                "Partial defence: on a take, the covered pairs go to the discard; "
                "the defender picks up only the uncovered cards."
            )
        )
    if rules.return_last_card:
        lines.append(
            _(
                "Return: with two players left and nothing to draw, the defender may hand "
                "back an attack of the attacker's last cards, once a game."
            )
        )
    lines.append(_("The last player holding cards is the durak."))
    return lines


def option_lines(rules: Rules) -> list[str]:
    """The options in force, one short line each (the lobby shows these)."""
    lines = [_("Game: {name}").format(name=game_name(rules))]
    if not rules.podkidnoy:
        lines.append(_("Deck: 36 cards, {players}").format(players=players_text(rules)))
        if rules.game == "own_trumps":
            cost = (
                _("the whole pile")
                if rules.own_trumps_take == "pile"
                else _("3 cards, 10 on one's own suit")
            )
            lines.append(_("A take costs: {cost}").format(cost=cost))
        if rules.game == "road" and rules.show_last_discard:
            lines.append(_("The last cleared pile stays visible"))
        if not rules.no_progress_draw:
            lines.append(_("No draw when nothing changes"))
        return lines
    throw = _("the attacker and the defender's left neighbour")
    if rules.throw_in == "all":
        throw = _("everyone but the defender")
    lines += [
        _("Deck: {n} cards, up to {m} players").format(n=rules.deck, m=rules.max_players),
        _("Throw in: {who}").format(who=throw),
        _("First bout: at most {n} cards").format(n=rules.first_bout_limit),
    ]
    if rules.bout_limit != 6:
        lines.append(_("Every bout: at most {n} cards").format(n=rules.bout_limit))
    if not rules.six_cap_after_stock:
        lines.append(_("Once the stock is empty, a bout may hold more than 6 cards"))
    variants = [
        (rules.transfer, _("transfer (perevodnoy)")),
        (rules.transfer_by_showing_trump, _("transfer by showing a trump")),
        (rules.trump_exchange, _("exchange the lowest trump")),
        (rules.teams, _("teams")),
        (rules.attack_loser, _("the fool defends first next game")),
        (rules.partial_defence, _("partial defence")),
        (rules.return_last_card, _("return the last card")),
        (rules.show_last_discard, _("the last discard stays visible")),
        (not rules.no_progress_draw, _("no draw when nothing changes")),
    ]
    on = [name for enabled, name in variants if enabled]
    lines.append(_("Variants: {list}").format(list=", ".join(on) if on else _("none")))
    return lines
