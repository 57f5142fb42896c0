"""API latency under load while a tournament runs on the same machine: p50, p99 and errors
of GET /ratings/{game}, GET /matches?limit=20 and GET /matches/{id} with 50 concurrent
clients. Goal: p99 <= 50 ms for each, 0 errors.

    python3 bench/api_load.py [--clients 50] [--seconds 30] [--think-ms 100]
                              [--bots-nice 10] [--worker-nice N] [--idle] [--quick]

Setup: one redis-server; bots answering at once (`bench/slow_bot.py --delay-ms 0`), four
registered; `referee serve` (gunicorn, 2 gevent workers) and two `referee worker`s. A first
round-robin of `--matches` aladino matches is played to its end (so ratings, histories and
finished matches exist), then a second one is posted and the load runs while it plays.
The workers run at their default settings: `referee worker` gives itself nice 19 (and its
session's autogroup, and an idle cgroup when it may) as it starts (`REFEREE_WORKER_NICE`;
`--worker-nice` sets it for the run, 0: the API's share). The bots stand in for bots on
other machines, so they run at a lower share (`--bots-nice`; 0: the same). `--idle` posts
no second tournament: the same load on the API alone, what the API costs by itself.
CPU seconds are read from /proc for each group of processes and for the whole machine.

The load: `--clients` clients in one asyncio process, each on its own kept-alive HTTP/1.1
connection, each asking the three endpoints in turn (the match: one of the finished ones,
at random) and pausing `--think-ms` (uniformly 0.5x to 1.5x) between answers, as people
and scripts browsing do; `--think-ms 0` makes each client ask again at once (a closed
loop, where latency is the clients' count over the server's throughput). Latency is from
writing the request to reading the whole answer; an error is any answer other than 200 or
a broken connection.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
from pathlib import Path

import _support

import engines
from referee.processes import python_module, stop_all
from tournament import pairing, tournaments
from tournament.store import Store, tournament_key

TICKS = os.sysconf("SC_CLK_TCK")
GOAL_MS = 50.0
GAME = "aladino"
BOTS = 4
WORKERS = 2
ADMIN_TOKEN = "bench-admin-token"


class Client:
    """One kept-alive HTTP/1.1 connection asking GET requests."""

    def __init__(self, port: int):
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str) -> int:
        """The answer's status, its whole body read."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = next(int(line.split(":", 1)[1]) for line in lines
                      if line.lower().startswith("content-length:"))
        await self.reader.readexactly(length)
        return int(lines[0].split()[1])

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            await self.writer.wait_closed()
            self.writer = None


async def browse(port: int, paths: list[tuple[str, callable]], until: float, think_s: float,
                 seed: int, spent: dict[str, list[float]], errors: dict[str, int]) -> None:
    """One client: the endpoints in turn until `until`, pausing about `think_s` between."""
    chooser = random.Random(seed)
    client = Client(port)
    turn = chooser.randrange(len(paths))
    while time.monotonic() < until:
        label, path = paths[turn % len(paths)]
        turn += 1
        started = time.perf_counter()
        try:
            status = await client.get(path(chooser))
        except (OSError, asyncio.IncompleteReadError, ValueError, StopIteration):
            status = 0
            await client.close()
        spent[label].append((time.perf_counter() - started) * 1000)
        if status != 200:
            errors[label] += 1
        if think_s:
            await asyncio.sleep(think_s * chooser.uniform(0.5, 1.5))
    await client.close()


async def load(port: int, match_ids: list[str], clients: int, seconds: float,
               think_s: float) -> tuple[dict[str, list[float]], dict[str, int]]:
    paths = [(f"GET /ratings/{GAME}", lambda _: f"/ratings/{GAME}"),
             ("GET /matches?limit=20", lambda _: "/matches?limit=20"),
             ("GET /matches/{id}", lambda chooser: f"/matches/{chooser.choice(match_ids)}")]
    spent: dict[str, list[float]] = {label: [] for label, _ in paths}
    errors = dict.fromkeys(spent, 0)
    until = time.monotonic() + seconds
    await asyncio.gather(*(browse(port, paths, until, think_s, seed, spent, errors)
                           for seed in range(clients)))
    return spent, errors


def tree_cpu_s(pid: int, descendants: bool = True) -> float:
    """CPU seconds (user + system) of a process and (unless not asked) its live
    descendants."""
    parents: dict[int, int] = {}
    spent: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
            spent[int(entry.name)] = (int(fields[11]) + int(fields[12])) / TICKS
    family, grew = {pid}, descendants
    while grew:
        more = {child for child, parent in parents.items() if parent in family} - family
        family |= more
        grew = bool(more)
    return sum(spent.get(member, 0.0) for member in family)


def group_cpu_s(pids: list[int]) -> float:
    """CPU seconds of processes with their descendants (a negative pid: without)."""
    return sum(tree_cpu_s(abs(pid), descendants=pid > 0) for pid in pids)


