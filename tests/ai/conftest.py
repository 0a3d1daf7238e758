"""Helpers for the AI tests: play whole games with agents, as the arena does."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from durak import Game, Rules
from durak.ai import Observation, Recorder, make_agent, make_observation, to_action
from durak.ai.agents import Agent
from durak.ai.turns import next_seat
from durak.selfplay import NAMES

Check = Callable[[Game, Observation], None]


def play(
    rules: Rules,
    players: int,
    seed: int,
    agents: Sequence[str],
    check: Check | None = None,
    iterations: int = 6,
    max_moves: int = 3000,
) -> Game:
    """One game; seat ``s`` is played by ``agents[s % len(agents)]``. Every
    action goes through ``game.apply``, which refuses anything illegal."""
    game = Game.from_seed(rules, NAMES[:players], seed)
    recorder = Recorder(game)
    seats: list[Agent] = [
        make_agent(agents[s % len(agents)], iterations=iterations) for s in range(players)
    ]
    rng = random.Random(seed)
    while game.result is None and len(game.history) < max_moves:
        seat = next_seat(game)
        obs = make_observation(rules, game.view(seat), recorder.history())
        if check is not None:
            check(game, obs)
        action = to_action(game, seat, seats[seat].choose(obs, rng))
        assert action in game.legal_actions(seat)
        game.apply(seat, action)
        recorder.record(game, seat, action)
    return game
