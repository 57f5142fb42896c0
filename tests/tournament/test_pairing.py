"""Round-robin schedules: counts, seat balance, shared seeds per combination, determinism."""

import json
from collections import Counter
from math import comb

import pytest

from tournament.pairing import derive_seed, match_count, rotations, schedule

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
