"""Inline keyboards: pure functions from a view to buttons."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from durak import Attack, Defend, ExchangeTrump, Pass, ShowTrump, Take, Transfer, View
from durak.actions import Action, Beat, Lead, ReturnCard
from durak.cards import Card
from durak.service import GameInfo
from durak.view import PileView

from . import callbacks as cb
from .i18n import _
from .render import card

CARDS_PER_ROW = 6

#: A keyboard as the Bot API's JSON: cheaper to build and send than PTB's objects, which
#: took a quarter of a busy bot's CPU to construct and serialise (BENCHMARKS.md).
Markup = dict[str, Any]
Button = dict[str, str]


def button(text: str, callback_data: str | None = None, url: str | None = None) -> Button:
    if (callback_data is None) == (url is None):
        raise ValueError("a button has either callback data or a URL")
    if callback_data is not None:
        return {"text": text, "callback_data": callback_data}
    return {"text": text, "url": url or ""}


def markup(rows: list[list[Button]]) -> Markup:
    return {"inline_keyboard": rows}


def deep_link(bot_username: str, payload: str) -> str:
    return f"https://t.me/{bot_username}?start={payload}"


def add_to_group(bot_username: str) -> Markup:
    """Under the private /start: Telegram's own "pick a group to add this bot to"."""
    url = f"https://t.me/{bot_username}?startgroup=true"
    return markup([[button("➕ " + _("Add me to a group"), url=url)]])


def lobby(
    game_id: int,
    room: bool = True,
    cap_row: list[list[Button]] | None = None,
    app: str | None = None,
) -> Markup:
    """Join / Leave, AI players of three levels while there is a free seat, the cap
    of players (``cap_row``, :func:`caps`), Start; with ``app``, the Mini App's direct
    link for the lobby first (join and play there, no private chat needed)."""
    rows = [
        [
            button("✋ " + _("Join"), callback_data=cb.lobby("j", game_id)),
            button(_("Leave"), callback_data=cb.lobby("l", game_id)),
        ]
    ]
    if room:
        levels = {"easy": _("easy"), "normal": _("normal"), "hard": _("hard")}
        rows.append(
            [
                button("🤖 " + levels[level], callback_data=cb.lobby(kind, game_id))
                for kind, level in cb.AI_KINDS.items()
            ]
        )
    rows.extend(cap_row or [])
    rows.append([button("▶️ " + _("Start"), callback_data=cb.lobby("s", game_id))])
    return markup(_app_row(app) + rows)


def _app_row(app: str | None) -> list[list[Button]]:
    """The Mini App's direct link as a lobby's first row (a URL button: inline
    ``web_app`` buttons are for private chats only)."""
    return [] if app is None else [[button("🎴 " + _("Play in the Mini App"), url=app)]]


def again_lobby(game_id: int, app: str | None = None) -> Markup:
    """The Play-again lobby: each player confirms (or leaves); the creator may start
    before everyone has (who did not confirm stays out); ``app``: as :func:`lobby`."""
    return markup(
        [
            *_app_row(app),
            [
                button("✅ " + _("I'm in"), callback_data=cb.lobby("a", game_id)),
                button(_("Leave"), callback_data=cb.lobby("l", game_id)),
            ],
            [button("▶️ " + _("Start"), callback_data=cb.lobby("s", game_id))],
        ]
    )


def caps(game_id: int, counts: Sequence[int], cap: int | None) -> list[list[Button]]:
    """One row of the lobby: the cap of players the creator may choose (the game
    starts itself when that many sit), the chosen one ticked."""
    if len(counts) < 2:
        return []
    return [
        [
            button(("✓ " if n == cap else "") + f"👥 {n}", callback_data=cb.cap(game_id, n))
            for n in counts
        ]
    ]


def cap_counts(info: GameInfo) -> list[int]:
    """The caps a lobby may choose: the counts its game allows, from who sits already."""
    counts = []
    for n in range(max(2, len(info.seats)), info.rules.max_players + 1):
        try:
            info.rules.check_players(n)
        except ValueError:
            continue
        counts.append(n)
    return counts


def confirm(kind: str, game_id: int, token: int) -> Markup:
    """A private yes / no under a question (leave the game, cancel it)."""
    yes = {"v": _("Yes, leave"), "w": _("Yes, cancel the game")}[kind]
    return markup(
        [
            [
                button("✅ " + yes, callback_data=cb.confirm(kind, game_id, token, True)),
                button("↩️ " + _("No"), callback_data=cb.confirm(kind, game_id, token, False)),
            ]
        ]
    )


def notify_join(bot_username: str, game_id: int) -> Markup:
    """Under the /notify_me message: join the new lobby from the private chat."""
    url = deep_link(bot_username, cb.start_payload(cb.Link.JOIN, game_id))
    return markup([[button("✋ " + _("Join"), url=url)]])


def ended(bot_username: str, game_id: int, again: bool = True) -> Markup:
    """Under the end-of-game message: the next game of the series (not after a cancelled
    game: it has none), and the record."""
    play = [button("🔁 " + _("Play again"), callback_data=cb.lobby("r", game_id))]
    record = [button("📄 " + _("Game record (JSON)"), callback_data=cb.lobby("h", game_id))]
    return markup([play, record] if again else [record])


