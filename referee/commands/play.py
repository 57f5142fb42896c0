"""`referee play --game G --bot URL --bot URL [--seed S]`: a local match, no Redis.

The engine runs in this process and every decision goes to the bots over real HTTP, as in
a tournament; each move is printed as it is played, then the result. A bot author's
fastest loop. A bot may be `cmd:<command line>`: a stdin/stdout program served by a
bridge in this process for the match (`referee bridge`). One `--bot` of Aldabas plays its
solo mode (`referee.match.setups`). The replay written with `--replay` is signed with the
current key of REFEREE_SIGNING_KEY_FILE when it is set, as the server's are (else with
REFEREE_SECRET, else not at all). Exit status 1 when a bot committed a fault (forfeit or
strike).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import engines
from referee.api.common import MAX_SEED
from referee.bridge import BadCommand, bot_urls
from referee.client import time_control_argument
from referee.config import Config
from referee.match.botclient import DEFAULT_DEADLINE_MS
from referee.match.clock import TimeControl
from referee.match.replay import Record, StepRecord
from referee.match.runner import POLICY_CHOICES, FailurePolicy, PushSeat, run_match
from referee.match.sealing import Sealer
from referee.match.setups import match_options

HELP = "play a local match between bots at their URLs (no Redis), printing every move"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", required=True, choices=engines.names())
    parser.add_argument("--bot", action="append", required=True, metavar="URL",
                        help="a bot's URL, or cmd:<command line> for a stdin/stdout program, "
                             "once per seat in seat order")
    parser.add_argument("--seed", type=seed_argument, default=1,
                        help=f"the match seed, 0 to 2**53 - 1 = {MAX_SEED} (default 1)")
    parser.add_argument("--options", type=json.loads, default={},
                        help='game options as JSON, e.g. \'{"mode": "solo"}\'')
    parser.add_argument("--deadline-ms", type=int, default=DEFAULT_DEADLINE_MS)
    parser.add_argument("--policy", choices=POLICY_CHOICES, default="forfeit",
                        help="what a fault costs: forfeit the match, or a random move")
    parser.add_argument("--time-control", type=time_control_argument, metavar="BASE+INC",
                        help="play on a clock: BASE+INCREMENT in ms (2000+100), or the JSON "
                             "object of the API; then --deadline-ms is not used")
    parser.add_argument("--updates", action="store_true",
                        help="send every bot an update after each step it does not decide "
                             "next (docs/bots.md, Updates)")
    parser.add_argument("--quiet", action="store_true", help="print only the result")
    parser.add_argument("--replay", type=Path,
                        help="write the replay record to this file (signed with "
                             "REFEREE_SIGNING_KEY_FILE's key, else REFEREE_SECRET, when set)")


def seed_argument(text: str) -> int:
    """A seed every JSON client reads exactly (as the API's)."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if not 0 <= seed <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"a seed is an integer from 0 to 2**53 - 1 = "
                                         f"{MAX_SEED}, not {text!r}")
    return seed


def run(args: argparse.Namespace) -> int:
    engine = engines.get(args.game)
    try:
        options = match_options(engine, len(args.bot), args.options)
    except engines.InvalidSetup as error:
        print(f"error: {error.reason}", file=sys.stderr)
        return 2
    try:
        with bot_urls(args.bot) as served:
            status = play(args, engine, options, served.urls)
    except BadCommand as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if served.log_dir:
        print(f"stderr of the cmd: programs: {served.log_dir}", file=sys.stderr)
    return status


def play(args: argparse.Namespace, engine: engines.Game, options: dict[str, Any],
         urls: list[str]) -> int:
    """Play the match against the bots at `urls` (named by their --bot specs)."""
    if not args.quiet:
        print(f"{engine.name} {engine.version}, {len(args.bot)} seat(s), seed {args.seed}, "
              f"options {json.dumps(options, sort_keys=True)}")
    sealer = local_sealer(Config.from_env())
    seats = [PushSeat(url, args.deadline_ms, name=spec, updates=args.updates)
             for url, spec in zip(urls, args.bot, strict=True)]
    record = run_match(args.game, args.seed, options, seats,
                       FailurePolicy.uniform(args.policy), match_id=f"local-{args.seed}",
                       on_step=None if args.quiet else print_step, sealer=sealer,
                       time_control=TimeControl.from_dict(args.time_control))
    print_result(record)
    if args.replay:
        args.replay.write_text(json.dumps(record, indent=1))
        signed = (f"signed with key {sealer.key_id}" if sealer else
                  "unsigned: neither REFEREE_SIGNING_KEY_FILE nor REFEREE_SECRET is set")
        print(f"replay written to {args.replay} ({signed})")
    return 1 if record["forfeit"] or any(record["strikes"]) else 0


def local_sealer(config: Config) -> Sealer | None:
    """The key file's keys when set, else the secret, else nothing: a local match is
    never refused for want of a key."""
    if config.signing_key_file or config.hmac_only:
        return config.sealer()
    return Sealer.hmac(config.secret) if config.secret else None


def print_step(entry: StepRecord) -> None:
    action = json.dumps(entry["action"], sort_keys=True) if entry["action"] else "-"
    elapsed = f"({entry['elapsed_ms']:.1f} ms)"
    print(f"step {entry['step']:4d}  seat {entry['seat']}  {action}  {elapsed}")
    fault = entry["fault"]
    if fault:
        print(f"           FAULT {fault['code']}: {fault['detail']} -> {fault['policy']}"
              + (f"\n           answer: {fault['raw'][:300]}" if fault["raw"] else ""))


def print_result(record: Record) -> None:
    result, seats = record["result"], record["seats"]
    assert result is not None, "a finished match's record has its result"
    print(f"game over after {len(record['steps'])} decisions")
    if record["forfeit"]:
        forfeit, fault = record["forfeit"], record["steps"][-1]["fault"]
        assert fault is not None, "a forfeit is the fault of the last step"
        print(f"  seat {forfeit['seat']} forfeited at step {forfeit['step']} "
              f"({forfeit['fault']}: {fault['detail']})")
    for index, (score, rank) in enumerate(zip(result["scores"], result["ranks"], strict=True)):
        strikes = record["strikes"][index]
        print(f"  seat {index} {seats[index]['name']}: score {score}, rank {rank}"
              + (f", {strikes} strike(s)" if strikes else ""))
