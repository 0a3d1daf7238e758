"""Message texts: pure functions from what a seat may see to HTML.

Nothing here reads a hand other than the one in a private ``View``: the public
table is rendered from ``game.view(None)``, which holds no hand at all.
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from durak import Card, Rules, View
from durak.actions import Attack
from durak.cards import deck
from durak.rules import NO_PROGRESS, NO_PROGRESS_TAKES
from durak.service import SURRENDER, Ending, GameInfo, Seat, Tally
from durak.view import MatchView, Outcome, PileView

from . import games_text
from .events import BEATEN_OFF, TOOK, TRANSFERRED, Story
from .i18n import N_, _, current, n_

SUIT_NAMES = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}

#: The face cards as each language writes them (numbers stay numbers): a Russian
#: reader knows В Д К Т (валет, дама, король, туз), a Polish one W D K A (walet,
#: dama, król, as). No letter means two ranks across the languages, so a text is
#: read back unambiguously (the tests' leak watchers do).
RANK_LETTERS: dict[str, dict[str, str]] = {
    "en": {},
    "ru": {"J": "В", "Q": "Д", "K": "К", "A": "Т"},
    "uk": {"J": "В", "Q": "Д", "K": "К", "A": "Т"},
    "pl": {"J": "W", "Q": "D", "K": "K", "A": "A"},
}


@dataclass(frozen=True, slots=True)
class Table:
    """Everything one rendering of a game needs."""

    game_id: int
    version: int
    chat_title: str
    seats: tuple[Seat, ...]
    view: View | PileView
    ending: Ending | None = None
    seconds_left: int | None = None
    #: What the game's log says happened (the last event, the order of going out).
    story: Story | None = None
    #: the last timeouts, if no person moved since: (seat, what the bot did for him)
    timeouts: tuple[tuple[int, str], ...] = ()
    #: the game's rules: the table names the game and its options under its head
    rules: Rules | None = None
    #: the lines as HTML (the messages) or as plain text (the Mini App's page)
    html: bool = True

    def name(self, seat: int) -> str:
        """A seat's player as this table writes him (escaped for HTML, or plain)."""
        return player(self.seats[seat], self.html)


def esc(text: str) -> str:
    return html.escape(text, quote=False)


def _text(text: str, html: bool) -> str:
    """``text`` for HTML (escaped) or as plain text."""
    return esc(text) if html else text


def card(c: Card, lang: str | None = None) -> str:
    """A card for a reader (``Д♥`` in Russian, ``Q♥`` in English): the one place
    cards become text, for the reader's language (the current one unless given).
    Callback data never comes from here: it keeps the engine's notation."""
    texts = _CARD_TEXTS.get(lang or current())
    return (texts or _CARD_TEXTS["en"])[c.id]


def _card_texts(letters: dict[str, str]) -> tuple[str, ...]:
    """Every card's text by id in one language's letters ("" for the unused ids)."""
    out = [""] * 64
    for c in deck(52):
        out[c.id] = letters.get(c.rank.text, c.rank.text) + c.suit.symbol
    return tuple(out)


#: Each language's card texts by card id, made once: a panel writes every card of
#: a hand on every edit (a language without letters of its own reads English's).
_CARD_TEXTS: dict[str, tuple[str, ...]] = {
    lang: _card_texts(letters) for lang, letters in RANK_LETTERS.items()
}


#: A card's spoken name ("ten of hearts", for screen readers): the rank's word and the
#: suit's, joined by the language's pattern (``CARD_NAME``).
RANK_WORDS = {
    "2": N_("two"),
    "3": N_("three"),
    "4": N_("four"),
    "5": N_("five"),
    "6": N_("six"),
    "7": N_("seven"),
    "8": N_("eight"),
    "9": N_("nine"),
    "10": N_("ten"),
    "J": N_("jack"),
    "Q": N_("queen"),
    "K": N_("king"),
    "A": N_("ace"),
}
# TRANSLATORS: the suit as it follows a rank in a card's name ("ten of hearts").
SUIT_WORDS = {
    "S": N_("of spades"),
    "H": N_("of hearts"),
    "D": N_("of diamonds"),
    "C": N_("of clubs"),
}
# TRANSLATORS: a card's name from its rank's word ("ten") and its suit's ("of hearts").
CARD_NAME = N_("{rank} {suit}")


def card_words() -> dict[str, object]:
    """The words of every card's spoken name in the current language (the page joins
    them: ``pattern`` with ``{rank}`` and ``{suit}``)."""
    return {
        "pattern": _(CARD_NAME),
        "ranks": {rank: _(word) for rank, word in RANK_WORDS.items()},
        "suits": {suit: _(word) for suit, word in SUIT_WORDS.items()},
    }


def card_name(c: Card) -> str:
    """A card's spoken name in the current language ("ten of hearts")."""
    return _(CARD_NAME).format(rank=_(RANK_WORDS[c.rank.text]), suit=_(SUIT_WORDS[c.suit.letter]))


