"""Random self-play of the pile games: invariants after every action, snapshots,
replay, legal_actions against apply, and what a seat's view may show."""

from __future__ import annotations

import json
import random

import pytest

from durak.actions import (
    EXCHANGE_TRUMP,
    PASS,
    RETURN_CARD,
    TAKE,
    Action,
    Attack,
    Beat,
    Defend,
    Lead,
    ShowTrump,
    Transfer,
)
from durak.cards import deck, deck_mask, ids_of
from durak.errors import IllegalAction
from durak.games import Game, restore
from durak.games.pile import PileGame
from durak.records import export_record, replay
from durak.selfplay import play_random, random_step

from .pile_helpers import NAMES, PILE_CASES

CASES = [(rules, k, seed) for rules, counts in PILE_CASES for k in counts for seed in range(6)]


def case_id(case: tuple) -> str:
    rules, k, seed = case
    return f"{rules.game}-{rules.own_trumps_take}-{k}p-{seed}"


def new(rules, k, seed) -> PileGame:
    g = Game.from_seed(rules, NAMES[:k], seed)
    assert isinstance(g, PileGame)
    return g


def places(g: PileGame) -> list[int]:
    """Every card the game holds anywhere, as a list of ids (one entry per place)."""
    ids = list(g.pile) + list(g.stock)
    for h in g.hands:
        ids += ids_of(h)
    ids += ids_of(g.discard_mask)
    if g.out_of_play >= 0:
        ids.append(g.out_of_play)
    return ids


def check_invariants(g: PileGame, was_out: list[bool]) -> None:
    ids = places(g)
    assert len(ids) == len(set(ids)), "a card in two places"
    assert sum(1 << i for i in ids) == deck_mask(36) and len(ids) == 36, "cards not conserved"
    assert g.discard == g.discard_mask.bit_count()
    for s in range(g.n):
        if was_out[s]:
            assert g.out[s] and g.hands[s] == 0, "a player who is out got cards back"
        assert g.out[s] == (g.hands[s] == 0)
    if g.over:
        assert g.actors() == [] and g.legal_by_seat() == []
    else:
        assert len(g.actors()) == 1, "exactly one player on turn"
        turn = g.actors()[0]
        assert not g.out[turn] and g.legal_actions(turn)
        assert all(g.legal_actions(s) == [] for s in range(g.n) if s != turn)
        assert (g.phase == "answer") == bool(g.legal_actions(turn)[-1] == TAKE)
        if g.rules.game == "piled" and g.stock:
            assert all(h.bit_count() >= 3 for h in g.hands)
        if g.rules.game == "road":
            assert (g.phase == "answer") == bool(g.pile)
            assert len(g.pile) < g.in_game() + 1


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_random_play_keeps_the_invariants_and_ends(case):
    rules, k, seed = case
    g = new(rules, k, seed)
    rng = random.Random(seed)
    check_invariants(g, list(g.out))
    for _ in range(60_000):
        if g.over:
            break
        was_out = list(g.out)
        seat, action = random_step(g, rng)
        g.apply(seat, action)
        check_invariants(g, was_out)
    assert g.over, "the game did not end"
    r = g.result
    assert r is not None and (r.draw or (len(r.losers) == 1 and not g.out[r.losers[0]]))
    assert g.expected("out") == [g.players[s] for s in range(k) if g.out[s]]


def _all_actions(g: PileGame) -> list[Action]:
    """Every action of the shared vocabulary a test may send (pile and podkidnoy)."""
    out: list[Action] = [TAKE, PASS, EXCHANGE_TRUMP, RETURN_CARD]
    for c in deck(36):
        out += [Lead(c), Beat(c), Attack((c,)), Transfer(c), ShowTrump(c)]
    if g.pile:
        out += [Defend(deck(36)[g.pile[-1] % 9], deck(36)[0])]
    return out


def state(g: PileGame) -> tuple:
    """Everything ``apply`` could change (cheaper than a snapshot, checked often)."""
    return (
        tuple(g.hands),
        tuple(g.pile),
        g.turn,
        g.phase,
        tuple(g.stock),
        g.discard,
        tuple(g.out),
        g.result,
        len(g.history),
        g.last_cleared,
    )


