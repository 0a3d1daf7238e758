from __future__ import annotations

import itertools

from durak import Rules

#: Option mixes the random tests sweep: every option of RULES.md appears.
RULE_MIXES: list[Rules] = [
    Rules(),
    Rules(throw_in="all"),
    Rules(deck=24),
    Rules(deck=52, six_cap_after_stock=False),
    Rules(first_bout_limit=5, attack_loser=True),
    Rules(transfer=True),
    Rules(transfer=True, transfer_by_showing_trump=True, throw_in="all"),
    Rules(trump_exchange=True),
    Rules(teams=True),
    Rules(teams=True, throw_in="all", transfer=True, transfer_by_showing_trump=True),
    Rules(deck=52, trump_exchange=True, transfer=True, first_bout_limit=5),
]


def player_counts(rules: Rules) -> list[int]:
    if rules.teams:
        return [4, 6] if rules.max_players >= 6 else [4]
    return list(range(2, rules.max_players + 1))


def cases(seeds_per_case: int) -> list[tuple[Rules, int, int]]:
    out = []
    for rules in RULE_MIXES:
        for players, seed in itertools.product(player_counts(rules), range(seeds_per_case)):
            out.append((rules, players, seed))
    return out