def table(bot_username: str, game_id: int, over: bool, app: str | None = None) -> Markup:
    """The group's table: a way to one's cards while playing (and with ``app``, the Mini
    App's direct link: inline ``web_app`` buttons work in private chats only); once over,
    no buttons (the record is offered once, under the end-of-game message)."""
    if over:
        return markup([])
    url = deep_link(bot_username, cb.start_payload(cb.Link.CARDS, game_id))
    row = [button("🃏 " + _("My cards"), url=url)]
    if app is not None:
        row.append(button("🎴 " + _("Open the table"), url=app))
    return markup([row])


def with_table_app(panel: Markup, url: str) -> Markup:
    """A private panel with the Mini App's button on top ("🃏 Open the table")."""
    opener: dict[str, Any] = {"text": "🃏 " + _("Open the table"), "web_app": {"url": url}}
    return markup([[opener], *panel["inline_keyboard"]])


def my_cards(bot_username: str, game_id: int, name: str) -> Markup:
    """The group's one button for a player the bot cannot write to: it opens the private
    chat, whose Start delivers his panel (the same deep link as "My cards")."""
    url = deep_link(bot_username, cb.start_payload(cb.Link.CARDS, game_id))
    return markup([[button("🃏 " + _("{name}: get my cards").format(name=name), url=url)]])


def playable(view: View | PileView) -> set[Card]:
    """The cards of the hand that some legal action plays or shows."""
    out: set[Card] = set()
    for a in view.legal:
        if isinstance(a, Attack):
            out.update(a.cards)
        elif isinstance(a, Defend | Transfer | ShowTrump | Lead | Beat):
            out.add(a.card)
    return out


def card_actions(view: View | PileView, c: Card) -> list[Action]:
    """What tapping ``c`` could mean now: single-card attacks, covers, transfers,
    a pile game's lead or beat; and where no single card may open (``english``:
    a pair), the openings with ``c`` in them, to choose from."""
    out: list[Action] = []
    several: list[Action] = []
    for a in view.legal:
        if (isinstance(a, Attack) and a.cards == (c,)) or (
            isinstance(a, Defend | Transfer | Lead | Beat) and a.card == c
        ):
            out.append(a)
        elif isinstance(a, Attack) and c in a.cards and len(a.cards) == 2:
            several.append(a)
    if not any(isinstance(a, Attack) for a in out):
        out += several
    return out


def several_card_openings(view: View) -> bool:
    """Whether an opening of several cards is legal now (the picker is offered)."""
    return any(isinstance(a, Attack) and len(a.cards) > 1 for a in view.legal) and not view.table


def _hand_rows(
    game_id: int, version: int, hand: tuple[Card, ...], can: set[Card]
) -> list[list[Button]]:
    rows: list[list[Button]] = []
    row: list[Button] = []
    for c in hand:
        label = card(c) if c in can else f"({card(c)})"
        row.append(button(label, callback_data=_data(game_id, version, cb.Tap(c))))
        if len(row) == CARDS_PER_ROW:
            rows.append(row)
            row = []
    if row:
        rows.append(row)
    return rows


def _refresh(game_id: int, version: int) -> list[Button]:
    return [button("↻ " + _("Refresh"), callback_data=_data(game_id, version, cb.Refresh()))]


def actions(view: View | PileView) -> list[tuple[str, Action]]:
    """The panel's buttons besides the cards, each with its label: Take (a pile game's
    with its cost), Pass or Beaten off, Exchange trump, Show a trump, Return the card.
    The Mini App's page offers the same ones."""
    out: list[tuple[str, Action]] = []
    for a in view.legal:
        if isinstance(a, Take):
            if not isinstance(view, PileView):
                out.append(("🫴 " + _("Take"), a))
            elif view.game == "road":
                out.append(("🫴 " + _("Take the bottom card"), a))
            else:
                out.append(("🫴 " + _("Take ({n})").format(n=view.take_cost or 0), a))
        elif isinstance(view, PileView):
            continue
        elif isinstance(a, Pass):
            label = _("Pass") if any(c is None for _a, c in view.table) else _("Beaten off")
            out.append(("✋ " + label, a))
        elif isinstance(a, ExchangeTrump):
            out.append(("🔄 " + _("Exchange trump"), a))
        elif isinstance(a, ShowTrump):
            out.append(("👁 " + _("Show {card}").format(card=card(a.card)), a))
        elif isinstance(a, ReturnCard):
            out.append(("↩️ " + _("Return the card"), a))
    return out


