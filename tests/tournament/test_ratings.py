"""Elo, Bradley-Terry maximum likelihood, solo ranking and standings (pure functions)."""

import json
import math
import random

import pytest

from tournament.ratings import (
    ELO_SCALE,
    bradley_terry,
    elo_match,
    elo_pair,
    elo_replay,
    elo_update,
    expected,
    mean_interval,
    solo_ranking,
    standings,
    t_quantile_95,
)


def match(seats, ranks, scores=None, **extra):
    return {"seats": seats, "ranks": ranks,
            "scores": scores if scores is not None else [-r for r in ranks], **extra}


def by_bot(rows):
    return {row["bot"]: row for row in rows}


# ----- Elo ------------------------------------------------------------------------------
def test_expected_score_by_hand():
    """E = 1 / (1 + 10^((Rb - Ra)/400)): equal ratings 0.5; 100 points ahead
    1 / (1 + 10^-0.25) = 1 / (1 + 0.562341) = 0.640065."""
    assert expected(1500, 1500) == 0.5
    assert expected(1600, 1500) == pytest.approx(0.640065, abs=1e-6)
    assert expected(1500, 1600) == pytest.approx(1 - 0.640065, abs=1e-6)


def test_two_player_update_by_hand():
    """A 1600 loses to B 1500, K = 32: E_A = 0.640065, change = 32 * (0 - 0.640065)
    = -20.482080, so A = 1579.517920 and B = 1520.482080. A draw: 32 * (0.5 - 0.640065)
    = -4.482080, so A = 1595.517920 and B = 1504.482080."""
    assert elo_pair(1600, 1500, 0.0) == pytest.approx((1579.517920, 1520.482080), abs=1e-5)
    assert elo_pair(1600, 1500, 0.5) == pytest.approx((1595.517920, 1504.482080), abs=1e-5)
    assert elo_match([1600, 1500], [2, 1]) == pytest.approx(list(elo_pair(1600, 1500, 0.0)))
    assert elo_match([1600, 1500], [1, 1]) == pytest.approx(list(elo_pair(1600, 1500, 0.5)))


def test_four_player_update_by_hand():
    """Ratings A 1600, B 1500, C 1450, D 1400; ranks B 1, A 2, C and D tied 3. Each pair is
    an Elo game worth K/(n-1) = 32/3 = 10.666667. Expected scores E(d) for a rating
    difference d: E(50) = 0.571463, E(100) = 0.640065, E(150) = 0.703385, E(200) = 0.759747.
    A: (0 - 0.640065) + (1 - 0.703385) + (1 - 0.759747) = -0.103197  -> -1.100768
    B: (1 - 0.359935) + (1 - 0.571463) + (1 - 0.640065) = 1.428537   -> +15.237728
    C: (0 - 0.296615) + (0 - 0.428537) + (0.5 - 0.571463) = -0.796615 -> -8.497227
    D: (0 - 0.240253) + (0 - 0.359935) + (0.5 - 0.428537) = -0.528725 -> -5.639733
    New: A 1598.899232, B 1515.237728, C 1441.502773, D 1394.360267 (the changes sum to 0)."""
    new = elo_match([1600, 1500, 1450, 1400], [2, 1, 3, 3])
    assert new == pytest.approx([1598.899232, 1515.237728, 1441.502773, 1394.360267], abs=1e-4)
    assert math.fsum(new) == pytest.approx(1600 + 1500 + 1450 + 1400)


def test_k_factor_scales_the_change():
    assert elo_pair(1500, 1500, 1.0, k=16) == (1508.0, 1492.0)
    assert elo_match([1500] * 3, [1, 2, 3], k=20) == pytest.approx([1510, 1500, 1490])


def test_update_by_bot_id_ignores_seat_order_and_starts_new_bots_at_1500():
    ratings = {"a": 1600.0, "c": 1450.0, "d": 1400.0, "e": 1234.0}  # b is new
    first = elo_update(ratings, match(["a", "b", "c", "d"], [2, 1, 3, 3]))
    turned = elo_update(ratings, match(["c", "d", "a", "b"], [3, 3, 2, 1]))
    assert first == pytest.approx(turned)
    assert first == pytest.approx({"a": 1598.899232, "b": 1515.237728, "c": 1441.502773,
                                   "d": 1394.360267}, abs=1e-4)
    assert "e" not in first, "only the match's bots are returned"


