"""Random play over VARIANTS.md's deal-side options (trump_change, sprint,
japanese, bout_limit, show_last_discard), each mixed with RULES.md's options,
checking invariants after every action: cards conserved (the second trump card
and a sprint deal's cards out of play included), the limit held, trump changing
only between bouts, every game and every sprint match ending, the match state
consistent, legal_actions agreeing with apply, snapshots and records exact."""

from __future__ import annotations

import contextlib
import random

import pytest

from durak import Game, Rules, Series, export_record, from_snapshot, replay, to_snapshot
from durak.cards import deck_mask, parse_suit
from durak.selfplay import NAMES, random_step

from .test_random_play import check_agreement

MIXES: list[Rules] = []
for variant in (
    {"trump_change": True},
    {"sprint": True},
    {"japanese": "H"},
    {"bout_limit": 5},
    {"show_last_discard": True},
):
    for base in (
        {},
        {"transfer": True, "transfer_by_showing_trump": True},
        {"teams": True, "throw_in": "all"},
        {"deck": 24},
        {"deck": 52, "six_cap_after_stock": False, "transfer": True},
        {"first_bout_limit": 5, "six_cap_after_stock": False, "throw_in": "all"},
        {"trump_exchange": True, "transfer": True},
    ):
        with contextlib.suppress(ValueError):  # a forbidden pair (VARIANTS.md section 11)
            MIXES.append(Rules(**variant, **base))  # type: ignore[arg-type]
MIXES += [Rules(sprint=True, japanese="D", first_bout_limit=5), Rules(japanese="S", bout_limit=5)]
MIXES += [Rules(trump_change=True, bout_limit=5, show_last_discard=True, trump_exchange=True)]
# Both sides of VARIANTS.md together (each branch tested its own side alone): every
# allowed pair of a bout-side and a deal-side option, some with the trump exchange.
for bout_side in (
    {"blind": True},
    {"partial_defence": True, "transfer": True},
    {"english": True},
    {"return_last_card": True},
    {"damka": True},
):
    for deal_side in (
        {"trump_change": True},
        {"trump_change": True, "trump_exchange": True},
        {"sprint": True},
        {"japanese": "D"},
        {"bout_limit": 5, "show_last_discard": True},
        {"trump_exchange": True, "show_last_discard": True},
    ):
        with contextlib.suppress(ValueError):
            MIXES.append(Rules(**bout_side, **deal_side))  # type: ignore[arg-type]


def counts(rules: Rules) -> list[int]:
    low, high = rules.player_range()
    if rules.teams:
        return [c for c in (4, 6) if low <= c <= high]
    return list(range(low, high + 1))


CASES = [(r, k, seed) for r in MIXES for k in counts(r) for seed in range(2)]


def check_state(game: Game, trump_before: int, table_before: bool) -> None:
    rules = game.rules
    full = deck_mask(rules.deck)
    parts = [*game.hands, sum(1 << c for c in game.stock), game.discard_mask, game.out_of_play]
    parts += [1 << c for c in game.table] + [1 << c for c in game.covers if c >= 0]
    union = 0
    for part in parts:
        assert union & part == 0, "a card is in two places"
        union |= part
    assert union == full, "cards were lost or invented"
    assert game.discard == game.discard_mask.bit_count()
    if game.result is None:
        assert len(game.table) <= game.limit
        if game.stock or rules.six_cap_after_stock:
            assert game.limit <= rules.bout_limit
        if game.first_bout:
            assert game.limit <= rules.first_bout_limit
        assert game.actors()
    if game.trump != trump_before:
        assert rules.trump_change, "trump changed without trump_change"
        assert not game.table and table_before, "trump changed inside a bout"
        assert not game.stock and game.trump == game.second_trump >> 4
    if rules.trump_change:
        assert game.second_trump >= 0
        if game.stock:
            assert game.stock[0] == game.second_trump and game.trump == game.trump_card >> 4
        if len(game.stock) >= 2:
            assert game.stock[1] == game.trump_card
        assert game.view(None).second_trump_hidden == bool(game.stock)
    if rules.japanese:
        assert game.trump == int(parse_suit(rules.japanese)) and game.trump_card == -1
    if rules.sprint:
        assert not game.stock and game.out_of_play.bit_count() == rules.deck - 6 * game.n
    if rules.show_last_discard:
        assert all(game.discard_mask >> a & 1 for a, _ in game.last_discard)