def cards(cs: Sequence[Card]) -> str:
    return " ".join(card(c) for c in cs)


#: An AI seat's name, ``{n}`` its number: stored with the seat, so it is made in the
#: group's language when the seat is added ("Бот 1 (лёгкий)").
AI_NAMES = {
    "easy": N_("Bot {n} (easy)"),
    "normal": N_("Bot {n} (normal)"),
    "hard": N_("Bot {n} (hard)"),
}


def ai_name(level: str) -> str:
    """The name template for a new AI seat, in the current language (``{n}`` left in)."""
    return _(AI_NAMES[level]) if level in AI_NAMES else "Bot {n} ({level})"


def player(seat: Seat, html: bool = True) -> str:
    return ("🤖 " if seat.is_ai else "") + _text(seat.name, html)


# ---- rules -------------------------------------------------------------------------


def rules_lines(rules: Rules) -> list[str]:
    """The game and its options, one short line each (``games_text``)."""
    return games_text.option_lines(rules)


def options_line(rules: Rules) -> str:
    """The game and its options on one line: the lobby's and every table's."""
    return "📜 " + " · ".join(rules_lines(rules))


def table_options_line(rules: Rules) -> str:
    """The table's line: the game, then only what differs from that game's defaults
    (the lobby and /rules give every option): short enough to head every table and
    private panel."""
    usual = set(games_text.option_lines(Rules() if rules.podkidnoy else Rules(game=rules.game)))
    name, *rest = games_text.option_lines(rules)
    return "📜 " + " · ".join([name, *(x for x in rest if x not in usual)])


def rules_text(rules: Rules) -> str:
    """/rules: the options in force, then how the game plays in a few lines."""
    lines = ["<b>" + _("Rules in force") + "</b>"]
    lines += ["• " + x for x in rules_lines(rules)]
    lines += ["", *games_text.game_lines(rules)]
    return "\n".join(lines)


def lobby_text(seats: Sequence[Seat], rules: Rules, creator: str, closed: str = "") -> str:
    lines = ["🃏 <b>" + _("Durak: a new game") + "</b>"]
    if closed:
        lines.append(closed)
    else:
        lines.append(_("{name} is gathering players.").format(name=esc(creator)))
    count = len(seats)
    if seats:
        lines.append(
            n_("{n} player:", "{n} players:", count).format(n=count)
            + " "
            + ", ".join(player(s) for s in seats)
        )
    else:  # never "0 players": a closed lobby may have nobody left
        lines.append(_("Nobody has joined yet."))
    lines.append("")
    # one line: the lobby is read at a glance, and /rules has the long form
    lines.append(options_line(rules))
    if not closed:
        lines.append("")
        lines.append(_("Press Join to play; the creator or an admin presses Start."))
        lines.append(_("Short of players? The creator can seat AI players (🤖)."))
    return "\n".join(lines)


def again_lobby_text(seats: Sequence[Seat], rules: Rules, creator: str) -> str:
    """The Play-again lobby: who confirmed (✅) and who is still awaited (⏳)."""
    lines = ["🔁 <b>" + _("Durak: play again") + "</b>"]
    for s in seats:
        mark = "✅" if s.ready or s.is_ai else "⏳"
        lines.append(f"{mark} {player(s)}")
    lines.append("")
    lines.append(options_line(rules))
    lines.append("")
    lines.append(
        _(
            "Press “I'm in” to play the next game, or Leave. It starts when everyone"
            " has confirmed, or when {name} presses Start."
        ).format(name=esc(creator))
    )
    return "\n".join(lines)


def cap_line(cap: int) -> str:
    """Under a capped lobby: the game starts by itself once full."""
    return n_(
        "👥 Up to {n} player: the game starts when the lobby is full.",
        "👥 Up to {n} players: the game starts when the lobby is full.",
        cap,
    ).format(n=cap)


# ---- the table --------------------------------------------------------------------------


def _opening(t: Table) -> str:
    v = t.view
    assert isinstance(v, View)
    if v.opener is None:
        return ""
    name = t.name(v.opener)
    if v.opener_reason == "lowest_trump" and v.opener_card is not None:
        return _("{name} opened the game with the lowest trump, {card}.").format(
            name=name, card=card(v.opener_card)
        )
    if v.opener_reason == "no_trump":
        return _("Nobody held a trump: {name}, the dealer's left neighbour, opened.").format(
            name=name
        )
    if v.opener_reason == "attack_loser":
        return _("{name} opened against last game's fool.").format(name=name)
    if v.opener_reason == "loser_deals":
        return _("Last game's fool dealt; {name} opened.").format(name=name)
    return ""


def _seat_line(t: Table, s: int) -> str:
    v = t.view
    assert isinstance(v, View)
    info = v.seats[s]
    mark = ""
    if info.out:
        state = _("out, safe")
    else:
        state = n_("{n} card", "{n} cards", info.cards).format(n=info.cards)
    if s == v.attacker:
        mark = " ⚔️"
    elif s == v.defender:
        mark = " 🛡"
    team = ""
    if info.team is not None:
        team = " [" + ("A" if info.team == 0 else "B") + "]"
    you = " " + _("(you)") if v.seat == s else ""
    return f"{s + 1}. {t.name(s)}{team}{you}: {state}{mark}{away_mark(t.seats[s])}"


