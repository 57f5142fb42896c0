"""Hosted bots (issue 29): what the sandbox costs a match, as root on a machine where
`referee.match.sandbox.check_available()` passes.

    python3 bench/hosted.py [--starts 100] [--decisions 3000] [--quick]

Part 1, a sandbox per match: a C bot that answers at once is started in a new sandbox
(cgroups made, bwrap's namespaces and seccomp filter) and asked one line, `--starts` times:
the time from HostedProgram.start to its first answer (goal: p50 <= 30 ms), and the time of
stop (every process killed, the cgroups removed). The same for a python3 bot, whose
interpreter's start is most of it.
Part 2, a decision: one python3 bot playing the first legal action, asked the decisions of
real matches (every game, 2 players, random moves) as a hosted program (HostedProgram.ask,
the answer parsed) and behind `referee bridge` (`running_bridge` in this process, as
`referee play` runs `cmd:` bots, and BotClient.decide), alternating, the same payload for
both, after one untimed decision each (their start). Goal: hosted / bridge decision time
<= 1.1 (mean).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import _support
import orjson

import engines
from referee.bridge.local import running_bridge
from referee.bridge.server import BridgeConfig
from referee.match.botclient import BotClient
from referee.match.runner import state_payload
from referee.match.sandbox import (
    HostedProgram,
    Language,
    Limits,
    SandboxUnavailable,
    build,
    check_available,
    languages,
)

START_GOAL_MS = 30.0
RATIO_GOAL = 1.1
DEADLINE_MS = 5000
C_BOT = """\
#include <stdio.h>
int main(void) {
    char line[1 << 16];
    while (fgets(line, sizeof line, stdin)) {
        puts("{\\"action\\": null}");
        fflush(stdout);
    }
    return 0;
}
"""
PYTHON_BOT = """\
import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message.get("type", "decision") == "decision":
        print(json.dumps({"action": message["legal_actions"][0]}), flush=True)
"""


def bot_folder(root: Path, language: Language, source: str) -> Path:
    """A folder holding the bot's source (reachable by the sandbox uid)."""
    folder = root / language.name
    folder.mkdir()
    (folder / language.entry).write_text(source)
    return folder


def milliseconds(times: list[float]) -> str:
    return (f"{statistics.median(times):8.2f} {_support.percentile(times, 0.9):8.2f} "
            f"{statistics.fmean(times):8.2f} {max(times):8.2f}")


async def starts(language: Language, folder: Path, count: int) -> tuple[list[float], list[float]]:
    """(start to first answer, stop) in ms, `count` times."""
    limits = Limits()
    built = await build(language, folder, limits)
    if not built.ok:
        raise RuntimeError(f"the {language.name} bot does not build:\n{built.log}")
    first, stop = [], []
    for _ in range(count):
        started = time.perf_counter()
        program = await HostedProgram.start(language, folder, limits)
        await program.ask(b'{"legal_actions": [0]}', DEADLINE_MS / 1000)
        answered = time.perf_counter()
        await program.stop(None, 1.0)
        first.append((answered - started) * 1000)
        stop.append((time.perf_counter() - answered) * 1000)
    return first, stop


def match_decisions(count: int) -> list[dict]:
    """`count` decision payloads of real matches, every game in turn, random moves."""
    rng = random.Random(1)
    payloads: list[dict] = []
    seed = 0
    while len(payloads) < count:
        for name in engines.names():
            engine = engines.get(name)
            variant = next(v for v in engine.variants() if v["num_players"] == 2)
            state = engine.new_game(num_players=2, seed=seed, options=variant["options"])
            step = 0
            while not engine.is_over(state):
                seat = engine.current_seat(state)
                assert seat is not None
                payload = state_payload(engine, state, f"bench-{name}-{seed}", seat, step,
                                           DEADLINE_MS)
                payloads.append(payload)
                state = engine.apply(state, rng.choice(payload["legal_actions"]))
                step += 1
        seed += 1
    return payloads[:count]