def play_deal(game: Game, rng: random.Random, agree: bool) -> None:
    steps = 0
    mid: tuple[dict, int] | None = None
    while game.result is None:
        if agree:
            check_agreement(game, rng)
        trump, table = game.trump, bool(game.table)
        seat, action = random_step(game, rng)
        game.apply(seat, action)
        check_state(game, trump, table)
        steps += 1
        assert steps < 5000, "the game does not end"
        if mid is None and game.table and steps > 10:
            mid = (to_snapshot(game), rng.randrange(2**32))
    assert to_snapshot(replay(export_record(game))) == to_snapshot(game), "a replay differs"
    if mid is not None:  # mid-bout: restore, and both copies play on alike
        snap, seed = mid
        a, b = from_snapshot(snap), from_snapshot(snap)
        assert to_snapshot(a) == snap and a.view(a.attacker) == b.view(a.attacker)
        ra, rb = random.Random(seed), random.Random(seed)
        while a.result is None:
            sa, xa = random_step(a, ra)
            sb, xb = random_step(b, rb)
            assert (sa, xa) == (sb, xb)
            a.apply(sa, xa)
            b.apply(sb, xb)
        assert to_snapshot(a) == to_snapshot(b)


@pytest.mark.parametrize(("rules", "players", "seed"), CASES)
def test_random_variant_games(rules: Rules, players: int, seed: int) -> None:
    rng = random.Random(seed)
    game = Game.from_seed(rules, NAMES[:players], seed)
    check_state(game, game.trump, False)
    play_deal(game, rng, agree=seed == 0)
    if not rules.sprint:
        assert game.scored == game.result
        return
    check_match(game, rng, NAMES[:players])


def check_match(first: Game, rng: random.Random, roster: tuple[str, ...] | str) -> None:
    """Play the whole sprint match on from ``first`` (already played)."""
    deals, game = [first], first
    losses: dict[str, int] = {}
    while True:
        st = game.expected("match")
        series = game.next_game()
        scored = game.scored
        if scored is not None:
            for s in scored.losers:
                losses[game.players[s]] = losses.get(game.players[s], 0) + 1
        view = game.view(None).match
        assert view is not None and view.played == len(deals)
        if game.match.knockout:
            assert set(st["remaining"]) | set(view.eliminated) == set(roster)
            assert len(st["remaining"]) + len(view.eliminated) == len(roster)
        else:
            assert st["played"] == len(deals) and sum(st["wins"].values()) <= st["played"]
        if not series.continues:
            assert st["result"] is not None and st["next_dealer"] is None
            break
        assert st["result"] is None
        assert scored is None or game.match.knockout
        assert series.dealer == st["next_dealer"] and series.players is not None
        assert len(deals) < (10 if len(roster) == 2 else 300), "the match does not end"
        snap = to_snapshot(game)
        assert to_snapshot(from_snapshot(snap)) == snap
        game = Game.from_seed(first.rules, roster, rng.randrange(2**32), series)
        assert game.players == series.players and game.players[game.dealer] == series.dealer
        if not game.rules.english:  # English's pair rule may pass the lead on (5.2)
            assert game.attacker == (game.dealer + 1) % game.n
        check_state(game, game.trump, False)
        play_deal(game, rng, agree=False)
        deals.append(game)
    result = st["result"]
    if len(roster) == 2 and not first.match.knockout:
        if result.get("draw"):
            assert game.scored is not None and game.scored.draw and not losses
        else:
            assert losses == {n: 1 for n in roster if n != result["winner"]}
    else:
        assert losses == {n: 1 for n in roster if n != result["winner"]}, "one loss each"


def test_sprint_first_deal_draws_its_dealer_from_the_seed() -> None:
    rules = Rules(sprint=True)
    dealers = {Game.from_seed(rules, "ABC", seed).dealer for seed in range(40)}
    assert dealers == {0, 1, 2}
    assert Game.from_seed(rules, "ABC", 5).dealer == Game.from_seed(rules, "ABC", 5).dealer
    nxt = Game.from_seed(
        rules,
        "ABC",
        5,
        Series(dealer="C", players=("A", "C"), match={"knockout": True}, continues=True),
    )
    assert nxt.players == ("A", "C") and nxt.dealer == 1 and nxt.attacker == 0
