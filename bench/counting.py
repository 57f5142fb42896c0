"""Counting one game's matches from many workers at once (issue 31, sizing): how many
finished matches a second can be counted into one game's ratings, and how often a count
has to start over, with 1, 2, 4 and 8 counting processes.

    python3 bench/counting.py [--counts 1000] [--processes 1,2,4,8] [--quick]

Each process stands for a worker: it counts `--counts` finished two-seat matches of one
game between 50 bots with `tournament.results.count_outcome`, as a worker does after each
match. Counting a match is one optimistic transaction on the game's counted set (WATCH,
read the bots' ratings, work out Elo and Weng-Lin skills in Python, MULTI/EXEC;
docs/architecture.md, "Counting"): a count of another match of the same game in between
makes EXEC fail and the count start over on the new ratings. The processes start
together, once imported; the time is from their start to the last count. tries/count:
the transaction's rounds per match counted (Redis' count of WATCH commands: each round
watches once); Redis CPU: its own, per match counted (`INFO`).
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import time
from typing import Any

import _support
import redis

from tournament import results
from tournament.store import Store

GAME = "aladino"
BOTS = 50


def finished_match(name: str, first: str, second: str) -> tuple[dict, dict]:
    """A finished rated match between two bots, and its replay as the counting reads it."""
    seats = [{"seat": seat, "kind": "bot", "bot_id": bot, "name": bot}
             for seat, bot in enumerate((first, second))]
    match = {"id": name, "game": GAME, "status": "finished", "seats": seats,
             "result": {"ranks": [1, 2], "scores": [30, 20]}, "forfeit": None}
    return match, {"match_id": name, "steps": []}


def count_many(redis_url: str, index: int, counts: int, start: Any, out: Any) -> None:
    """One process: `counts` matches counted once `start` is set; how many it counted."""
    store = Store(redis.Redis.from_url(redis_url))
    rng = random.Random(index)
    matches = [finished_match(f"m{index}-{n}", *(f"bot{b}" for b in rng.sample(range(BOTS), 2)))
               for n in range(counts)]
    start.wait()
    out.put(sum(results.count_outcome(store, match, record) for match, record in matches))


def watches_and_cpu(connection: redis.Redis) -> tuple[int, float]:
    """WATCH commands Redis ran so far, and its CPU seconds."""
    watch = connection.info("commandstats").get("cmdstat_watch", {"calls": 0})
    cpu = connection.info("cpu")
    return int(watch["calls"]), float(cpu["used_cpu_sys"]) + float(cpu["used_cpu_user"])


def measure(processes: int, counts: int) -> str:
    with _support.redis_server() as server:
        connection = redis.Redis.from_url(server.url)
        start, out = multiprocessing.Event(), multiprocessing.Queue()
        workers = [multiprocessing.Process(target=count_many,
                                           args=(server.url, index, counts, start, out))
                   for index in range(processes)]
        for worker in workers:
            worker.start()
        time.sleep(2)  # imports done
        watches, cpu = watches_and_cpu(connection)
        began = time.perf_counter()
        start.set()
        counted = sum(out.get(timeout=600) for _ in workers)
        seconds = time.perf_counter() - began
        tries, redis_cpu = (after - before for after, before in
                            zip(watches_and_cpu(connection), (watches, cpu), strict=True))
        for worker in workers:
            worker.join()
        connection.close()
    if counted != processes * counts:
        raise RuntimeError(f"{counted} counted of {processes * counts}")
    return (f"{processes} processes  {counted:6d} counted in {seconds:6.2f} s  "
            f"{counted / seconds:6.0f} counts/s  {tries / counted:5.2f} tries/count  "
            f"Redis CPU {redis_cpu / counted * 1e6:4.0f} us/count")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", type=int, default=1000, help="matches per process")
    parser.add_argument("--processes", default="1,2,4,8")
    parser.add_argument("--quick", action="store_true", help="a tiny run (tests)")
    args = parser.parse_args()
    if args.quick:
        args.counts, args.processes = 20, "1,2"
    _support.header("counting one game's matches from many processes at once",
                    "how many a second one game's ratings take, and at what waste")
    for processes in map(int, args.processes.split(",")):
        print(measure(processes, args.counts), _support.load(), flush=True)


if __name__ == "__main__":
    main()
