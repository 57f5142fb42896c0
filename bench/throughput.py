"""Fast-bot throughput: complete matches per second through the whole referee (API, Redis,
`referee worker` processes) between two bots that answer at once, beside the same number
of matches played in this process by the engine alone, as a ratio, per game and player
count, in one run. Goal (issue 31): the referee reaches >= 0.20 of the engine-alone rate
on this 2-core machine for every setup.

    python3 bench/throughput.py [--matches 40] [--workers 2] [--games G,...] [--quick]

Two kinds of bots, each two processes:
- `http`: two instant HTTP bots, `bots/node/random_bot.js` (Node's http server: a random
  legal action, at once);
- `stdio`: two stdin/stdout bots, `bots/c/random_bot.c` compiled with `cc -O2`, each
  behind `referee bridge` (the bridge is how a local program plays a referee that runs
  elsewhere; a hosted bot would add a sandbox start, ~20 ms, to every match and seat).

For each kind and setup (every variant of every game), `--matches` matches (seeds 0, 1,
...; the two bots in alternate seats, a 1-player match to each in turn) are posted through
`POST /matches`, all at once, and the clock runs from the first post to the last match
finished (read in Redis). The engine alone plays as many matches of the setup with random
legal moves (`legal_actions` and `apply`, as `bench/engines_speed.py` does), on one core,
timed by this process's CPU time: ratio = referee matches/s ÷ engine-alone matches/s. The
CPU each part used meanwhile (workers, bots with their bridges and programs, Redis, the
API) is read from /proc, per decision, to show what bounds the ratio.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import _support
import redis

import engines
from referee.client import Client
from referee.processes import python_module, stop_all
from referee.redis_server import free_port

GOAL = 0.20
ADMIN = "bench-admin"
KINDS = ("http", "stdio")
PARTS = ("workers", "bots", "redis", "api")
MATCH_TIMEOUT_S = 300


class Stack:
    """Redis, `referee serve` and the `referee worker` processes, all of this tree."""

    def __init__(self, server: _support.RedisServer, workers: int):
        self.redis_url = server.url
        self.client = redis.Redis.from_url(server.url)
        self.port = free_port()
        # the workers at the bots' priority (by default they yield to the API: on a shared
        # machine they would then measure the neighbours' load)
        self.env = _support.child_env(REDIS_URL=server.url, REFEREE_ADMIN_TOKEN=ADMIN,
                                      REFEREE_SECRET="bench", REFEREE_BOT_MAX_MATCHES="100000",
                                      REFEREE_WORKER_NICE="0")
        self.api = _support.start(python_module("referee.cli", "serve", "--port",
                                                str(self.port), "--workers", "1"),
                                  self.port, self.env)
        self.workers = [_support.start(python_module("referee.cli", "worker"), env=self.env)
                        for _ in range(workers)]
        _support.wait_workers(self.client, workers)
        self.referee = Client(f"http://127.0.0.1:{self.port}", ADMIN)
        assert server.process is not None  # a started server
        self.redis_pid = server.process.pid

    def register(self, urls: list[str]) -> list[str]:
        return [self.referee.post("/bots", {"name": f"instant {time.monotonic_ns()}",
                                            "url": url, "games": engines.names()})["id"]
                for url in urls]

    def play(self, game: str, variant: dict, bots: list[str], matches: int
             ) -> tuple[float, int]:
        """Post `matches` matches at once and wait for them all: (seconds, decisions)."""
        started = time.perf_counter()
        ids = [self.referee.post("/matches", {
            "game": game, "seats": seats_of(bots, variant["num_players"], seed),
            "options": variant["options"], "seed": seed, "deadline_ms": 10000})["id"]
            for seed in range(matches)]
        deadline = time.monotonic() + MATCH_TIMEOUT_S
        while (statuses := self._statuses(ids)).count(b"finished") < matches:
            if b"failed" in statuses or time.monotonic() > deadline:
                raise RuntimeError(f"{game} {variant}: {statuses.count(b'finished')} of "
                                   f"{matches} matches finished ({statuses.count(b'failed')} "
                                   "failed)")
            time.sleep(0.005)
        seconds = _support.elapsed(started)
        with self.client.pipeline(transaction=False) as pipe:
            for match_id in ids:
                pipe.hget(f"referee:match:{match_id}", "step")
            return seconds, sum(int(step) for step in pipe.execute())

    def _statuses(self, ids: list[str]) -> list[bytes]:
        with self.client.pipeline(transaction=False) as pipe:
            for match_id in ids:
                pipe.hget(f"referee:match:{match_id}", "status")
            return pipe.execute()

    def pids(self) -> dict[str, list[int]]:
        return {"workers": [w.pid for w in self.workers], "redis": [self.redis_pid],
                "api": [self.api.pid]}

    def close(self) -> None:
        stop_all([*self.workers, self.api])


def seats_of(bots: list[str], players: int, seed: int) -> list[dict]:
    """The two bots in alternate seats (the first seat alternating between matches)."""
    return [{"kind": "bot", "bot_id": bots[(seed + seat) % len(bots)]}
            for seat in range(players)]


@contextmanager
def instant_bots(kind: str, folder: Path) -> Iterator[tuple[list[str], list[int]]]:
    """Two bots of `kind` answering at once: (their URLs, their process ids)."""
    processes, urls = [], []
    try:
        for seed in (1, 2):
            port = free_port()
            if kind == "http":
                argv = ["node", str(_support.ROOT / "bots" / "node" / "random_bot.js"),
                        "--port", str(port)]
            else:
                argv = python_module("referee.cli", "bridge", "--port", str(port),
                                     "--max-programs", "1024", "--logs", str(folder / "logs"),
                                     "--", str(c_bot(folder)), str(seed))
            processes.append(_support.start(argv, port))
            urls.append(f"http://127.0.0.1:{port}/")
        yield urls, [process.pid for process in processes]
    finally:
        stop_all(processes)


def c_bot(folder: Path) -> Path:
    """bots/c/random_bot.c, compiled once into `folder`."""
    binary = folder / "random_bot"
    if not binary.exists():
        subprocess.run(["cc", "-O2", "-o", str(binary),
                        str(_support.ROOT / "bots" / "c" / "random_bot.c")], check=True)
    return binary


def engine_alone(game: str, variant: dict, matches: int) -> tuple[float, int]:
    """(CPU seconds, decisions) of `matches` random matches of one setup, engine only."""
    engine = engines.get(game)
    chooser = random.Random(0)
    decisions = 0
    started = time.process_time()
    for seed in range(matches):
        state = engine.new_game(variant["num_players"], seed, variant["options"])
        while not engine.is_over(state):
            state = engine.apply(state, chooser.choice(engine.legal_actions(state)))
            decisions += 1
    return time.process_time() - started, decisions


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of a process, of the children it reaped, and of its live descendants."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        own = _support.cpu_seconds(pid)
    except OSError:
        return 0.0
    return own + sum(tree_cpu_seconds(int(child)) for child in children)


def cpu_of(pids: dict[str, list[int]]) -> dict[str, float]:
    return {part: sum(tree_cpu_seconds(pid) for pid in group) for part, group in pids.items()}


def setups(games: list[str], quick: bool) -> list[tuple[str, dict]]:
    every = [(game, dict(variant)) for game in games
             for variant in engines.get(game).variants()]
    return every[:1] if quick else every


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=40, help="matches per setup and kind")
    parser.add_argument("--workers", type=int, default=2, help="`referee worker` processes")
    parser.add_argument("--games", default=",".join(engines.names()))
    parser.add_argument("--kinds", default=",".join(KINDS), help="http, stdio or both")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.matches = 2
    if not shutil.which("node") or not shutil.which("cc"):
        sys.exit("throughput.py needs node and cc on PATH (scripts/install installs them)")
    _support.header("fast-bot throughput: the referee's matches/s beside the engine alone's",
                    f"referee / engine alone >= {GOAL:.2f} for every setup")
    print(f"{'bots':<6}{'game':<9}{'players':>7}{'matches':>8}{'dec/match':>10}"
          f"{'referee m/s':>12}{'engine m/s':>11}{'ratio':>7}   CPU ms/decision: "
          f"{' + '.join(PARTS)}  load")
    ratios: list[float] = []
    with (tempfile.TemporaryDirectory(prefix="bench-throughput-") as scratch,
          _support.redis_server() as server):
        stack = Stack(server, args.workers)
        try:
            for kind in args.kinds.split(","):
                with instant_bots(kind, Path(scratch)) as (urls, bot_pids):
                    bots = stack.register(urls)
                    for game, variant in setups(args.games.split(","), args.quick):
                        ratios.append(measure(stack, kind, game, variant, bots, bot_pids,
                                              args.matches))
        finally:
            stack.close()
    print(f"\nlowest ratio {min(ratios):.3f}, highest {max(ratios):.3f} (goal >= {GOAL:.2f} "
          f"for every setup; {sum(r >= GOAL for r in ratios)} of {len(ratios)} reach it)")


def measure(stack: Stack, kind: str, game: str, variant: dict, bots: list[str],
            bot_pids: list[int], matches: int) -> float:
    """One row: the referee's rate, the engine's, their ratio and the CPU split."""
    pids = {**stack.pids(), "bots": bot_pids}
    before = cpu_of(pids)
    seconds, decisions = stack.play(game, variant, bots, matches)
    used = {part: spent - before[part] for part, spent in cpu_of(pids).items()}
    engine_s, engine_decisions = engine_alone(game, variant, matches)
    referee_rate, engine_rate = matches / seconds, matches / engine_s
    ratio = referee_rate / engine_rate
    split = " + ".join(f"{used[part] / decisions * 1000:.2f}" for part in PARTS)
    print(f"{kind:<6}{game:<9}{variant['num_players']:>7}{matches:>8}"
          f"{decisions / matches:>10.1f}{referee_rate:>12.1f}{engine_rate:>11.1f}"
          f"{ratio:>7.3f}   {split}  (engine {engine_decisions / matches:.1f} dec/match)  "
          f"{_support.load()}", flush=True)
    return ratio


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
