"""Match execution, side by side in one run: `referee worker` now (one process drives many
matches on an event loop, resumes a match at its last recorded step, parks a match that
waits for a pull seat) against round 1's default (rq forks a work horse per match, one
match per process, a pull seat holds its worker), the code of commit `--baseline`.

    python3 bench/execution.py [--baseline ef45221] [--quick]

(`--baseline 2ee7e58` is issue 31's start: docs/performance.md §10 compares with it.)

Each version runs whole: its own redis-server, `referee serve` and `referee worker`
processes from its own source tree (the baseline is checked out with `git worktree`); the
bots are the same processes for both (`bench/slow_bot.py`, the SDK's threaded random bot
behind a sleep, or its `--lean` server where said). Everything is driven through the
public API, so both versions get the same requests. The figures, one line each:

1. referee CPU per decision: 2 workers, a round-robin against bots taking 20 ms; CPU
   seconds of the worker processes (their work horses included) / decisions. Measured
   twice: against the lean stand-in bot (`--lean`: one asyncio thread, ~0.17 ms of CPU a
   decision; issue 31's goal is judged on this one), then against the SDK's threaded
   server (~0.5 ms a decision: on 2 cores it competes with the workers for the CPU, where
   real bots would run on machines of their own);
2. figure 1 (the lean bot's) / the time of a bare decision (3's bare `requests.post`, in
   ms): the same figure with the machine's speed taken out, which moves figure 1 by a
   third from one hour to the next (docs/performance.md §10);
3. decision time under a worker / bare `requests.post` of the same payloads to the same
   instant bot (one match at a time, one worker);
4. matches at once in one worker process, against bots that think 100 ms;
5. 200 matches against 100 ms bots on 2 worker processes: most at once, and the workers'
   total RSS (work horses included) at its peak;
6. the delay 4 idle pull matches (nobody moves; pull deadline 15 s) cause a 6-match
   tournament on 2 workers;
7. a worker killed with -9 mid-match: the decisions the bots are asked again.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

import _support
import orjson
import redis
import requests
from rq import Queue, Worker
from rq.registry import StartedJobRegistry
from rq.serializers import JSONSerializer

import engines
from referee.match.runner import state_payload
from referee.processes import stop_all
from referee.redis_server import free_port

BASELINE = "ef45221"  # main before matches were driven on an event loop
ADMIN = "bench-admin"
QUEUE = "referee-matches"
GAME = "aladino"


class Stack:
    """One version of the referee: its Redis, its API and its workers."""

    def __init__(self, label: str, root: Path, server: _support.RedisServer):
        self.label, self.root, self.redis_url = label, root, server.url
        self.client = redis.Redis.from_url(server.url)
        self.port = free_port()
        self.env = {**os.environ, "PYTHONPATH": str(root), "REDIS_URL": server.url,
                    "REFEREE_ADMIN_TOKEN": ADMIN, "REFEREE_SECRET": "bench",
                    "REFEREE_SIGNING_KEY_FILE": str(_support.key_file()),
                    "REFEREE_BOT_MAX_MATCHES": "1000",
                    # at the bots' priority, as versions before REFEREE_WORKER_NICE ran: a
                    # worker that yields to the neighbours of a shared machine runs longer,
                    # and its periodic work (timers, sweeps) costs more per decision
                    "REFEREE_WORKER_NICE": "0"}
        self.api_process = self._spawn("serve", "--port", str(self.port), "--workers", "1")
        self.workers: list[subprocess.Popen] = []
        _support.wait_port(self.port)
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {ADMIN}"

    def _spawn(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "referee.cli", *args], cwd=self.root,
                                env=self.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        response = self.session.request(method, f"http://127.0.0.1:{self.port}{path}",
                                        json=body, timeout=60)
        if response.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text}")
        return response.json()

    def start_workers(self, count: int) -> list[subprocess.Popen]:
        before = Worker.count(connection=self.client)
        started = [self._spawn("worker") for _ in range(count)]
        self.workers += started
        deadline = time.monotonic() + 60
        while Worker.count(connection=self.client) < before + count:
            if time.monotonic() > deadline:
                raise RuntimeError("the workers did not start")
            time.sleep(0.05)
        return started

    def stop_workers(self) -> None:
        stop_all(self.workers)
        self.workers = []
        self.client.flushall()

    def running(self) -> int:
        """Match jobs being played now (rq's started registry: both versions keep it)."""
        queue = Queue(QUEUE, connection=self.client, serializer=JSONSerializer)
        return StartedJobRegistry(queue=queue).get_job_count(cleanup=False)

    def bots(self, urls: list[str]) -> list[str]:
        return [self.call("POST", "/bots", {"name": f"bot {time.monotonic_ns()}", "url": url,
                                            "games": engines.names()})["id"] for url in urls]

    def match(self, seats: list[dict], **fields) -> str:
        return self.call("POST", "/matches", {"game": GAME, "seats": seats, **fields})["id"]

    def wait_matches(self, ids: list[str], timeout: float) -> list[dict]:
        deadline = time.monotonic() + timeout
        while True:
            matches = [self.call("GET", f"/matches/{match_id}") for match_id in ids]
            if all(m["status"] in ("finished", "failed") for m in matches):
                return matches
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.label}: matches unfinished after {timeout} s")
            time.sleep(0.2)

    def tournament(self, bots: list[str], rounds: int, timeout: float) -> tuple[float, dict]:
        started = time.perf_counter()
        view = self.call("POST", "/tournaments", {"game": GAME, "bots": bots, "players": 2,
                                                  "rounds": rounds, "deadline_ms": 10000})
        deadline = time.monotonic() + timeout
        while view["status"] != "finished":
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.label}: tournament unfinished after {timeout} s")
            time.sleep(0.1)
            view = self.call("GET", f"/tournaments/{view['id']}")
        return _support.elapsed(started), view

    def close(self) -> None:
        stop_all([*self.workers, self.api_process])


