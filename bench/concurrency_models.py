"""How to wait for many bots at once: the measurement behind `referee worker`'s design.

    python3 bench/concurrency_models.py [--matches 100] [--decisions 20] [--delay-ms 100]

`--matches` loops run at once in one process, each asking a bot (the SDK's threaded bot
behind a `--delay-ms` sleep, another process) `--decisions` times on its own kept-alive
connection, as a match asks its seats. Three ways to run them:
- threads + requests: a thread per match, `requests.Session.post` (round 1's client);
- asyncio + httptools: one event loop, `referee.match.botclient.BotClient` (its requests written
  whole, its answers read with httptools, over asyncio streams);
- asyncio + threads + requests: one event loop handing each call to a thread pool
  (`asyncio.to_thread`), i.e. keeping the blocking client under an async driver.
For each: wall time, CPU microseconds per decision of this process, and its peak RSS so far
(the models run in this order in one process). The engine, Redis and rq cost the same in
every model and are left out.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import resource
import threading
import time

import _support
import orjson
import requests

from referee.match.botclient import BotClient
from referee.processes import stop_all

PAYLOAD = {"protocol": "referee/1", "type": "decision", "match_id": "m", "seat": 0, "step": 0,
           "deadline_ms": 10000, "observation": {"pad": "x" * 4000},
           "legal_actions": [{"type": "move", "direction": d} for d in range(6)]}


def threads_requests(url: str, matches: int, decisions: int) -> None:
    body = orjson.dumps(PAYLOAD)

    def one_match() -> None:
        with requests.Session() as session:
            session.trust_env = False
            for _ in range(decisions):
                session.post(url, data=body, timeout=10,
                             headers={"Content-Type": "application/json"}).json()

    threads = [threading.Thread(target=one_match) for _ in range(matches)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


async def asyncio_httptools(url: str, matches: int, decisions: int) -> None:
    async def one_match() -> None:
        client = BotClient(url, 10000)
        for _ in range(decisions):
            reply = await client.decide(PAYLOAD)
            assert reply.fault is None, reply.detail
        await client.aclose()

    await asyncio.gather(*(one_match() for _ in range(matches)))


async def asyncio_threads(url: str, matches: int, decisions: int) -> None:
    body = orjson.dumps(PAYLOAD)

    async def one_match() -> None:
        with requests.Session() as session:
            session.trust_env = False
            for _ in range(decisions):
                await asyncio.to_thread(lambda: session.post(
                    url, data=body, timeout=10,
                    headers={"Content-Type": "application/json"}).json())

    asyncio.get_running_loop().set_default_executor(
        concurrent.futures.ThreadPoolExecutor(matches))
    await asyncio.gather(*(one_match() for _ in range(matches)))


def measure(label: str, run, decisions: int) -> None:
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    cpu, wall = time.process_time() - cpu, _support.elapsed(wall)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{label:28} {wall:>7.2f} s {cpu / decisions * 1e6:>9.0f} us/dec {rss:>8.0f} MB  "
          f"{_support.load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=100)
    parser.add_argument("--decisions", type=int, default=20)
    parser.add_argument("--delay-ms", type=float, default=100.0)
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.matches, args.decisions, args.delay_ms = 4, 3, 1.0
    _support.header(f"{args.matches} matches at once in one process, bots taking "
                    f"{args.delay_ms:g} ms", "the least CPU per decision at this concurrency")
    url, bot = _support.start_slow_bot(args.delay_ms)
    total = args.matches * args.decisions
    print(f"{'model':28} {'wall':>9} {'CPU':>15} {'peak RSS':>11}")
    try:
        measure("asyncio + httptools (referee)",
                lambda: asyncio.run(asyncio_httptools(url, args.matches, args.decisions)),
                total)
        measure("threads + requests",
                lambda: threads_requests(url, args.matches, args.decisions), total)
        measure("asyncio + threads + requests",
                lambda: asyncio.run(asyncio_threads(url, args.matches, args.decisions)), total)
    finally:
        stop_all([bot])


if __name__ == "__main__":
    main()
