"""Ratings and standings from match results: pure functions over JSON-able data.

- Live Elo: updated as each match finishes (multiplayer: pairwise by rank, K/(n-1)).
- Bradley-Terry maximum likelihood for a finished tournament, with 95% intervals; exactly
  the same numbers whatever order the results arrive in.
- Solo ranking: average score with a 95% t interval.
- Standings: points, wins, average score and rank, cross-table, faults.

A match result is a mapping with per-seat lists: `seats` (bot ids), `ranks` (1 is best, tied
seats share a rank), `scores`, and optionally `faults` (a count, or a list of fault records,
per seat) and `forfeits` (true where the seat forfeited). The methods are described in
docs/ratings.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any

INITIAL_RATING = 1500.0
K_FACTOR = 32.0
ELO_SCALE = 400 / math.log(10)  # Elo points per unit of natural-log strength
Z_95 = 1.959963984540054  # two-sided 95% quantile of the standard normal
DECIMALS = 6

Result = Mapping[str, Any]
Row = dict[str, Any]


# ----- match results ----------------------------------------------------------------------
def check_result(result: Result) -> None:
    """Refuse a result whose per-seat lists are missing or disagree in length."""
    seats = result.get("seats")
    if not isinstance(seats, list) or not seats:
        raise ValueError("a result needs a non-empty list of seats")
    for field, required in (("ranks", True), ("scores", True), ("faults", False),
                            ("forfeits", False)):
        if field not in result and not required:
            continue
        values = result.get(field)
        if not isinstance(values, list) or len(values) != len(seats):
            raise ValueError(f"a result needs one entry of {field!r} per seat")
    if not all(isinstance(rank, int) and rank >= 1 for rank in result["ranks"]):
        raise ValueError("ranks are integers from 1 (best)")


def pair_score(rank: int, other_rank: int) -> float:
    """What one seat scores against another: 1 ahead, 0.5 tied, 0 behind."""
    if rank == other_rank:
        return 0.5
    return 1.0 if rank < other_rank else 0.0


def pairwise(result: Result) -> Iterator[tuple[str, str, float]]:
    """(bot, opponent, score of bot) for every pair of seats held by different bots."""
    check_result(result)
    seats, ranks = result["seats"], result["ranks"]
    for i in range(len(seats)):
        for j in range(i + 1, len(seats)):
            if seats[i] != seats[j]:
                yield seats[i], seats[j], pair_score(ranks[i], ranks[j])


def match_points(result: Result) -> list[Fraction]:
    """Points per seat: the mean pair score against the n-1 other seats.

    Without ties this is (n - rank) / (n - 1): 1 for the winner, 0 for the last. A solo
    match (one seat) gives no points.
    """
    check_result(result)
    ranks = result["ranks"]
    others = len(ranks) - 1
    if others == 0:
        return [Fraction(0)]
    return [
        sum((Fraction(pair_score(rank, other)) for j, other in enumerate(ranks) if j != i),
            Fraction(0)) / others
        for i, rank in enumerate(ranks)
    ]


# ----- Elo --------------------------------------------------------------------------------
def expected(rating: float, other: float) -> float:
    """The expected score of `rating` against `other` (Elo's logistic curve, base 10, 400)."""
    return 1.0 / (1.0 + 10.0 ** ((other - rating) / 400.0))


def elo_pair(rating_a: float, rating_b: float, score_a: float,
             k: float = K_FACTOR) -> tuple[float, float]:
    """Standard two-player update; `score_a` is 1 (a won), 0.5 (draw) or 0 (b won)."""
    change = k * (score_a - expected(rating_a, rating_b))
    return rating_a + change, rating_b - change


def elo_match(ratings: Sequence[float], ranks: Sequence[int], k: float = K_FACTOR) -> list[float]:
    """New ratings of the seats of one match: every pair is an Elo game worth K/(n-1).

    All pairs use the ratings from before the match, so seat order does not matter; for two
    players this is exactly `elo_pair`. A solo match changes nothing.
    """
    n = len(ratings)
    if n < 2:
        return list(ratings)
    weight = k / (n - 1)
    changes = [0.0] * n
    for i in range(n):
        for j in range(n):
            if i != j:
                changes[i] += weight * (pair_score(ranks[i], ranks[j])
                                        - expected(ratings[i], ratings[j]))
    return [rating + change for rating, change in zip(ratings, changes, strict=True)]


def elo_update(ratings: Mapping[str, float], result: Result, k: float = K_FACTOR,
               initial: float = INITIAL_RATING) -> dict[str, float]:
    """New ratings of every bot in `result`; bots missing from `ratings` start at `initial`.

    A bot holding several seats gets the sum of its seats' changes (against itself they
    cancel: one seat's gain is the other's loss).
    """
    check_result(result)
    seats = result["seats"]
    before = [ratings.get(bot, initial) for bot in seats]
    after = elo_match(before, result["ranks"], k)
    new = {bot: ratings.get(bot, initial) for bot in seats}
    for bot, old, updated in zip(seats, before, after, strict=True):
        new[bot] += updated - old
    return new


def elo_replay(results: Iterable[Result], k: float = K_FACTOR,
               initial: float = INITIAL_RATING) -> dict[str, float]:
    """Elo ratings after applying `results` one by one, in the order given."""
    ratings: dict[str, float] = {}
    for result in results:
        ratings.update(elo_update(ratings, result, k, initial))
    return ratings


# ----- Bradley-Terry maximum likelihood ----------------------------------------------------
def pairwise_wins(results: Iterable[Result]) -> tuple[dict[tuple[str, str], Fraction],
                                                      dict[str, int]]:
    """Exact pairwise wins and games played, whatever the order of `results`.

    wins[(a, b)] sums a's pair scores against b, each pair of an n-seat match weighted
    1/(n-1) so a match counts as one game per bot; ties give half to each side. Fractions
    keep the sums exact, so no ordering of the input can change them. `games` counts the
    matches in which a bot met at least one other bot.
    """
    wins: dict[tuple[str, str], Fraction] = {}
    games: dict[str, int] = {}
    for result in results:
        check_result(result)
        weight = Fraction(1, max(len(result["seats"]) - 1, 1))
        met: set[str] = set()
        for bot, other, score in pairwise(result):
            wins[bot, other] = wins.get((bot, other), Fraction(0)) + weight * Fraction(score)
            wins[other, bot] = wins.get((other, bot), Fraction(0)) + weight * (1 - Fraction(score))
            met.update((bot, other))
        for bot in met:
            games[bot] = games.get(bot, 0) + 1
    return wins, games


def bradley_terry(results: Iterable[Result], prior_games: float = 1.0) -> list[Row]:
    """Maximum-likelihood Bradley-Terry ratings on the Elo scale, mean 1500, 95% intervals.

    `prior_games` virtual games drawn against a fixed 1500 anchor keep every rating finite
    (an undefeated bot included); 0 fits the plain likelihood, which needs every bot to have
    won and lost (ValueError otherwise). Rows are sorted best first: bot, rating, low, high,
    games.
    """
    if prior_games < 0:
        raise ValueError("prior_games cannot be negative")
    wins, games = pairwise_wins(results)
    bots = sorted(games)
    if not bots:
        return []
    index = {bot: i for i, bot in enumerate(bots)}
    pairs = [(index[a], index[b], float(wins[a, b]), float(wins[b, a]))
             for a, b in sorted(wins) if a < b]
    if prior_games == 0:
        check_finite_maximum(len(bots), pairs)
    model = _Model(len(bots), pairs, prior_games)
    strengths = model.fit()
    variances = model.centred_variances(strengths)
    mean = math.fsum(strengths) / len(bots)
    rows = [rating_row(bot, strength - mean, variance, games[bot])
            for bot, strength, variance in zip(bots, strengths, variances, strict=True)]
    return sorted(rows, key=lambda row: (-row["rating"], row["bot"]))


def rating_row(bot: str, strength: float, variance: float, games: int) -> Row:
    """One leaderboard row: a centred strength turned into Elo points with its interval."""
    rating = INITIAL_RATING + ELO_SCALE * strength
    margin = Z_95 * ELO_SCALE * math.sqrt(max(variance, 0.0))
    return {"bot": bot, "rating": round(rating, DECIMALS), "low": round(rating - margin, DECIMALS),
            "high": round(rating + margin, DECIMALS), "games": games}


def check_finite_maximum(size: int, pairs: list[tuple[int, int, float, float]]) -> None:
    """Without a prior the maximum is finite only if every bot can reach every other bot
    through a chain of wins (the win graph is strongly connected; Hunter 2004, Assumption 1)."""
    beats: list[set[int]] = [set() for _ in range(size)]
    beaten_by: list[set[int]] = [set() for _ in range(size)]
    for a, b, a_wins, b_wins in pairs:
        if a_wins > 0:
            beats[a].add(b)
            beaten_by[b].add(a)
        if b_wins > 0:
            beats[b].add(a)
            beaten_by[a].add(b)
    if len(reachable(0, beats)) < size or len(reachable(0, beaten_by)) < size:
        raise ValueError("without a prior, ratings are infinite unless every bot both won and "
                         "lost within one connected group; use prior_games > 0")


def reachable(start: int, edges: list[set[int]]) -> set[int]:
    seen = {start}
    frontier = [start]
    while frontier:
        for nxt in edges[frontier.pop()] - seen:
            seen.add(nxt)
            frontier.append(nxt)
    return seen


class _Model:
    """Log-likelihood of Bradley-Terry strengths theta, maximised by damped Newton steps.

    P(a beats b) = sigmoid(theta_a - theta_b); the prior adds `prior_games` games per bot
    against an anchor of strength 0, half won and half lost.
    """

    TOLERANCE = 1e-12
    MAX_STEPS = 200

    def __init__(self, size: int, pairs: list[tuple[int, int, float, float]], prior: float):
        self.size, self.pairs, self.prior = size, pairs, prior

    def log_likelihood(self, theta: list[float]) -> float:
        terms = [a_wins * log_sigmoid(theta[a] - theta[b])
                 + b_wins * log_sigmoid(theta[b] - theta[a])
                 for a, b, a_wins, b_wins in self.pairs]
        terms += [self.prior * 0.5 * (log_sigmoid(t) + log_sigmoid(-t)) for t in theta]
        return math.fsum(terms)

    def gradient_and_information(self, theta: list[float]) -> tuple[list[float], list[list[float]]]:
        """The gradient and the observed information (minus the Hessian), gauge-fixed.

        Without a prior the likelihood ignores a common shift of all strengths; adding 1/size
        to every entry of the information fixes that shift at zero for the Newton step
        without changing it elsewhere (the gradient sums to zero).
        """
        size = self.size
        gradient = [0.0] * size
        shift = 0.0 if self.prior else 1.0 / size
        information = [[shift] * size for _ in range(size)]
        for a, b, a_wins, b_wins in self.pairs:
            p = sigmoid(theta[a] - theta[b])
            residual = a_wins - (a_wins + b_wins) * p
            curvature = (a_wins + b_wins) * p * (1.0 - p)
            gradient[a] += residual
            gradient[b] -= residual
            information[a][a] += curvature
            information[b][b] += curvature
            information[a][b] -= curvature
            information[b][a] -= curvature
        for i, t in enumerate(theta):
            p = sigmoid(t)
            gradient[i] += self.prior * (0.5 - p)
            information[i][i] += self.prior * p * (1.0 - p)
        return gradient, information

    def fit(self) -> list[float]:
        theta = [0.0] * self.size
        for _ in range(self.MAX_STEPS):
            gradient, information = self.gradient_and_information(theta)
            step = solve(information, gradient)
            theta, moved = self.damped_step(theta, step)
            if moved < self.TOLERANCE:
                return theta
        raise ArithmeticError("Bradley-Terry fit did not converge")

    def damped_step(self, theta: list[float], step: list[float]) -> tuple[list[float], float]:
        """Take the Newton step, halved until the likelihood does not fall (it is concave)."""
        current = self.log_likelihood(theta)
        scale = 1.0
        while True:
            candidate = [t + scale * s for t, s in zip(theta, step, strict=True)]
            moved = scale * max(abs(s) for s in step)
            if self.log_likelihood(candidate) >= current or moved < self.TOLERANCE:
                return candidate, moved
            scale /= 2

    def centred_variances(self, theta: list[float]) -> list[float]:
        """Var(theta_i - mean theta) from the inverse observed information."""
        _, information = self.gradient_and_information(theta)
        covariance = invert(information)
        size = self.size
        row_means = [math.fsum(row) / size for row in covariance]
        grand_mean = math.fsum(row_means) / size
        return [covariance[i][i] - 2 * row_means[i] + grand_mean for i in range(size)]


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def log_sigmoid(x: float) -> float:
    if x >= 0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


def solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """x with matrix @ x = vector (Gaussian elimination with partial pivoting)."""
    return [row[0] for row in _eliminate(matrix, [[v] for v in vector])]


def invert(matrix: list[list[float]]) -> list[list[float]]:
    size = len(matrix)
    identity = [[1.0 if i == j else 0.0 for j in range(size)] for i in range(size)]
    return _eliminate(matrix, identity)


def _eliminate(matrix: list[list[float]], right: list[list[float]]) -> list[list[float]]:
    """Gauss-Jordan: reduce [matrix | right] until matrix is the identity; return right."""
    size = len(matrix)
    rows = [list(m) + list(r) for m, r in zip(matrix, right, strict=True)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(rows[r][col]))
        if rows[pivot][col] == 0.0:
            raise ArithmeticError("singular information matrix")
        rows[col], rows[pivot] = rows[pivot], rows[col]
        lead = rows[col][col]
        rows[col] = [value / lead for value in rows[col]]
        for r in range(size):
            factor = rows[r][col]
            if r != col and factor != 0.0:
                rows[r] = [value - factor * p for value, p in zip(rows[r], rows[col], strict=True)]
    return [row[size:] for row in rows]


# ----- solo ranking -----------------------------------------------------------------------
# Two-sided 95% quantiles of Student's t for 1 to 9 degrees of freedom; from 10 on the
# Cornish-Fisher expansion below is within 1e-5 of the exact value.
_T_95_SMALL = (12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624,
               2.306004, 2.262157)


def t_quantile_95(df: int) -> float:
    """The two-sided 95% quantile of Student's t with `df` degrees of freedom."""
    if df < 1:
        raise ValueError("the t distribution needs at least one degree of freedom")
    if df <= len(_T_95_SMALL):
        return _T_95_SMALL[df - 1]
    z = Z_95
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
            + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * df**4))


