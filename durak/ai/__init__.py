"""AI players: they see what their seat may see and choose a legal action.

The bot's entry points::

    from durak.ai import decide, observation_for

    obs = observation_for(game, seat)          # the seat's view + the public history
    action = decide("normal", obs, seed=42)    # "easy", "normal", "hard" (or "greedy", "random")

Pile games (own trumps, piled, road) work the same way: ``observation_for``
gives a :class:`PileObservation` (the seat's ``PileView``) and every level plays it
(:mod:`durak.ai.pile`).

``decide`` is a pure function of picklable arguments: run it in a
``ProcessPoolExecutor`` so a hard search does not block the event loop.
"""

from __future__ import annotations

from .agents import AGENTS, LEVELS, Agent, decide, make_agent
from .observation import Knowledge, Observation, make_observation, observation_for
from .pile import PileObservation
from .public import PublicEvent, PublicHistory, PublicStart, Recorder, public_history

__all__ = [
    "AGENTS",
    "LEVELS",
    "Agent",
    "Knowledge",
    "Observation",
    "PileObservation",
    "PublicEvent",
    "PublicHistory",
    "PublicStart",
    "Recorder",
    "decide",
    "make_agent",
    "make_observation",
    "observation_for",
    "public_history",
]
