"""Redis memory per finished match, for every game and player count, and what archiving
leaves. Goals: <= 8 KiB per finished match (rq's bookkeeping included), <= 1 KiB per
archived match.

    python3 bench/storage.py [--matches 500] [--games aladino,caravans] [--quick]

Setup: one redis-server without persistence; two bot processes answering at once
(`bench/slow_bot.py --delay-ms 0`), four registered bots; two `referee worker` processes.
For each game and player count (2, 3, 4): a warm-up tournament (so that the game's
ratings and rq's own keys exist), then `used_memory` is read, a round-robin tournament of
about `--matches` matches is posted and played to its last count, the queue drains and
`used_memory` is read again: the growth divided by the matches is the figure, everything
included (the match, its replay, the indexes, the counted set, Elo history, the
tournament's tallies, rq's leftovers). Then `referee archive --older-than 0s` moves their
replays to a temporary directory and `used_memory` is read a third time.

Besides the growth, `own` is the `MEMORY USAGE` of the match's own keys (`match:{id}` and
`match:{id}:replay`); the rest of the growth is shared structures (indexes, ratings,
tournament tallies). Client buffers are not data: `used_memory` is read once Redis has
trimmed them (an idle second), and `mem_clients_normal` is subtracted.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time

import _support

import engines
from referee.processes import python_module, stop_all
from tournament import pairing, tournaments
from tournament.store import MATCH_QUEUE, Store, match_key, running_key, tournament_key

GOAL_FINISHED = 8 * 1024
GOAL_ARCHIVED = 1024
BOTS = 4
WORKERS = 2
SETTLE_S = 1.5


def data_memory(store: Store) -> int:
    """`used_memory` without client buffers, once they are trimmed."""
    time.sleep(SETTLE_S)
    info = store.redis.info("memory")
    return info["used_memory"] - info.get("mem_clients_normal", 0)


def play(store: Store, game: str, players: int, matches: int, seed: int) -> list[str]:
    """Post a round-robin of about `matches` matches, wait until every one is counted and
    the queue is drained; its match ids."""
    per_round = pairing.match_count(BOTS, players, 1)
    options = {"mode": "multi"} if game == "aldabas" else {}
    meta = tournaments.create_tournament(store, {
        "game": game, "bots": [f"bot-bench{i}" for i in range(BOTS)], "players": players,
        "rounds": max(1, round(matches / per_round)), "seed": seed, "options": options,
        "policy": {}, "deadline_ms": 10000})
    deadline = time.monotonic() + 1800
    while True:
        with store.redis.pipeline(transaction=False) as pipe:
            pipe.scard(tournament_key(meta["id"], "done"))
            pipe.scard(tournament_key(meta["id"], "failed"))
            pipe.llen(f"rq:queue:{MATCH_QUEUE}")
            pipe.zcard(running_key())
            done, failed, queued, running = pipe.execute()
        if done + failed >= meta["total"] and not queued and not running:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"{game} tournament not over within 30 minutes")
        time.sleep(0.1)
    return [i.decode() for i in store.redis.lrange(tournament_key(meta["id"], "matches"),
                                                   0, -1)]


def own_bytes(store: Store, match_ids: list[str]) -> float:
    """Mean MEMORY USAGE of a match's own keys (hash and stored replay)."""
    with store.redis.pipeline(transaction=False) as pipe:
        for match_id in match_ids:
            pipe.memory_usage(match_key(match_id), samples=0)
            pipe.memory_usage(match_key(match_id, "replay"), samples=0)
        sizes = pipe.execute()
    return sum(size or 0 for size in sizes) / len(match_ids)


def archive_all(redis_url: str, directory: str) -> None:
    done = subprocess.run(python_module("referee.cli", "archive", "--older-than", "0s",
                                        "--archive-dir", directory),
                          env=_support.child_env(REDIS_URL=redis_url), cwd=_support.ROOT,
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"referee archive failed: {done.stderr[-2000:]}")


def start_workers(redis_url: str, store: Store) -> list:
    env = _support.child_env(REDIS_URL=redis_url, REFEREE_SECRET="bench",
                             REFEREE_BOT_MAX_MATCHES="1000")
    workers = [_support.start(python_module("referee.cli", "worker"), env=env)
               for _ in range(WORKERS)]
    _support.wait_workers(store.redis, WORKERS)
    return workers


def verdict(value: float, goal: int) -> str:
    return "ok" if value <= goal else "over"


def measure(store: Store, redis_url: str, game: str, players: int, matches: int,
            archive_dir: str) -> None:
    play(store, game, players, 1, seed=players)  # warm-up: the game's keys exist
    archive_all(redis_url, archive_dir)
    before = data_memory(store)
    ids = play(store, game, players, matches, seed=100 + players)
    finished = data_memory(store)
    own_finished = own_bytes(store, ids)
    archive_all(redis_url, archive_dir)
    archived = data_memory(store)
    own_archived = own_bytes(store, ids)
    per_finished = (finished - before) / len(ids)
    per_archived = (archived - before) / len(ids)
    print(f"{game:9} {players:>7} {len(ids):>7} {per_finished:>9,.0f} {own_finished:>7,.0f} "
          f"{verdict(per_finished, GOAL_FINISHED):>4} {per_archived:>9,.0f} "
          f"{own_archived:>7,.0f} {verdict(own_archived, GOAL_ARCHIVED):>4}  {_support.load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=500, help="matches per measurement")
    parser.add_argument("--games", default=",".join(engines.names()))
    parser.add_argument("--players", default="2,3,4")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    counts = [int(n) for n in args.players.split(",")]
    if args.quick:  # one game, one player count: the smoke test of the suite
        args.matches, counts, args.games = 12, [2], args.games.split(",")[0]
    _support.header("Redis memory per finished match, and per archived match",
                    f"<= {GOAL_FINISHED:,} bytes per finished match (all included), "
                    f"<= {GOAL_ARCHIVED:,} bytes of own keys per archived match")
    bots = [_support.start_slow_bot(0) for _ in range(2)]
    try:
        with _support.redis_server() as server, tempfile.TemporaryDirectory() as archive_dir:
            store = Store.from_url(server.url)
            for index in range(BOTS):
                store.save_bot({"id": f"bot-bench{index}", "name": f"instant {index}",
                                "url": bots[index % len(bots)][0], "games": engines.names()})
            workers = start_workers(server.url, store)
            print("bytes per match: growth of used_memory (all included) / own keys "
                  "(match hash + stored replay)")
            print(f"{'game':9} {'players':>7} {'matches':>7} {'finished':>9} {'own':>7} "
                  f"{'goal':>4} {'archived':>9} {'own':>7} {'goal':>4}  load")
            try:
                for game in args.games.split(","):
                    engine = engines.get(game)
                    for players in counts:
                        if engine.min_players <= players <= engine.max_players:
                            measure(store, server.url, game, players, args.matches,
                                    archive_dir)
            finally:
                stop_all(workers)
    finally:
        stop_all([process for _, process in bots])


if __name__ == "__main__":
    main()
