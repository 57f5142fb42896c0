"""`referee tournament --game G --bot ID ... --rounds N [--players K] [--seed S]
[--format round_robin|gauntlet|swiss] [--challenger ID] [--deals paired|independent]`:
start a tournament on a running referee (`--server`, default http://127.0.0.1:8000) with
the admin token from REFEREE_ADMIN_TOKEN, show a progress bar until every match is over,
then print the standings (Swiss: with Buchholz) and the final ratings. A gauntlet's
challenger plays every match against the field: `--challenger ID`, or else the first
`--bot` (as fastchess's first engine, its one seed). (SPRT: `referee sprt`.)

Exit status: 0 when the tournament finished, 1 when the server refused it or could not be
reached, 2 without an admin token.
"""

from __future__ import annotations

import argparse
import json

from referee.client import (
    BOT,
    RATING_COLUMNS,
    add_run_arguments,
    admin_client,
    exit_code,
    follow_tournament,
    print_rows,
    with_clock,
)
from referee.match.runner import FORFEIT, POLICY_CHOICES, FailurePolicy

HELP = ("start a round-robin, gauntlet or Swiss tournament on a referee server, follow it, "
        "print the final table")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", required=True)
    parser.add_argument("--bot", action="append", required=True, metavar="ID",
                        help="a registered bot's id, once per entrant (gauntlet: the field)")
    parser.add_argument("--format", choices=("round_robin", "gauntlet", "swiss"),
                        default="round_robin")
    parser.add_argument("--challenger", metavar="ID",
                        help="gauntlet: the bot in every match (default: the first --bot)")
    parser.add_argument("--deals", choices=("paired", "independent"), default="paired",
                        help="paired: a combination's seat rotations share one deal (default)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="times the whole schedule is played, on new seeds (swiss: rounds)")
    parser.add_argument("--players", type=int, default=2,
                        help='seats per match (1: solo Aldabas, with --options \'{"mode": '
                             '"solo"}\')')
    parser.add_argument("--seed", type=int, help="tournament seed (drawn by the server if absent)")
    parser.add_argument("--options", type=json.loads, default={}, help="game options as JSON")
    add_run_arguments(parser, "tournament", POLICY_CHOICES, FORFEIT)


def run(args: argparse.Namespace) -> int:
    client = admin_client(args.server)
    if client is None:
        return 2

    def work() -> None:
        created = client.post("/tournaments", tournament_request(args))
        print(f"tournament {created['id']}: {created['progress']['total']} {created['game']} "
              f"matches at {client.base}/tournaments/{created['id']} "
              f"(pages: {client.base}/ui/tournaments/{created['id']})", flush=True)
        print_final(follow_tournament(client, created, args.poll))

    return exit_code(client, work)


def tournament_request(args: argparse.Namespace) -> dict:
    bots, challenger = args.bot, args.challenger
    if args.format == "gauntlet" and challenger is None:
        challenger, bots = bots[0], bots[1:]
    body = {"game": args.game, "bots": bots, "players": args.players,
            "rounds": args.rounds, "options": args.options, "deadline_ms": args.deadline_ms,
            "format": args.format, "deals": args.deals,
            "failure_policy": FailurePolicy.uniform(args.policy).to_dict()}
    if challenger is not None:
        body["challenger"] = challenger
    if args.seed is not None:
        body["seed"] = args.seed
    if args.name:
        body["name"] = args.name
    return with_clock(body, args)


def print_final(view: dict) -> None:
    progress = view["progress"]
    print(f"\n{view['name']}: {view['format']} of {view['game']}, {view['players']} per match, "
          f"{view['rounds']} round(s), seed {view['seed']}; {progress['done']} matches"
          + (f", {progress['failed']} failed" if progress["failed"] else ""))
    if view["swiss"] is not None:
        print_rows("Swiss standings (ties by Buchholz)", view["swiss"]["standings"], [
            BOT, ("points", "points", 7, 1), ("buchholz", "buchholz", 8, 1),
            ("byes", "byes", 4, 0)])
    print_rows("Standings", view["standings"], [
        BOT, ("matches", "matches", 7, 0), ("points", "points", 7, 2), ("wins", "wins", 5, 0),
        ("draws", "draws", 5, 0), ("avg score", "average_score", 9, 2),
        ("avg rank", "average_rank", 8, 2), ("faults", "faults", 6, 0)])
    if view["ratings"] is not None:
        print_rows("Bradley-Terry ratings with 95% intervals", view["ratings"], RATING_COLUMNS)
    if view["solo_ranking"] is not None:
        print_rows("Solo ranking: average score with 95% intervals", view["solo_ranking"], [
            BOT, ("mean", "mean", 7, 2), ("low", "low", 7, 2), ("high", "high", 7, 2),
            ("games", "games", 5, 0)])
