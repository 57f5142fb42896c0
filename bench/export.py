"""Export speed (issue 30): decision records written per second by `referee export`, from
finished matches stored in Redis as the workers store them. Goal: an export of 100,000
decisions at 50,000 records/s or more.

    python3 bench/export.py [--decisions 100000] [--games aladino,aldabas,caravans] [--quick]

Per game, matches of every setup of the game (its player counts, solo Aldabas included)
are played in-process by seeded random choices until they hold `--decisions` decisions,
then stored finished in a throw-away redis-server (replay, result, results log). Each is
exported to a file as NDJSON with 1 and 2 processes (`--jobs`), as Parquet, and through the
API's page reader (`tournament.export.read_page`, pages of 10,000 records, the admin's
view). A last pass over the same records splits one export's time into its parts: reading
the replays from Redis, the engine re-playing the moves (`apply`), the observations as JSON
(engines.observation_json, legal actions included), and writing the records' JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from pathlib import Path

import _support
import redis.asyncio as aioredis

import engines
from engines.observation_json import ObservationWriter
from referee.commands.export import NdjsonOut, ParquetOut, export
from referee.match.botclient import BotReply
from referee.match.decisions import Decision, MatchRecords
from referee.match.rerun import engine_for, initial_state, state_after
from referee.match.runner import FailurePolicy, MatchPlay
from tournament.export import Cursor, read_page
from tournament.store import Store, new_match_meta
from tournament.store.progress import Progress

GOAL = 50_000


def played(game: str, variant: dict, seed: int, match_id: str) -> dict:
    """A finished, unsigned record of a match of random moves (no HTTP, no bot)."""
    seats = [{"kind": "bot", "bot_id": f"bench-bot-{n}", "name": f"bench-bot-{n}",
              "deadline_ms": 1000, "version": 1} for n in range(variant["num_players"])]
    match = MatchPlay.start(game, seed, variant["options"], seats, FailurePolicy(), match_id)
    rng = random.Random(seed)
    while (seat := match.to_move) is not None:
        legal = match.engine.legal_actions(match.state)
        match.advance(seat, BotReply(rng.choice(legal), None, "", 1.0), legal)
    return match.finish(None)


def records_of(game: str, decisions_wanted: int) -> list[dict]:
    """Records of every setup of `game` in turn until they hold `decisions_wanted` decisions."""
    variants = engines.get(game).variants()
    made: list[dict] = []
    total = seed = 0
    while total < decisions_wanted:
        record = played(game, variants[seed % len(variants)], seed, f"m-{game}-{seed:06d}")
        made.append(record)
        total += len(record["steps"])
        seed += 1
    return made


def store_all(url: str, store: Store, records: list[dict]) -> None:
    """Create every match and store it finished, as a driver does (one event loop)."""
    for record in records:
        engine = engines.get(record["game"])
        seats = [{k: v for k, v in seat.items() if k != "deadline_ms"}
                 for seat in record["seats"]]
        meta = new_match_meta(record["game"], record["game_version"], seats,
                              record["options"], record["seed"], record["policy"], 1000, 1000,
                              match_id=record["match_id"])
        state = engine.new_game(record["num_players"], record["seed"], record["options"])
        store.create_match(meta, state, engine.current_seat(state), {})

    async def finish_all() -> None:
        client = aioredis.Redis.from_url(url)
        progress = Progress(client)
        for record in records:
            match_id = record["match_id"]
            await progress.take_lease(match_id, "bench")
            await progress.start(match_id, record["game"], "bench", record["started_at"])
            await progress.finish(match_id, "bench", record, len(record["seats"]))
        await client.aclose()

    asyncio.run(finish_all())


def timed_export(label: str, store: Store, game: str, folder: Path, output, suffix: str,
                 jobs: int) -> float:
    path = folder / f"{game}-{jobs}.{suffix}"
    summary = export(store, game, output, str(path), jobs=jobs)
    size = path.stat().st_size
    print(f"  {label:28} {summary.records:>8} {summary.seconds:>7.2f} {summary.rate:>10,.0f} "
          f"{size / summary.records:>9,.0f}  {_support.load()}")
    path.unlink()
    return summary.rate


def timed_pages(store: Store, game: str) -> float:
    started, cursor, records = time.perf_counter(), Cursor(), 0
    while True:
        page = read_page(store, game, cursor, 10_000, 1 << 40, 1 << 40)
        records += len(page.lines)
        cursor = page.cursor
        if not page.more:
            break
    spent = _support.elapsed(started)
    print(f"  {'API pages (read_page)':28} {records:>8} {spent:>7.2f} {records / spent:>10,.0f} "
          f"{'':>9}  {_support.load()}")
    return records / spent


def breakdown(store: Store, records: list[dict]) -> None:
    """Where one single-process export's time goes: the loop of `decisions` and
    `MatchRecords.line`, each part timed as it runs."""
    clock = time.perf_counter
    started = clock()
    read = [store.get_replay_steps(record["match_id"]) for record in records]
    spent = {"read replays (Redis)": clock() - started, "engine observation": 0.0,
             "write JSON": 0.0, "engine apply": 0.0}
    count = written = 0
    for record in read:
        engine, head = engine_for(record), MatchRecords.of(record)
        writer = ObservationWriter(engine)
        state = initial_state(engine, record)
        for step in record["steps"]:
            began = clock()
            seen = writer.write(state, step["seat"])
            observed = clock()
            decision = Decision(step["step"], step["seat"], seen.observation,
                                seen.legal_actions_json, step["action"], None)
            written += len(head.line(decision))
            wrote = clock()
            state = state_after(engine, state, step)
            spent["engine observation"] += observed - began
            spent["write JSON"] += wrote - observed
            spent["engine apply"] += clock() - wrote
            count += 1
    total = sum(spent.values())
    print(f"  per record, one process ({count} records, {written / count:,.0f} bytes each):")
    for name, seconds in spent.items():
        print(f"    {name:26} {seconds / count * 1e6:>7.1f} us  {seconds / total:>5.0%}")
    print(f"    {'all':26} {total / count * 1e6:>7.1f} us  -> {count / total:,.0f} records/s")


def bench_game(url: str, store: Store, game: str, wanted: int, folder: Path) -> float:
    started = time.perf_counter()
    records = records_of(game, wanted)
    store_all(url, store, records)
    count = sum(len(record["steps"]) for record in records)
    print(f"\n{game}: {len(records)} matches, {count} decisions (played and stored in "
          f"{_support.elapsed(started):.0f} s)")
    print(f"  {'how':28} {'records':>8} {'s':>7} {'records/s':>10} {'bytes/rec':>9}")
    best = max(timed_export("ndjson, 1 process", store, game, folder, NdjsonOut, "ndjson", 1),
               timed_export("ndjson, --jobs 2", store, game, folder, NdjsonOut, "ndjson", 2))
    timed_export("parquet, 1 process", store, game, folder, ParquetOut, "parquet", 1)
    timed_pages(store, game)
    breakdown(store, records)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--decisions", type=int, default=100_000, help="decisions per game")
    parser.add_argument("--games", default=",".join(engines.names()))
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.decisions = 300
    _support.header("decision records exported per second (referee export)",
                    f"an export of 100,000 decisions at >= {GOAL:,} records/s")
    with (_support.redis_server() as server, tempfile.TemporaryDirectory() as folder):
        store = Store.from_url(server.url)
        rates = {game: bench_game(server.url, store, game, args.decisions, Path(folder))
                 for game in args.games.split(",")}
    print("\nbest records/s per game: " + ", ".join(f"{game} {rate:,.0f}"
                                                    for game, rate in rates.items())
          + f" (goal >= {GOAL:,})")


if __name__ == "__main__":
    main()
