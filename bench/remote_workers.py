"""Workers on other machines, simulated (issue 31): the referee's CPU per decision and its
matches per second when each `referee worker` runs on a machine of its own and reaches
Redis through a link that adds 1 ms each way, beside the same with the workers on this
host, in one run.

    python3 bench/remote_workers.py [--matches 48] [--delay-ms 1] [--quick]   (as root)

Setup, for each of the two: a redis-server on loopback; bots (`bench/slow_bot.py`, the
SDK's threaded random bot) answering after 20 ms, and others at once; two `referee
worker`s, at their default settings. "Remote": each worker in a network namespace of its
own, joined by a veth pair to a bridge on this host (tests/support/netns.py), reaching
Redis through a TCP proxy that holds every byte `--delay-ms` each way (a process of its
own: tests/support/delay_proxy.py) and the bots on the bridge's address. Figures:
1. CPU ms per decision: the workers' CPU seconds (read from /proc) / decisions, over a
   round-robin of `--matches` matches against the 20 ms bots;
2. matches/s: a round-robin of `--matches` matches against the instant bots, from posting
   it (`tournament.tournaments.create_tournament`) to its last match counted;
3. the Redis round trip a worker sees (PING, from the worker's machine);
4. what Redis does per decision in the instant round-robin (for sizing it:
   docs/operations.md): its CPU (from /proc), commands and bytes in and out (`INFO`).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import _support

import engines
from referee.processes import python_module, stop_all
from referee.redis_server import free_port, wait_for_port
from tests.support.delay_proxy import start_proxy
from tests.support.netns import Machine, Network
from tournament import pairing, tournaments
from tournament.store import Store

GAME = "aladino"
BOTS = 4
WORKERS = 2
THINKING_MS = 20.0
PINGS = 200
PING_SCRIPT = ("import redis,sys,time; c=redis.Redis.from_url(sys.argv[1]); c.ping(); "
               "t=time.perf_counter(); [c.ping() for _ in range({n})]; "
               "print((time.perf_counter()-t)/{n}*1000)")


class Setup:
    """One way of placing the workers: its Redis URL as they see it, where its bots listen,
    and how a command runs on a worker's machine."""

    def __init__(self, label: str, machines: list[Machine] | None, bot_host: str):
        self.label, self.machines, self.bot_host = label, machines, bot_host

    def command(self, index: int, argv: list[str]) -> list[str]:
        return argv if self.machines is None else self.machines[index].command(argv)


def start_bot(host: str, delay_ms: float) -> tuple[str, subprocess.Popen]:
    port = free_port()
    process = _support.start([sys.executable, str(_support.ROOT / "bench" / "slow_bot.py"),
                              "--host", host, "--port", str(port), "--delay-ms",
                              str(delay_ms)])
    wait_for_port(port, host=host)
    return f"http://{host}:{port}/", process


def play(store: Store, bots: list[str], matches: int, seed: int) -> tuple[float, int, int]:
    """(seconds, matches, decisions) of a round-robin from posting to its last count."""
    per_round = pairing.match_count(BOTS, 2, 1)
    started = time.perf_counter()
    meta = tournaments.create_tournament(store, {
        "game": GAME, "bots": bots, "players": 2, "rounds": max(1, round(matches / per_round)),
        "seed": seed, "options": {}, "policy": {}, "deadline_ms": 10000})
    _support.wait_tournament(store, meta, timeout_s=600)
    spent = _support.elapsed(started)
    return spent, meta["total"], _support.tournament_decisions(store, meta)


def round_trip_ms(setup: Setup, url: str) -> float:
    done = subprocess.run(
        setup.command(0, [sys.executable, "-c", PING_SCRIPT.format(n=PINGS), url]),
        capture_output=True, text=True, check=True, cwd=_support.ROOT)
    return float(done.stdout)


