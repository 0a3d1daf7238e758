"""Item 1 of issue 6: the AI sees only what its seat may see.

Two games that differ only in cards the observer cannot see (the same deal
with hidden cards swapped between other hands and the stock), played with the
same actions, must give the observer equal observations, and so equal
decisions for a fixed seed, at every step.
"""

from __future__ import annotations

import pickle
import random
from concurrent.futures import ProcessPoolExecutor

import pytest

from durak import Game, Podkidnoy, Rules
from durak.ai import decide, observation_for
from durak.ai.observation import Observation
from durak.cards import Card, card_of
from durak.selfplay import NAMES
from durak.view import View

from .conftest import play


def swapped_twin(game: Game, me: int, rng: random.Random) -> Game | None:
    """The same game on a deal where two cards ``me`` never saw change places
    (between other hands and the stock), replayed with the same actions; or
    ``None`` if the swap changes anything public (then it was not hidden)."""
    start = game.start
    order = [c for c in start["deck_order"]]
    seen = {str(c) for c in game.hand(me)} | {str(card_of(game.trump_card))}
    for _, action in game.history:
        seen |= {str(c) for c in _cards_of(action)}
    hidden = [i for i, c in enumerate(order) if c not in seen]
    mine = set(_dealt_to(game, me))
    hidden = [i for i in hidden if i not in mine]
    if len(hidden) < 2:
        return None
    i, j = rng.sample(hidden, 2)
    order[i], order[j] = order[j], order[i]
    twin = Podkidnoy.from_deck(
        game.rules,
        game.players,
        [_parse(c) for c in order],
        game.players.index(start["dealer"]),
    )
    for (seat, action), public in zip(game.history, _public_views(game), strict=True):
        if not twin.can_apply(seat, action):
            return None
        twin.apply(seat, action)
        if twin.view(None) != public:
            return None
    return twin


def _cards_of(action) -> list[Card]:
    return [c for name in ("cards", "card", "attack") for c in _as_list(getattr(action, name, ()))]


def _as_list(value) -> list[Card]:
    return list(value) if isinstance(value, tuple) else [value]


def _dealt_to(game: Game, seat: int) -> list[int]:
    """Positions in the deck order of the cards dealt to ``seat``."""
    n = game.n
    dealer = game.players.index(game.start["dealer"])
    return [k * n + (seat - dealer - 1) % n for k in range(6)]


def _public_views(game: Game) -> list[View]:
    """The public view after each of the game's actions."""
    replay = _cut(game, 0)
    views = []
    for seat, action in game.history:
        replay.apply(seat, action)
        views.append(replay.view(None))
    return views


def _parse(text: str) -> Card:
    from durak import parse_card

    return parse_card(text)


def _cut(game: Game, moves: int) -> Game:
    """The game after its first ``moves`` actions."""
    out = Podkidnoy.from_deck(
        game.rules,
        game.players,
        [_parse(c) for c in game.start["deck_order"]],
        game.players.index(game.start["dealer"]),
    )
    for seat, action in game.history[:moves]:
        out.apply(seat, action)
    return out


RULES = [Rules(), Rules(transfer=True, transfer_by_showing_trump=True), Rules(throw_in="all")]


@pytest.mark.parametrize("rules", RULES, ids=lambda r: str(r.changed() or "default"))
def test_hidden_cards_do_not_reach_the_observation_or_the_decision(rules):
    rng = random.Random(7)
    compared = differed = 0
    for seed in range(16):
        players = 2 + seed % 3
        full = play(rules, players, seed, ("normal", "easy"))
        for moves in sorted(rng.sample(range(1, len(full.history)), 4)):
            game = _cut(full, moves)
            if game.result is not None:
                continue
            me = rng.choice(game.actors())
            twin = swapped_twin(game, me, rng)
            if twin is None:
                continue
            a, b = observation_for(game, me), observation_for(twin, me)
            assert a == b
            others = [s for s in range(game.n) if s != me]
            differed += any(game.hands[s] != twin.hands[s] for s in others) or (
                game.stock != twin.stock
            )
            for level in ("easy", "normal", "hard"):
                assert decide(level, a, seed=3, iterations=30) == decide(
                    level, b, seed=3, iterations=30
                )
            compared += 1
    assert compared >= 10, "too few twins to compare"
    assert differed >= 10, "the twins' hidden cards did not differ"


def test_the_observation_pickles_for_a_worker_process():
    game = play(Rules(transfer=True), 3, 4, ("normal",), max_moves=30)
    obs = observation_for(game, game.actors()[0])
    again = pickle.loads(pickle.dumps(obs))
    assert isinstance(again, Observation) and again == obs
    with ProcessPoolExecutor(1) as pool:
        remote = pool.submit(decide, "normal", obs, 5).result(timeout=60)
    assert remote == decide("normal", obs, 5)


def test_an_observation_is_the_same_from_a_recorder_or_a_replay():
    from durak import from_snapshot, to_snapshot
    from durak.ai import Recorder, make_observation
    from durak.ai.turns import next_seat

    game = Game.from_seed(Rules(trump_exchange=True, transfer=True), NAMES[:3], 9)
    recorder = Recorder(game)
    rng = random.Random(1)
    while game.result is None and len(game.history) < 60:
        seat = next_seat(game)
        live = make_observation(game.rules, game.view(seat), recorder.history())
        assert live == observation_for(game, seat)
        assert live == observation_for(from_snapshot(to_snapshot(game)), seat)
        action = decide("easy", live, rng.randrange(1000))
        game.apply(seat, action)
        recorder.record(game, seat, action)
