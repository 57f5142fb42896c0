"""The SPRT statistics (tournament/sprt.py) against an independent computation of the
published formulas.

Sources, quoted:
- fishtest, `server/fishtest/stats/LLRcalc.py`: "Compute the generalized log-likelihood
  ratio for "results" using the statistic "expectation". elo0,elo1 are in logistic elo."
  (`LLR_logistic`): `s0, s1 = [L_(elo) for elo in (elo0, elo1)]`, `N, pdf =
  results_to_pdf(results)`, `return N * LLR(pdf, s0, s1)`, with `L_(x) = 1 / (1 + 10 **
  (-x / 400))`, `regularize`: "If necessary mix in a small prior for regularization.
  epsilon = 1e-3", and the pentanomial as "the frequencies of the game pairs
  LL,LD+DL,LW+DD+WL,DW+WD,WW" on the scores i / 4.
- M. Van den Bergh, "support_MLE_multinomial" (Proposition 1.1), as cited there and in
  fastchess `sprt.cpp`: the most likely distribution with expectation s given the
  empirical p̂ is `p_i = p̂_i / (1 + θ (a_i − s))`. Its log-likelihood is
  `Σ p̂_i log p̂_i − Σ p̂_i log(1 + θ (a_i − s))` at the θ that MAXIMISES the concave
  `g(θ) = Σ p̂_i log(1 + θ (a_i − s))` (g' = 0 is the secular equation). The independent
  computation below maximises g by golden-section search instead of solving g' = 0 by
  bisection as the module does.
- fishtest, `server/fishtest/stats/stat_util.py`, `get_elo`: `results =
  LLRcalc.regularize(results)`, `games, mu, var = stats(results)`, "95% confidence interval
  for mu": `mu ± Phi_inv(0.975) * stdev / sqrt(games)`, `elo(x)`: `x` clamped to
  `[1e-3, 1 - 1e-3]`, `-400 * log10(1 / x - 1)`; `stats` counts `games = N * (l - 1) / 2`
  games of score i / 2 for a pentanomial. fastchess `elo_pentanomial.cpp` (`EloPentanomial`)
  computes the same per pair: `score_ + CI95ZSCORE * sqrt(variance_per_pair_)`.
"""

from __future__ import annotations

import math

import pytest

from tournament import sprt

GOLDEN = (math.sqrt(5) - 1) / 2


def fishtest_regularize(results: list[int]) -> list[float]:
    return [r if r != 0 else 1e-3 for r in results]


def golden_max(f, low: float, high: float, iterations: int = 300) -> float:
    """The maximum of a concave f on (low, high)."""
    a, b = low, high
    c, d = b - GOLDEN * (b - a), a + GOLDEN * (b - a)
    for _ in range(iterations):
        if f(c) > f(d):
            b, d = d, c
            c = b - GOLDEN * (b - a)
        else:
            a, c = c, d
            d = a + GOLDEN * (b - a)
    return f((a + b) / 2)


def independent_llr(pentanomial: list[int], elo0: float, elo1: float) -> float:
    results = fishtest_regularize(pentanomial)
    n = sum(results)
    pdf = [(i / 4, r / n) for i, r in enumerate(results)]

    def max_g(s: float) -> float:
        shifted = [(a - s, p) for a, p in pdf]
        low = -1 / max(a for a, _ in shifted)
        high = -1 / min(a for a, _ in shifted)
        margin = (high - low) * 1e-12
        return golden_max(lambda t: sum(p * math.log(1 + t * a) for a, p in shifted),
                          low + margin, high - margin)

    s0, s1 = (1 / (1 + 10 ** (-elo / 400)) for elo in (elo0, elo1))
    # log L(s1) - log L(s0) = (Σ p̂ log p̂ - max g_s1) - (Σ p̂ log p̂ - max g_s0)
    return n * (max_g(s0) - max_g(s1))


def independent_elo(pentanomial: list[int]) -> tuple[float, float, float]:
    """fishtest get_elo, per game as written there (scores i / 2 over 2N games)."""
    results = fishtest_regularize(pentanomial)
    n = sum(results)
    games = n * (len(results) - 1) / 2
    mu = sum(results[i] * (i / 2) for i in range(len(results))) / games
    mu_ = (len(results) - 1) / 2 * mu
    var = sum(results[i] * (i / 2 - mu_) ** 2 for i in range(len(results))) / games
    stdev = math.sqrt(var)
    quantile = 1.959963984540054

    def elo(x: float) -> float:
        x = min(max(x, 1e-3), 1 - 1e-3)
        return -400 * math.log10(1 / x - 1)

    return (elo(mu), elo(mu - quantile * stdev / math.sqrt(games)),
            elo(mu + quantile * stdev / math.sqrt(games)))


