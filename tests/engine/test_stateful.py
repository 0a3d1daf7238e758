"""Hypothesis drives games through any legal and illegal decisions it likes; the
invariants must hold after every step."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from durak import Game, IllegalAction, from_snapshot, to_snapshot
from durak.selfplay import NAMES

from .conftest import RULE_MIXES, player_counts
from .test_random_play import candidate_actions, check_invariants


class GameMachine(RuleBasedStateMachine):
    game: Game

    @initialize(data=st.data(), seed=st.integers(0, 2**32 - 1))
    def deal(self, data, seed):
        rules = data.draw(st.sampled_from(RULE_MIXES))
        players = data.draw(st.sampled_from(player_counts(rules)))
        self.game = Game.from_seed(rules, NAMES[:players], seed)
        self.applied = 0

    @precondition(lambda self: self.game.result is None)
    @rule(pick=st.integers(0, 10_000))
    def legal_move(self, pick):
        moves = [(s, a) for s, acts in self.game.legal_by_seat() for a in acts]
        seat, action = moves[pick % len(moves)]
        self.game.apply(seat, action)
        self.applied += 1
        assert len(self.game.history) == self.applied

    @rule(seat=st.integers(0, 7), pick=st.integers(0, 10_000))
    def any_move(self, seat, pick):
        seat %= self.game.n
        candidates = candidate_actions(self.game, seat)
        action = candidates[pick % len(candidates)]
        legal = action in self.game.legal_actions(seat)
        before = to_snapshot(self.game)
        try:
            self.game.apply(seat, action)
        except IllegalAction:
            assert not legal, f"listed as legal but refused: {action}"
            assert to_snapshot(self.game) == before
        else:
            assert legal, f"applied but not listed: {action}"
            self.applied += 1

    @rule()
    def restore(self):
        snap = to_snapshot(self.game)
        self.game = from_snapshot(snap)
        assert to_snapshot(self.game) == snap

    @invariant()
    def holds(self):
        check_invariants(self.game)


GameMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestGame = GameMachine.TestCase
