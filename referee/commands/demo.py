"""`referee demo`: the main job. For now a local Aladino match between random players."""

import argparse
import json
import random

import engines

HELP = "run the demo: a local match between random players, printed move by move"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", default="aladino", choices=engines.names())
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)


def run(args: argparse.Namespace) -> int:
    game = engines.get(args.game)
    state = game.new_game(num_players=args.players, seed=args.seed, options={})
    chooser = random.Random(args.seed)
    step = 0
    while not game.is_over(state):
        seat = game.current_seat(state)
        action = chooser.choice(game.legal_actions(state))
        print(f"step {step:3d}  seat {seat}  {json.dumps(action, sort_keys=True)}")
        state = game.apply(state, action)
        step += 1
    result = game.result(state)
    print(f"game over after {step} decisions")
    for seat, (score, rank) in enumerate(zip(result["scores"], result["ranks"], strict=True)):
        print(f"  seat {seat}: {score} points, rank {rank}")
    return 0