def test_a_bot_gains_nothing_against_itself_and_solo_changes_nothing():
    assert elo_update({"a": 1550.0}, match(["a", "a"], [1, 2])) == {"a": 1550.0}
    assert elo_update({"a": 1550.0}, match(["a"], [1])) == {"a": 1550.0}


def test_replay_applies_results_in_order():
    results = [match(["a", "b"], [1, 2]), match(["b", "a"], [1, 2])]
    a, b = elo_pair(1500, 1500, 1.0)
    b, a = elo_pair(b, a, 1.0)
    assert elo_replay(results) == pytest.approx({"a": a, "b": b})


# ----- Bradley-Terry --------------------------------------------------------------------
def wins(winner, loser, times):
    return [match([winner, loser], [1, 2]) for _ in range(times)]


def test_two_players_without_prior_match_the_closed_form():
    """With w_ab wins of a over b and w_ba back, the likelihood w_ab log p + w_ba log(1-p)
    peaks at p = w_ab / (w_ab + w_ba), so theta_a - theta_b = ln(w_ab / w_ba) and the Elo
    difference is 400 log10(3 / 1) = 190.848502; centred on 1500: 1595.424251 / 1404.575749.
    Information of the difference: n p (1 - p) = 4 * 0.75 * 0.25 = 0.75, so each centred
    rating has variance 1 / (4 * 0.75) = 1/3 and the 95% margin is
    1.959964 * 173.717793 * sqrt(1/3) = 196.576575."""
    rows = by_bot(bradley_terry(wins("a", "b", 3) + wins("b", "a", 1), prior_games=0))
    assert rows["a"]["rating"] - rows["b"]["rating"] == pytest.approx(400 * math.log10(3))
    assert rows["a"]["rating"] == pytest.approx(1595.424251, abs=1e-6)
    assert rows["b"]["rating"] == pytest.approx(1404.575749, abs=1e-6)
    assert rows["a"]["high"] - rows["a"]["rating"] == pytest.approx(196.576575, abs=1e-5)
    assert rows["a"]["rating"] - rows["a"]["low"] == pytest.approx(196.576575, abs=1e-5)
    assert rows["a"]["games"] == rows["b"]["games"] == 4


def test_the_prior_keeps_an_undefeated_bot_finite_as_derived_by_hand():
    """a beats b once; one virtual draw each against an anchor at strength 0. By symmetry
    theta_a = x = -theta_b, and the score equation of a is
    1 - sigmoid(2x) + 0.5 - sigmoid(x) = 0, solved here by bisection."""
    low, high = 0.0, 5.0
    for _ in range(100):
        mid = (low + high) / 2
        if 1.5 - 1 / (1 + math.exp(-2 * mid)) - 1 / (1 + math.exp(-mid)) > 0:
            low = mid
        else:
            high = mid
    rows = by_bot(bradley_terry(wins("a", "b", 1)))
    assert rows["a"]["rating"] == pytest.approx(1500 + ELO_SCALE * low, abs=1e-6)
    assert rows["b"]["rating"] == pytest.approx(1500 - ELO_SCALE * low, abs=1e-6)
    with pytest.raises(ValueError, match="prior"):
        bradley_terry(wins("a", "b", 1), prior_games=0)


def inverse_3x3(m):
    """The inverse of a 3x3 matrix by cofactors."""
    cof = [[m[(i + 1) % 3][(j + 1) % 3] * m[(i + 2) % 3][(j + 2) % 3]
            - m[(i + 1) % 3][(j + 2) % 3] * m[(i + 2) % 3][(j + 1) % 3] for j in range(3)]
           for i in range(3)]
    det = sum(m[0][j] * cof[0][j] for j in range(3))
    return [[cof[j][i] / det for j in range(3)] for i in range(3)]


