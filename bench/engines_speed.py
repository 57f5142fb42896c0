"""Engine speed on one core: decisions per second (legal_actions + apply) and random games per
second, for every registered game, mode and player count.

    python3 bench/engines_speed.py [--seconds 3] [--quick]

The process is pinned to one core (where the OS allows it). No goal: these figures are the
floor under every other benchmark (a decision of a match costs at least this much).
"""

import argparse
import os
import random
import time

import _support

import engines


def measure(game: engines.Game, variant: dict, seconds: float) -> tuple[float, float]:
    """Play random games for about `seconds`; return (decisions/s, games/s)."""
    chooser = random.Random(0)
    decisions = games = 0
    start = time.perf_counter()
    seed = 0
    while time.perf_counter() - start < seconds:
        state = game.new_game(variant["num_players"], seed, variant["options"])
        while not game.is_over(state):
            state = game.apply(state, chooser.choice(game.legal_actions(state)))
            decisions += 1
        games += 1
        seed += 1
    elapsed = time.perf_counter() - start
    return decisions / elapsed, games / elapsed


def pin_to_one_core() -> str:
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned"
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    return f"pinned to core {core}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time per configuration")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.seconds = 0.02
    _support.header("engine speed, random play", "none (measured, the floor of the others)")
    print(pin_to_one_core())
    print(f"{'game':10} {'players':>7} {'options':24} {'decisions/s':>12} {'games/s':>9}  load")
    for name in engines.names():
        game = engines.get(name)
        for variant in game.variants():
            per_decision, per_game = measure(game, variant, args.seconds)
            options = ",".join(f"{k}={v}" for k, v in sorted(variant["options"].items())) or "-"
            print(f"{name:10} {variant['num_players']:>7} {options:24} "
                  f"{per_decision:>12,.0f} {per_game:>9,.1f}  {_support.load()}")


if __name__ == "__main__":
    main()
