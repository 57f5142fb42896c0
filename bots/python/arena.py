"""An in-process arena: bots' `choose` functions play each other with no HTTP, to measure
a heuristic against the random bot quickly.

    python3 -m bots.python.arena --game aladino --games 200
    python3 -m bots.python.arena --game aldabas --players 1 --options '{"mode": "solo"}'

Each bot sees exactly what it would see over HTTP: `game.observation(state, seat)` and
the legal actions. Seats alternate between games so neither bot keeps the first move.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

import engines

from .sdk import Choose

MakeChoose = Callable[[int | None], Choose]
MAX_DECISIONS = 20_000


def play(game: engines.Game, chooses: list[Choose], seed: int, options: dict | None = None,
         num_players: int | None = None) -> dict:
    """Play one match in which seat i is decided by `chooses[i]`; returns the result."""
    state = game.new_game(num_players or len(chooses), seed, options or {})
    for _ in range(MAX_DECISIONS):
        seat = game.current_seat(state)
        if seat is None:
            return game.result(state)
        observation = game.observation(state, seat)  # its legal actions included
        state = game.apply(state, chooses[seat](observation, observation["legal_actions"]))
    raise RuntimeError(f"{game.name} seed {seed} did not finish in {MAX_DECISIONS} decisions")


@dataclass
class Tally:
    """How the hero fared against the villain over a series of 2-player matches."""

    games: int = 0
    wins: int = 0
    ties: int = 0
    hero_scores: list[float] = field(default_factory=list)
    villain_scores: list[float] = field(default_factory=list)

    @property
    def losses(self) -> int:
        return self.games - self.wins - self.ties

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    def summary(self) -> dict:
        return {
            "games": self.games, "wins": self.wins, "ties": self.ties, "losses": self.losses,
            "win_rate": round(self.win_rate, 3),
            "hero_mean_score": round(statistics.fmean(self.hero_scores), 2),
            "villain_mean_score": round(statistics.fmean(self.villain_scores), 2),
        }


def duel(game: engines.Game, hero: MakeChoose, villain: MakeChoose, games: int,
         first_seed: int = 0, options: dict | None = None) -> Tally:
    """`games` 2-player matches, seeds first_seed.., the hero in seat 0 on even seeds."""
    tally = Tally()
    for seed in range(first_seed, first_seed + games):
        hero_seat = seed % 2
        chooses = [villain(seed), villain(seed)]
        chooses[hero_seat] = hero(seed)
        result = play(game, chooses, seed, options)
        ranks, scores = result["ranks"], result["scores"]
        tally.games += 1
        tally.wins += ranks[hero_seat] < ranks[1 - hero_seat]
        tally.ties += ranks[hero_seat] == ranks[1 - hero_seat]
        tally.hero_scores.append(scores[hero_seat])
        tally.villain_scores.append(scores[1 - hero_seat])
    return tally


def solo_scores(game: engines.Game, bot: MakeChoose, games: int, first_seed: int = 0,
                options: dict | None = None) -> list[float]:
    """The scores of `games` one-seat matches (e.g. solo Aldabas), seeds first_seed.."""
    return [
        play(game, [bot(seed)], seed, options, num_players=1)["scores"][0]
        for seed in range(first_seed, first_seed + games)
    ]


def bot_factory(module: str) -> MakeChoose:
    """`make_choose` of an example bot module: "random_bot" or "<game>_bot"."""
    return importlib.import_module(f"{__package__}.{module}").make_choose


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="measure a bot against the random bot")
    parser.add_argument("--game", required=True, choices=engines.names())
    parser.add_argument("--bot", default=None, help="bot module (default: <game>_bot)")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--players", type=int, default=2, choices=(1, 2))
    parser.add_argument("--options", type=json.loads, default={},
                        help='game options as JSON, e.g. \'{"mode": "solo"}\'')
    args = parser.parse_args(argv)
    game = engines.get(args.game)
    hero = bot_factory(args.bot or f"{args.game}_bot")
    options = args.options
    if args.players == 1:
        figures = {
            bot: statistics.fmean(solo_scores(game, make, args.games, args.first_seed, options))
            for bot, make in (("heuristic", hero), ("random", bot_factory("random_bot")))
        }
        print(json.dumps({"game": args.game, "games": args.games, "mean_score": figures}))
        return 0
    tally = duel(game, hero, bot_factory("random_bot"), args.games, args.first_seed, options)
    print(json.dumps({"game": args.game, **tally.summary()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