def away_mark(seat: Seat) -> str:
    """The AI plays this seat until its player presses a button (two timeouts in a
    row, or the group's ``/skip``): the whole table should see why it moves so fast.
    A player who left (``/leave``) does not come back: his seat says so."""
    if seat.is_ai:
        return ""
    if seat.left:
        return " 🤖 " + _("left: the AI plays")
    return " 🤖 " + _("away") if seat.away else ""


def timeout_line(t: Table) -> str:
    """ "Clara ran out of time: passed" for the last timeouts, while no person moved
    since (one line for the table; the last-event line may take it over)."""
    said = {
        "pass": _("passed"),
        "take": _("took the cards"),
        "attack": _("the lowest card was played"),
        "lead": _("the lowest card was played"),
        "defend": _("covered with the cheapest card that beats"),
        "beat": _("beaten with the cheapest card that beats"),
    }
    parts = [
        _("{name} ran out of time: {what}").format(
            name=t.name(seat), what=said.get(do, _("the bot moved"))
        )
        for seat, do in t.timeouts
        if 0 <= seat < len(t.seats)
    ]
    return "⌛ " + "; ".join(parts) if parts else ""


def last_event(t: Table) -> str | None:
    """The table's last event in one line ("Boris took 3 cards · Anna is out: no cards
    left"), from the game's log (``bot.events``); ``None`` before anything happened.
    Counts and names only: never a card of a hand."""
    e = t.story.last if t.story is not None else None
    if e is None:
        return None
    parts = []
    if e.kind == TOOK and e.seat is not None:
        parts.append(
            n_("{name} took {n} card", "{name} took {n} cards", e.count).format(
                name=t.name(e.seat), n=e.count
            )
        )
    elif e.kind == BEATEN_OFF:
        parts.append(
            n_(
                "Beaten off: {n} card to the discard",
                "Beaten off: {n} cards to the discard",
                e.count,
            ).format(n=e.count)
        )
    elif e.kind == TRANSFERRED and e.seat is not None and e.to is not None:
        parts.append(_("{name} transferred to {to}").format(name=t.name(e.seat), to=t.name(e.to)))
    if e.out:
        names = ", ".join(t.name(s) for s in e.out)
        parts.append(
            n_(
                "{names} is out: no cards left", "{names} are out: no cards left", len(e.out)
            ).format(names=names)
        )
    return "↪ " + " · ".join(parts) if parts else None


def out_order_line(seats: Sequence[Seat], order: Sequence[int]) -> str:
    """The end message: who went out, in order ("Out in this order: 1. Anna, 2. Clara")."""
    if not order:
        return ""
    ranked = ", ".join(f"{k}. {player(seats[s])}" for k, s in enumerate(order, 1))
    return _("Out in this order: {ranked}").format(ranked=ranked)


def series_line(tallies: Sequence[Tally]) -> str:
    """The end message: the group's series score, each player's times as the durak
    in this chat (the tally /stats shows)."""
    if not tallies:
        return ""
    score = " · ".join(f"{esc(x.name or str(x.user_id))} {x.losses}" for x in tallies)
    return _("Series in this group (times the durak): {score}").format(score=score)


def waiting_line(t: Table) -> str:
    v = t.view
    assert isinstance(v, View)
    if v.outcome is not None or v.attacker is None or v.defender is None:
        return ""
    if not v.table:
        return _("Waiting for {name} to open.").format(name=t.name(v.attacker))
    parts = []
    if v.defender in v.waiting_for:
        parts.append(_("{name} to cover or take").format(name=t.name(v.defender)))
    throwers = [s for s in v.waiting_for if s != v.defender]
    if throwers:
        names = ", ".join(t.name(s) for s in throwers)
        parts.append(_("{names} to throw in or pass").format(names=names))
    if not parts:
        return ""
    return _("Waiting for {what}.").format(what="; ".join(parts))


def outcome_line(
    seats: Sequence[Seat],
    outcome: Outcome | None,
    ending: Ending | None,
    end_reason: str | None = None,
    html: bool = True,
) -> str:
    if end_reason == "repetition" and (ending is None or ending.reason == "played"):
        return _("The same position again: a draw.")
    if end_reason == NO_PROGRESS and (ending is None or ending.reason == "played"):
        return n_(
            "{n} take in a row changed nothing: a draw.",
            "{n} takes in a row changed nothing: a draw.",
            NO_PROGRESS_TAKES,
        ).format(n=NO_PROGRESS_TAKES)
    if ending is not None and ending.reason == SURRENDER and ending.loser is not None:
        return _("{name} left the game and is the durak.").format(
            name=player(seats[ending.loser], html)
        )
    if ending is not None and ending.reason == "cancelled":
        return _("The game was cancelled.")
    losers = ending.losers if ending is not None else (outcome.losers if outcome else ())
    draw = ending.draw if ending is not None else bool(outcome and outcome.draw)
    if draw:
        return _("Nobody is left holding cards: a draw!")
    if len(losers) == 1:
        return _("{name} is the durak!").format(name=player(seats[losers[0]], html))
    if losers:
        names = ", ".join(player(seats[s], html) for s in losers)
        return _("Team {names} lost: they are the durak.").format(names=names)
    return ""