@pytest.mark.parametrize("case", CASES[::3], ids=case_id)
def test_legal_actions_agree_with_apply(case):
    rules, k, seed = case
    g = new(rules, k, seed)
    rng = random.Random(seed + 100)
    vocabulary = _all_actions(g)
    for _ in range(150):
        if g.over:
            break
        for seat in range(k):
            legal = g.legal_actions(seat)
            for a in legal:  # every listed action applies
                g.clone().apply(seat, a)
            for a in rng.sample(vocabulary, 12):
                if a in legal:
                    continue
                before = state(g)
                with pytest.raises(IllegalAction):
                    g.apply(seat, a)
                assert state(g) == before, "a refusal changed the game"
                assert not g.can_apply(seat, a)
        seat, action = random_step(g, rng)
        g.apply(seat, action)


@pytest.mark.parametrize("case", CASES[::3], ids=case_id)
def test_snapshot_round_trips_mid_game_and_replay_equals_live(case):
    rules, k, seed = case
    g = new(rules, k, seed)
    rng = random.Random(seed)
    stop = rng.randrange(1, 200)
    for _ in range(stop):
        if g.over:
            break
        g.apply(*random_step(g, rng))
    data = json.loads(json.dumps(g.snapshot()))
    back = restore(data)
    assert back.snapshot() == g.snapshot()
    assert json.dumps(back.snapshot(), sort_keys=True) == json.dumps(data, sort_keys=True)
    # both continue identically
    r1, r2 = random.Random(7), random.Random(7)
    play_random(g, r1)
    play_random(back, r2)
    assert back.snapshot() == g.snapshot()
    # replay of the exported record equals the live game
    again = replay(json.loads(json.dumps(export_record(g))))
    assert again.snapshot() == g.snapshot()
    # a clone is independent and equal in state
    c = g.clone()
    assert c.hands == g.hands and c.pile == g.pile and c.history == []


def _with_hidden_cards_shuffled(g: PileGame, seat: int, rng: random.Random) -> PileGame:
    """The same game with every card ``seat`` cannot see dealt anew: the other hands
    (sizes kept), the face-down stock (not its trump card) and the discard."""
    other = g.clone(with_history=True)
    pool: list[int] = []
    others = [s for s in range(g.n) if s != seat]
    for s in others:
        pool += [i for i in range(64) if g.hands[s] >> i & 1]
    hidden_stock = g.stock[1:] if g.stock else []
    pool += hidden_stock
    pool += [i for i in range(64) if g.discard_mask >> i & 1]
    rng.shuffle(pool)
    for s in others:
        size = g.hands[s].bit_count()
        other.hands[s] = sum(1 << i for i in pool[:size])
        pool = pool[size:]
    if g.stock:
        other.stock = [g.stock[0], *pool[: len(hidden_stock)]]
        pool = pool[len(hidden_stock) :]
    other.discard_mask = sum(1 << i for i in pool)
    return other


@pytest.mark.parametrize("case", CASES[::2], ids=case_id)
def test_a_seat_sees_nothing_hidden(case):
    rules, k, seed = case
    g = new(rules, k, seed)
    rng = random.Random(seed)
    changed = 0
    for step in range(300):
        if g.over:
            break
        if step % 10 == 0:
            for seat in range(k):
                other = _with_hidden_cards_shuffled(g, seat, rng)
                changed += other.hands != g.hands
                assert other.view(seat) == g.view(seat)
                assert other.view(None) == g.view(None)
        g.apply(*random_step(g, rng))
    assert changed > 0


def test_views_carry_the_seats_hand_and_counts():
    g = new(PILE_CASES[2][0], 4, 1)
    v = g.view(g.turn)
    assert v.hand == g.hand(g.turn) and v.legal == tuple(g.legal_actions(g.turn))
    assert [s.cards for s in v.seats] == g.hand_sizes() and v.waiting_for == (g.turn,)
    assert v.game == "piled" and v.stock == len(g.stock) and v.dealer == g.dealer
    pub = g.view(None)
    assert pub.hand == () and pub.legal == () and pub.moves == 0