CASES = [
    [10789, 19328, 33806, 19402, 10543],  # fishtest's own stat_util example
    [1187, 7410, 13475, 7378, 1164],
    [39, 2226, 31451, 2412, 40],
    [1, 60, 500, 1200, 600],
    [3, 10, 20, 12, 5],
    [0, 1, 2, 1, 0],
    [0, 0, 0, 0, 12],  # all pairs won twice
    [12, 0, 0, 0, 0],  # all lost
    [0, 0, 12, 0, 0],  # all draws (or every pair split)
    [0, 0, 0, 0, 1],
    [0, 0, 0, 1, 0],
]
HYPOTHESES = [(0, 5), (-3, 1), (0, 150), (-50, 50), (0.2, 0.9)]


@pytest.mark.parametrize("pentanomial", CASES)
@pytest.mark.parametrize(("elo0", "elo1"), HYPOTHESES)
def test_the_llr_agrees_with_the_published_gsprt(pentanomial, elo0, elo1):
    mine = sprt.llr(pentanomial, sprt.Hypotheses(elo0, elo1))
    assert math.isfinite(mine)
    assert mine == pytest.approx(independent_llr(pentanomial, elo0, elo1), rel=1e-6, abs=1e-7)


def test_no_pairs_give_a_zero_llr_and_no_decision():
    hypotheses = sprt.Hypotheses()
    assert sprt.llr([0, 0, 0, 0, 0], hypotheses) == 0.0
    assert hypotheses.decision(0.0) is None


@pytest.mark.parametrize("pentanomial", [*CASES, [0, 0, 0, 0, 0]])
def test_the_elo_and_its_interval_agree_with_fishtest_get_elo(pentanomial):
    estimate = sprt.elo_estimate(pentanomial)
    elo, low, high = independent_elo(pentanomial)
    assert estimate.elo == pytest.approx(elo, abs=1e-9)
    assert estimate.low == pytest.approx(low, abs=1e-9)
    assert estimate.high == pytest.approx(high, abs=1e-9)
    assert estimate.low <= estimate.elo <= estimate.high


def test_fastchess_elo_pentanomial_gives_the_same_numbers_without_empty_buckets():
    """fastchess EloPentanomial: score, variance per pair, `(elo(up) - elo(low)) / 2`."""
    counts = [3, 10, 20, 12, 5]
    pairs = sum(counts)
    score = sum(c * s for c, s in zip(counts, (0, 0.25, 0.5, 0.75, 1), strict=True)) / pairs
    variance = sum(c * (s - score) ** 2
                   for c, s in zip(counts, (0, 0.25, 0.5, 0.75, 1), strict=True)) / pairs
    up, down = (score + z * 1.959963984540054 * math.sqrt(variance / pairs) for z in (1, -1))

    def elo(s: float) -> float:
        return -400 * math.log10(1 / s - 1)

    estimate = sprt.elo_estimate(counts)
    assert estimate.elo == pytest.approx(elo(score))
    assert estimate.error == pytest.approx((elo(up) - elo(down)) / 2)


def test_degenerate_counts_are_finite_and_clamped():
    won = sprt.elo_estimate([0, 0, 0, 0, 40])
    assert won.elo == pytest.approx(-400 * math.log10(1 / 0.999 - 1)) == won.high
    drawn = sprt.elo_estimate([0, 0, 40, 0, 0])
    assert drawn.elo == pytest.approx(0, abs=1e-9) and drawn.low < 0 < drawn.high
    assert sprt.llr([0, 0, 0, 0, 40], sprt.Hypotheses(0, 150)) > 2.94
    assert sprt.llr([0, 0, 40, 0, 0], sprt.Hypotheses(0, 150)) < -2.94


def test_the_bounds_are_wald_s():
    tested = sprt.Hypotheses(0, 5, alpha=0.05, beta=0.1)
    assert tested.lower == pytest.approx(math.log(0.1 / 0.95))
    assert tested.upper == pytest.approx(math.log(0.9 / 0.05))
    assert sprt.Hypotheses().upper == pytest.approx(2.944439, abs=1e-6)  # fastchess' (-2.94, 2.94)
    assert tested.decision(tested.upper) == "H1"
    assert tested.decision(tested.lower) == "H0"
    assert tested.decision(0.0) is None


@pytest.mark.parametrize(("scores", "bucket"), [
    ([0, 0], 0), ([0, 0.5], 1), ([1, 0], 2), ([0.5, 0.5], 2), ([1, 0.5], 3), ([1, 1], 4),
    ([0], 0), ([0.5], 2), ([1], 4),  # a solo pair is one game
])
def test_a_pair_lands_in_its_pentanomial_bucket(scores, bucket):
    assert sprt.pair_bucket(scores) == bucket


def test_a_solo_game_is_won_by_the_higher_score():
    assert sprt.game_score(31, 30) == 1.0
    assert sprt.game_score(30, 30) == 0.5
    assert sprt.game_score(12, 30) == 0.0