def _trump_line(v: View) -> str:
    trump = SUIT_NAMES[v.trump.letter]
    if v.second_trump_card is not None:
        # trump_change: the face-down card was drawn and its suit is trump now
        return _("Trump changed to {suit}: the {card} was drawn").format(
            suit=trump, card=card(v.second_trump_card)
        )
    if v.trump_card is not None and v.trump_card_in_stock:
        line = _("Trump {suit}: {card} lies under the stock").format(
            suit=trump, card=card(v.trump_card)
        )
    elif v.trump_card is not None and v.match is not None:
        # sprint: the turned card shows trump and stays out of play (VARIANTS.md 2.1)
        line = _("Trump {suit}: the {card} is out of play").format(
            suit=trump, card=card(v.trump_card)
        )
    elif v.trump_card is not None:
        line = _("Trump {suit} (the {card} was drawn)").format(suit=trump, card=card(v.trump_card))
    else:
        line = _("Trump {suit}").format(suit=trump)
    if v.second_trump_hidden:
        line += "; " + _("a face-down card under it will be the new trump")
    return line


def match_lines(m: MatchView, over: bool = False, html: bool = True) -> list[str]:
    """A sprint match: the score between deals, the result once decided; ``over``:
    the deal shown has ended (its number, not the next one's, beside its score)."""
    if m.deals is not None:
        score = " : ".join(f"{_text(name, html)} {wins}" for name, wins in m.wins)
        if m.decided:
            line = _("Sprint match after {played} deals: {score}").format(
                played=m.played, score=score
            )
        elif over:
            line = _("Sprint match, deal {played} of {deals} is over: {score}").format(
                played=m.played, deals=m.deals, score=score
            )
        else:
            line = _("Sprint match, deal {played} of {deals}: {score}").format(
                played=min(m.played + 1, m.deals), deals=m.deals, score=score
            )
        lines = [line]
    else:
        lines = [
            _("Knock-out, deal {n}; still in: {names}").format(
                n=m.played + (0 if m.decided or over else 1),
                names=", ".join(_text(x, html) for x in m.remaining),
            )
        ]
        if m.eliminated:
            lines.append(
                _("Out of the match: {names}").format(
                    names=", ".join(_text(x, html) for x in m.eliminated)
                )
            )
    if m.winner is not None:
        lines.append("🏆 " + _("{name} wins the match!").format(name=_text(m.winner, html)))
    elif m.draw:
        lines.append("🏆 " + _("The match is drawn."))
    return lines


def deal_ended_lines(m: MatchView, seats: Sequence[Seat], outcome: Outcome | None) -> list[str]:
    """A sprint deal the match goes on after, as the group reads it: which deal
    ended and who lost it, the score (or who is still in), and that the next one
    follows."""
    losers = outcome.losers if outcome is not None else ()
    name = player(seats[losers[0]]) if len(losers) == 1 else ""
    if m.deals is not None:
        if name:
            head = _("Deal {n} of {deals} is over: {name} lost it.").format(
                n=m.played, deals=m.deals, name=name
            )
        else:
            head = _("Deal {n} of {deals} is over: a draw, nobody wins it.").format(
                n=m.played, deals=m.deals
            )
        score = " : ".join(f"{esc(who)} {wins}" for who, wins in m.wins)
        lines = [head, _("Sprint match score: {score}").format(score=score)]
    else:
        if name:
            head = _("Knock-out, deal {n} is over: {name} lost it and is out.").format(
                n=m.played, name=name
            )
        else:
            head = _("Knock-out, deal {n} is over: a draw, nobody is out.").format(n=m.played)
        still = ", ".join(esc(x) for x in m.remaining)
        lines = [head, _("Still in: {names}").format(names=still)]
    lines.append(_("Deal {n} follows.").format(n=m.played + 1))
    return lines


def _pairs(pairs: Sequence[tuple[Card, Card | None]]) -> str:
    return " ".join(card(a) + ("/" + card(c) if c else "") for a, c in pairs)


def _english_line(t: Table) -> str:
    v = t.view
    assert isinstance(v, View)
    if v.single_lead and v.attacker is not None:
        return _("Nobody had a pair: {name} leads one card.").format(name=t.name(v.attacker))
    if v.no_pair:
        names = ", ".join(t.name(s) for s in v.no_pair)
        return _("No pair: {names}; the lead passed on.").format(names=names)
    return ""


