"""Play in a terminal: one person against AI players, the same rules and options.

The quickest way to try the engine without Telegram. Input is an action's
number, or words: ``take``, ``pass``, ``exchange``, cards (``7h``, ``7h 7s``
to attack; ``8h 10h`` to cover 8♥ with 10♥; one card to cover or transfer
when that is unambiguous). Bad input is answered and asked again; end of
input or ``quit`` leaves the game.
"""

from __future__ import annotations

import random
import sys
from typing import TextIO

from .actions import (
    EXCHANGE_TRUMP,
    PASS,
    TAKE,
    Action,
    Attack,
    Defend,
    ExchangeTrump,
    ShowTrump,
    Transfer,
)
from .ai.agents import make_agent, to_action
from .ai.observation import make_observation
from .ai.public import TAKEN, PublicEvent, Recorder
from .ai.turns import next_seat
from .cards import Card, parse_cards
from .games import Podkidnoy
from .rules import Rules
from .view import View

AI_NAMES = ("Anna", "Boris", "Vera", "Gleb", "Dasha", "Egor", "Zoya")
HUMAN = 0


def describe(action: Action) -> str:
    if isinstance(action, Attack):
        return "play " + " ".join(c.display for c in action.cards)
    if isinstance(action, Defend):
        return f"cover {action.attack.display} with {action.card.display}"
    if isinstance(action, Transfer):
        return f"transfer with {action.card.display}"
    if isinstance(action, ShowTrump):
        return f"transfer by showing {action.card.display}"
    if isinstance(action, ExchangeTrump):
        return "exchange your lowest trump for the trump card"
    return action.words()


def _cards(cards: tuple[Card, ...] | list[Card]) -> str:
    return " ".join(c.display for c in cards) or "-"


def render(view: View) -> str:
    """The table as the human sees it: own hand, counts of the others."""
    lines = []
    trump = f"trump {view.trump.symbol}"
    if view.trump_card is not None and view.trump_card_in_stock:
        trump += f" (the {view.trump_card.display} lies under the stock)"
    lines.append(f"{trump}   stock: {view.stock}   discard: {view.discard}")
    for s in view.seats:
        if s.seat == view.seat:
            continue
        role = ""
        if s.seat == view.attacker:
            role = "  attacking"
        elif s.seat == view.defender:
            role = "  defending" + (", taking" if view.taking else "")
        status = "out (safe)" if s.out else f"{s.cards} cards"
        lines.append(f"  {s.name}: {status}{role}")
    table = "  ".join(a.display + ("/" + c.display if c else "/?") for a, c in view.table)
    lines.append(f"table: {table or '(empty)'}   limit: {view.limit}")
    me = view.seats[HUMAN]
    role = ""
    if view.attacker == HUMAN:
        role = " (you attack)"
    elif view.defender == HUMAN:
        role = " (you defend)"
    elif HUMAN in view.throwers and view.table:
        role = " (you may throw in)"
    lines.append(f"your hand{role}: {_cards(view.hand)}   [{me.cards} cards]")
    return "\n".join(lines)


def parse_choice(text: str, legal: tuple[Action, ...]) -> Action | str:
    """The action the text names, or a message saying why it names none."""
    t = text.strip().lower()
    if not t:
        return "type a number, or e.g. 'take', 'pass', '7h'"
    if t.isdigit():
        k = int(t)
        return legal[k - 1] if 1 <= k <= len(legal) else f"choose 1 to {len(legal)}"
    words: dict[str, Action] = {"t": TAKE, "take": TAKE, "p": PASS, "pass": PASS}
    words["x"] = words["exchange"] = EXCHANGE_TRUMP
    if t in words:
        return words[t] if words[t] in legal else f"you cannot {t} now"
    kind = None
    for prefix in ("transfer ", "show "):
        if t.startswith(prefix):
            kind, t = prefix.strip(), t[len(prefix) :]
    try:
        cards = parse_cards(t)
    except ValueError:
        return f"not understood: {text.strip()!r}"
    found = [a for a in legal if _names(a, cards, kind)]
    if len(found) == 1:
        return found[0]
    if not found:
        return "no such move now"
    return "that could mean several moves: use the number"


