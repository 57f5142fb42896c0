"""Decision time of a match with and without 200 clients following it live
(`GET /matches/{id}/events`), against `referee serve` (gunicorn, gevent, its default 2
worker processes), one `referee worker` and a random bot that answers in 5 ms.
Goal: the clients slow the match by at most 10% (the ratio of the median decision times
<= 1.10; the median, as other work on a shared machine comes in bursts).

    python3 bench/live_streams.py [--clients 200] [--matches 5] [--delay-ms 5] [--quick]

Each match (Aladino, two seats, the same seeds in both runs) is created queued; the clients
connect and each receives its `start` event; then `referee worker --burst` plays it. The
decision time is the match's wall time (started_at to finished_at of its replay) over its
steps; the bot's own delay is in it. Beside it, the CPU the API processes spent per
decision, from the moment every client is connected until the last one had the result.
Every client must receive every step, in order, and the result: the script says how many
did, and how long after the match ended the last one had its `result`. The clients are
raw asyncio sockets in a process of their own run at the lowest CPU priority (nice 19): on
this one shared machine they would otherwise take CPU from the referee, which remote
browsers do not; the API serving them is not favoured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import _support
import requests

from referee.processes import python_module, stop_all

GAME = "aladino"
ADMIN = "bench-admin"
GOAL_RATIO = 1.10


class Watchers:
    """`count` clients on one match's stream (asyncio): `connected` once each has its
    `start` event, then each step's id as it comes and when the `result` came."""

    def __init__(self, port: int, match_id: str, count: int):
        self.port, self.path, self.count = port, f"/matches/{match_id}/events", count
        self.steps: list[list[int]] = []
        self.results_at: list[float] = []
        self.bytes = 0
        self._connected = 0

    async def run(self) -> dict:
        await asyncio.gather(*(self._one() for _ in range(self.count)))
        return {"steps": self.steps, "results_at": self.results_at, "bytes": self.bytes}

    async def _one(self) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(f"GET {self.path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                     "Accept: text/event-stream\r\n\r\n".encode())
        await writer.drain()
        steps: list[int] = []
        buffer = b""
        while chunk := await reader.read(1 << 16):
            self.bytes += len(chunk)
            *blocks, buffer = (buffer + chunk).split(b"\n\n")
            for block in blocks:
                if b"id: " in block:
                    block = block[block.index(b"id: "):]
                    steps.append(int(block[4:block.index(b"\n")]))
                elif b"event: start" in block:
                    self._connected += 1
                    if self._connected == self.count:
                        print("connected", flush=True)
                elif b"event: result" in block:
                    self.results_at.append(time.time())
                    writer.close()
                    self.steps.append(steps)
                    return
        self.steps.append(steps)
        writer.close()


def watch(port: int, match_id: str, count: int) -> None:
    """The clients' process (`--watch`): prints `connected`, then a JSON summary."""
    print(json.dumps(asyncio.run(Watchers(port, match_id, count).run())), flush=True)


@contextmanager
def watchers(port: int, match_id: str, count: int) -> Iterator[dict]:
    """The clients, at nice 19, all connected within the block; their summary after it."""
    process = subprocess.Popen(
        [sys.executable, __file__, "--watch", str(port), match_id, str(count)],
        stdout=subprocess.PIPE, text=True, cwd=_support.ROOT, env=_support.child_env(),
        preexec_fn=lambda: os.nice(19))
    summary: dict = {}
    try:
        line = process.stdout.readline()
        if line.strip() != "connected":
            raise RuntimeError(f"the clients did not connect: {line!r}")
        yield summary
        out, _ = process.communicate(timeout=300)
        summary.update(json.loads(out))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--matches", type=int, default=8, help="matches per run")
    parser.add_argument("--delay-ms", type=float, default=5.0, help="the bot's time per move "
                        "(0: the instant random bot)")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    parser.add_argument("--watch", nargs=3, metavar=("PORT", "MATCH", "CLIENTS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.watch:
        watch(int(args.watch[0]), args.watch[1], int(args.watch[2]))
        return
    if args.quick:
        args.clients, args.matches = 20, 1
    _support.header(f"decision time with {args.clients} live stream clients on the match",
                    f"ratio with/without <= {GOAL_RATIO:.2f}")
    with _support.redis_server() as server:
        port = _support.free_port()
        # the clients stand for viewers at as many addresses: no bound per address
        env = _support.child_env(REDIS_URL=server.url, REFEREE_ADMIN_TOKEN=ADMIN,
                                 REFEREE_STREAMS_PER_ADDRESS="0")
        api = _support.start(python_module("referee.cli", "serve", "--port", str(port)), port,
                             env=env)
        bot_url, bot = (_support.start_slow_bot(args.delay_ms) if args.delay_ms
                        else _support.start_bot())
        try:
            run(port, env, api.pid, bot_url, args)
        finally:
            stop_all([api, bot])


@dataclass
class Bench:
    """The referee under test and what the runs share."""

    port: int
    env: dict[str, str]
    api_pid: int
    session: requests.Session
    bots: list[str]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def run(port: int, env: dict[str, str], api_pid: int, bot_url: str,
        args: argparse.Namespace) -> None:
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {ADMIN}"
    bots = [session.post(f"http://127.0.0.1:{port}/bots", timeout=10, json={
        "name": f"bench-{n}", "url": bot_url, "games": [GAME]}).json()["id"] for n in (1, 2)]
    bench = Bench(port, env, api_pid, session, bots)
    print(f"{'run':>8} {'match':>5} {'steps':>5} {'ms/decision':>11} {'API CPU ms/dec':>14} "
          f"{'complete':>9} {'result +ms':>10} {'MB read':>7}")
    timings: dict[str, list[float]] = {"without": [], "with": []}
    for index in range(args.matches):
        for label, clients in (("without", 0), ("with", args.clients)):  # interleaved
            timings[label].append(one_match(bench, index, label, clients))
    means = [statistics.mean(timings[k]) for k in ("without", "with")]
    medians = [statistics.median(timings[k]) for k in ("without", "with")]
    ratio = medians[1] / medians[0]
    print(f"without clients: median {medians[0]:.2f} ms/decision (mean {means[0]:.2f}); with "
          f"{args.clients} clients: median {medians[1]:.2f} (mean {means[1]:.2f})")
    print(f"ratio with/without {ratio:.3f} (of the means {means[1] / means[0]:.3f}): "
          f"{'met' if ratio <= GOAL_RATIO else 'MISSED'} ({_support.load()})")


def one_match(bench: Bench, index: int, label: str, clients: int) -> float:
    """Play one match with `clients` following it; its ms per decision."""
    match = bench.session.post(f"{bench.base}/matches", timeout=10, json={
        "game": GAME, "seed": 1000 + index,
        "seats": [{"kind": "bot", "bot_id": bot} for bot in bench.bots]}).json()
    if clients:
        with watchers(bench.port, match["id"], clients) as seen:
            api_before = cpu_s(bench.api_pid)  # once every client is connected
            play(bench.env)
        summary = watchers_summary(seen, bench, match["id"], clients)
    else:
        api_before = cpu_s(bench.api_pid)
        play(bench.env)
        summary = "-", "-", "-"
    api_cpu_ms = (cpu_s(bench.api_pid) - api_before) * 1000
    record = bench.session.get(f"{bench.base}/matches/{match['id']}/replay", timeout=30).json()
    steps = len(record["steps"])
    ms = wall_ms(record) / steps
    print(f"{label:>8} {index:>5} {steps:>5} {ms:>11.2f} {api_cpu_ms / steps:>14.2f} "
          f"{summary[0]:>9} {summary[1]:>10} {summary[2]:>7}")
    return ms


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used so far by the process `pid` and its children
    (gunicorn's worker processes)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    total = 0
    for each in [pid, *map(int, children)]:
        fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def play(env: dict[str, str]) -> None:
    done = subprocess.run(python_module("referee.cli", "worker", "--burst"), env=env,
                          cwd=_support.ROOT, capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])


def watchers_summary(seen: dict, bench: Bench, match_id: str,
                     clients: int) -> tuple[str, str, str]:
    """(clients that got every step in order and the result, how long after the match
    ended the last result arrived, megabytes the clients read)."""
    match = bench.session.get(f"{bench.base}/matches/{match_id}", timeout=10).json()
    complete = sum(steps == list(range(match["step"])) for steps in seen["steps"])
    ended = parse_time(match["finished_at"])
    late = max(seen["results_at"]) - ended if seen["results_at"] else float("nan")
    return f"{complete}/{clients}", f"{late * 1000:.0f}", f"{seen['bytes'] / 1e6:.1f}"


def wall_ms(record: dict) -> float:
    return (parse_time(record["finished_at"]) - parse_time(record["started_at"])) * 1000


def parse_time(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


if __name__ == "__main__":
    main()
