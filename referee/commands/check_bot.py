"""`referee check-bot URL --game G`: send a bot real decisions from every phase of a game
and report the answers that are late, malformed or illegal, with the reason.

Faults are classed as in a match: an action that fails the game's action schema (the
engine's InvalidAction) is `malformed`, one against the rules (IllegalAction) `illegal`.
A bot on loopback whose median answer takes 40 ms or more gets a warning: that is the
delay of Nagle's algorithm meeting delayed ACKs, not thinking time.

The decisions and the check are `referee.match.bot_check`'s. Exit status 1 when any answer
is faulty.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import statistics
import sys
from urllib.parse import urlsplit

import engines
from engines.base import Game
from referee.bridge import BadCommand, bot_urls
from referee.match.bot_check import Decision, Finding, check, sample_decisions
from referee.match.botclient import DEFAULT_DEADLINE_MS, BotClient

NAME = "check-bot"
HELP = "send a bot real decisions from every phase of a game and report faulty answers"
NAGLE_MS = 40.0  # Linux's delayed ACK: a median answer this slow on loopback is no thinking
NAGLE_ADVICE = (
    "the signature of Nagle's algorithm meeting delayed ACKs: the bot writes its answer in "
    "two pieces (headers, then body) on a kept-alive connection and the second waits for "
    "an ACK the referee delays by about 40 ms. Write the whole answer in one write, or set "
    "TCP_NODELAY on the connection (Java's com.sun.net.httpserver: run with "
    "-Dsun.net.httpserver.nodelay=true; Python's http.server: build headers and body in one "
    "buffer, as bots/python/sdk.py does; Node.js's http and Go's net/http set it already)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", help="the bot's URL, e.g. http://127.0.0.1:8001/, or "
                                    "cmd:<command line> for a stdin/stdout program")
    parser.add_argument("--game", required=True, choices=engines.names())
    parser.add_argument("--seed", type=int, default=0, help="seed of the first playout")
    parser.add_argument("--playouts", type=int, default=3, help="random playouts per setup")
    parser.add_argument("--per-phase", type=int, default=3,
                        help="decisions sent per phase (spread from early to late)")
    parser.add_argument("--deadline-ms", type=int, default=DEFAULT_DEADLINE_MS)


def run(args: argparse.Namespace) -> int:
    game = engines.get(args.game)
    decisions = sample_decisions(game, args.seed, args.playouts, args.per_phase)
    print(f"checking {args.url} on {len(decisions)} {game.name} decisions "
          f"({len({d.phase for d in decisions})} phases, deadline {args.deadline_ms} ms)")
    try:
        with bot_urls([args.url]) as served:
            findings, timings = asyncio.run(check(
                game, BotClient(served.urls[0], args.deadline_ms), decisions))
    except BadCommand as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if served.log_dir:
        print(f"stderr of the program: {served.log_dir}")
    for finding in findings:
        print(describe_finding(finding))
    report_uncovered(game, decisions)
    if timings:
        median = statistics.median(timings)
        print(f"answer time: median {median:.1f} ms, max {max(timings):.1f} ms")
        if median >= NAGLE_MS and on_loopback(args.url):
            print(f"warning: the median answer took {median:.1f} ms on loopback, "
                  f"{NAGLE_ADVICE}")
    verdict = "FAILED" if findings else "passed"
    print(f"{verdict}: {len(decisions) - len(findings)} of {len(decisions)} answers were legal")
    return 1 if findings else 0


def on_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def describe_finding(finding: Finding) -> str:
    decision = finding.decision
    where = (f"[{decision.setup}, step {decision.step}, phase {'/'.join(decision.phase)}]")
    text = f"{finding.fault.upper():9} {where} {finding.detail}"
    if finding.raw:
        text += f"\n          answer: {finding.raw[:300]}"
    return text


def report_uncovered(game: Game, decisions: list[Decision]) -> None:
    """Name the action types of describe() that no sampled decision offered."""
    offered = {kind for decision in decisions for kind in decision.phase}
    missing = sorted(set(game.describe().get("actions", {})) - offered)
    if missing:
        print(f"note: no playout offered {', '.join(missing)}: those actions were not checked")