def _head(t: Table) -> list[str]:
    """The table's head: the group, then the game in force and its options (every
    version of the message, from the deal to the end)."""
    head = ["🃏 <b>" + _("Durak") + "</b> · " + esc(t.chat_title)]
    if t.rules is not None:
        head.append(table_options_line(t.rules))
    return head


def table_text(t: Table) -> str:
    """The game as the group sees it, and the top of every private panel."""
    v = t.view
    if isinstance(v, PileView):
        return pile_table_text(t)
    lines = _head(t)
    if v.match is not None:
        lines += match_lines(v.match, over=v.outcome is not None)
    lines += [
        _trump_line(v),
        _("Stock: {stock} · Discard: {discard}").format(stock=v.stock, discard=v.discard),
    ]
    if v.last_discard:
        lines.append(_("Last discarded: {cards}").format(cards=_pairs(v.last_discard)))
    lines.append("")
    lines += [_seat_line(t, s) for s in range(len(v.seats))]
    opening = _opening(t) if v.first_bout else ""  # said once: gone after the first bout
    if opening:
        lines += ["", opening]
    event = last_event(t)
    if event:
        lines += ["", event]
    if v.outcome is not None or t.ending is not None:
        end = outcome_line(t.seats, v.outcome, t.ending, v.end_reason)
        lines += ["", "🏁 <b>" + end + "</b>"]
        return "\n".join(lines)
    english = _english_line(t)
    if english:
        lines += ["", english]
    lines.append("")
    if v.attacker is not None and v.defender is not None:
        lines.append(
            _("{attacker} attacks {defender}.").format(
                attacker=t.name(v.attacker), defender=t.name(v.defender)
            )
        )
    if v.table:
        attack_count = len(v.table)
        lines.append(
            _("On the table ({n} of at most {limit}):").format(n=attack_count, limit=v.limit)
        )
        for a, c in v.table:
            lines.append(f"  {card(a)} ← {card(c) if c else '…'}")
        if v.taking:
            lines.append(_("{name} takes the cards.").format(name=t.name(v.defender or 0)))
    else:
        limit = v.limit or 0
        lines.append(
            n_(
                "The table is empty; this bout allows {n} card.",
                "The table is empty; this bout allows {n} cards.",
                limit,
            ).format(n=limit)
        )
    timeout = timeout_line(t)
    if timeout:
        lines += ["", timeout]
    wait = waiting_line(t)
    if wait:
        lines += ["", "⏳ " + wait]
        if t.seconds_left is not None:
            lines.append("⏱ " + time_left(t.seconds_left))
    return "\n".join(lines)


# ---- pile games ------------------------------------------------------------------------


def _pile_seat_line(t: Table, s: int) -> str:
    v = t.view
    assert isinstance(v, PileView)
    info = v.seats[s]
    state = (
        _("out, safe") if info.out else n_("{n} card", "{n} cards", info.cards).format(n=info.cards)
    )
    suit = ""
    if v.trumps and s < len(v.trumps):
        own = v.trumps[s]
        suit = " " + (SUIT_NAMES[own.letter] if own is not None else "–")
    mark = " ⏳" if s == v.turn and v.outcome is None else ""
    you = " " + _("(you)") if v.seat == s else ""
    return f"{s + 1}. {t.name(s)}{suit}{you}: {state}{mark}{away_mark(t.seats[s])}"


def _pile_trump_lines(v: PileView, counts: bool = True) -> list[str]:
    """The trump, and (``counts``) the stock or the discard: the page draws those."""
    if v.game == "piled":
        trump = SUIT_NAMES[v.trump.letter] if v.trump is not None else "?"
        if v.trump_card is not None and v.trump_card_in_stock:
            line = _("Trump {suit}: {card} lies under the stock").format(
                suit=trump, card=card(v.trump_card)
            )
        elif v.trump_card is not None:
            line = _("Trump {suit} (the {card} was drawn)").format(
                suit=trump, card=card(v.trump_card)
            )
        else:
            line = _("Trump {suit}").format(suit=trump)
        return [line, _("Stock: {n}").format(n=v.stock)] if counts else [line]
    if v.game == "road":
        trump = SUIT_NAMES[v.trump.letter] if v.trump is not None else "?"
        if v.out_of_play is not None:
            line = _("Trump {suit}: the {card} is out of play").format(
                suit=trump, card=card(v.out_of_play)
            )
        elif v.trump_card is not None:
            line = _("Trump {suit}, shown by the dealer's last card {card}").format(
                suit=trump, card=card(v.trump_card)
            )
        else:
            line = _("Trump {suit}").format(suit=trump)
        lines = [line, _("Discard: {n}").format(n=v.discard)] if counts else [line]
        if v.last_cleared:
            lines.append(_("Last cleared: {cards}").format(cards=cards(v.last_cleared)))
        return lines
    return [_("Each player's own trump is beside his name.")]