def test_intervals_come_from_the_inverse_information_with_the_prior():
    """Rebuild the observed information at the fit, independently of the fitting code: pair
    terms n p (1 - p) off the diagonal (negated) and on it, plus the prior's sigmoid'(theta)
    on the diagonal. The reported ratings are centred, so the common offset m is recovered
    from the prior's score equation sum(0.5 - sigmoid(m + d_i)) = 0 (bisection). The 95%
    margin is 1.959964 * 400/ln10 * sqrt(Var(theta_i - mean theta))."""
    results = wins("a", "b", 2) + wins("b", "c", 1) + wins("c", "a", 1) + wins("a", "c", 1)
    rows = by_bot(bradley_terry(results))
    bots = ["a", "b", "c"]
    centred = [(rows[b]["rating"] - 1500) / ELO_SCALE for b in bots]
    low, high = -5.0, 5.0
    for _ in range(100):
        m = (low + high) / 2
        if sum(0.5 - 1 / (1 + math.exp(-(m + d))) for d in centred) > 0:
            low = m
        else:
            high = m
    theta = [low + d for d in centred]
    games = {(0, 1): 2, (1, 2): 1, (0, 2): 2}
    info = [[0.0] * 3 for _ in range(3)]
    for (i, j), n in games.items():
        p = 1 / (1 + math.exp(theta[j] - theta[i]))
        info[i][j] = info[j][i] = -n * p * (1 - p)
    for i in range(3):
        q = 1 / (1 + math.exp(-theta[i]))
        info[i][i] = -info[i][(i + 1) % 3] - info[i][(i + 2) % 3] + q * (1 - q)
    cov = inverse_3x3(info)
    total = sum(map(sum, cov)) / 9
    for i, bot in enumerate(bots):
        variance = cov[i][i] - 2 * sum(cov[i]) / 3 + total
        margin = 1.959964 * ELO_SCALE * math.sqrt(variance)
        assert rows[bot]["high"] - rows[bot]["rating"] == pytest.approx(margin, abs=1e-4)


def clear_ranking(copies=1):
    """Four bots where a stronger bot wins 3 of every 4 games against a weaker one."""
    results = []
    order = ["a", "b", "c", "d"]
    for i, strong in enumerate(order):
        for weak in order[i + 1:]:
            results += (wins(strong, weak, 3) + wins(weak, strong, 1)) * copies
    return results


def test_a_clear_ranking_is_recovered_with_mean_1500():
    rows = bradley_terry(clear_ranking())
    assert [row["bot"] for row in rows] == ["a", "b", "c", "d"]
    assert math.fsum(row["rating"] for row in rows) / 4 == pytest.approx(1500, abs=1e-5)
    assert all(row["low"] < row["rating"] < row["high"] for row in rows)
    assert json.loads(json.dumps(rows)) == rows


def test_the_fit_solves_the_score_equations():
    """At the maximum without a prior, each bot's expected wins equal its actual wins
    (the likelihood equations of the Bradley-Terry model)."""
    results = clear_ranking() + [match(["a", "b", "c"], [2, 1, 1])]
    rows = by_bot(bradley_terry(results, prior_games=0))
    theta = {bot: (row["rating"] - 1500) / ELO_SCALE for bot, row in rows.items()}
    # 3 of 4 against each weaker bot, 1 of 4 against each stronger one; in the 3-seat match
    # (pairs weigh 1/2) b and c each beat a and tie each other: (1 + 0.5) / 2 = 0.75.
    actual = {"a": 9, "b": 1 + 3 + 3 + 0.75, "c": 1 + 1 + 3 + 0.75, "d": 3}
    expected_wins = {bot: 0.0 for bot in theta}
    pair_games = {}
    for result in results:
        weight = 1 / (len(result["seats"]) - 1)
        for i, x in enumerate(result["seats"]):
            for y in result["seats"][i + 1:]:
                key = tuple(sorted((x, y)))
                pair_games[key] = pair_games.get(key, 0) + weight
    for (x, y), games in pair_games.items():
        p = 1 / (1 + math.exp(theta[y] - theta[x]))
        expected_wins[x] += games * p
        expected_wins[y] += games * (1 - p)
    assert expected_wins == pytest.approx(actual, abs=1e-5)


