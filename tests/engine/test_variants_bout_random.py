"""VARIANTS.md's bout-side options (blind, partial_defence, english,
return_last_card, damka) in random play: each combined with the RULES.md options
section 11 allows, with invariants after every action; snapshots mid-bout; the
variant vectors; blind's information; ``selfplay --rules`` records."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from durak import Game, Rules, check_record
from durak.actions import Attack, Defend
from durak.cards import card_of
from durak.games import restore
from durak.games.podkidnoy import Podkidnoy, blind
from durak.selfplay import NAMES, random_step

ROOT = Path(__file__).resolve().parents[2]
VARIANT_VECTORS = sorted((ROOT / "tests" / "vectors-variants").glob("*.json"))
#: The other half of VARIANTS.md (the deal side), implemented elsewhere.
OTHER_SIDE = ("trump_change_", "sprint_", "japanese_", "bout_limit_", "show_last_discard_")

MIXES: list[dict[str, object]] = [
    {"blind": True},
    {"blind": True, "deck": 24},
    {"blind": True, "deck": 52, "six_cap_after_stock": False},
    {"blind": True, "throw_in": "all", "first_bout_limit": 5, "attack_loser": True},
    {"blind": True, "damka": True},
    {"partial_defence": True},
    {"partial_defence": True, "transfer": True, "transfer_by_showing_trump": True},
    {"partial_defence": True, "teams": True, "throw_in": "all"},
    {"partial_defence": True, "deck": 52, "trump_exchange": True, "first_bout_limit": 5},
    {"english": True},
    {"english": True, "transfer": True, "transfer_by_showing_trump": True},
    {"english": True, "teams": True},
    {"english": True, "deck": 24, "throw_in": "all"},
    {"english": True, "partial_defence": True, "deck": 52, "six_cap_after_stock": False},
    {"return_last_card": True},
    {"return_last_card": True, "transfer": True, "transfer_by_showing_trump": True},
    {"return_last_card": True, "teams": True, "throw_in": "all"},
    {"return_last_card": True, "deck": 24, "trump_exchange": True, "partial_defence": True},
    {"damka": True},
    {"damka": True, "transfer": True},
    {"damka": True, "teams": True, "throw_in": "all"},
    {"damka": True, "partial_defence": True, "return_last_card": True, "trump_exchange": True},
    {"damka": True, "deck": 52, "attack_loser": True},
]


def counts(rules: Rules) -> list[int]:
    if rules.teams:
        return [4, 6] if rules.max_players >= 6 else [4]
    return list(range(2, rules.max_players + 1))


def check_invariants(g: Podkidnoy) -> None:
    rules = g.rules
    held = sum(g.hand_sizes()) + len(g.stock) + len(g.table)
    held += sum(1 for c in g.covers if c >= 0)
    assert held + g.discard == rules.deck, "cards conserved"
    if g.result is None:
        assert len(g.table) <= g.limit
        if rules.blind:
            assert g.limit == 1 and len(g.table) <= 1
    if g.slots is not None:
        for seat in range(g.n):
            slots = blind.slot_cards(g, seat)
            assert sorted(slots) == sorted(c.id for c in g.hand(seat)), "slots = the hand"
            assert len(set(slots)) == len(slots)
            view = g.view(seat)
            assert view.hand == () and view.legal == ()
            assert view.slots is not None and len(view.slots) == len(slots)
            for shown, true in zip(view.slots, slots, strict=True):
                assert shown is None or shown == card_of(true), "a seen slot is its card"
                assert (shown is not None) == bool(g.seen[seat] >> true & 1)
        public = g.view(None)
        assert public.slots is None and public.shown_hands == () and public.hand == ()


def play_checked(rules: Rules, players: int, seed: int) -> Podkidnoy:
    g = Game.from_seed(rules, NAMES[:players], seed)
    assert isinstance(g, Podkidnoy)
    rng = random.Random(seed)
    check_invariants(g)
    for _ in range(20_000):
        if g.result is not None:
            break
        seat, action = random_step(g, rng)
        assert g.can_apply(seat, action)
        if rules.blind and isinstance(action, Attack | Defend):
            card = action.cards[0] if isinstance(action, Attack) else action.card
            slot = blind.slot_cards(g, seat).index(card.id)
            assert g.slot_action(seat, slot) == action
        g.apply(seat, action)
        check_invariants(g)
    else:
        raise AssertionError("the game did not end")
    return g


CASES = [
    (mix, players, seed)
    for mix in MIXES
    for players in counts(Rules(**mix))  # type: ignore[arg-type]
    for seed in range(6)
]


@pytest.mark.parametrize(
    ("mix", "players", "seed"),
    CASES,
    ids=[f"{'+'.join(sorted(m))}-{p}p-{s}" for m, p, s in CASES],
)
def test_random_play_keeps_the_invariants(mix, players, seed):
    g = play_checked(Rules(**mix), players, seed)
    assert g.result is not None
    report = check_record(_export(g))
    assert not report.failures, report.failures[:3]


def _export(g: Game) -> dict[str, object]:
    from durak import export_record

    return export_record(g)


def test_english_random_play_reaches_the_repetition_draw_or_not_forever():
    """3a: English with 3+ players ends, by a repetition if need be (some seed
    of a few hundred does reach it)."""
    reasons = set()
    for seed in range(300):
        g = play_checked(Rules(english=True, deck=24), 3, seed)
        reasons.add(g.end_reason)
    assert "repetition" in reasons


@pytest.mark.parametrize("mix", MIXES, ids=lambda m: "+".join(sorted(m)))
def test_snapshot_round_trip_mid_bout(mix):
    rules = Rules(**mix)  # type: ignore[arg-type]
    players = counts(rules)[-1]
    rounds = 0
    for seed in range(5):
        g = Game.from_seed(rules, NAMES[:players], seed)
        rng = random.Random(seed)
        while g.result is not None or not g.view(None).table or rng.random() < 0.9:
            if g.result is not None:
                break
            g.apply(*random_step(g, rng))
        if g.result is not None:
            continue
        data = json.loads(json.dumps(g.snapshot()))
        copy = restore(data)
        assert copy.snapshot() == g.snapshot()
        for seat in (None, *range(players)):
            assert copy.view(seat) == g.view(seat)
        a, b = random.Random(seed), random.Random(seed)
        while g.result is None:
            g.apply(*random_step(g, a))
            copy.apply(*random_step(copy, b))
        assert copy.snapshot() == g.snapshot()
        rounds += 1
    assert rounds > 0


# ---- blind's information ---------------------------------------------------------------


def _twin(g: Podkidnoy, rng: random.Random) -> tuple[Podkidnoy, int, int] | None:
    """The same deal with one of A's dealt cards swapped with a stock card
    (never the trump card): A has seen neither."""
    order = list(g.start["deck_order"])
    dealer = g.players.index(g.start["dealer"])
    mine = [k for k in range(12) if (dealer + 1 + k) % 2 == 0]
    stock = list(range(13, len(order)))
    i, j = rng.choice(mine), rng.choice(stock)
    order[i], order[j] = order[j], order[i]
    start = {**g.start, "deck_order": order}
    twin = Game.from_start(g.rules, g.players, start)
    assert isinstance(twin, Podkidnoy)
    from durak.cards import parse_card

    return twin, parse_card(order[i]).id, parse_card(order[j]).id


def test_blind_views_do_not_depend_on_unseen_own_cards():
    compared = 0
    for seed in range(40):
        rng = random.Random(seed)
        g = Game.from_seed(Rules(blind=True), ["A", "B"], seed)
        assert isinstance(g, Podkidnoy)
        made = _twin(g, rng)
        assert made is not None
        twin, x, y = made
        swapped = 1 << x | 1 << y
        while g.result is None:
            if g.view(None) != twin.view(None):
                break  # a swapped card is on the table or changed a count: public now
            if (g.hands[1] | twin.hands[1]) & swapped:
                break  # B drew one: A sees B's hand
            assert g.view(0) == twin.view(0)
            compared += 1
            seat = g.actors()[0]
            slot = rng.randrange(len(blind.slot_cards(g, seat)))
            played, twin_played = g.slot_action(seat, slot), twin.slot_action(seat, slot)
            g.apply(seat, played)
            twin.apply(seat, twin_played)
            if played != twin_played:
                break  # the swapped card was played: everyone saw it
    assert compared > 100


# ---- selfplay --rules ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "players"),
    [
        ({"blind": True}, "2"),
        ({"partial_defence": True, "transfer": True}, "2-4"),
        ({"english": True}, "2-5"),
        ({"return_last_card": True}, "2-3"),
        ({"damka": True, "throw_in": "all"}, "2-6"),
    ],
    ids=lambda v: "+".join(sorted(v)) if isinstance(v, dict) else v,
)
def test_selfplay_records_pass_check_record(tmp_path, rules, players):
    run = [sys.executable, "-m", "durak"]
    options = ["--players", players, "--rules", json.dumps(rules), "--out", str(tmp_path)]
    out = subprocess.run(
        [*run, "selfplay", "--games", "8", *options],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    files = sorted(map(str, tmp_path.glob("*.json")))
    assert len(files) == 8
    checked = subprocess.run(
        [*run, "check-record", *files], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert checked.returncode == 0, checked.stdout[-2000:]
    assert checked.stdout.strip().endswith("failed") and " 0 failed" in checked.stdout