def measure(setup: Setup, network: Network, args: argparse.Namespace) -> dict[str, float]:
    with _support.redis_server() as server:
        store = Store.from_url(server.url)
        proxy = None
        url = server.url
        if setup.machines is not None:
            port = free_port()
            proxy = start_proxy((network.host, port), ("127.0.0.1", server.port), args.delay_ms)
            url = f"redis://{network.host}:{port}/0"
        bots = [start_bot(setup.bot_host, delay) for delay in (args.thinking_ms, 0.0)]
        for index in range(BOTS):
            for kind, (bot_url, _) in zip(("thinking", "instant"), bots, strict=True):
                store.save_bot({"id": f"{kind}-{index}", "name": f"{kind} {index}",
                                "url": bot_url, "games": engines.names()})
        env = _support.child_env(REDIS_URL=url, REFEREE_SECRET="bench",
                                 REFEREE_BOT_MAX_MATCHES="1000",
                                 REFEREE_BOT_HOSTS=f"127.0.0.0/8,{network.subnet}")
        workers = [_support.start(setup.command(n, python_module("referee.cli", "worker")),
                                  env=env) for n in range(WORKERS)]
        try:
            _support.wait_workers(store.redis, WORKERS)
            before = sum(_support.cpu_seconds(worker.pid) for worker in workers)
            _, _, decisions = play(store, [f"thinking-{i}" for i in range(BOTS)],
                                   args.matches, seed=1)
            cpu = sum(_support.cpu_seconds(worker.pid) for worker in workers) - before
            redis_before = redis_figures(store, server.process.pid)
            seconds, matches, instant = play(store, [f"instant-{i}" for i in range(BOTS)],
                                             args.matches, seed=2)
            redis_used = {key: value - redis_before[key]
                          for key, value in redis_figures(store, server.process.pid).items()}
            rtt = round_trip_ms(setup, url)
        finally:
            stop_all([*workers, *(process for _, process in bots),
                      *([proxy] if proxy else [])])
        store.redis.close()
    return {"decisions": decisions, "cpu_ms": cpu / decisions * 1000, "matches": matches,
            "seconds": seconds, "rate": matches / seconds, "rtt": rtt,
            **{key: value / instant for key, value in redis_used.items()}}


def redis_figures(store: Store, pid: int) -> dict[str, float]:
    """Redis's CPU (µs), commands and network bytes so far."""
    stats = store.redis.info("stats")
    return {"redis_cpu_us": _support.cpu_seconds(pid) * 1e6,
            "commands": stats["total_commands_processed"],
            "bytes_in": stats["total_net_input_bytes"],
            "bytes_out": stats["total_net_output_bytes"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=48, help="matches per round-robin")
    parser.add_argument("--delay-ms", type=float, default=1.0,
                        help="what the link to Redis adds, each way")
    parser.add_argument("--thinking-ms", type=float, default=THINKING_MS,
                        help="the thinking bots' time per move")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.matches, args.thinking_ms = 12, 1.0
    _support.header(f"workers on other machines: {WORKERS} workers, each on a machine of its "
                    f"own behind a link of {args.delay_ms:g} ms each way, beside the same on "
                    "this host", "the figures of the remote setup, measured (no goal of "
                    "their own: docs/performance.md compares them)")
    with Network() as network:
        setups = [Setup("workers on this host (loopback)", None, "127.0.0.1"),
                  Setup(f"{WORKERS} machines, {args.delay_ms:g} ms each way",
                        [network.machine() for _ in range(WORKERS)], network.host)]
        print(f"{'setup':34} {'decisions':>9} {'CPU ms/dec':>10} {'matches':>7} "
              f"{'seconds':>7} {'matches/s':>9} {'Redis RTT ms':>12}  load")
        measured = []
        for setup in setups:
            got = measure(setup, network, args)
            measured.append((setup, got))
            print(f"{setup.label:34} {got['decisions']:>9.0f} {got['cpu_ms']:>10.2f} "
                  f"{got['matches']:>7.0f} {got['seconds']:>7.2f} {got['rate']:>9.2f} "
                  f"{got['rtt']:>12.2f}  {_support.load()}")
    print("\nRedis per decision (instant bots): CPU µs, commands, bytes in, bytes out")
    for setup, got in measured:
        print(f"{setup.label:34} {got['redis_cpu_us']:>7.0f} {got['commands']:>8.1f} "
              f"{got['bytes_in']:>8.0f} {got['bytes_out']:>9.0f}")
    print(f"(CPU: the workers' only, against bots taking {args.thinking_ms:g} ms; matches/s: "
          f"against bots answering at once)")


if __name__ == "__main__":
    main()