def mean_interval(values: Sequence[float]) -> Row:
    """Mean, sample standard deviation and 95% t interval (low/high null below two values)."""
    if not values:
        raise ValueError("a mean needs at least one value")
    n = len(values)
    mean = math.fsum(values) / n
    if n < 2:
        return {"mean": round(mean, DECIMALS), "stdev": None, "low": None, "high": None}
    stdev = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    margin = t_quantile_95(n - 1) * stdev / math.sqrt(n)
    return {"mean": round(mean, DECIMALS), "stdev": round(stdev, DECIMALS),
            "low": round(mean - margin, DECIMALS), "high": round(mean + margin, DECIMALS)}


def solo_ranking(results: Iterable[Result]) -> list[Row]:
    """Bots ranked by average score (best first), each with its 95% interval and games."""
    scores: dict[str, list[float]] = {}
    for result in results:
        check_result(result)
        for bot, score in zip(result["seats"], result["scores"], strict=True):
            scores.setdefault(bot, []).append(score)
    rows = [{"bot": bot, "games": len(values), **mean_interval(values)}
            for bot, values in scores.items()]
    return sorted(rows, key=lambda row: (-row["mean"], row["bot"]))


# ----- standings --------------------------------------------------------------------------
def standings(results: Iterable[Result]) -> dict[str, Any]:
    """The tournament table and cross-table; the same whatever order `results` come in.

    table rows (best first by points, then wins, then average score): bot, matches, points,
    wins (matches finished first alone), draws (first place shared with another seat),
    average_score, average_rank, faults, forfeits. cross_table[a][b]: a's pair score against
    b summed over their matches (1 for finishing ahead, 0.5 tied), so cross_table[a][b] +
    cross_table[b][a] = their meetings.
    """
    tally: dict[str, dict[str, Any]] = {}
    cross: dict[str, dict[str, Fraction]] = {}
    for result in results:
        add_to_tally(tally, result)
        for bot, other, score in pairwise(result):
            add_pair(cross, bot, other, Fraction(score))
            add_pair(cross, other, bot, 1 - Fraction(score))
    table = [table_row(bot, entry) for bot, entry in tally.items()]
    table.sort(key=lambda row: (-row["points"], -row["wins"], -row["average_score"], row["bot"]))
    cross_table = {bot: {other: float(cross[bot][other]) for other in sorted(cross[bot])}
                   for bot in sorted(cross)}
    return {"table": table, "cross_table": cross_table}