async def decisions(folder: Path, url: str, payloads: list[dict]
                    ) -> tuple[list[float], list[float]]:
    """(hosted, bridge) decision times in ms, each payload asked of both in turn."""
    language = languages()["python3"]
    program = await HostedProgram.start(language, folder, Limits())
    client = BotClient(url, DEADLINE_MS)
    hosted, bridged = [], []
    try:
        # both started (the interpreter's start is part 1's business), then timed
        await program.ask(orjson.dumps(payloads[0]), DEADLINE_MS / 1000)
        await client.decide(payloads[0])
        for payload in payloads:
            first_legal = payload["legal_actions"][0]
            started = time.perf_counter()
            answer = orjson.loads(await program.ask(orjson.dumps(payload), DEADLINE_MS / 1000))
            asked = time.perf_counter()
            reply = await client.decide(payload)
            decided = time.perf_counter()
            if answer["action"] != first_legal or reply.action != first_legal:
                raise RuntimeError(f"wrong answers: {answer} / {reply}")
            hosted.append((asked - started) * 1000)
            bridged.append((decided - asked) * 1000)
    finally:
        await client.aclose()
        await program.stop(None, 1.0)
    return hosted, bridged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=100, help="sandboxes started per bot")
    parser.add_argument("--decisions", type=int, default=3000, help="decisions asked of each")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.starts, args.decisions = 5, 100
    _support.header("hosted bots: a sandbox per match, and a decision hosted vs through "
                    "`referee bridge`",
                    f"start to first answer p50 <= {START_GOAL_MS:g} ms (C bot); hosted / "
                    f"bridge decision time <= {RATIO_GOAL} (mean)")
    try:
        check_available()
    except SandboxUnavailable as error:
        sys.exit(f"the sandbox cannot run here: {error}")
    found = languages()
    with tempfile.TemporaryDirectory(prefix="bench-hosted-") as directory:
        root = Path(directory)
        root.chmod(0o755)
        print(f"\npart 1: a sandbox per match, {args.starts} starts per bot ({_support.load()})")
        print(f"{'bot':34} {'p50 ms':>8} {'p90':>8} {'mean':>8} {'max':>8}")
        c_first: list[float] = []
        for name, source in (("c", C_BOT), ("python3", PYTHON_BOT)):
            language = found[name]
            first, stop = asyncio.run(starts(language, bot_folder(root, language, source),
                                             args.starts))
            c_first = c_first or first
            print(f"{name + ': start to first answer':34} {milliseconds(first)}")
            print(f"{name + ': stop':34} {milliseconds(stop)}")
        payloads = match_decisions(args.decisions)
        folder = root / "python3"
        bot = ("/usr/bin/python3", str(folder / "main.py"))
        with running_bridge(BridgeConfig(bot, root / "bridge-logs")) as url:
            hosted, bridged = asyncio.run(decisions(folder, url, payloads))
    print(f"\npart 2: {len(payloads)} decisions of {', '.join(engines.names())} "
          f"({_support.load()})")
    print(f"{'python3 bot':34} {'p50 ms':>8} {'p90':>8} {'mean':>8} {'max':>8}")
    print(f"{'hosted (HostedProgram.ask)':34} {milliseconds(hosted)}")
    print(f"{'bridge (BotClient.decide)':34} {milliseconds(bridged)}")
    ratio = statistics.fmean(hosted) / statistics.fmean(bridged)
    median_ratio = statistics.median(hosted) / statistics.median(bridged)
    print(f"\nstart to first answer (C) p50 {statistics.median(c_first):.2f} ms "
          f"(goal <= {START_GOAL_MS:g})")
    print(f"hosted / bridge: mean {ratio:.3f}, median {median_ratio:.3f} (goal <= {RATIO_GOAL})")


if __name__ == "__main__":
    main()
