"""Swiss pairing and standings (tournament/swiss.py): nearest points, no repeat while a
round can be paired without one, byes to the lowest placed bot without one, Buchholz."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import pytest

from tests.support.tournament_checks import repeat_free_round_exists
from tournament.swiss import BYE_POINTS, buchholz, meeting, pair_round, standings


def play_swiss(bots: list[str], rounds: int, seed: int) -> list[tuple[list, str | None, bool]]:
    """Rounds with random pairing results: (pairs, bye, whether a repeat-free round existed)."""
    chance = random.Random(seed)
    points = {bot: Fraction(0) for bot in bots}
    met: Counter = Counter()
    byes: Counter = Counter()
    played = []
    for _ in range(rounds):
        possible = repeat_free_round_exists(bots, met)
        pairs, bye = pair_round(bots, points, met, byes)
        played.append((pairs, bye, possible))
        for a, b in pairs:
            met[meeting(a, b)] += 1
            won = Fraction(chance.choice([0, 1, 2, 3, 4]), 2)  # a's points of two games
            points[a] += won
            points[b] += 2 - won
        if bye is not None:
            byes[bye] += 1
            points[bye] += BYE_POINTS
    return played


@pytest.mark.parametrize("count", [2, 3, 4, 5, 6, 7, 8])
@pytest.mark.parametrize("seed", range(6))
def test_no_pairing_repeats_while_the_round_can_be_paired_without_one(count, seed):
    bots = [f"bot{n}" for n in range(count)]
    met: Counter = Counter()
    for pairs, bye, possible in play_swiss(bots, count + 2, seed):
        assert sorted([bot for pair in pairs for bot in pair] + ([bye] if bye else [])) == \
            sorted(bots), "every bot plays once per round, or has the bye"
        repeats = [pair for pair in pairs if met[meeting(*pair)]]
        assert not (repeats and possible), f"{repeats} met before, yet a fresh round existed"
        for pair in pairs:
            met[meeting(*pair)] += 1


def test_every_pair_meets_once_before_any_meets_twice_with_four_bots():
    bots = ["a", "b", "c", "d"]
    played = play_swiss(bots, 3, seed=1)
    meetings = Counter(meeting(*pair) for pairs, _, _ in played for pair in pairs)
    assert set(meetings.values()) == {1} and len(meetings) == 6


def test_bots_with_equal_points_meet_first():
    points = {"a": Fraction(2), "b": Fraction(0), "c": Fraction(2), "d": Fraction(0)}
    pairs, bye = pair_round(["a", "b", "c", "d"], points, Counter(), {})
    assert pairs == [("a", "c"), ("b", "d")] and bye is None


def test_the_bye_goes_to_the_lowest_placed_bot_that_had_none():
    points = {"a": Fraction(4), "b": Fraction(2), "c": Fraction(0)}
    assert pair_round(["a", "b", "c"], points, Counter(), {})[1] == "c"
    assert pair_round(["a", "b", "c"], points, Counter(), {"c": 1})[1] == "b"


def test_each_bot_has_one_bye_before_any_has_two():
    bots = list("abcde")
    played = play_swiss(bots, 5, seed=3)
    assert Counter(bye for _, bye, _ in played) == Counter(bots)


def test_standings_order_ties_by_buchholz():
    """a and b both have 2 points; a's opponents (c: 3, d: 1) sum to 4, b's (d: 1) to 1."""
    points = {"a": Fraction(2), "b": Fraction(2), "c": Fraction(3), "d": Fraction(1)}
    opponents = {"a": ["c", "d"], "b": ["d"], "c": ["a"], "d": ["a", "b"]}
    assert buchholz(points, opponents) == {"a": 4, "b": 1, "c": 2, "d": 4}
    rows = standings(["b", "a", "c", "d"], points, opponents, {"b": 1})
    assert [row["bot"] for row in rows] == ["c", "a", "b", "d"]
    assert rows[2] == {"bot": "b", "points": 2.0, "buchholz": 1.0, "opponents": ["d"],
                       "byes": 1}