def add_to_tally(tally: dict[str, dict[str, Any]], result: Result) -> None:
    points = match_points(result)
    faults = result.get("faults", [0] * len(result["seats"]))
    forfeits = result.get("forfeits", [False] * len(result["seats"]))
    solo = len(result["seats"]) == 1
    for seat, bot in enumerate(result["seats"]):
        entry = tally.setdefault(bot, {"points": Fraction(0), "wins": 0, "draws": 0,
                                       "scores": [], "ranks": [], "faults": 0, "forfeits": 0})
        entry["points"] += points[seat]
        first = result["ranks"][seat] == 1 and not solo
        shared = result["ranks"].count(1) > 1
        entry["wins"] += int(first and not shared)
        entry["draws"] += int(first and shared)
        entry["scores"].append(result["scores"][seat])
        entry["ranks"].append(result["ranks"][seat])
        entry["faults"] += fault_count(faults[seat])
        entry["forfeits"] += int(bool(forfeits[seat]))


def fault_count(faults: int | list) -> int:
    """A seat's faults, given as a count or as the list of its fault records."""
    return len(faults) if isinstance(faults, list) else int(faults)


def add_pair(cross: dict[str, dict[str, Fraction]], bot: str, other: str, score: Fraction) -> None:
    row = cross.setdefault(bot, {})
    row[other] = row.get(other, Fraction(0)) + score


def table_row(bot: str, entry: dict[str, Any]) -> Row:
    matches = len(entry["scores"])
    return {
        "bot": bot,
        "matches": matches,
        "points": round(float(entry["points"]), DECIMALS),
        "wins": entry["wins"],
        "draws": entry["draws"],
        "average_score": round(math.fsum(entry["scores"]) / matches, DECIMALS),
        "average_rank": round(math.fsum(entry["ranks"]) / matches, DECIMALS),
        "faults": entry["faults"],
        "forfeits": entry["forfeits"],
    }