def pile_lines(v: PileView) -> list[str]:
    """The pile: road shows it whole (a trick is one card per player in the game),
    the other games their top card and the two below it."""
    if not v.pile:
        return [_("The pile is empty.")]
    if v.game == "road":
        playing = sum(1 for s in v.seats if not s.out)
        return [
            _("Pile ({n} of {of}): {cards}").format(n=len(v.pile), of=playing, cards=cards(v.pile))
        ]
    line = n_("Pile ({n} card), top: {card}", "Pile ({n} cards), top: {card}", len(v.pile)).format(
        n=len(v.pile), card="<b>" + card(v.pile[-1]) + "</b>"
    )
    below = v.pile[-3:-1]
    if below:
        line += " · " + _("under it: {cards}").format(cards=cards(tuple(reversed(below))))
    return [line]


def pile_waiting_line(t: Table) -> str:
    v = t.view
    assert isinstance(v, PileView)
    if v.outcome is not None or v.turn is None:
        return ""
    name = t.name(v.turn)
    if v.phase == "answer" and v.pile:
        cost = v.take_cost or 0
        if v.game == "road":
            return _("{name} to beat {card} or take the bottom card.").format(
                name=name, card=card(v.pile[-1])
            )
        return n_(
            "{name} to beat {card} or take {n} card.",
            "{name} to beat {card} or take {n} cards.",
            cost,
        ).format(name=name, card=card(v.pile[-1]), n=cost)
    return _("{name} to lead a card.").format(name=name)


def pile_table_text(t: Table) -> str:
    """A pile game as the group sees it (and the top of the panels): no hand."""
    v = t.view
    assert isinstance(v, PileView)
    lines = [*_head(t), *_pile_trump_lines(v), ""]
    lines += [_pile_seat_line(t, s) for s in range(len(v.seats))]
    lines += ["", *pile_lines(v)]
    event = last_event(t)
    if event:
        lines += ["", event]
    if v.outcome is not None or t.ending is not None:
        end = outcome_line(t.seats, v.outcome, t.ending, v.end_reason)
        lines += ["", "🏁 <b>" + end + "</b>"]
        return "\n".join(lines)
    timeout = timeout_line(t)
    if timeout:
        lines += ["", timeout]
    wait = pile_waiting_line(t)
    if wait:
        lines += ["", "⏳ " + wait]
        if t.seconds_left is not None:
            lines.append("⏱ " + time_left(t.seconds_left))
    return "\n".join(lines)


def pile_turn_line(v: PileView) -> str:
    if not v.legal or v.seat is None or v.seat != v.turn:
        return ""
    if v.phase == "answer" and v.pile:
        return _("Beat {card} (tap a card that beats it), or take.").format(card=card(v.pile[-1]))
    return _("Your turn: lead any card.")


# ---- the own trumps' suit choice ----------------------------------------------------------


def suit_choice_text(
    seats: Sequence[Seat], order: Sequence[int], chosen: Sequence[str], seconds: int | None
) -> str:
    """The lobby while the players of own trumps choose their suits in turn."""
    lines = ["🃏 <b>" + _("Own trumps: choosing suits") + "</b>", ""]
    for k, seat in enumerate(order):
        if k < len(chosen):
            mark = SUIT_NAMES[chosen[k]]
        elif k == len(chosen):
            mark = "⏳"
        else:
            mark = "…"
        lines.append(f"{k + 1}. {player(seats[seat])}: {mark}")
    if len(chosen) < len(order):
        lines += [
            "",
            _("{name}, tap a free suit: it is your trump for the whole series.").format(
                name=player(seats[order[len(chosen)]])
            ),
        ]
        if seconds is not None:
            lines.append(
                _("Otherwise the first free suit is chosen in {n} seconds.").format(n=seconds)
            )
    return "\n".join(lines)


def time_left(seconds: int) -> str:
    """Coarse: the table is re-rendered only at a few marks, so no false precision."""
    if seconds > 90:
        minutes = round(seconds / 60)
        return n_("about {n} minute left", "about {n} minutes left", minutes).format(n=minutes)
    if seconds > 30:
        return _("under {n} seconds left").format(n=10 * math.ceil(seconds / 10))
    if seconds > 10:
        return _("under 30 seconds left")
    return _("under 10 seconds left")


def hand_lines(t: Table) -> list[str]:
    """The reader's own cards; ``blind``: his hand as face-down slots (only the cards
    he has seen show) and his opponent's hand face up."""
    v = t.view
    if not isinstance(v, View) or v.slots is None:
        return ["<b>" + _("Your cards") + ":</b> " + (cards(v.hand) or "—")]
    lines = [
        "<b>" + _("{name}'s cards").format(name=t.name(seat)) + ":</b> " + (cards(shown) or "—")
        for seat, shown in v.shown_hands
    ]
    hidden = " ".join("🂠" if c is None else card(c) for c in v.slots)
    lines.append("<b>" + _("Your cards (face down)") + ":</b> " + (hidden or "—"))
    return lines