def machine_cpu_s() -> float:
    """Busy CPU seconds of the whole machine (every core) since boot."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / TICKS


def lower_priority(pid: int, nice: int) -> None:
    """Give a process (in a session of its own) a lower CPU share: its nice value, and its
    session's autogroup's (with autogroup scheduling, nice only orders a session's own
    processes; the sessions share the CPU by their autogroups' nice values)."""
    os.setpriority(os.PRIO_PROCESS, pid, nice)
    autogroup = Path(f"/proc/{pid}/autogroup")
    if autogroup.exists():
        autogroup.write_text(str(nice))


def start_workers(redis_url: str, store: Store, nice: int | None) -> list:
    """The workers, at their default priority unless `nice` is given."""
    env = _support.child_env(REDIS_URL=redis_url, REFEREE_SECRET="bench",
                             REFEREE_BOT_MAX_MATCHES="1000")
    if nice is None:
        env.pop("REFEREE_WORKER_NICE", None)
    else:
        env["REFEREE_WORKER_NICE"] = str(nice)
    workers = [_support.start(python_module("referee.cli", "worker"), env=env)
               for _ in range(WORKERS)]
    _support.wait_workers(store.redis, WORKERS)
    return workers


def post_tournament(store: Store, matches: int, seed: int) -> dict:
    per_round = pairing.match_count(BOTS, 2, 1)
    return tournaments.create_tournament(store, {
        "game": GAME, "bots": [f"bot-bench{i}" for i in range(BOTS)], "players": 2,
        "rounds": max(1, round(matches / per_round)), "seed": seed, "options": {},
        "policy": {}, "deadline_ms": 10000})


def report(spent: dict[str, list[float]], errors: dict[str, int], seconds: float,
           running: str, cpu: dict[str, float]) -> None:
    total = sum(len(values) for values in spent.values())
    print(f"{total:,} requests in {seconds:g} s ({total / seconds:,.0f}/s); {running}")
    print("CPU seconds meanwhile: " + ", ".join(f"{name} {value:.1f}"
                                                for name, value in cpu.items()))
    print(f"API CPU per request: {cpu['API'] / total * 1000:.2f} ms")
    print(f"{'endpoint':24} {'reqs':>6} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'errors':>6}"
          "  verdict")
    for label, values in spent.items():
        p50, p99 = _support.percentile(values, 0.5), _support.percentile(values, 0.99)
        ok = p99 <= GOAL_MS and errors[label] == 0
        print(f"{label:24} {len(values):>6} {p50:>7.1f} {p99:>7.1f} {max(values):>7.1f} "
              f"{errors[label]:>6}  {'ok' if ok else 'over the goal'}")
    print(_support.load())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--think-ms", type=float, default=100.0,
                        help="mean pause of a client between an answer and its next request")
    parser.add_argument("--matches", type=int, default=600,
                        help="matches played before the load (and in the tournament during it)")
    parser.add_argument("--bots-nice", type=int, default=10,
                        help="the niceness of the bots, stand-ins for bots on other machines "
                             "(0: as the API)")
    parser.add_argument("--worker-nice", type=int, default=None,
                        help="REFEREE_WORKER_NICE for the workers (default: theirs, 19; "
                             "0: as the API); see docs/operations.md")
    parser.add_argument("--idle", action="store_true",
                        help="no tournament during the load: the API's own latency, the "
                             "baseline the goal is measured against")
    parser.add_argument("--quick", action="store_true",
                        help="a tiny run (smoke test), its workers at the API's share unless "
                             "--worker-nice says otherwise: at their default, idle, a machine "
                             "kept busy by others would never let them play")
    args = parser.parse_args()
    if args.quick:
        args.clients, args.seconds, args.matches = 5, 2.0, 12
        args.worker_nice = 0 if args.worker_nice is None else args.worker_nice
    workers_nice = ("their default nice" if args.worker_nice is None
                    else f"nice {args.worker_nice}")
    _support.header(f"API latency, {args.clients} clients (think {args.think_ms:g} ms) while a "
                    f"tournament runs (workers at {workers_nice}, bots at nice {args.bots_nice})",
                    f"p99 <= {GOAL_MS:g} ms, 0 errors")
    bots = [_support.start_slow_bot(0) for _ in range(2)]
    for _, bot in bots:
        lower_priority(bot.pid, args.bots_nice)
    children = []
    try:
        with _support.redis_server() as server:
            store = Store.from_url(server.url)
            for index in range(BOTS):
                store.save_bot({"id": f"bot-bench{index}", "name": f"instant {index}",
                                "url": bots[index % len(bots)][0], "games": engines.names()})
            children += start_workers(server.url, store, args.worker_nice)
            started = time.perf_counter()
            first = post_tournament(store, args.matches, seed=1)
            _support.wait_tournament(store, first, timeout_s=1800, poll_s=0.2)
            match_ids = _support.tournament_match_ids(store, first)
            print(f"played {len(match_ids):,} matches in {_support.elapsed(started):.0f} s")
            port = _support.free_port()
            children.append(_support.start(
                python_module("referee.cli", "serve", "--port", str(port)), port,
                env=_support.child_env(REDIS_URL=server.url, REFEREE_ADMIN_TOKEN=ADMIN_TOKEN)))
            second = None if args.idle else post_tournament(store, min(args.matches * 10, 4800),
                                                            seed=2)
            groups = {"API": [children[-1].pid], "workers": [w.pid for w in children[:-1]],
                      "bots": [p.pid for _, p in bots], "Redis": [server.process.pid],
                      "load client": [-os.getpid()]}
            before = ({name: group_cpu_s(pids) for name, pids in groups.items()},
                      machine_cpu_s())
            spent, errors = asyncio.run(load(port, match_ids, args.clients, args.seconds,
                                             args.think_ms / 1000))
            cpu = {name: group_cpu_s(pids) - before[0][name] for name, pids in groups.items()}
            cpu["other sessions"] = machine_cpu_s() - before[1] - sum(cpu.values())
            if second is None:
                played = "no tournament meanwhile (--idle)"
            else:
                done = store.redis.scard(tournament_key(second["id"], "done"))
                played = (f"the tournament played {done:,} of its {second['total']:,} "
                          "matches meanwhile")
            report(spent, errors, args.seconds, played, cpu)
    finally:
        stop_all(children + [process for _, process in bots])


if __name__ == "__main__":
    main()