def test_mirrored_records_give_mirrored_ratings():
    results = wins("a", "b", 2) + wins("c", "d", 2) + wins("a", "c", 1) + wins("c", "a", 1)
    results += wins("b", "d", 1) + wins("d", "b", 1)
    rows = by_bot(bradley_terry(results))
    assert rows["a"]["rating"] == rows["c"]["rating"]
    assert rows["b"]["rating"] == rows["d"]["rating"]
    assert rows["a"]["rating"] - 1500 == pytest.approx(1500 - rows["b"]["rating"], abs=1e-6)
    drawn = bradley_terry([match(["x", "y"], [1, 1])])
    assert [row["rating"] for row in drawn] == [1500.0, 1500.0]


def test_same_results_in_any_order_and_seating_give_identical_numbers():
    rng = random.Random(2024)
    results = clear_ranking() + [
        match(["a", "b", "c", "d"], [1, 2, 3, 4]), match(["b", "c", "d", "a"], [1, 3, 3, 2]),
        match(["c", "d", "a"], [2, 1, 3]), match(["d", "a", "b"], [1, 1, 3]),
    ]
    reference = bradley_terry(results)
    for _ in range(5):
        shuffled = []
        for result in rng.sample(results, len(results)):
            order = rng.sample(range(len(result["seats"])), len(result["seats"]))
            shuffled.append(match([result["seats"][i] for i in order],
                                  [result["ranks"][i] for i in order]))
        assert bradley_terry(shuffled) == reference


def test_a_multiplayer_match_counts_as_its_pairs_weighted_one_over_n_minus_one():
    four_player = [match(["a", "b", "c", "d"], [1, 2, 3, 4])] * 3
    pairs = [match([x, y], [1, 2]) for i, x in enumerate("abcd") for y in "abcd"[i + 1:]]
    assert bradley_terry(four_player) == bradley_terry(pairs)


def test_intervals_shrink_with_more_games():
    few = by_bot(bradley_terry(clear_ranking(1)))
    many = by_bot(bradley_terry(clear_ranking(4)))
    for bot in "abcd":
        assert many[bot]["high"] - many[bot]["low"] < few[bot]["high"] - few[bot]["low"]
        assert many[bot]["games"] == 4 * few[bot]["games"]


def test_no_results_no_ratings_and_solo_results_are_ignored():
    assert bradley_terry([]) == []
    assert bradley_terry([match(["a"], [1])]) == []


# ----- solo ranking -----------------------------------------------------------------------
def test_mean_interval_by_hand():
    """Scores 3, 5, 7, 9: mean 6, sample sd sqrt(20/3) = 2.581989, t(3) = 3.182446, margin
    3.182446 * 2.581989 / 2 = 4.108520, interval [1.891480, 10.108520]."""
    assert mean_interval([3, 5, 7, 9]) == pytest.approx(
        {"mean": 6.0, "stdev": 2.581989, "low": 1.891480, "high": 10.108520}, abs=2e-6)
    assert mean_interval([4]) == {"mean": 4.0, "stdev": None, "low": None, "high": None}


@pytest.mark.parametrize(("df", "value"), [
    (1, 12.706205), (5, 2.570582), (10, 2.228139), (20, 2.085963), (30, 2.042272),
    (60, 2.000298), (120, 1.979930), (100000, 1.959988),
])
def test_t_quantiles_match_the_published_table(df, value):
    assert t_quantile_95(df) == pytest.approx(value, abs=2e-5)


def test_solo_ranking_orders_by_average_score():
    results = [match(["x"], [1], [s]) for s in (10, 12, 14)]
    results += [match(["y"], [1], [s]) for s in (20, 20, 23)]
    rows = solo_ranking(results)
    assert [row["bot"] for row in rows] == ["y", "x"]
    assert rows[1] == pytest.approx({"bot": "x", "games": 3, "mean": 12.0, "stdev": 2.0,
                                     "low": 12 - 4.302653 * 2 / math.sqrt(3),
                                     "high": 12 + 4.302653 * 2 / math.sqrt(3)}, abs=1e-5)