def panel_text(t: Table) -> str:
    """A player's private panel: the table, his hand, and what he can do now.
    ``blind``: his own hand as face-down slots (only the cards he has seen show)
    and his opponent's hand face up."""
    v = t.view
    lines = [table_text(t), ""]
    lines += hand_lines(t)
    if v.outcome is None and t.ending is None:
        hint = pile_turn_line(v) if isinstance(v, PileView) else your_turn_line(v)
        if hint:
            lines.append("👉 " + hint)
    return "\n".join(lines)


def waiting_panel_text(t: Table) -> str:
    """The panel of a player the game does not wait on: his hand and one line of where
    he stands, no table (that is in the group, a tap away). It changes only when what
    it shows does, so his panel is not edited for every move of the others."""
    v = t.view
    lines = ["🃏 <b>" + _("Durak") + "</b> · " + esc(t.chat_title), ""]
    lines += hand_lines(t)
    lines.append("⏳ " + waiting_status(v))
    return "\n".join(lines)


def waiting_status(v: View | PileView) -> str:
    """One line from the seat's role alone (never from the table, which moves on)."""
    seat = v.seat
    if seat is not None and seat < len(v.seats) and v.seats[seat].out:
        return _("You are out, safe; the game goes on in the group.")
    if isinstance(v, View) and seat is not None and seat == v.attacker:
        return _("You attack this bout; the others are playing. The table is in the group.")
    if isinstance(v, View) and seat is not None and seat == v.defender:
        return _("You defend this bout; the others are playing. The table is in the group.")
    return _("Not your turn: the table is in the group; a message tells you when it is.")


def your_turn_line(v: View) -> str:
    if v.slots is not None and v.seat is not None and v.seat in v.waiting_for:
        if v.seat == v.defender:
            return _("Answer with a face-down card (tap a slot): it beats or you take both.")
        return _("Your turn: open with a face-down card (tap a slot).")
    if not v.legal or v.seat is None:
        return ""
    if (
        not v.table
        and v.seat == v.attacker
        and any(isinstance(a, Attack) and len(a.cards) == 2 for a in v.legal)
        and not any(isinstance(a, Attack) and len(a.cards) == 1 for a in v.legal)
    ):
        return _("Your turn: open with a pair (tap a card of it).")
    if not v.table and v.seat == v.attacker:
        return _("Your turn: open the bout with any card.")
    if not v.table and v.seat == v.attacker:
        return _("Your turn: open the bout with any card.")
    if v.seat == v.defender:
        return _("Cover the cards (tap a card), or take.")
    return _("You may throw in a card of a rank on the table, or pass.")


# ---- the Mini App's page: the panel's lines as plain text ------------------------------


def page_notes(t: Table) -> list[str]:
    """The lines the panel shows beside the cards (the trump, a sprint's score, the
    opening, English's lead, the last event, timeouts) as plain text: the page sets
    them as text. Not the stock's or the discard's count: the page draws those."""
    t = replace(t, html=False)
    v = t.view
    lines: list[str] = []
    if isinstance(v, View):
        if v.match is not None:
            lines += match_lines(v.match, over=v.outcome is not None, html=False)
        lines.append(_trump_line(v))
        if v.first_bout:
            lines.append(_opening(t))
        lines.append(_english_line(t))
    else:
        lines += _pile_trump_lines(v, counts=False)
    lines.append(last_event(t) or "")
    lines.append(timeout_line(t))
    return [x for x in lines if x]


def page_status(t: Table) -> str:
    """One line as plain text: the end, what the reader may do now, or whom the game
    waits for."""
    t = replace(t, html=False)
    v = t.view
    if v.outcome is not None or t.ending is not None:
        end_reason = v.end_reason
        return "🏁 " + outcome_line(t.seats, v.outcome, t.ending, end_reason, html=False)
    if isinstance(v, PileView):
        mine = pile_turn_line(v)
        return "👉 " + mine if mine else "⏳ " + pile_waiting_line(t)
    mine = your_turn_line(v)
    if mine:
        return "👉 " + mine
    wait = waiting_line(t)
    return "⏳ " + wait if wait else ""


#: Telegram's longest message, in characters (UTF-16 code units) after the HTML is parsed.
TEXT_MAX = 4096
#: /history names each player of ten games: a name is cut to this many characters there
#: (ten games of six 48-character names were 5,300 characters: Telegram refused them).
HISTORY_NAME = 24


def clip(name: str, most: int) -> str:
    """``name`` cut to ``most`` characters, with "…" where it was cut."""
    return name if len(name) <= most else name[: most - 1].rstrip() + "…"


