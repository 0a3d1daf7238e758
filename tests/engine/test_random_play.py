"""Random play over many seeds and option mixes, checking invariants after every
action (OpenSpiel's random_sim_test): cards conserved, the limit held, every game
ends, snapshots and records reproduce the live game, legal_actions == apply."""

from __future__ import annotations

import random

import pytest

from durak import (
    Attack,
    Defend,
    ExchangeTrump,
    Game,
    IllegalAction,
    Pass,
    ShowTrump,
    Take,
    Transfer,
    export_record,
    from_snapshot,
    replay,
    to_snapshot,
)
from durak.cards import card_of, cards_of, deck_mask, ids_of
from durak.selfplay import NAMES, random_step

from .conftest import cases


def check_invariants(game: Game) -> None:
    full = deck_mask(game.rules.deck)
    parts = [*game.hands, sum(1 << c for c in game.stock), game.discard_mask]
    parts += [1 << c for c in game.table] + [1 << c for c in game.covers if c >= 0]
    union = 0
    for part in parts:
        assert union & part == 0, "a card is in two places"
        union |= part
    assert union == full, "cards were lost or invented"
    assert game.discard == game.discard_mask.bit_count()
    assert len(game.table) <= game.limit or game.result is not None
    assert game.open == game.covers.count(-1)
    if game.stock:
        assert game.stock[0] == game.trump_card, "the trump card is drawn last"
    if game.result is None:
        assert game.actors(), "a running game waits for nobody"
        assert not game.out[game.attacker] and not game.out[game.defender]
        assert game.attacker != game.defender
        if game.rules.teams:
            assert (game.attacker - game.defender) % 2 == 1, "partners never fight"
    else:
        assert not game.actors()
        holding = [s for s in range(game.n) if game.hands[s]]
        if game.result.draw:
            assert not holding
        else:
            assert set(holding) <= set(game.result.losers)


def candidate_actions(game: Game, seat: int) -> list:
    """A superset of what a seat could try: every single card in every role."""
    hand = list(cards_of(game.hands[seat]))
    acts: list = [Take(), Pass(), ExchangeTrump()]
    acts += [Attack((c,)) for c in hand]
    acts += [Transfer(c) for c in hand] + [ShowTrump(c) for c in hand]
    acts += [Defend(card_of(a), c) for a in game.table for c in hand]
    if len(hand) >= 2:
        acts.append(Attack((hand[0], hand[1])))
    return acts


def check_agreement(game: Game, rng: random.Random) -> None:
    by_seat = dict(game.legal_by_seat())
    assert sorted(by_seat) == game.actors()
    for seat in range(game.n):
        legal = game.legal_actions(seat)
        assert len(set(legal)) == len(legal), "an action is listed twice"
        if seat in by_seat:
            assert list(by_seat[seat]) == legal
        else:
            assert not legal
        for action in legal:
            assert game.can_apply(seat, action), f"listed but refused: {action}"
        unlisted = [a for a in candidate_actions(game, seat) if a not in legal]
        before = to_snapshot(game)
        for action in rng.sample(unlisted, min(4, len(unlisted))):
            with pytest.raises(IllegalAction):
                game.apply(seat, action)
        assert to_snapshot(game) == before, "a refused action changed the game"


@pytest.mark.parametrize(("rules", "players", "seed"), cases(seeds_per_case=4))
def test_random_games_hold_every_invariant(rules, players, seed):
    rng = random.Random(seed)
    game = Game.from_seed(rules, NAMES[:players], seed)
    check_invariants(game)
    mid = None
    steps = 0
    while game.result is None:
        check_agreement(game, rng)
        seat, action = random_step(game, rng)
        game.apply(seat, action)
        check_invariants(game)
        steps += 1
        assert steps < 5000, "the game does not end"
        if steps == 25:
            mid = (to_snapshot(game), random.Random(seed * 7 + 1))
    assert game.result is not None
    live = to_snapshot(game)
    assert to_snapshot(replay(export_record(game))) == live, "a replay differs"
    if mid is not None:
        restored = from_snapshot(mid[0])
        assert to_snapshot(restored) == mid[0]
        again = from_snapshot(mid[0])
        rng1, rng2 = random.Random(seed), random.Random(seed)
        while restored.result is None:
            s1, a1 = random_step(restored, rng1)
            s2, a2 = random_step(again, rng2)
            assert (s1, a1) == (s2, a2)
            restored.apply(s1, a1)
            again.apply(s2, a2)
        assert to_snapshot(restored) == to_snapshot(again)


@pytest.mark.parametrize(("rules", "players", "seed"), cases(seeds_per_case=45))
def test_many_random_games_end_with_one_loser_or_a_draw(rules, players, seed):
    game = Game.from_seed(rules, NAMES[:players], 10_000 + seed)
    rng = random.Random(seed)
    for _ in range(5000):
        if game.result is not None:
            break
        game.apply(*random_step(game, rng))
        assert len(game.table) <= game.limit
    else:
        pytest.fail("the game does not end")
    check_invariants(game)
    result = game.result
    assert result is not None
    if result.draw:
        assert not result.losers
    elif rules.teams:
        assert len({s % 2 for s in result.losers}) == 1
        assert len(result.losers) == players // 2
    else:
        assert len(result.losers) == 1
    assert to_snapshot(replay(export_record(game))) == to_snapshot(game)


def test_same_seed_same_game():
    from durak import Rules

    a = Game.from_seed(Rules(), "ABCD", 42)
    b = Game.from_seed(Rules(), "ABCD", 42)
    assert to_snapshot(a) == to_snapshot(b)
    ra, rb = random.Random(1), random.Random(1)
    while a.result is None:
        sa, xa = random_step(a, ra)
        sb, xb = random_step(b, rb)
        assert (sa, xa) == (sb, xb)
        a.apply(sa, xa)
        b.apply(sb, xb)
    assert to_snapshot(a) == to_snapshot(b)
    assert to_snapshot(Game.from_seed(Rules(), "ABCD", 43)) != to_snapshot(
        Game.from_seed(Rules(), "ABCD", 42)
    )


def test_ids_of_lists_every_bit():
    assert list(ids_of(0b1011 << 6)) == [6, 7, 9]
