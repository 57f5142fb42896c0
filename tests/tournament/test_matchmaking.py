"""The ladder's matchmaking (tournament/matchmaking.py, docs/ratings.md "Matchmaking") and its
Weng-Lin skills (tournament/skill.py): pure functions, checked in-process."""

from __future__ import annotations

import random

from tournament import skill
from tournament.matchmaking import WINDOW, Candidate, next_match


def field(count: int, seed: int = 1, owners: int | None = None) -> list[Candidate]:
    """`count` candidates in bot id order, with spread skills and match counts."""
    draw = random.Random(seed)
    return sorted((Candidate(f"b{n:04d}", None if owners is None else f"o{n % owners}",
                             draw.gauss(25, 4), draw.uniform(1, 8), draw.randint(20, 30),
                             draw.randint(20, 30)) for n in range(count)),
                  key=lambda entry: entry.bot)


def test_the_same_entries_seed_and_number_make_the_same_match():
    entries = field(50)
    assert next_match(entries, 3, 7, 12) == next_match(list(entries), 3, 7, 12)
    made = {tuple(next_match(entries, 3, 7, number) or ()) for number in range(20)}
    assert len(made) > 1  # the number breaks ties differently


def test_the_entry_with_the_fewest_matches_of_its_version_plays_first():
    """docs/ratings.md: the anchor has the fewest matches of its current version (a new
    entry or version: its placement)."""
    entries = field(40)
    newcomer = Candidate("b9999", None, 25.0, skill.SIGMA, 30, 0)
    for number in range(10):
        assert "b9999" in (next_match([*entries, newcomer], 4, 3, number) or [])


def test_opponents_are_near_the_anchor_in_mu():
    entries = field(500)
    anchor = Candidate("b9999", None, 40.0, 1.0, 0, 0)
    bots = next_match([*entries, anchor], 2, 1, 0)
    assert bots is not None and "b9999" in bots
    other = next(entry for entry in entries if entry.bot in bots)
    nearest = sorted(entries, key=lambda entry: abs(entry.mu - 40.0))[:WINDOW]
    assert other in nearest


def test_two_bots_of_one_owner_are_never_seated_together():
    entries = field(30, owners=3)
    for number in range(200):
        bots = next_match(entries, 3, 5, number)
        assert bots is not None
        owners = [next(e.owner for e in entries if e.bot == bot) for bot in bots]
        assert len(set(owners)) == 3, (bots, owners)
    one_owner = field(6, owners=1)
    assert next_match(one_owner, 2, 5, 0) is None


def test_too_few_entries_make_no_match():
    assert next_match(field(2), 3, 1, 0) is None
    assert next_match([], 2, 1, 0) is None


def test_seats_are_rotated_by_the_match_number():
    entries = field(3)
    orders = [next_match(entries, 3, 1, number) for number in range(3)]
    assert all(set(order or ()) == {e.bot for e in entries} for order in orders)
    assert len({tuple(order or ()) for order in orders}) == 3
    assert {(order or [""])[0] for order in orders} == {e.bot for e in entries}


def test_playing_by_matchmaking_keeps_the_match_counts_even():
    """Whoever played least plays next, and opponents may be at most a little ahead: after
    400 matches of 3 among 12 entries, the counts are within 25% of each other."""
    entries = {f"b{n:02d}": Candidate(f"b{n:02d}", None, 20 + n, 3.0, 0, 0)
               for n in range(12)}
    for number in range(400):
        bots = next_match(list(entries.values()), 3, 9, number)
        assert bots is not None
        for bot in bots:
            old = entries[bot]
            entries[bot] = Candidate(bot, None, old.mu, old.sigma, old.matches + 1,
                                     old.version_matches + 1)
    counts = [entry.matches for entry in entries.values()]
    assert max(counts) / min(counts) <= 1.25, counts


# ----- skill ---------------------------------------------------------------------------------
def test_a_win_raises_mu_a_loss_lowers_it_and_sigma_shrinks():
    after = skill.rate({}, ["a", "b"], [1, 2])
    assert after["a"].mu > skill.MU > after["b"].mu
    assert after["a"].sigma < skill.SIGMA and after["b"].sigma < skill.SIGMA


def test_ties_are_ties():
    """Issue 28: ties as ties. Two equal bots that tie keep equal mu."""
    after = skill.rate({}, ["a", "b", "c"], [1, 1, 3])
    assert after["a"].mu == after["b"].mu > skill.MU > after["c"].mu


def test_a_forfeiter_is_ranked_last_by_its_result_and_loses_most():
    """A forfeited match's result ranks the forfeiter last and the others first together
    (referee.match.runner.forfeit_result): the forfeiter loses mu, the others gain alike."""
    after = skill.rate({}, ["a", "b", "c"], [1, 1, 2])
    assert after["c"].mu < skill.MU < after["a"].mu == after["b"].mu


def test_a_bot_in_several_seats_gets_the_sum_of_its_changes():
    after = skill.rate({}, ["a", "a"], [1, 2])
    assert abs(after["a"].mu - skill.MU) < 1e-9


def test_the_ordinal_is_mu_minus_three_sigma():
    value = skill.Skill(30.0, 2.0)
    assert value.ordinal == 24.0
    assert value.shown() == {"mu": 30.0, "sigma": 2.0, "ordinal": 24.0}


def test_an_even_match_is_more_informative_than_a_lopsided_one():
    even = skill.match_quality([skill.Skill(25, 2), skill.Skill(25, 2)])
    lopsided = skill.match_quality([skill.Skill(35, 2), skill.Skill(15, 2)])
    assert 0 < lopsided < even <= 1
