"""Which rating model predicts our multiplayer results best (issue 28): a back-test on
recorded 3- and 4-player matches of bots of known strength.

    python3 bench/ratings_backtest.py [--matches 5000] [--seed 1] [--quick]

Eight bots play Aladino: bot k plays the greedy bot's move (`bots.python.aladino_bot`)
with probability p_k (0, 1/7, ..., 1) and a uniformly random legal move otherwise, each
with its own seeded generator; every match seats 3 or 4 of them (seeded), played in-process
on the engine, once: every model and parameter below is fitted on the same matches.

Held out: the models are fitted on the first 80% of the matches in the order played, then
frozen, and judged on the last 20%:
- pairwise log-likelihood: the mean over the seat pairs of a match with different ranks
  of log P(the better-ranked seat beats the other), as the model predicts it;
- pairwise accuracy: the share of those pairs the model puts the right way round (a tie
  of the prediction counts a half);
- ranking log-likelihood: the mean over the matches of log P(the observed ranking), built
  from the same pair predictions for every model as a Plackett-Luce ranking (the winner
  is drawn among the seats, then the second among the rest, ...): at each draw a seat's
  worth is the mean, over the seats still in, of the model's log-odds of it beating each
  of them (for Elo, the Bradley-Terry fit and openskill's Plackett-Luce, whose pair odds
  are a ratio of worths, this is exactly the Plackett-Luce model of those worths). A tie
  counts as every order of the tied seats (their probabilities summed). No skill (every
  order equally likely) scores -log(n!/ties) per match; higher is better;
- Kendall tau of the final order against the known strengths.

How a model predicts a pair: Elo and the tournament Bradley-Terry fit by the logistic of
the Elo difference. openskill's models two ways: its `predict_win` (the normal CDF of the
mu difference over c = sqrt(2 beta^2 + sigma_a^2 + sigma_b^2), whatever the model), and
by the model's own likelihood, the one its updates fit ([own]: Thurstone-Mosteller, the
same; Bradley-Terry, the logistic of the mu difference over that c; Plackett-Luce, the
logistic over its c of the whole match, sqrt(sum over the match's seats of sigma^2 +
beta^2)). The grid and the choice use the own likelihood.

Tuning, on the training matches alone: each openskill model's beta and tau over a grid
(and the live Elo's K), scored by the prequential ranking log-likelihood of the first 80%:
every training match predicted from the ratings before it (from the prior on), then
counted; the mean over the matches, which rewards learning fast as well as predicting
well once learnt (also shown over the first 200 matches alone, about 90 per bot). The
setting of each model with the best score is its best; the best of the three openskill
models is the one chosen. Differences are given with their standard error (paired: the
same matches scored by both).
Models: openskill's Plackett-Luce, Thurstone-Mosteller (full pairing) and Bradley-Terry
(full pairing), updated match by match; the live pairwise Elo (`tournament.ratings`,
K=32); the tournament Bradley-Terry maximum-likelihood fit of all the training matches.
"""

from __future__ import annotations

import argparse
import functools
import math
import multiprocessing
import random
import time
from collections.abc import Callable, Sequence
from itertools import combinations, permutations, product
from typing import Any, NamedTuple, Protocol

import _support
from openskill.models import BradleyTerryFull, PlackettLuce, ThurstoneMostellerFull

import engines
from bots.python import aladino_bot
from tournament import ratings, skill

GAME = "aladino"
BOTS = 8
STRENGTHS = [k / (BOTS - 1) for k in range(BOTS)]
TRAIN_SHARE = 0.8
EARLY = 200  # the first training matches, scored apart: how fast a model learns
MU = 25.0
BETAS = (MU / 24, MU / 12, MU / 6, MU / 3, MU / 2, MU)  # openskill's default: MU / 6
TAUS = (0.0, MU / 300)  # openskill's default: MU / 300
ELO_KS = (8.0, 16.0, 32.0, 64.0)  # the live Elo's: 32
MODELS = (("openskill Plackett-Luce", PlackettLuce),
          ("openskill Thurstone-Mosteller", ThurstoneMostellerFull),
          ("openskill Bradley-Terry", BradleyTerryFull))
