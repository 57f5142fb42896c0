"""Weng-Lin Bayesian ratings (openskill): a bot's skill as a Gaussian `mu` ± `sigma`, updated
by each rated result of any number of seats, with ties as ties and a forfeiter last (as
its result ranks it). The ladder's standings and the leaderboards' `mu`, `sigma` and
`ordinal` (mu - 3 sigma: the skill the bot has with 99.7% confidence) come from here.

The model is openskill's Bradley-Terry (full pairing) with tau 0, chosen on the back-test
of `bench/ratings_backtest.py` and the ladder simulation of `bench/ladder.py`
(docs/ratings.md): on 5,000 recorded 3- and 4-player matches it predicts within noise of
the best openskill setting, better than the live Elo, and it orders a ladder of 100 bots
the quickest (Plackett-Luce needs twice the matches with 4 players).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, NamedTuple

from openskill.models import BradleyTerryFull

MODEL = "openskill Bradley-Terry (full pairing)"
MU = 25.0
SIGMA = MU / 3
BETA = MU / 6  # the spread of one match's performance around a bot's skill
TAU = 0.0  # sigma added before each match: none, a program does not drift (a new version
# widens sigma: tournament.ladders.NEW_VERSION_SIGMA); the back-test measured tau = 25/300
# costing 0.010 per match of ranking log-likelihood
DECIMALS = 3


class Skill(NamedTuple):
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma

    def shown(self) -> dict[str, float]:
        """`mu`, `sigma` and `ordinal`, rounded as the API shows them."""
        return {"mu": round(self.mu, DECIMALS), "sigma": round(self.sigma, DECIMALS),
                "ordinal": round(self.ordinal, DECIMALS)}


INITIAL = Skill(MU, SIGMA)


@cache
def model() -> Any:
    return BradleyTerryFull(mu=MU, sigma=SIGMA, beta=BETA, tau=TAU)


def rate(before: Mapping[str, Skill], seats: Sequence[str], ranks: Sequence[int]
         ) -> dict[str, Skill]:
    """The new skill of every bot of a result (`seats` by bot, their `ranks`, 1 best);
    bots absent from `before` start at INITIAL. A bot holding several seats gets the sum
    of its seats' changes of mu and the smallest of their sigmas."""
    teams = [[model().rating(*before.get(bot, INITIAL))] for bot in seats]
    rated = model().rate(teams, ranks=list(ranks))
    after: dict[str, Skill] = {}
    for bot, (rating,) in zip(seats, rated, strict=True):
        old = before.get(bot, INITIAL)
        mu = after[bot].mu if bot in after else old.mu
        sigma = min(after[bot].sigma, rating.sigma) if bot in after else rating.sigma
        after[bot] = Skill(mu + rating.mu - old.mu, sigma)
    return after


def match_quality(skills: Sequence[Skill]) -> float:
    """How much a match of these skills would tell (openskill's draw probability: 1 when
    every seat is as likely to win, near 0 when one is sure to)."""
    return float(model().predict_draw([[model().rating(*skill)] for skill in skills]))
