"""Engine speed on one core: decisions per second (legal_actions + apply) and random games per
second, for every registered game, mode and player count, side by side with OpenSpiel's own
Python tic-tac-toe (`python_tic_tac_toe`, open_spiel/python/games/tic_tac_toe.py).

    python3 bench/engines_speed.py [--seconds 3] [--quick]

Goal (issue 30): every setup at least as fast as tic-tac-toe in random playouts. Each setup
and tic-tac-toe take turns in short slices on the same pinned core, so both see the same
load; a setup's ratio is against the tic-tac-toe slices played beside it. Time is this
process's CPU time: the time the shared machine gives other processes does not count.

The comparison: both loops ask for the legal actions, pick one with a seeded
`random.Random`, apply it and start a new game when one ends. Our `apply` is pure (a new
state per decision, the old one unchanged); tic-tac-toe's reference loop is its natural one,
`state.apply_action`, which changes the state in place and copies nothing. Its pure
equivalent, `state.child(action)` (a copy per decision, like ours), is printed too but is
not the reference: it would handicap tic-tac-toe.
"""

import argparse
import os
import random
import time
from collections.abc import Callable, Iterator

import _support
import open_spiel.python.games  # noqa: F401  (registers python_tic_tac_toe)
import pyspiel

import engines
from engines.types import Variant

SLICE_SECONDS = 0.25
"""How long one side plays before the other takes its turn."""
Playouts = Callable[[float], tuple[int, int]]
"""Plays whole random games until `seconds` have passed; returns (decisions, games)."""


def engine_playouts(game: engines.Game, variant: Variant) -> Playouts:
    """Random games of one setup, seeds 0, 1, 2, ... across calls."""
    chooser = random.Random(0)
    seeds = iter(range(2**63))

    def play(seconds: float) -> tuple[int, int]:
        decisions = games = 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            state = game.new_game(variant["num_players"], next(seeds), variant["options"])
            while not game.is_over(state):
                state = game.apply(state, chooser.choice(game.legal_actions(state)))
                decisions += 1
            games += 1
        return decisions, games

    return play


def tic_tac_toe_playouts(pure: bool = False) -> Playouts:
    """Random games of OpenSpiel's Python tic-tac-toe: `apply_action` in place, or with
    `pure`, `child` (a new state per decision, as our `apply` gives). Two loops, so that the
    reference pays for no test of `pure`."""
    game = pyspiel.load_game("python_tic_tac_toe")
    chooser = random.Random(0)

    def in_place(seconds: float) -> tuple[int, int]:
        decisions = games = 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            state = game.new_initial_state()
            while not state.is_terminal():
                state.apply_action(chooser.choice(state.legal_actions()))
                decisions += 1
            games += 1
        return decisions, games

    def children(seconds: float) -> tuple[int, int]:
        decisions = games = 0
        start = time.process_time()
        while time.process_time() - start < seconds:
            state = game.new_initial_state()
            while not state.is_terminal():
                state = state.child(chooser.choice(state.legal_actions()))
                decisions += 1
            games += 1
        return decisions, games

    return children if pure else in_place


def side_by_side(sides: list[Playouts], seconds: float) -> Iterator[tuple[float, float]]:
    """Each side plays about `seconds` in all, the sides taking turns slice by slice; yields
    (decisions/s, games/s) per side."""
    totals: list[list[float]] = [[0, 0, 0.0] for _ in sides]
    slices = max(1, round(seconds / SLICE_SECONDS))
    for _ in range(slices):
        for play, total in zip(sides, totals, strict=True):
            start = time.process_time()
            decisions, games = play(seconds / slices)
            total[0] += decisions
            total[1] += games
            total[2] += time.process_time() - start
    for played, finished, elapsed in totals:
        yield played / elapsed, finished / elapsed


def pin_to_one_core() -> str:
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned"
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    return f"pinned to core {core}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="time per configuration (and as much for tic-tac-toe beside it)")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.seconds = 0.02
    _support.header("engine speed, random play",
                    "every setup >= 1.0x OpenSpiel's Python tic-tac-toe (decisions/s)")
    print(pin_to_one_core())
    print("reference: python_tic_tac_toe with state.apply_action (in place, its natural loop)")
    print(f"{'game':10} {'players':>7} {'options':24} {'decisions/s':>12} {'games/s':>9} "
          f"{'ttt dec/s':>10} {'ratio':>6}  load")
    ratios: dict[str, float] = {}
    reference = tic_tac_toe_playouts()
    for name in engines.names():
        game = engines.get(name)
        for variant in game.variants():
            (per_decision, per_game), (ttt, _) = side_by_side(
                [engine_playouts(game, variant), reference], args.seconds)
            options = ",".join(f"{k}={v}" for k, v in sorted(variant["options"].items())) or "-"
            ratios[f"{name} {variant['num_players']}p {options}"] = per_decision / ttt
            print(f"{name:10} {variant['num_players']:>7} {options:24} "
                  f"{per_decision:>12,.0f} {per_game:>9,.1f} {ttt:>10,.0f} "
                  f"{per_decision / ttt:>6.2f}  {_support.load()}")
    (in_place, _), (pure, _) = side_by_side([reference, tic_tac_toe_playouts(pure=True)],
                                            args.seconds)
    print(f"tic-tac-toe decisions/s: apply_action {in_place:,.0f} (the reference), "
          f"child {pure:,.0f} (a copy per decision, not the reference)  {_support.load()}")
    slowest = min(ratios, key=ratios.__getitem__)
    print(f"slowest ratio: {ratios[slowest]:.2f} ({slowest}); every setup >= 1.0: "
          f"{'yes' if ratios[slowest] >= 1.0 else 'no'}")


if __name__ == "__main__":
    main()