# ----- the figures --------------------------------------------------------------------------
def cpu_per_decision(stack: Stack, bots: list[str], rounds: int) -> tuple[str, float]:
    """The figure, and the CPU ms a decision."""
    workers = stack.start_workers(2)
    before = [_support.cpu_seconds(w.pid) for w in workers]
    seconds, view = stack.tournament(bots, rounds, timeout=300)
    used = sum(_support.cpu_seconds(w.pid) - b for w, b in zip(workers, before, strict=True))
    decisions = sum(stack.call("GET", f"/matches/{m}")["step"] for m in view["matches"])
    stack.stop_workers()
    # three decimals, for a goal of 0.5: the kernel's CPU times are in ticks (10 ms), so
    # the last digit is within ±0.01 ms for ~1,600 decisions
    cpu_ms = used / decisions * 1000
    return (f"{cpu_ms:.3f} CPU ms/decision ({decisions} decisions, "
            f"{len(view['matches']) / seconds:.2f} matches/s)"), cpu_ms


def overhead(stack: Stack, url: str, matches: int) -> tuple[str, float]:
    """The figure, and a bare decision's ms."""
    stack.start_workers(1)
    (bot,) = stack.bots([url])
    match_s = bare_s = 0.0
    decisions = 0
    for seed in range(matches):
        match_id = stack.match([{"kind": "bot", "bot_id": bot}] * 2, seed=seed,
                               deadline_ms=10000)
        (match,) = stack.wait_matches([match_id], timeout=60)
        match_s += (_when(match["finished_at"]) - _when(match["started_at"]))
        record = stack.call("GET", f"/matches/{match_id}/replay")
        bare_s += bare_posts(url, record)
        decisions += len(record["steps"])
    stack.stop_workers()
    return (f"ratio {match_s / bare_s:.3f} ({match_s / decisions * 1e6:.0f} us a decision "
            f"under a worker, {bare_s / decisions * 1e6:.0f} us bare)"), bare_s / decisions * 1000


