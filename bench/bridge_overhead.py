"""Bridge overhead: the referee's decision time for a stdin/stdout program served by
`referee bridge`, divided by the decision time of the same logic behind a plain HTTP server.

    python3 bench/bridge_overhead.py [--seconds 3] [--quick]

The logic is the Python random bot (`bots.python.random_bot`): as an SDK HTTP server
(`--port P`, the baseline) and as a stdin/stdout program behind a real `referee bridge`
process (`--stdio`). The C random bot behind the same bridge is measured too (no baseline:
an absolute figure). Matches are played in-process (`run_match`, as `referee play`), every
seat the bot under test, alternating HTTP and bridge matches on the same seeds so both
see the same load. A decision's time is the referee's own measure (`elapsed_ms` of the
replay step: send, the bot's work, the answer read whole). The first decision of each
seat is reported apart: through the bridge it includes starting the program. After each
match every seat gets its result notice, as the referee sends it (outside the timing).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import _support
import requests

import engines
from referee.processes import python_module, stop_all
from referee.redis_server import free_port

GOAL = 1.5


def start_bridge(command: list[str], log_dir: Path) -> tuple[str, subprocess.Popen]:
    """`referee bridge` serving `command` on a free loopback port: (url, process)."""
    port = free_port()
    argv = python_module("referee.cli", "bridge", "--port", str(port), "--logs", str(log_dir),
                         "--", *command)
    return f"http://127.0.0.1:{port}/", _support.start(argv, port)


def build_c_bot(directory: Path) -> Path | None:
    """bots/c/random_bot.c built with `cc -O2`, or None without a compiler."""
    if shutil.which("cc") is None:
        return None
    binary = directory / "random_bot"
    subprocess.run(["cc", "-O2", "-o", str(binary), str(_support.ROOT / "bots/c/random_bot.c")],
                   check=True)
    return binary


class Tally:
    """The decision times (ms) of one contestant, first decisions of a seat apart."""

    def __init__(self, label: str):
        self.label = label
        self.first: list[float] = []
        self.rest: list[float] = []

    def add(self, record: dict) -> None:
        seen: set[int] = set()
        for step in record["steps"]:
            (self.rest if step["seat"] in seen else self.first).append(step["elapsed_ms"])
            seen.add(step["seat"])

    def line(self) -> str:
        rest = self.rest
        return (f"{self.label:28} {len(rest):>6} {statistics.fmean(rest):>8.3f} "
                f"{statistics.median(rest):>8.3f} {_support.percentile(rest, 0.99):>8.3f} "
                f"{statistics.fmean(self.first):>10.2f}")


def measure(urls: dict[str, str], seconds: float) -> dict[str, Tally]:
    """Alternate one match per contestant on each seed, `seconds` of baseline matches per
    game (2 players)."""
    tallies = {label: Tally(label) for label in urls}
    for index, name in enumerate(engines.names()):
        variant = next(v for v in engines.get(name).variants() if v["num_players"] == 2)
        spent, first_seed = 0.0, index * 100_000  # a match id (bench-<seed>) per match
        seed = first_seed
        game_tallies = {label: Tally(label) for label in urls}
        while spent < seconds or seed == first_seed:
            for label, url in urls.items():
                record, match_s = _support.play_match(url, name, variant, seed)
                if any(step["fault"] for step in record["steps"]):
                    raise RuntimeError(f"{label} committed a fault in {name} seed {seed}")
                send_result_notices(url, record)
                for tally in (tallies[label], game_tallies[label]):
                    tally.add(record)
                if label == "http":
                    spent += match_s
            seed += 1
        print_table(f"{name}, 2 players, {seed - first_seed} matches per contestant",
                    game_tallies)
    return tallies


def send_result_notices(url: str, record: dict) -> None:
    """The result notice of every seat, as the referee POSTs it after a match."""
    for seat in range(record["num_players"]):
        requests.post(url, timeout=10, json={
            "protocol": "referee/1", "type": "result", "match_id": record["match_id"],
            "game": record["game"], "seat": seat, "result": record["result"],
            "replay_url": f"http://127.0.0.1/matches/{record['match_id']}/replay"})


def print_table(title: str, tallies: dict[str, Tally]) -> None:
    print(f"\n{title} ({_support.load()})")
    print(f"{'contestant':28} {'decis.':>6} {'mean ms':>8} {'median':>8} {'p99':>8} "
          f"{'first (ms)':>10}")
    for tally in tallies.values():
        print(tally.line())
    http, bridge = tallies["http"].rest, tallies["bridge-python"].rest
    mean_ratio = statistics.fmean(bridge) / statistics.fmean(http)
    median_ratio = statistics.median(bridge) / statistics.median(http)
    added = statistics.median(bridge) - statistics.median(http)
    print(f"ratio bridge/http: mean {mean_ratio:.3f}, median {median_ratio:.3f}; "
          f"added per decision {added:+.3f} ms (median)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="seconds of baseline matches per game")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.seconds = 0.0
    _support.header("bridge overhead per decision: the random bot as a stdin/stdout program "
                    "behind `referee bridge` vs behind the SDK's HTTP server",
                    f"bridge decision time / HTTP decision time <= {GOAL} (mean, after "
                    "each seat's first decision)")
    processes = []
    with tempfile.TemporaryDirectory(prefix="bench-bridge-") as directory:
        try:
            http_url, http_bot = _support.start_bot("bots.python.random_bot", "--seed", "1")
            processes.append(http_bot)
            stdio = [sys.executable, "-m", "bots.python.random_bot", "--stdio", "--seed", "1"]
            bridge_url, bridge = start_bridge(stdio, Path(directory) / "python-logs")
            processes.append(bridge)
            urls = {"http": http_url, "bridge-python": bridge_url}
            c_bot = build_c_bot(Path(directory))
            if c_bot:
                c_url, c_bridge = start_bridge([str(c_bot), "1"], Path(directory) / "c-logs")
                processes.append(c_bridge)
                urls["bridge-c"] = c_url
            tallies = measure(urls, args.seconds)
        finally:
            stop_all(processes)
    print_table("overall", tallies)
    http, bridge = tallies["http"], tallies["bridge-python"]
    ratio = statistics.fmean(bridge.rest) / statistics.fmean(http.rest)
    print(f"overall ratio {ratio:.3f} (goal <= {GOAL})")


if __name__ == "__main__":
    main()