Predict = Callable[[str, str, Sequence[str]], float]  # P(a beats b in a match of these seats)
Result = dict[str, Any]


def play(job: tuple[int, list[int]]) -> Result:
    """One match (its seed, the bots seated): the result as `tournament.ratings` reads it."""
    seed, seated = job
    engine = engines.get(GAME)
    state = engine.new_game(num_players=len(seated), seed=seed, options={})
    greedy = aladino_bot.make_choose()
    rngs = [random.Random(f"{seed}/{bot}") for bot in seated]
    while (seat := engine.current_seat(state)) is not None:
        observation = engine.observation(state, seat)
        legal = observation["legal_actions"]
        rng = rngs[seat]
        action = (greedy(observation, legal) if rng.random() < STRENGTHS[seated[seat]]
                  else rng.choice(legal))
        state = engine.apply(state, action)
    result = engine.result(state)
    return {"seats": [f"p{bot}" for bot in seated], "ranks": result["ranks"],
            "scores": result["scores"]}


def record(matches: int, seed: int) -> list[Result]:
    """The matches, played on every core (each one from its own seed)."""
    draw = random.Random(seed)
    jobs = [(seed * 1_000_003 + n, draw.sample(range(BOTS), draw.choice((3, 4))))
            for n in range(matches)]
    with multiprocessing.Pool() as pool:
        return pool.map(play, jobs, chunksize=16)


# ----- the models ----------------------------------------------------------------------------
class Online(Protocol):
    """A rating updated match by match."""

    def update(self, result: Result) -> None: ...
    def predict(self, a: str, b: str, seats: Sequence[str]) -> float: ...
    def scores(self) -> dict[str, float]: ...