def against_the_machine(cpu_ms: float, bare_ms: float) -> str:
    """The CPU a decision over a bare decision's time in the same run: the machine's speed
    (which moves the CPU figure by a third from one hour to the next) taken out."""
    return (f"{cpu_ms / bare_ms:.3f} ({cpu_ms:.3f} ms of CPU a decision, a bare "
            f"requests.post decision {bare_ms * 1000:.0f} us)")


def bare_posts(url: str, record: dict) -> float:
    """Seconds to POST the match's decision requests again, one kept-alive Session."""
    engine = engines.get(record["game"])
    state = engine.new_game(record["num_players"], record["seed"], record["options"])
    bodies = []
    for step in record["steps"]:
        bodies.append(orjson.dumps(state_payload(engine, state, record["match_id"],
                                                    step["seat"], step["step"], 10000)))
        state = engine.apply(state, step["action"])
    started = time.perf_counter()
    with requests.Session() as session:
        for body in bodies:
            response = session.post(url, data=body, timeout=10,
                                    headers={"Content-Type": "application/json"})
            response.content  # noqa: B018 - read the whole answer
    return _support.elapsed(started)


def at_once(stack: Stack, url: str, matches: int, workers: int, limit_s: float) -> str:
    """The most matches running at once (and the workers' peak RSS) over `limit_s` s."""
    procs = stack.start_workers(workers)
    bots = stack.bots([url, url])
    seats = [{"kind": "bot", "bot_id": bot} for bot in bots]
    ids = [stack.match(seats, seed=seed, deadline_ms=10000) for seed in range(matches)]
    most = rss = 0
    finished = 0
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        most = max(most, stack.running())
        rss = max(rss, sum(_support.tree_rss_mb(p.pid) for p in procs))
        finished = sum(1 for m in ids if stack.client.hget(f"referee:match:{m}", "status")
                       == b"finished")
        if finished == matches:
            break
        time.sleep(0.1)
    stack.stop_workers()
    return (f"{most} matches at once, {finished}/{matches} finished in {limit_s:g} s, "
            f"workers' RSS {rss:.0f} MB")


def idle_pull_delay(stack: Stack, bots: list[str], pulls: int) -> str:
    stack.start_workers(2)
    alone, _ = stack.tournament(bots, 1, timeout=120)
    idle = [stack.match([{"kind": "pull"}, {"kind": "pull"}], seed=seed,
                        pull_deadline_ms=15000) for seed in range(pulls)]
    deadline = time.monotonic() + 30
    while any(stack.call("GET", f"/matches/{m}")["status"] == "queued" for m in idle):
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    beside, _ = stack.tournament(bots, 1, timeout=120)
    stack.stop_workers()
    return (f"delay {beside - alone:.1f} s ({alone:.1f} s alone, {beside:.1f} s beside "
            f"{pulls} idle pull matches)")


def asked_again(stack: Stack, url: str, log: Path) -> str:
    """kill -9 the worker playing a match once it recorded 8 steps; decisions asked twice."""
    workers = stack.start_workers(2)
    bots = stack.bots([url, url])
    match_id = stack.match([{"kind": "bot", "bot_id": bot} for bot in bots], seed=3,
                           deadline_ms=10000)
    while stack.call("GET", f"/matches/{match_id}")["step"] < 8:
        time.sleep(0.02)
    pids = {w.name: w.pid for w in Worker.all(connection=stack.client)}
    holder = (stack.client.get(f"referee:match:{match_id}:lease") or b"").decode()
    victim = next((pid for name, pid in pids.items()
                   if holder.startswith(name) or holder == f"match-{match_id}"), None)
    for worker in workers:  # the one playing it: named by the lease, or busy with its job
        if worker.pid == victim or _plays(stack, worker.pid, match_id):
            os.killpg(worker.pid, signal.SIGKILL)
    (match,) = stack.wait_matches([match_id], timeout=120)
    asked = Counter(line.split()[1] for line in log.read_text().splitlines()
                    if line.split()[0] == match_id)
    stack.stop_workers()
    again = sum(count - 1 for count in asked.values())
    return f"{again} decisions asked again of {match['step']} played"