def history_text(
    games: Sequence[GameInfo],
    suffixes: dict[int, str] | None = None,
    replays: dict[int, str] | None = None,
) -> str:
    """The chat's recent games; ``suffixes`` adds a line's end per game (its ratings),
    ``replays`` a game's link to its replay in the Mini App."""
    if not games:
        return _("No games finished in this chat yet.")
    lines = ["📜 <b>" + _("Recent games") + "</b>", ""]
    for info in games:
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(info.updated_at))
        seats = tuple(replace(s, name=clip(s.name, HISTORY_NAME)) for s in info.seats)
        outcome = outcome_line(seats, None, info.ending)
        players = ", ".join(player(s) for s in seats)
        extra = (suffixes or {}).get(info.game_id, "")
        number = f"#{info.game_id}"
        link = (replays or {}).get(info.game_id)
        if link is not None:
            number = f'<a href="{html.escape(link)}">▶️ {number}</a>'
        line = f"{number} · {when} UTC · {players}\n   {outcome}{extra}"
        if _utf16(html.unescape("\n".join([*lines, line]))) > TEXT_MAX:
            break  # (never with ten games: the older ones are left out)
        lines.append(line)
    return "\n".join(lines)


def live_in_app_line(link: str) -> str:
    """Under a table every player plays in the Mini App: it follows the game only at a
    spectator's pace; the game is live there."""
    return "📺 " + _(
        'The game is live in the Mini App: <a href="{link}">watch it there</a>.'
        " This message follows it every 15 seconds."
    ).format(link=html.escape(link))


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def welcome_text() -> str:
    """The private /start without a game: what this bot is, for someone who just found it."""
    return "🃏 " + _(
        "I am a bot for playing durak, the card game, with friends in a Telegram group:"
        " add me to a group and send /newgame there. Your cards come here, to our private"
        " chat, where only you see them."
    )


def help_text() -> str:
    return "\n".join(
        [
            "🃏 <b>" + _("Durak, the throw-in fool") + "</b>",
            "",
            "/newgame — " + _("open a lobby in this group (also /durak)"),
            "/rules — " + _("the rules in force"),
            "/stats — " + _("ratings and fools of the week; /stats Name: head to head"),
            "/leave — " + _("leave the lobby, or give up a running game (you become the durak)"),
            "/settings — " + _("house rules, turn time and language (admins)"),
            "/history — " + _("recent games and their fools"),
            "/cancel — " + _("cancel the lobby or the game (its creator or an admin)"),
            "/kick — " + _("in reply to a player: he leaves the game (admins)"),
            "/skip — "
            + _(
                "the other players' majority lets the AI play for one the game waits on,"
                " once he has had half his turn time (not with two players: there only"
                " the turn timer or his own /leave does)"
            ),
            "/language — " + _("your own language (in our private chat)"),
            "/help — " + _("this help"),
            "",
            _("Your cards come to you in a private chat with me; press the table's button."),
        ]
    )


REFUSALS = {
    "game_over": N_("The game is over."),
    "not_your_turn": N_("It is not your turn for that."),
    "variant_off": N_("These rules do not allow that."),
    "not_in_hand": N_("You do not hold that card."),
    "mixed_ranks": N_("Open with one card or cards of one rank."),
    "rank_not_on_table": N_("That rank is not on the table."),
    "limit": N_("The table is full for this bout."),
    "not_on_table": N_("That card is not on the table uncovered."),
    "cannot_beat": N_("That card does not beat it."),
    "cannot_take": N_("There is nothing to take."),
    "cannot_transfer": N_("You cannot transfer now."),
    "cannot_exchange": N_("The trump cannot be exchanged now."),
    "opening_size": N_("That opening has the wrong number of cards."),
    "mixed_suits": N_("Open with one card or cards of one suit."),
    "cannot_return": N_("The card cannot be returned now."),
    "must_answer": N_("Beat the top card or take first."),
    "must_lead": N_("Lead a card: there is nothing to beat or take."),
    "choosing_suits": N_("The players are choosing their suits now."),
    "not_your_choice": N_("Another player chooses his suit now."),
    "suit_taken": N_("That suit is taken."),
    "stale_version": N_("The table changed; look again."),
    "not_in_game": N_("You are not playing in this game."),
    "left_game": N_("You left this game: the AI plays your seat."),
    "unknown_game": N_("This game no longer exists."),
    "not_running": N_("This game has not started."),
    "lobby_exists": N_("This chat already has an open lobby."),
    "game_running": N_("A game is already running in this chat."),
    "no_lobby": N_("There is no open lobby here."),
    "lobby_full": N_("The lobby is full."),
    "already_joined": N_("You are already in."),
    "not_enough_players": N_("At least two players are needed."),
    "bad_player_count": N_("These rules do not fit this many players."),
    "not_allowed": N_("Only the lobby's creator or an admin may do that."),
    "bad_action": N_("That button is not valid."),
    "bad_callback": N_("That button is not valid."),
    "old_panel": N_("This panel is old; use the newest one below."),
    "cannot_play": N_("That card cannot be played now."),
    "admins_only": N_("Only the group's admins may do that."),
    "invalid_setting": N_("That setting does not fit the open lobby (too many players?)."),
    "database_error": N_("Something went wrong; please try again."),
}


UNKNOWN_REFUSAL = N_("That is not possible now.")


def refusal(code: str) -> str:
    return _(REFUSALS.get(code, UNKNOWN_REFUSAL))