def logistic(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


class OpenSkill:
    """An openskill model (ties as ties); `link` "own" or "predict_win" (see above)."""

    def __init__(self, model_class: type, beta: float, tau: float, link: str = "own"):
        self.model = model_class(beta=beta, tau=tau)
        self.rated: dict[str, Any] = {}
        own: dict[type, Predict] = {PlackettLuce: self.match_logistic,
                                    BradleyTerryFull: self.logistic}
        self.pair = self.predict_win if link == "predict_win" else own.get(model_class,
                                                                          self.predict_win)

    def rating(self, bot: str) -> Any:
        return self.rated.get(bot) or self.model.rating(name=bot)

    def update(self, result: Result) -> None:
        teams = [[self.rating(bot)] for bot in result["seats"]]
        for team in self.model.rate(teams, ranks=list(result["ranks"])):
            self.rated[team[0].name] = team[0]

    def predict(self, a: str, b: str, seats: Sequence[str]) -> float:
        return self.pair(a, b, seats)

    def predict_win(self, a: str, b: str, seats: Sequence[str]) -> float:
        return self.model.predict_win([[self.rating(a)], [self.rating(b)]])[0]

    def logistic(self, a: str, b: str, seats: Sequence[str]) -> float:
        first, second = self.rating(a), self.rating(b)
        c = math.sqrt(2 * self.model.beta ** 2 + first.sigma ** 2 + second.sigma ** 2)
        return logistic((first.mu - second.mu) / c)

    def match_logistic(self, a: str, b: str, seats: Sequence[str]) -> float:
        c = math.sqrt(sum(self.rating(bot).sigma ** 2 + self.model.beta ** 2
                          for bot in seats))
        return logistic((self.rating(a).mu - self.rating(b).mu) / c)

    def scores(self) -> dict[str, float]:
        return {bot: rating.ordinal() for bot, rating in self.rated.items()}


class Elo:
    """The live pairwise Elo of `tournament.ratings` with factor `k`."""

    def __init__(self, k: float):
        self.k = k
        self.elo: dict[str, float] = {}

    def update(self, result: Result) -> None:
        self.elo.update(ratings.elo_update(self.elo, result, self.k))

    def predict(self, a: str, b: str, seats: Sequence[str]) -> float:
        return elo_expected(self.elo, a, b)

    def scores(self) -> dict[str, float]:
        return self.elo


class Fitted:
    """The tournament Bradley-Terry maximum-likelihood fit (not online: `fit` only)."""

    def __init__(self, train: Sequence[Result]):
        self.fitted = {row["bot"]: row["rating"] for row in ratings.bradley_terry(train)}

    def predict(self, a: str, b: str, seats: Sequence[str]) -> float:
        return elo_expected(self.fitted, a, b)

    def scores(self) -> dict[str, float]:
        return self.fitted


def elo_expected(elo: dict[str, float], a: str, b: str) -> float:
    return ratings.expected(elo.get(a, ratings.INITIAL_RATING),
                            elo.get(b, ratings.INITIAL_RATING))


def fit(make: Callable[[], Online], train: Sequence[Result]) -> Online:
    model = make()
    for result in train:
        model.update(result)
    return model


def prequential(make: Callable[[], Online], matches: Sequence[Result]) -> list[float]:
    """The ranking log-likelihood of each match predicted from the ratings before it."""
    model = make()
    scored = []
    for result in matches:
        scored.append(ranking_log_likelihood(model.predict, result["seats"], result["ranks"]))
        model.update(result)
    return scored


# ----- judging -------------------------------------------------------------------------------
class Judged(NamedTuple):
    pair_log_likelihood: float  # mean per pair of seats with different ranks
    pair_accuracy: float
    rank_log_likelihood: float  # mean per match
    kendall_tau: float
    per_match: list[float]  # the ranking log-likelihood of each match judged


def clamp(p: float) -> float:
    return min(max(p, 1e-12), 1 - 1e-12)


def ranking_log_likelihood(predict: Predict, seats: Sequence[str],
                           ranks: Sequence[int]) -> float:
    """log P(the observed ranking): a Plackett-Luce draw of the winner, then of the second
    among the rest, ..., each seat's worth among those left the mean of the model's log-odds
    of it beating each of them; tied seats in any order (summed)."""
    logit = {}
    for a, b in permutations(range(len(seats)), 2):
        p = clamp(predict(seats[a], seats[b], seats))
        logit[a, b] = math.log(p / (1 - p))
    groups = [[seat for seat in range(len(seats)) if ranks[seat] == rank]
              for rank in sorted(set(ranks))]
    total = 0.0
    for order in product(*(permutations(group) for group in groups)):
        left = [seat for group in order for seat in group]
        log_p = 0.0
        while len(left) > 1:
            worth = [sum(logit[i, j] for j in left if j != i) / len(left) for i in left]
            top = max(worth)
            log_p += worth[0] - top - math.log(sum(math.exp(w - top) for w in worth))
            left = left[1:]
        total += math.exp(log_p)
    return math.log(total)


def no_skill_log_likelihood(ranks: Sequence[int]) -> float:
    """log P(the ranking) when every order of the seats is equally likely."""
    ways = math.prod(math.factorial(ranks.count(rank)) for rank in set(ranks))
    return math.log(ways / math.factorial(len(ranks)))


def judge(model: Online | Fitted, test: Sequence[Result]) -> Judged:
    """The frozen model's figures on the held-out matches."""
    log_likelihood = right = 0.0
    pairs = 0
    for result in test:
        seats = result["seats"]
        for (a, rank_a), (b, rank_b) in combinations(zip(seats, result["ranks"],
                                                         strict=True), 2):
            if rank_a == rank_b:
                continue
            winner, loser = (a, b) if rank_a < rank_b else (b, a)
            p = clamp(model.predict(winner, loser, seats))
            log_likelihood += math.log(p)
            right += 1.0 if p > 0.5 else 0.5 if p == 0.5 else 0.0
            pairs += 1
    per_match = [ranking_log_likelihood(model.predict, result["seats"], result["ranks"])
                 for result in test]
    return Judged(log_likelihood / pairs, right / pairs, mean(per_match),
                  kendall_tau(model.scores()), per_match)


def kendall_tau(scores: dict[str, float]) -> float:
    """Kendall's tau of the bots' scores against their known strengths (p)."""
    bots = sorted(scores)
    concordant = discordant = 0
    for a, b in combinations(bots, 2):
        truth = STRENGTHS[int(a[1:])] - STRENGTHS[int(b[1:])]
        seen = scores[a] - scores[b]
        if truth * seen > 0:
            concordant += 1
        elif truth * seen < 0:
            discordant += 1
    return (concordant - discordant) / (len(bots) * (len(bots) - 1) / 2)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def paired(first: Sequence[float], second: Sequence[float]) -> str:
    """second minus first, per match, ± its standard error (the same matches by both)."""
    differences = [b - a for a, b in zip(first, second, strict=True)]
    average = mean(differences)
    spread = sum((d - average) ** 2 for d in differences) / max(len(differences) - 1, 1)
    return f"{average:+.4f} ± {math.sqrt(spread / len(differences)):.4f}"


# ----- printing ------------------------------------------------------------------------------
HEAD = f"{'pair log-lik':>12} {'pair accuracy':>13} {'rank log-lik':>12} {'kendall tau':>11}"
NAME = 40


def figures(judged: Judged) -> str:
    return (f"{judged.pair_log_likelihood:>12.4f} {judged.pair_accuracy:>13.4f} "
            f"{judged.rank_log_likelihood:>12.4f} {judged.kendall_tau:>11.3f}")


def fraction(value: float) -> str:
    """A parameter as a fraction of MU where it is one (25/6), else the number."""
    if value == 0:
        return "0"
    share = MU / value
    return f"25/{share:g}" if abs(share - round(share)) < 1e-9 else f"{value:g}"


class Setting(NamedTuple):
    name: str
    beta: str
    tau: str
    online: list[float]  # prequential ranking log-likelihood of each training match
    held_out: Judged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.matches = 120
    _support.header(f"rating models back-tested on {args.matches:,} 3- and 4-player "
                    f"{GAME} matches of {BOTS} bots of known strength",
                    "the ladder's default: the openskill model and parameters that predict "
                    "best (measured); whether Elo beats them, and by how much")
    started = time.perf_counter()
    results = record(args.matches, args.seed)
    cut = int(len(results) * TRAIN_SHARE)
    train, test = results[:cut], results[cut:]
    early = min(EARLY, len(train))
    print(f"recorded {len(results):,} matches in {_support.elapsed(started):.1f} s "
          f"({sum(len(r['seats']) == 4 for r in results):,} of 4 players, "
          f"{sum(len(set(r['ranks'])) < len(r['ranks']) for r in results):,} with a tie); "
          f"fitted on the first {len(train):,}, judged on the last {len(test):,}  "
          f"{_support.load()}")
    started = time.perf_counter()

    print("\ndefault parameters (openskill beta 25/6, tau 25/300; Elo K=32), held out:")
    print(f"{'model':<{NAME}} {HEAD}")
    defaults: list[tuple[str, Judged]] = []
    for name, model_class in MODELS:
        links = ("predict_win",) if model_class is ThurstoneMostellerFull else (
            "predict_win", "own")
        for link in links:
            model = fit(functools.partial(OpenSkill, model_class, MU / 6, MU / 300, link),
                        train)
            defaults.append((f"{name} [{link}]" if len(links) > 1 else name,
                             judge(model, test)))
    live = judge(fit(functools.partial(Elo, ratings.K_FACTOR), train), test)
    defaults.append(("pairwise Elo (live, K=32)", live))
    defaults.append(("tournament Bradley-Terry fit", judge(Fitted(train), test)))
    for name, judged in defaults:
        print(f"{name:<{NAME}} {figures(judged)}")
    no_skill = mean([no_skill_log_likelihood(r["ranks"]) for r in test])
    print(f"{'no skill (every order equally likely)':<{NAME}} {math.log(0.5):>12.4f} "
          f"{0.5:>13.4f} {no_skill:>12.4f}")

    print(f"\ngrid, openskill by its own likelihood: prequential rank log-lik of the "
          f"{len(train):,} training matches (all; the first {early}), then fitted on them "
          f"and judged on the last {len(test):,}")
    print(f"{'model':<{NAME - 11}} {'beta':>6} {'tau':>6} {'online':>8} {'first':>8} "
          f"{HEAD}")
    grid: list[Setting] = []
    makers: list[tuple[str, str, str, Callable[[], Online]]] = [
        (name, fraction(beta), fraction(tau), functools.partial(OpenSkill, model_class, beta,
                                                                tau))
        for name, model_class in MODELS for beta in BETAS for tau in TAUS]
    makers += [("pairwise Elo", f"K={k:g}", "", functools.partial(Elo, k)) for k in ELO_KS]
    for name, beta, tau, make in makers:
        setting = Setting(name, beta, tau, prequential(make, train),
                          judge(fit(make, train), test))
        grid.append(setting)
        print(f"{name:<{NAME - 11}} {beta:>6} {tau:>6} {mean(setting.online):>8.4f} "
              f"{mean(setting.online[:early]):>8.4f} {figures(setting.held_out)}")
    print(f"(grid of {len(makers)} in {_support.elapsed(started):.1f} s)  {_support.load()}")

    best_of: dict[str, Setting] = {}
    for setting in grid:
        if setting.name not in best_of or mean(setting.online) > mean(
                best_of[setting.name].online):
            best_of[setting.name] = setting
    chosen = max((best_of[name] for name, _ in MODELS), key=lambda s: mean(s.online))
    ladder = next(s for s in grid if s.name == skill_name() and s.beta == fraction(skill.BETA)
                  and s.tau == fraction(skill.TAU))
    steady = next(s for s in grid if s.name == skill_name() and s.beta == fraction(skill.BETA)
                  and s.tau == "0")
    live_setting = next(s for s in grid if s.name == "pairwise Elo"
                        and s.beta == f"K={ratings.K_FACTOR:g}")
    print(f"\neach model's best (by online rank log-lik), and the ladder's setting now; "
          f"differences from the chosen {chosen.name} {chosen.beta} {chosen.tau} "
          f"(rank log-lik per match, ± 1 standard error)")
    print(f"{'model':<{NAME - 11}} {'beta':>6} {'tau':>6} {'online':>8} {'difference':>17} "
          f"{'held-out rank':>13} {'difference':>17} {'kendall tau':>11}")
    for label, setting in [*((s.name, s) for s in best_of.values()),
                           ("the ladder now", ladder), ("the ladder's, with tau 0", steady),
                           ("pairwise Elo (live)", live_setting)]:
        print(f"{label:<{NAME - 11}} {setting.beta:>6} {setting.tau:>6} "
              f"{mean(setting.online):>8.4f} {paired(chosen.online, setting.online):>17} "
              f"{setting.held_out.rank_log_likelihood:>13.4f} "
              f"{paired(chosen.held_out.per_match, setting.held_out.per_match):>17} "
              f"{setting.held_out.kendall_tau:>11.3f}")
    print(f"best openskill model: {chosen.name}, beta {chosen.beta}, tau {chosen.tau}: online "
          f"rank log-lik {mean(chosen.online):.4f}, held out "
          f"{chosen.held_out.rank_log_likelihood:.4f} (pair log-lik "
          f"{chosen.held_out.pair_log_likelihood:.4f})")
    for label, setting in (("pairwise Elo (live, K=32)", live_setting),
                           (f"pairwise Elo (best K, {best_of['pairwise Elo'].beta})",
                            best_of["pairwise Elo"])):
        ahead = mean(setting.online) > mean(chosen.online)
        print(f"{label} {'beats' if ahead else 'does not beat'} it: online "
              f"{paired(chosen.online, setting.online)}, held out "
              f"{paired(chosen.held_out.per_match, setting.held_out.per_match)} per match; "
              f"pair log-lik held out "
              f"{setting.held_out.pair_log_likelihood - chosen.held_out.pair_log_likelihood:+.4f}"
              f" (Elo minus openskill)")
    print(f"the ladder now: {skill.MODEL}, beta {fraction(skill.BETA)}, tau "
          f"{fraction(skill.TAU)}  {_support.load()}")


def skill_name() -> str:
    """The name in MODELS of the model `tournament.skill` uses."""
    return next(name for name, model_class in MODELS
                if isinstance(skill.model(), model_class))


if __name__ == "__main__":
    main()
