"""Round-robin and gauntlet schedules: counts, seat balance, shared seeds per combination,
determinism, seeds within 53 bits."""

import json
from collections import Counter
from math import comb

import pytest

from tournament.formats import sprt_pair
from tournament.pairing import (
    INDEPENDENT,
    PAIRED,
    derive_seed,
    gauntlet,
    gauntlet_count,
    match_count,
    rotations,
    schedule,
)

BOTS = ["ana", "bea", "cid", "dan"]


@pytest.mark.parametrize(("bots", "players", "rounds"), [
    (BOTS, 2, 1), (BOTS, 3, 2), (BOTS, 4, 3), (BOTS + ["eve", "fay"], 3, 2), (BOTS, 1, 5),
])
def test_schedule_has_every_combination_in_every_rotation(bots, players, rounds):
    matches = schedule(bots, players, rounds, 42)
    expected = comb(len(bots), players) * players * rounds
    assert len(matches) == expected == match_count(len(bots), players, rounds)
    assert [m["index"] for m in matches] == list(range(expected))
    seatings = Counter(tuple(m["seats"]) for m in matches)
    assert len(seatings) == expected // rounds
    assert set(seatings.values()) == {rounds}
    for match in matches:
        assert len(match["seats"]) == len(set(match["seats"])) == players


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_every_bot_plays_every_seat_equally_often(players):
    matches = schedule(BOTS, players, 2, "cup")
    seat_counts = Counter((bot, seat) for m in matches for seat, bot in enumerate(m["seats"]))
    assert len(seat_counts) == len(BOTS) * players
    assert len(set(seat_counts.values())) == 1


def test_rotations_of_one_combination_share_a_seed_and_turn_the_seats():
    matches = schedule(BOTS, 3, 1, 7)
    by_combination: dict[int, list[dict]] = {}
    for match in matches:
        by_combination.setdefault(match["combination"], []).append(match)
    seeds = set()
    for group in by_combination.values():
        assert len({m["seed"] for m in group}) == 1
        first = group[0]["seats"]
        for turn, match in enumerate(group):
            assert match["rotation"] == turn
            assert match["seats"] == first[turn:] + first[:turn]
        seeds.add(group[0]["seed"])
    assert len(seeds) == len(by_combination), "different combinations get different deals"


def test_rounds_get_new_seeds():
    matches = schedule(BOTS, 2, 3, 7)
    seeds_by_round = [{m["seed"] for m in matches if m["round"] == r} for r in range(3)]
    assert all(len(seeds) == comb(4, 2) for seeds in seeds_by_round)
    assert not seeds_by_round[0] & seeds_by_round[1]
    assert not seeds_by_round[1] & seeds_by_round[2]


def test_solo_bots_play_the_same_seed_in_a_round():
    matches = schedule(BOTS, 1, 3, 11)
    for round_number in range(3):
        in_round = [m for m in matches if m["round"] == round_number]
        assert sorted(m["seats"][0] for m in in_round) == sorted(BOTS)
        assert len({m["seed"] for m in in_round}) == 1
    assert len({m["seed"] for m in matches}) == 3


def test_schedule_is_deterministic_json_and_depends_on_the_seed():
    first = schedule(BOTS, 2, 2, 123)
    assert schedule(BOTS, 2, 2, 123) == first
    assert json.loads(json.dumps(first)) == first
    other = schedule(BOTS, 2, 2, 124)
    assert {m["seed"] for m in first}.isdisjoint({m["seed"] for m in other})
    assert schedule(BOTS, 2, 2, "123") != first, "an integer and a string seed differ"


def test_derived_seeds_fit_in_53_bits_and_spread():
    seeds = [derive_seed(5, r, c) for r in range(20) for c in range(50)]
    assert all(0 <= s < 2**53 for s in seeds)
    assert len(set(seeds)) == len(seeds)
    assert max(seeds) > 2**52, "the high bits are used"


def test_rotations_turn_by_one_seat():
    assert rotations(("a", "b", "c")) == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]


@pytest.mark.parametrize(("bots", "players", "rounds", "reason"), [
    (["a", "a", "b"], 2, 1, "only once"),
    (["a", "b"], 3, 1, "at least 3 bots"),
    (["a", "b"], 0, 1, "positive integer"),
    (["a", "b"], 2, 0, "rounds"),
])
def test_impossible_schedules_are_refused_with_a_reason(bots, players, rounds, reason):
    with pytest.raises(ValueError, match=reason):
        schedule(bots, players, rounds, 1)


@pytest.mark.parametrize(("field", "players", "rounds"), [(3, 2, 1), (4, 2, 3), (4, 3, 2),
                                                          (5, 4, 1), (1, 2, 2)])
def test_a_gauntlet_holds_the_challenger_in_every_match_in_every_seat(field, players, rounds):
    """docs/ratings.md: a gauntlet has C(field, players - 1) * players * rounds matches."""
    others = [f"f{n}" for n in range(field)]
    matches = gauntlet("hero", others, players, rounds, 3)
    assert len(matches) == comb(field, players - 1) * players * rounds \
        == gauntlet_count(field, players, rounds)
    assert all("hero" in match["seats"] for match in matches)
    hero_seats = Counter(match["seats"].index("hero") for match in matches)
    assert set(hero_seats) == set(range(players)) and len(set(hero_seats.values())) == 1
    assert len({tuple(m["seats"]) for m in matches}) == len(matches) // rounds


def test_independent_deals_give_every_rotation_its_own_seed():
    paired = schedule(BOTS, 3, 1, 7)
    independent = schedule(BOTS, 3, 1, 7, deals=INDEPENDENT)
    assert [m["seats"] for m in paired] == [m["seats"] for m in independent]
    assert len({m["seed"] for m in independent}) == len(independent)
    assert len({m["seed"] for m in paired}) == comb(4, 3)
    solo = schedule(BOTS, 1, 2, 7, deals=INDEPENDENT)
    assert len({m["seed"] for m in solo}) == len(solo)


def test_every_seed_a_tournament_derives_fits_in_53_bits():
    """Issue 15: match seeds stay exact JSON numbers, 0 .. 2**53 - 1, whatever the
    tournament seed (the largest accepted one included) and whatever the format."""
    meta = {"seed": 2**63 - 1, "players": 2, "deals": PAIRED,
            "bots": [{"bot_id": "a"}, {"bot_id": "b"}]}
    seeds = [m["seed"] for deals in (PAIRED, INDEPENDENT)
             for m in schedule(BOTS, 2, 5, 2**63 - 1, deals)
             + gauntlet("a", ["b", "c"], 2, 5, 2**63 - 1, deals)]
    seeds += [m["seed"] for pair in range(50)
              for m in sprt_pair({**meta, "deals": INDEPENDENT}, pair) + sprt_pair(meta, pair)]
    seeds += [derive_seed(s, *parts) for s in (0, 2**53, 2**63 - 1, "x")
              for parts in ((), (1,), (1, 2, 3))]
    assert all(isinstance(s, int) and 0 <= s <= 2**53 - 1 for s in seeds)
