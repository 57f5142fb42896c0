"""SPRT statistics over game pairs: the pentanomial GSPRT with logistic Elo, as fishtest and
fastchess compute it, and the Elo estimate with its 95% interval.

A pair is one deal played twice, the seats swapped (solo: both bots on the same deal, one
game). Its result, counted from the challenger's side, falls in one of five buckets
`[LL, LD, WL+DD, WD, WW]`: pair scores 0, 1/4, 1/2, 3/4, 1 (a solo pair scores 0, 1/2 or 1).

The log-likelihood ratio is the generalized one of M. Van den Bergh, "Comments on
Normalized Elo" / "support_MLE_multinomial" (Proposition 1.1), as in fishtest's
`LLRcalc.LLR_logistic` and fastchess's `SPRT::getLLR_logistic`: the empirical
distribution of pair scores (each empty bucket regularized to 1e-3 pairs), and for each
hypothesis the distribution of highest likelihood whose mean is the score of that Elo,
`p_i = p̂_i / (1 + θ (a_i − s))` with θ the root of `Σ p̂_i (a_i − s) / (1 + θ (a_i − s)) = 0`;
`LLR = N Σ p̂_i log(p1_i / p0_i)`. The test stops at the bounds
`log(β / (1 − α))` (H0) and `log((1 − β) / α)` (H1).

The Elo estimate is fishtest's `stat_util.get_elo` over the regularized counts (fastchess's
`EloPentanomial` gives the same numbers without empty buckets): the mean pair score μ, its
standard error `σ / √N`, Elo `−400 log10(1/μ − 1)` with μ clamped to [0.001, 0.999], and the
interval the Elo of `μ ± 1.959964 σ / √N`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # the pair score of each pentanomial bucket
REGULARIZE = 1e-3  # the count standing in for an empty bucket
CLAMP = 1e-3  # the score is kept within [CLAMP, 1 - CLAMP] before turning it into Elo
Z_95 = 1.959963984540054
BISECTIONS = 200


@dataclass(frozen=True)
class Hypotheses:
    """H0: the challenger is `elo0` stronger, H1: `elo1` stronger (logistic Elo, elo0 <
    elo1), tested with error rates `alpha` (accepting H1 under H0) and `beta`."""

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    def decision(self, llr: float) -> str | None:
        """"H1" at or above the upper bound, "H0" at or below the lower one, else None."""
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None


def logistic_score(elo: float) -> float:
    """The expected score of a player `elo` points stronger: 1 / (1 + 10^(−elo/400))."""
    return 1 / (1 + 10 ** (-elo / 400))


def score_elo(score: float) -> float:
    """The logistic Elo of an expected score, clamped to [CLAMP, 1 − CLAMP]."""
    score = min(max(score, CLAMP), 1 - CLAMP)
    return -400 * math.log10(1 / score - 1)


def regularized(counts: Sequence[int]) -> list[float]:
    return [count if count else REGULARIZE for count in counts]


def llr(pentanomial: Sequence[int], hypotheses: Hypotheses) -> float:
    """The log-likelihood ratio of H1 against H0 after the pairs counted in `pentanomial`
    (0 before the first pair)."""
    if sum(pentanomial) == 0:
        return 0.0
    counts = regularized(pentanomial)
    total = math.fsum(counts)
    observed = [count / total for count in counts]
    p0 = most_likely(observed, logistic_score(hypotheses.elo0))
    p1 = most_likely(observed, logistic_score(hypotheses.elo1))
    return total * math.fsum(p * (math.log(b) - math.log(a))
                             for p, a, b in zip(observed, p0, p1, strict=True))


def most_likely(observed: Sequence[float], mean: float) -> list[float]:
    """The distribution over SCORES with expectation `mean` that is most likely to have
    produced `observed` (Proposition 1.1): `p_i = p̂_i / (1 + θ (a_i − mean))`."""
    shifted = [score - mean for score in SCORES]
    theta = secular_root(observed, shifted)
    return [p / (1 + theta * a) for p, a in zip(observed, shifted, strict=True)]


def secular_root(weights: Sequence[float], values: Sequence[float]) -> float:
    """The root θ of `Σ w_i v_i / (1 + θ v_i) = 0` between −1/max v and −1/min v (the
    function falls from +∞ to −∞ there), by bisection to the last bit."""
    low, high = -1 / max(values), -1 / min(values)

    def slope(theta: float) -> float:
        return math.fsum(w * v / (1 + theta * v) for w, v in zip(weights, values, strict=True))

    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if slope(middle) > 0:
            low = middle
        else:
            high = middle
    return (low + high) / 2


@dataclass(frozen=True)
class EloEstimate:
    elo: float
    low: float
    high: float

    @property
    def error(self) -> float:
        """Half the width of the 95% interval: the ± of fastchess's `Elo 12.3 ± 20.1`."""
        return (self.high - self.low) / 2


def elo_estimate(pentanomial: Sequence[int]) -> EloEstimate:
    """The challenger's Elo over the baseline from the pair scores, with its 95% interval."""
    counts = regularized(pentanomial)
    total = math.fsum(counts)
    mean = math.fsum(count * score for count, score in zip(counts, SCORES, strict=True)) / total
    variance = math.fsum(count * (score - mean) ** 2
                         for count, score in zip(counts, SCORES, strict=True)) / total
    margin = Z_95 * math.sqrt(variance / total)
    return EloEstimate(score_elo(mean), score_elo(mean - margin), score_elo(mean + margin))


def pair_bucket(challenger_scores: Sequence[float]) -> int:
    """The pentanomial bucket of a pair from the challenger's game scores (1 won, 0.5 drawn,
    0 lost): two games in a seat-swapped pair, one in a solo pair."""
    total = math.fsum(challenger_scores)
    if len(challenger_scores) == 1:
        return round(total * 4)
    return round(total * 2)


def game_score(challenger: float, baseline: float) -> float:
    """One game from the challenger's side: 1 ahead, 0.5 level, 0 behind (ranks or solo
    scores, where higher is better: pass `-rank`)."""
    if challenger == baseline:
        return 0.5
    return 1.0 if challenger > baseline else 0.0