def panel(game_id: int, version: int, view: View | PileView) -> Markup:
    """The hand as buttons (cards that can be played now plain, others in
    brackets) and the actions that are legal now. ``blind``: the face-down slots
    instead; a pile game: :func:`pile_panel`."""
    if isinstance(view, PileView):
        return pile_panel(game_id, version, view)
    if view.slots is not None:
        return blind_panel(game_id, version, view)
    can = playable(view)
    rows = _hand_rows(game_id, version, view.hand, can)
    buttons: list[Button] = []
    if several_card_openings(view):
        buttons.append(
            button("🃏 " + _("Several cards"), callback_data=_data(game_id, version, cb.Pick()))
        )
    buttons += [_button(label, game_id, version, a) for label, a in actions(view)]
    if buttons:
        rows.append(buttons)
    rows.append(_refresh(game_id, version))
    return markup(rows)


def picker(game_id: int, version: int, view: View, chosen: tuple[Card, ...]) -> Markup:
    """The several-card opening: tap cards to choose them (✅), then play them. Only
    cards of some legal opening with all the chosen ones are offered, so the rule of
    the game (one rank; ``damka``: one suit; ``english``: a pair) shows in the
    buttons; the play button appears once the choice is a legal opening."""
    openings = [a for a in view.legal if isinstance(a, Attack)]
    fits = {c for a in openings if set(chosen) <= set(a.cards) for c in a.cards}
    rows: list[list[Button]] = []
    row: list[Button] = []
    for c in view.hand:
        if c in chosen:
            rest = tuple(x for x in chosen if x != c)
            row.append(
                button("✅ " + card(c), callback_data=_data(game_id, version, cb.Pick(rest)))
            )
        elif c in fits and len(chosen) < cb.MAX_CARDS:
            more = (*chosen, c)
            row.append(button(card(c), callback_data=_data(game_id, version, cb.Pick(more))))
        else:
            continue
        if len(row) == CARDS_PER_ROW:
            rows.append(row)
            row = []
    if row:
        rows.append(row)
    if chosen and Attack(chosen) in openings:
        text = _("Play {cards}").format(cards=" ".join(card(c) for c in chosen))
        rows.append([_button("▶️ " + text, game_id, version, Attack(chosen))])
    rows.append([button("↩ " + _("Back"), callback_data=_data(game_id, version, cb.Back()))])
    return markup(rows)


def blind_panel(game_id: int, version: int, view: View) -> Markup:
    """``blind``: one button per face-down slot (its card once he has seen it); a
    tap plays that slot, when he is to open or answer."""
    assert view.slots is not None
    rows: list[list[Button]] = []
    row: list[Button] = []
    for i, c in enumerate(view.slots):
        label = f"🂠{i + 1}" if c is None else card(c)
        row.append(button(label, callback_data=_data(game_id, version, cb.Slot(i))))
        if len(row) == CARDS_PER_ROW:
            rows.append(row)
            row = []
    if row:
        rows.append(row)
    rows.append(_refresh(game_id, version))
    return markup(rows)


def pile_panel(game_id: int, version: int, view: PileView) -> Markup:
    """A pile game: the hand (cards that lead or beat now plain), and Take with
    what it costs."""
    rows = _hand_rows(game_id, version, view.hand, playable(view))
    rows += [[_button(label, game_id, version, a)] for label, a in actions(view)]
    rows.append(_refresh(game_id, version))
    return markup(rows)


def suits(game_id: int, free: tuple[str, ...]) -> Markup:
    """Own trumps in the lobby: one button per suit still free."""
    from .render import SUIT_NAMES

    return markup([[button(SUIT_NAMES[s], callback_data=cb.suit(game_id, s)) for s in free]])


def choice_label(a: Action) -> str | None:
    """What a choice's button says ("Cover 7♥ with 9♥", "Transfer with 7♠", "Play 7♥ 7♠")."""
    if isinstance(a, Defend):
        return _("Cover {attack} with {card}").format(attack=card(a.attack), card=card(a.card))
    if isinstance(a, Transfer):
        return _("Transfer with {card}").format(card=card(a.card))
    if isinstance(a, Attack):
        return _("Play {cards}").format(cards=" ".join(card(c) for c in a.cards))
    return None


def choice(game_id: int, version: int, options: list[Action]) -> Markup:
    """When a tap could mean several things: one button each, and Back."""
    rows = []
    for a in options:
        text = choice_label(a)
        if text is not None:
            rows.append([_button(text, game_id, version, a)])
    rows.append([button("↩ " + _("Back"), callback_data=_data(game_id, version, cb.Back()))])
    return markup(rows)


def _button(text: str, game_id: int, version: int, action: Action) -> Button:
    return button(text, callback_data=_data(game_id, version, action))


def _data(game_id: int, version: int, m: cb.Move) -> str:
    """A game button's data: the state version only on a pass and a face-down slot,
    which are made for the table their player saw (``bot/ui/callbacks.py``); any other
    press is checked when it arrives, so a panel need not change with every move."""
    return _encoded(game_id, version if isinstance(m, Pass | cb.Slot) else None, m)


#: ``cb.move``, remembered: without a version a button's data is the same on every
#: edit of a game's panels (a hand's cards, Take), and a panel has a dozen buttons.
#: Moves are frozen values; the bound keeps a few hundred busy games' buttons.
_encoded = functools.lru_cache(maxsize=16_384)(cb.move)