def _plays(stack: Stack, pid: int, match_id: str) -> bool:
    """Whether the worker with this pid runs a job of the match (rq's execution index)."""
    worker = next((w for w in Worker.all(connection=stack.client) if w.pid == pid), None)
    return worker is not None and any(match_id in execution.job_id
                                      for execution in worker.get_current_executions())


def _when(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


# ----- running both versions -----------------------------------------------------------------
def baseline_tree(commit: str, into: Path) -> Path | None:
    """The baseline's source tree, checked out beside this one; None when git cannot."""
    done = subprocess.run(["git", "worktree", "add", "--detach", str(into), commit],
                          cwd=_support.ROOT, capture_output=True, text=True)
    return into if done.returncode == 0 else None


def measure(label: str, root: Path, quick: bool, bots: dict[str, str], log: Path) -> list[str]:
    with _support.redis_server() as server:
        stack = Stack(label, root, server)
        try:
            rounds = 1 if quick else 4
            cpu, cpu_ms = cpu_per_decision(stack, stack.bots([bots["20ms lean"]] * 4), rounds)
            slow = stack.bots([bots["20ms"]] * 4)
            cpu_sdk, _ = cpu_per_decision(stack, slow, rounds)
            ratio, bare_ms = overhead(stack, bots["instant"], matches=2 if quick else 20)
            figures = [
                cpu,
                cpu_sdk,
                against_the_machine(cpu_ms, bare_ms),
                ratio,
                at_once(stack, bots["100ms"], 10 if quick else 120, 1, 8 if quick else 30),
                "(not in a quick run)" if quick else
                at_once(stack, bots["100ms"], 200, 2, 30),
                idle_pull_delay(stack, stack.bots([bots["20ms"]] * 3), pulls=1 if quick else 4),
                asked_again(stack, bots["logged"], log),
            ]
        finally:
            stack.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default=BASELINE, help="the commit to compare with")
    parser.add_argument("--quick", action="store_true",
                        help="a tiny run of this version only (smoke test)")
    args = parser.parse_args()
    _support.header("match execution, now and at the baseline, side by side",
                    "CPU <= 0.5 ms/decision; ratio <= 1.15; >= 100 matches at once per "
                    "process; 200 matches on 2 processes in <= 600 MB; no delay from idle "
                    "pull matches; nothing asked again after a dead worker")
    labels = ["CPU ms/decision, 20 ms bots (lean: the goal's figure)",
              "CPU ms/decision, 20 ms bots (the SDK's threaded server)",
              "CPU a decision / a bare decision's time",
              "decision time ratio", "matches at once, 1 process",
              "200 matches, 2 processes", "idle pull matches", "re-asked after kill -9"]
    with tempfile.TemporaryDirectory(prefix="bench-execution-") as scratch:
        log = Path(scratch) / "asked.log"
        bot_processes = [_support.start_slow_bot(delay) for delay in (0.0, 20.0, 100.0)]
        lean = _support.start_slow_bot(20.0, "--lean")
        logged = _support.start_slow_bot(50.0, "--log", str(log))
        urls = {"instant": bot_processes[0][0], "20ms": bot_processes[1][0],
                "100ms": bot_processes[2][0], "20ms lean": lean[0], "logged": logged[0]}
        versions = [("now", _support.ROOT)]
        baseline = None if args.quick else baseline_tree(args.baseline, Path(scratch) / "b")
        if baseline:
            versions.append((f"baseline {args.baseline}", baseline))
        elif not args.quick:
            print(f"baseline {args.baseline}: not available (git worktree failed)")
        try:
            results = {label: measure(label, root, args.quick, urls, log)
                       for label, root in versions}
        finally:
            stop_all([process for _, process in [*bot_processes, lean, logged]])
            if baseline:
                subprocess.run(["git", "worktree", "remove", "--force", str(baseline)],
                               cwd=_support.ROOT, capture_output=True)
    for index, label in enumerate(labels):
        print(f"\n{label}")
        for version, figures in results.items():
            print(f"  {version:>18}: {figures[index]}")
    print(f"\n{_support.load()}")


if __name__ == "__main__":
    main()
