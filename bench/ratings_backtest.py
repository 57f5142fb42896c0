"""Which rating model predicts our multiplayer results best (issue 28): a back-test on
recorded 3- and 4-player matches of bots of known strength.

    python3 bench/ratings_backtest.py [--matches 5000] [--seed 1] [--quick]

Eight bots play Aladino: bot k plays the greedy bot's move (`bots.python.aladino_bot`)
with probability p_k (0, 1/7, ..., 1) and a uniformly random legal move otherwise, each
with its own seeded generator; every match seats 3 or 4 of them (seeded), played in-process
on the engine. The models are fitted on the first 80% of the matches in the order played,
then frozen, and judged on the last 20%:
- pairwise log-likelihood: the mean over the seat pairs of a match with different ranks
  of log P(the better-ranked seat beats the other), as the model predicts it (openskill's
  `predict_win` for two players; the logistic of the Elo difference for Elo and the
  tournament Bradley-Terry fit, the same model on the Elo scale);
- pairwise accuracy: the share of those pairs the model puts the right way round (a tie
  of the prediction counts a half);
- Kendall tau of the final order against the known strengths.
Models: openskill's Plackett-Luce, Thurstone-Mosteller (full pairing) and Bradley-Terry
(full pairing), updated match by match; the live pairwise Elo (`tournament.ratings`,
K=32); the tournament Bradley-Terry maximum-likelihood fit of all the training matches.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import time
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

import _support
from openskill.models import BradleyTerryFull, PlackettLuce, ThurstoneMostellerFull

import engines
from bots.python import aladino_bot
from tournament import ratings

GAME = "aladino"
BOTS = 8
STRENGTHS = [k / (BOTS - 1) for k in range(BOTS)]
TRAIN_SHARE = 0.8
Predict = Callable[[str, str], float]  # P(first beats second)


def play(job: tuple[int, list[int]]) -> dict[str, Any]:
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


def record(matches: int, seed: int) -> list[dict[str, Any]]:
    """The matches, played on every core (each one from its own seed)."""
    draw = random.Random(seed)
    jobs = [(seed * 1_000_003 + n, draw.sample(range(BOTS), draw.choice((3, 4))))
            for n in range(matches)]
    with multiprocessing.Pool() as pool:
        return pool.map(play, jobs, chunksize=16)


def openskill_predictor(model: Any, train: Sequence[dict[str, Any]]) -> tuple[Predict, dict]:
    """`model` updated match by match on `train` (ties as ties): its pair prediction and
    its ordinals."""
    rated: dict[str, Any] = {}
    for result in train:
        teams = [[rated.get(bot) or model.rating(name=bot)] for bot in result["seats"]]
        for team in model.rate(teams, ranks=list(result["ranks"])):
            rated[team[0].name] = team[0]

    def predict(a: str, b: str) -> float:
        first, second = (rated.get(bot) or model.rating(name=bot) for bot in (a, b))
        return model.predict_win([[first], [second]])[0]

    return predict, {bot: rating.ordinal() for bot, rating in rated.items()}


def elo_predictor(elo: dict[str, float]) -> Predict:
    def predict(a: str, b: str) -> float:
        return ratings.expected(elo.get(a, ratings.INITIAL_RATING),
                                elo.get(b, ratings.INITIAL_RATING))
    return predict


def judge(predict: Predict, test: Sequence[dict[str, Any]]) -> tuple[float, float]:
    """(mean pairwise log-likelihood, pairwise accuracy) on the held-out matches."""
    log_likelihood = right = 0.0
    pairs = 0
    for result in test:
        for (a, rank_a), (b, rank_b) in combinations(zip(result["seats"], result["ranks"],
                                                         strict=True), 2):
            if rank_a == rank_b:
                continue
            winner, loser = (a, b) if rank_a < rank_b else (b, a)
            p = min(max(predict(winner, loser), 1e-12), 1 - 1e-12)
            log_likelihood += math.log(p)
            right += 1.0 if p > 0.5 else 0.5 if p == 0.5 else 0.0
            pairs += 1
    return log_likelihood / pairs, right / pairs


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
                    "the ladder's default: the openskill model that predicts best (measured)")
    started = time.perf_counter()
    results = record(args.matches, args.seed)
    cut = int(len(results) * TRAIN_SHARE)
    train, test = results[:cut], results[cut:]
    print(f"recorded {len(results):,} matches in {_support.elapsed(started):.1f} s "
          f"({sum(len(r['seats']) == 4 for r in results):,} of 4 players); fitted on the "
          f"first {len(train):,}, judged on the last {len(test):,}  {_support.load()}")
    rows = []
    for name, model in (("openskill Plackett-Luce", PlackettLuce()),
                        ("openskill Thurstone-Mosteller", ThurstoneMostellerFull()),
                        ("openskill Bradley-Terry", BradleyTerryFull())):
        predict, ordinals = openskill_predictor(model, train)
        rows.append((name, *judge(predict, test), kendall_tau(ordinals)))
    elo = ratings.elo_replay(train)
    rows.append(("pairwise Elo (live, K=32)", *judge(elo_predictor(elo), test),
                 kendall_tau(elo)))
    fitted = {row["bot"]: row["rating"] for row in ratings.bradley_terry(train)}
    rows.append(("tournament Bradley-Terry fit", *judge(elo_predictor(fitted), test),
                 kendall_tau(fitted)))
    print(f"{'model':<30} {'pair log-lik':>12} {'pair accuracy':>13} {'kendall tau':>11}")
    for name, log_likelihood, accuracy, tau in rows:
        print(f"{name:<30} {log_likelihood:>12.4f} {accuracy:>13.4f} {tau:>11.3f}")
    best = max(rows[:3], key=lambda row: row[1])
    print(f"best openskill model by log-likelihood: {best[0]}; best of all: "
          f"{max(rows, key=lambda row: row[1])[0]}  {_support.load()}")


if __name__ == "__main__":
    main()
