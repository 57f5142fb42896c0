"""`referee sprt --game G --bot CHALLENGER --bot BASELINE [--elo0 0 --elo1 5 --alpha 0.05
--beta 0.05 --max-matches 1000 --options JSON]`: an SPRT of the challenger against the
baseline on a running referee (`--server`, default http://127.0.0.1:8000), with the admin
token from REFEREE_ADMIN_TOKEN. Pairs of matches (one deal, both seat orders; solo: both
bots on the deal) are played until the log-likelihood ratio leaves its bounds or
`--max-matches` are played; a line per finished pair, as fastchess prints it:

    LLR 1.23 (-2.94, 2.94) [0.00, 5.00]  Elo 12.3 ± 20.1  Ptnml [0, 3, 10, 4, 1]  Games 36

and the decision at the end. Exit status: 0 when the test is over (decided or not), 1 when
the server refused it or could not be reached, 2 without an admin token.
"""

from __future__ import annotations

import argparse
import json
import time

from referee.client import Client, add_run_arguments, admin_client, exit_code, with_clock
from referee.match.runner import FORFEIT, POLICY_CHOICES, FailurePolicy
from tournament import sprt

HELP = "SPRT of a challenger against a baseline on a referee server, fastchess style"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", required=True)
    parser.add_argument("--bot", action="append", required=True, metavar="ID",
                        help="twice: the challenger's registered id, then the baseline's")
    parser.add_argument("--elo0", type=float, default=0.0, help="H0: the challenger is elo0 "
                        "logistic Elo stronger (default 0)")
    parser.add_argument("--elo1", type=float, default=5.0, help="H1: elo1 stronger (default 5)")
    parser.add_argument("--alpha", type=float, default=0.05, help="false H1 rate")
    parser.add_argument("--beta", type=float, default=0.05, help="false H0 rate")
    parser.add_argument("--max-matches", type=int, default=1000,
                        help="matches at most (whole pairs); no decision if reached first")
    parser.add_argument("--concurrency", type=int, default=16,
                        help="matches queued or playing at once (at least your workers' slots)")
    parser.add_argument("--players", type=int, choices=(1, 2), default=2,
                        help='1: solo, both bots on each deal (with --options \'{"mode": '
                             '"solo"}\')')
    parser.add_argument("--options", type=json.loads, default={}, help="game options as JSON")
    parser.add_argument("--deals", choices=("paired", "independent"), default="paired",
                        help="paired: both matches of a pair on one deal (default)")
    parser.add_argument("--seed", type=int, help="the test's seed (drawn by the server if absent)")
    add_run_arguments(parser, "test", POLICY_CHOICES, FORFEIT)


def run(args: argparse.Namespace) -> int:
    client = admin_client(args.server)
    if client is None:
        return 2

    def work() -> None:
        view = client.post("/tournaments", sprt_request(args))
        names = {bot["bot_id"]: bot["name"] for bot in view["bots"]}
        challenger, baseline = (names[bot] for bot in args.bot[:2])
        print(f"SPRT {view['id']}: {challenger} (challenger) vs {baseline} (baseline), "
              f"{view['game']}, at most {view['progress']['total']} matches "
              f"(pages: {client.base}/ui/tournaments/{view['id']})", flush=True)
        print(conclusion(follow(client, view, args.poll)))

    return exit_code(client, work)


def sprt_request(args: argparse.Namespace) -> dict:
    body = {"game": args.game, "format": "sprt", "bots": args.bot, "players": args.players,
            "elo0": args.elo0, "elo1": args.elo1, "alpha": args.alpha, "beta": args.beta,
            "max_matches": args.max_matches, "concurrency": args.concurrency,
            "options": args.options, "deals": args.deals, "deadline_ms": args.deadline_ms,
            "failure_policy": FailurePolicy.uniform(args.policy).to_dict()}
    if args.seed is not None:
        body["seed"] = args.seed
    if args.name:
        body["name"] = args.name
    return with_clock(body, args)


def follow(client: Client, view: dict, poll_s: float) -> dict:
    """Read the test until it is over, printing a line for every pair counted since."""
    printed = 0
    while True:
        result = view["sprt"]
        for line in pair_lines(result, printed, solo=view["players"] == 1):
            print(line, flush=True)
        printed = len(result["history"])
        if view["status"] == "finished":
            return view
        time.sleep(poll_s)
        view = client.get(f"/tournaments/{view['id']}")


def pair_lines(result: dict, printed: int, solo: bool) -> list[str]:
    """The lines of the pairs counted after the first `printed`, each with the pentanomial,
    LLR and Elo as they stood once that pair was counted (a solo pair is one game)."""
    pentanomial = [0] * 5
    lines = []
    for index, (_, llr, bucket) in enumerate(result["history"]):
        pentanomial[bucket] += 1
        if index >= printed:
            lines.append(pair_line(result, llr, pentanomial, solo))
    return lines


def pair_line(result: dict, llr: float, pentanomial: list[int], solo: bool) -> str:
    estimate = sprt.elo_estimate(pentanomial)
    games = sum(pentanomial) * (1 if solo else 2)
    return (f"LLR {llr:.2f} ({result['lower']:.2f}, {result['upper']:.2f}) "
            f"[{result['elo0']:.2f}, {result['elo1']:.2f}]  "
            f"Elo {estimate.elo:.1f} ± {estimate.error:.1f}  "
            f"Ptnml [{', '.join(map(str, pentanomial))}]  Games {games}")


def conclusion(view: dict) -> str:
    result = view["sprt"]
    bounds = f"[{result['elo0']:.2f}, {result['elo1']:.2f}]"
    played = f"{view['progress']['done']} matches, {result['pairs']} pairs counted"
    if result["decision"] is None:
        return (f"SPRT ({bounds}) ended at max_matches without a decision: LLR "
                f"{result['llr']:.2f} ({played})")
    return (f"SPRT ({bounds}) completed - {result['decision']} was accepted after "
            f"{result['decided_after']} pairs; LLR {result['llr']:.2f} ({played})")