def _names(action: Action, cards: tuple[Card, ...], kind: str | None) -> bool:
    if kind == "transfer":
        return isinstance(action, Transfer) and cards == (action.card,)
    if kind == "show":
        return isinstance(action, ShowTrump) and cards == (action.card,)
    if isinstance(action, Attack):
        return sorted(action.cards) == sorted(cards)
    if isinstance(action, Defend):
        return cards in ((action.attack, action.card), (action.card,))
    if isinstance(action, Transfer):
        return cards == (action.card,)
    return False


def _ask(view: View, stdin: TextIO, out: TextIO) -> Action | None:
    legal = view.legal
    print(render(view), file=out)
    for k, a in enumerate(legal, 1):
        print(f"  {k}) {describe(a)}", file=out)
    while True:
        print("> ", end="", file=out, flush=True)
        line = stdin.readline()
        if not line or line.strip().lower() in ("q", "quit", "exit"):
            return None
        choice = parse_choice(line, legal)
        if not isinstance(choice, str):
            return choice
        print(choice, file=out)


def _narrate(game: Podkidnoy, event: PublicEvent, out: TextIO) -> None:
    who = "You" if event.seat == HUMAN else game.players[event.seat]
    print(f"{who}: {describe(event.action)}", file=out)
    if event.closed:
        if event.closed == TAKEN:
            taker = "You" if event.taker == HUMAN else game.players[event.taker]
            print(f"-- {taker} picked up the table.", file=out)
        else:
            print("-- Beaten off.", file=out)
        if event.trump_to >= 0:
            drew = "You" if event.trump_to == HUMAN else game.players[event.trump_to]
            print(f"-- {drew} drew the last card, the trump card.", file=out)
        print(file=out)


def play_terminal(
    players: int,
    level: str,
    rules: Rules,
    seed: int | None = None,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
    budget_ms: int | None = None,
) -> int:
    """Play one game; return 0 when it ended, 1 when the player left."""
    stdin = stdin if stdin is not None else sys.stdin
    out = out if out is not None else sys.stdout
    rules.check_players(players)
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    names = ["You", *(f"{AI_NAMES[k]} ({level})" for k in range(players - 1))]
    game = Podkidnoy.from_seed(rules, names, seed)
    recorder = Recorder(game)
    agents = {s: make_agent(level, budget_ms) for s in range(1, players)}
    rng = random.Random(f"play:{seed}")
    print(f"Durak, {players} players, {level} AI, seed {seed}.", file=out)
    print(f"rules: {rules.changed() or 'default'}", file=out)
    if game.opener_card >= 0:
        opener = "You" if game.opener == HUMAN else names[game.opener]
        print(f"{opener} held the lowest trump and open{'s' * (opener != 'You')}.", file=out)
    print(file=out)
    was_out = False
    while game.result is None:
        seat = next_seat(game)
        if seat == HUMAN:
            action = _ask(game.view(HUMAN), stdin, out)
            if action is None:
                print("You left the game.", file=out)
                return 1
        else:
            obs = make_observation(rules, game.view(seat), recorder.history())
            action = to_action(game, seat, agents[seat].choose(obs, rng))
        game.apply(seat, action)
        _narrate(game, recorder.record(game, seat, action), out)
        if game.out[HUMAN] and not was_out and game.result is None:
            was_out = True
            print("You have no cards left: you are out, and safe.", file=out)
    result = game.result
    if result.draw:
        print("Game over: a draw, nobody is the durak.", file=out)
    elif HUMAN in result.losers:
        print("Game over: you are the durak.", file=out)
    else:
        losers = ", ".join(names[s] for s in result.losers)
        verb = "is" if len(result.losers) == 1 else "are"
        print(f"Game over: {losers} {verb} the durak.", file=out)
    return 0
