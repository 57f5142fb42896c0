"""`referee check-bot URL --game G`: send a bot real decisions from every phase of a game
and report the answers that are late, malformed or illegal, with the reason.

Faults are classed as in a match: an action that fails the game's action schema (the
engine's InvalidAction) is `malformed`, one against the rules (IllegalAction) `illegal`.
A bot on loopback whose median answer takes 40 ms or more gets a warning: that is the
delay of Nagle's algorithm meeting delayed ACKs, not thinking time.

The decisions come from seeded random playouts of every setup the game supports (player
counts and modes). A decision's *phase* is the set of action types it offers; the check
sends a few decisions of every phase of every setup, early, middle and late ones, so every
action type the engine lists is exercised. Exit status 1 when any answer is faulty.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import random
import statistics
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import engines
from engines.base import Action, Game, State, Variant
from referee.bridge import BadCommand, bot_urls
from referee.match.botclient import DEFAULT_DEADLINE_MS, BotClient, Fault
from referee.match.runner import decision_payload

NAME = "check-bot"
HELP = "send a bot real decisions from every phase of a game and report faulty answers"
MAX_PLAYOUT_STEPS = 5000
EXTRA_PLAYOUTS = 20
NAGLE_MS = 40.0  # Linux's delayed ACK: a median answer this slow on loopback is no thinking
NAGLE_ADVICE = (
    "the signature of Nagle's algorithm meeting delayed ACKs: the bot writes its answer in "
    "two pieces (headers, then body) on a kept-alive connection and the second waits for "
    "an ACK the referee delays by about 40 ms. Write the whole answer in one write, or set "
    "TCP_NODELAY on the connection (Java's com.sun.net.httpserver: run with "
    "-Dsun.net.httpserver.nodelay=true; Python's http.server: build headers and body in one "
    "buffer, as bots/python/sdk.py does; Node.js's http and Go's net/http set it already)")


@dataclass(frozen=True)
class Decision:
    """One decision to put to the bot: a state of a playout and its setup."""

    setup: str
    step: int
    state: State
    phase: tuple[str, ...]


@dataclass
class Finding:
    """A faulty answer: the fault code and the reason, for a bot author to read."""

    decision: Decision
    fault: str
    detail: str
    raw: str


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
            findings, timings = check(game, served.urls[0], decisions, args.deadline_ms)
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


# ----- collecting decisions ------------------------------------------------------------------
def setups(game: Game) -> Iterator[tuple[str, Variant]]:
    """Every supported setup with a readable label, e.g. ("2p", {...}) or ("1p mode=solo", ...)."""
    for variant in game.variants():
        options = " ".join(f"{k}={v}" for k, v in sorted(variant["options"].items()))
        yield f"{variant['num_players']}p {options}".strip(), variant


def playout(game: Game, variant: Variant, seed: int
            ) -> Iterator[tuple[int, State, list[Action]]]:
    """(step, state, legal actions) for every decision of one random playout."""
    chooser = random.Random(seed)
    state = game.new_game(variant["num_players"], seed, variant["options"])
    for step in range(MAX_PLAYOUT_STEPS):
        if game.is_over(state):
            return
        legal = game.legal_actions(state)
        yield step, state, legal
        state = game.apply(state, chooser.choice(legal))


def sample_decisions(game: Game, first_seed: int, playouts: int, per_phase: int
                     ) -> list[Decision]:
    """Up to `per_phase` decisions of every phase of every setup, spread evenly over the
    phase's occurrences in the playouts. Past `playouts` seeds, more are played (up to
    EXTRA_PLAYOUTS) while an action type of describe() has not been offered yet."""
    wanted = set(game.describe().get("actions", {}))
    by_phase: dict[tuple[str, tuple[str, ...]], list[Decision]] = {}
    offered: set[str] = set()
    for seed in range(first_seed, first_seed + playouts + EXTRA_PLAYOUTS):
        if seed >= first_seed + playouts and wanted <= offered:
            break
        for label, variant in setups(game):
            for step, state, legal in playout(game, variant, seed):
                phase = tuple(sorted({a["type"] for a in legal}))
                offered.update(phase)
                by_phase.setdefault((label, phase), []).append(Decision(label, step, state, phase))
    return [pick for found in by_phase.values() for pick in spread(found, per_phase)]


def spread(items: list, count: int) -> list:
    """`count` items evenly spaced from first to last (all of them when there are fewer)."""
    if len(items) <= count:
        return list(items)
    if count == 1:
        return [items[0]]
    return [items[round(i * (len(items) - 1) / (count - 1))] for i in range(count)]


# ----- asking the bot ------------------------------------------------------------------------
def payload(game: Game, decision: Decision, index: int, deadline_ms: int) -> dict:
    """What the referee POSTs for this decision (design.md section 4)."""
    seat = game.current_seat(decision.state)
    assert seat is not None  # every decision is drawn from a game in progress
    return decision_payload(game, decision.state, f"check-bot-{index}", seat, decision.step,
                            deadline_ms)


def check(game: Game, url: str, decisions: list[Decision], deadline_ms: int
          ) -> tuple[list[Finding], list[float]]:
    """Ask the bot every decision; the faulty answers and the time each answer took."""
    return asyncio.run(_check(game, url, decisions, deadline_ms))


async def _check(game: Game, url: str, decisions: list[Decision], deadline_ms: int
                 ) -> tuple[list[Finding], list[float]]:
    client = BotClient(url, deadline_ms)
    findings, timings = [], []
    try:
        for index, decision in enumerate(decisions):
            reply = await client.decide(payload(game, decision, index, deadline_ms))
            timings.append(reply.elapsed_ms)
            if reply.fault:
                findings.append(Finding(decision, reply.fault, reply.detail, reply.raw))
                continue
            try:
                game.apply(decision.state, reply.action)
            except engines.InvalidAction as error:
                findings.append(Finding(decision, Fault.MALFORMED, error.reason, reply.raw))
            except engines.EngineError as error:
                findings.append(Finding(decision, Fault.ILLEGAL, error.reason, reply.raw))
    finally:
        await client.aclose()
    return findings, timings


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
