"""Tournament throughput with 1, 2, 4 and 8 `referee worker` processes, against bots that
take 20 ms per move. Goal: 8 workers play at least 7 times as many matches per second as 1.

    python3 bench/tournament_throughput.py [--delay-ms 20] [--seconds 8] [--quick]

Setup: one redis-server; two bot processes (`bench/slow_bot.py`: the SDK's threaded server,
a random move after sleeping 20 ms), four registered bots on them; for each worker count,
that many `referee worker` processes are started and waited for (registered with rq), then
an aladino 2-player tournament sized to about `--seconds` of play is posted through
`tournament.tournaments.create_tournament`, and the clock runs from posting it to its last
match counted. The CPU seconds used meanwhile by the workers (their match processes
included), the bots and Redis are read from /proc, to show what bounds the speed-up.
"""

from __future__ import annotations

import argparse
import time

import _support

import engines
from referee.processes import python_module, stop_all
from tournament import pairing, tournaments
from tournament.store import Store

GOAL = 7.0
GAME = "aladino"
BOTS = 4


def start_workers(count: int, redis_url: str, store: Store) -> list:
    env = _support.child_env(REDIS_URL=redis_url, REFEREE_SECRET="bench",
                             REFEREE_BOT_MAX_MATCHES="64")
    workers = [_support.start(python_module("referee.cli", "worker"), env=env)
               for _ in range(count)]
    _support.wait_workers(store.redis, count)
    return workers


def play_tournament(store: Store, rounds: int, seed: int) -> tuple[float, int, int]:
    """(seconds, matches, decisions) of one tournament from posting to its last count."""
    started = time.perf_counter()
    meta = tournaments.create_tournament(store, {
        "game": GAME, "bots": [f"bench-{i}" for i in range(BOTS)], "players": 2,
        "rounds": rounds, "seed": seed, "options": {}, "policy": {}, "deadline_ms": 10000})
    _support.wait_tournament(store, meta, timeout_s=110)
    spent = _support.elapsed(started)
    return spent, meta["total"], _support.tournament_decisions(store, meta)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--delay-ms", type=float, default=20.0, help="the bots' time per move")
    parser.add_argument("--seconds", type=float, default=8.0,
                        help="about how long each tournament plays")
    parser.add_argument("--workers", default="1,2,4,8", help="worker counts to measure")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    if args.quick:
        args.delay_ms, args.seconds, counts = 1.0, 0.1, [1, 2]
    _support.header(f"tournament throughput, bots taking {args.delay_ms:g} ms per move",
                    f"8 workers >= {GOAL:g}x the matches/s of 1 worker")
    bot_processes = [_support.start_slow_bot(args.delay_ms) for _ in range(2)]
    split: list[tuple[int, int, float, float, float]] = []
    per_round = pairing.match_count(BOTS, 2, 1)
    match_seconds = 35 * (args.delay_ms / 1000 + 0.002)  # about 35 decisions a match
    try:
        with _support.redis_server() as server:
            store = Store.from_url(server.url)
            for index in range(BOTS):
                url = bot_processes[index % len(bot_processes)][0]
                store.save_bot({"id": f"bench-{index}", "name": f"slow {index}", "url": url,
                                "games": engines.names()})
            print(f"{'workers':>7} {'matches':>7} {'seconds':>7} {'matches/s':>9} "
                  f"{'decisions/s':>11} {'speed-up':>8} {'CPU s':>6} {'CPU ms/dec':>10}  load")
            base = None
            for count in counts:
                rounds = max(1, round(args.seconds * count / match_seconds / per_round))
                workers = start_workers(count, server.url, store)
                pids = [w.pid for w in workers] + [p.pid for _, p in bot_processes] + \
                    [server.process.pid]
                cpu_before = [_support.cpu_seconds(pid) for pid in pids]
                try:
                    spent, matches, decisions = play_tournament(store, rounds, count)
                    used = [_support.cpu_seconds(pid) - before
                            for pid, before in zip(pids, cpu_before, strict=True)]
                finally:
                    stop_all(workers)
                cpu = sum(used)
                split.append((count, decisions, sum(used[:count]),
                              sum(used[count:-1]), used[-1]))
                rate = matches / spent
                base = base or rate
                print(f"{count:>7} {matches:>7} {spent:>7.2f} {rate:>9.2f} "
                      f"{decisions / spent:>11.1f} {rate / base:>7.2f}x {cpu:>6.1f} "
                      f"{cpu / decisions * 1000:>10.2f}  {_support.load()}")
    finally:
        stop_all([process for _, process in bot_processes])
    print("\nCPU ms per decision, by process: workers (their match processes included), "
          "bots, Redis")
    for count, decisions, workers_s, bots_s, redis_s in split:
        print(f"{count:>7} workers: {workers_s / decisions * 1000:.2f} + "
              f"{bots_s / decisions * 1000:.2f} + {redis_s / decisions * 1000:.2f}")


if __name__ == "__main__":
    main()