# ----- standings --------------------------------------------------------------------------
def test_points_follow_rank_and_shared_places_split():
    """(n - rank) / (n - 1) per match: 1, 2/3, 1/3, 0 in a 4-player match; a 2-player draw
    gives 0.5 each; two bots tied first of three get (1 + 0.5) / 2 = 0.75 each."""
    table = by_bot(standings([match(["a", "b", "c", "d"], [1, 2, 3, 4])])["table"])
    assert [table[b]["points"] for b in "abcd"] == [1.0, 0.666667, 0.333333, 0.0]
    drawn = by_bot(standings([match(["a", "b"], [1, 1])])["table"])
    assert drawn["a"]["points"] == drawn["b"]["points"] == 0.5
    shared = by_bot(standings([match(["a", "b", "c"], [1, 1, 3])])["table"])
    assert (shared["a"]["points"], shared["b"]["points"], shared["c"]["points"]) == (0.75, 0.75, 0)
    assert shared["a"]["wins"] == shared["b"]["wins"] == shared["c"]["wins"] == 0
    assert shared["a"]["draws"] == shared["b"]["draws"] == 1 and shared["c"]["draws"] == 0
    assert drawn["a"]["draws"] == drawn["b"]["draws"] == 1


def test_standings_table_cross_table_and_faults():
    results = [
        match(["a", "b"], [1, 2], [10, 4], faults=[0, 2], forfeits=[False, True]),
        match(["b", "a"], [1, 2], [8, 6], faults=[[], [{"code": "timeout"}]]),
        match(["a", "c"], [1, 2], [9, 1]),
        match(["c", "b"], [1, 1], [5, 5]),
    ]
    result = standings(results)
    assert [row["bot"] for row in result["table"]] == ["a", "b", "c"]
    assert result["table"][0] == {"bot": "a", "matches": 3, "points": 2.0, "wins": 2,
                                  "draws": 0, "average_score": round(25 / 3, 6),
                                  "average_rank": round(4 / 3, 6), "faults": 1, "forfeits": 0}
    b = by_bot(result["table"])["b"]
    assert (b["points"], b["wins"], b["draws"], b["faults"], b["forfeits"]) == (1.5, 1, 1, 2, 1)
    assert result["cross_table"] == {"a": {"b": 1.0, "c": 1.0}, "b": {"a": 1.0, "c": 0.5},
                                     "c": {"a": 0.0, "b": 0.5}}
    assert json.loads(json.dumps(result)) == result


def test_standings_do_not_depend_on_result_order():
    rng = random.Random(7)
    results = clear_ranking() + [match(["a", "b", "c"], [2, 1, 1]), match(["d", "c"], [1, 1])]
    reference = standings(results)
    for _ in range(3):
        assert standings(rng.sample(results, len(results))) == reference


def test_solo_matches_give_no_points_or_wins():
    row = standings([match(["x"], [1], [12]), match(["x"], [1], [8])])["table"][0]
    assert (row["points"], row["wins"], row["draws"], row["average_score"],
            row["matches"]) == (0, 0, 0, 10, 2)


@pytest.mark.parametrize(("result", "reason"), [
    ({"seats": [], "ranks": [], "scores": []}, "seats"),
    ({"seats": ["a", "b"], "ranks": [1], "scores": [1, 2]}, "ranks"),
    ({"seats": ["a", "b"], "ranks": [1, 2]}, "scores"),
    ({"seats": ["a", "b"], "ranks": [0, 1], "scores": [1, 2]}, "from 1"),
    ({"seats": ["a", "b"], "ranks": [1, 2], "scores": [1, 2], "faults": [0]}, "faults"),
])
def test_malformed_results_are_refused(result, reason):
    with pytest.raises(ValueError, match=reason):
        standings([result])
