"""API latency with 10,000 finished matches stored: p50 and p99 of GET /ratings/{game} and
GET /matches/{id}, of the rest of the leaderboard page's data (GET /matches?game=G&limit=20,
a bot's latest 200 rating points, GET /games) and of a page of 100 matches of all games,
against `referee serve` (gunicorn, 2 gevent workers). Goal: p99 <= 10 ms.

    python3 bench/api_latency.py [--matches 10000] [--requests 400] [--quick]

Redis is seeded through the store's own functions (`create_match`, a driver's
`tournament.store.progress` writes, `tournament.results.count_finished`), with replays of a few
real matches (played in-process by random seats) copied under new match ids: every match
is rated, so
each bot's Elo history holds about 2,500 points (a page of 200 is read). The client is one
kept-alive `http.client` connection, one request at a time; latency is from sending the
request to reading the whole answer.
"""

from __future__ import annotations

import argparse
import http.client
import random
import time

import _support

import engines
from referee.match import replay
from referee.match.botclient import BotReply
from referee.match.runner import FailurePolicy, run_match
from referee.processes import python_module, stop_all
from tournament import results
from tournament.store import Store

GOAL_MS = 10.0
GAME = "aladino"
BOTS = 8
ADMIN_TOKEN = "bench-admin-token"


class RandomSeat:
    """An in-process seat choosing uniformly among the legal actions."""

    deadline_ms = 1000

    def __init__(self, seed: int):
        self.chooser = random.Random(seed)

    def info(self) -> dict:
        return {"kind": "bot", "bot_id": None, "name": "random", "deadline_ms": 1000}

    async def decide(self, payload: dict) -> BotReply:
        action = self.chooser.choice(payload["legal_actions"])
        return BotReply(action=action, fault=None, raw="", elapsed_ms=0.1)

    async def aclose(self) -> None:
        """Nothing to release."""


def sample_records(count: int) -> list[dict]:
    return [run_match(GAME, seed, {}, [RandomSeat(seed), RandomSeat(seed + 1)],
                      FailurePolicy(), f"sample-{seed}") for seed in range(count)]


def seed_store(store: Store, redis_url: str, matches: int) -> list[str]:
    """Register the bots and store `matches` finished, counted 2-player matches."""
    engine = engines.get(GAME)
    bot_ids = [f"bot-bench{index:02d}" for index in range(BOTS)]
    for bot_id in bot_ids:
        store.save_bot({"id": bot_id, "name": f"random {bot_id[-2:]}",
                        "url": "http://127.0.0.1:9/", "games": engines.names()})
    samples = sample_records(20)
    initial = {record["seed"]: engine.new_game(2, record["seed"], {}) for record in samples}
    pairs = random.Random(1)
    match_ids = []
    for index in range(matches):
        sample = samples[index % len(samples)]
        players = pairs.sample(bot_ids, 2)
        match_id = f"m-bench{index:06d}"
        meta = _support.bot_match_meta(
            match_id, GAME, engine.version, [(bot, f"random {bot[-2:]}") for bot in players],
            sample["seed"], sample["options"], sample["policy"], deadline_ms=1000)
        state = initial[sample["seed"]]
        store.create_match(meta, state, engine.current_seat(state), {})
        record = replay.seal({**sample, "match_id": match_id,
                              "seats": [{**seat, "deadline_ms": 1000}
                                        for seat in meta["seats"]]}, None)
        _support.store_finished(redis_url, match_id, record)
        results.count_finished(store, match_id)
        match_ids.append(match_id)
    return match_ids


def latencies(port: int, paths: list[str]) -> list[float]:
    """Milliseconds per request, one at a time on one kept-alive connection."""
    return _support.timed_gets(port, paths)[0]


def report(label: str, spent: list[float], size: int) -> None:
    p50, p99 = _support.percentile(spent, 0.50), _support.percentile(spent, 0.99)
    verdict = "ok" if p99 <= GOAL_MS else "over the goal"
    print(f"{label:36} {len(spent):>5} {size:>9,} {p50:>7.2f} {p99:>7.2f} {max(spent):>7.2f}"
          f"  {verdict:13} {_support.load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=10000)
    parser.add_argument("--requests", type=int, default=400, help="requests per endpoint")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.matches, args.requests = 30, 20
    _support.header(f"API latency with {args.matches:,} finished matches stored",
                    f"p99 <= {GOAL_MS:g} ms")
    with _support.redis_server() as server:
        store = Store.from_url(server.url)
        started = time.perf_counter()
        match_ids = seed_store(store, server.url, args.matches)
        print(f"seeded {len(match_ids):,} matches in {_support.elapsed(started):.1f} s")
        port = _support.free_port()
        api = _support.start(
            python_module("referee.cli", "serve", "--port", str(port)), port,
            env=_support.child_env(REDIS_URL=server.url, REFEREE_ADMIN_TOKEN=ADMIN_TOKEN))
        try:
            run(port, match_ids, args.requests)
        finally:
            stop_all([api])


def run(port: int, match_ids: list[str], count: int) -> None:
    chooser = random.Random(2)
    endpoints = {
        f"GET /ratings/{GAME}": [f"/ratings/{GAME}"] * count,
        "GET /matches/{id}": [f"/matches/{chooser.choice(match_ids)}" for _ in range(count)],
        f"GET /matches?game={GAME}&limit=20": [f"/matches?game={GAME}&limit=20"] * count,
        f"GET /ratings/{GAME}/history, 200 pts": [
            f"/ratings/{GAME}/history?bot=bot-bench00&offset={max(0, len(match_ids) // 4 - 200)}"
            "&limit=200"] * count,
        "GET /matches?limit=100": ["/matches?limit=100"] * count,
        "GET /games": ["/games"] * count,
    }
    print(f"{'endpoint':36} {'reqs':>5} {'bytes':>9} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'max ms':>7}  verdict")
    for label, paths in endpoints.items():
        latencies(port, paths[:20])  # warm up every gunicorn thread's connections
        size = _body_size(port, paths[0])
        report(label, latencies(port, paths), size)


def _body_size(port: int, path: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", path)
    size = len(connection.getresponse().read())
    connection.close()
    return size


if __name__ == "__main__":
    main()
