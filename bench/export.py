"""Export speed (issue 30): decision records written per second by `referee export`, from
finished matches stored in Redis as the workers store them. Goal: an export of 100,000
decisions at 50,000 records/s or more.

    python3 bench/export.py [--decisions 100000] [--games aladino,aldabas,caravans] [--quick]

Per game, matches of every setup of the game (its player counts, solo Aldabas included)
are played in-process by seeded random choices, each decision's observation written as a
driver writes it to send it (`MatchPlay.payload`), until they hold `--decisions` decisions,
then stored finished in a throw-away redis-server (replay, the decisions the driver kept,
result, results log). Each is exported to a file as NDJSON with 1 and 2 processes
(`--jobs`), as Parquet, and through the API's page reader (`tournament.export.read_page`,
pages of 10,000 records, the admin's view); then, the kept decisions deleted (as for an
archived match, or one that several drivers played in parts), as NDJSON again: every match
played again by the engine. Two last passes split one export's time into its parts: from
the kept decisions (reading them and the replays from Redis, unpacking them, writing the
records' JSON), and playing the match again (reading the replays, the engine re-playing
the moves, the observations as JSON, writing the records' JSON).
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
from referee.match.decisions import Decision, MatchRecords, unpack_kept
from referee.match.rerun import engine_for, initial_state, state_after
from referee.match.runner import FailurePolicy, MatchPlay
from tournament.export import Cursor, Sources, read_page
from tournament.store import Store, new_match_meta
from tournament.store.keys import MatchPart, match_key
from tournament.store.progress import Progress

GOAL = 50_000
KEEP_S = 3600  # REFEREE_KEEP_DECISIONS_S of the workers that stored the matches


Played = tuple[dict, bytes | None]  # a finished record, the decisions its driver kept


def played(game: str, variant: dict, seed: int, match_id: str) -> Played:
    """A finished, unsigned record of a match of random moves (no HTTP, no bot), and the
    decisions kept as a driver keeps them."""
    seats = [{"kind": "bot", "bot_id": f"bench-bot-{n}", "name": f"bench-bot-{n}",
              "deadline_ms": 1000, "version": 1} for n in range(variant["num_players"])]
    match = MatchPlay.start(game, seed, variant["options"], seats, FailurePolicy(), match_id,
                            keep_decisions=True)
    rng = random.Random(seed)
    while (seat := match.to_move) is not None:
        legal = match.payload(seat, 1000)["legal_actions"]
        match.advance(seat, BotReply(rng.choice(legal), None, "", 1.0), legal)
    record = match.finish(None)
    return record, match.kept_decisions()


def records_of(game: str, decisions_wanted: int) -> list[Played]:
    """Records of every setup of `game` in turn until they hold `decisions_wanted` decisions."""
    variants = engines.get(game).variants()
    made: list[Played] = []
    total = seed = 0
    while total < decisions_wanted:
        made.append(played(game, variants[seed % len(variants)], seed, f"m-{game}-{seed:06d}"))
        total += len(made[-1][0]["steps"])
        seed += 1
    return made


def store_all(url: str, store: Store, made: list[Played]) -> None:
    """Create every match and store it finished, as a driver does (one event loop)."""
    for record, _ in made:
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
        for record, kept in made:
            match_id = record["match_id"]
            await progress.take_lease(match_id, "bench")
            await progress.start(match_id, record["game"], "bench", record["started_at"])
            await progress.finish(match_id, "bench", record, len(record["seats"]),
                                  kept=(kept, KEEP_S))
        await client.aclose()

    asyncio.run(finish_all())


def timed_export(label: str, store: Store, game: str, folder: Path, output, suffix: str,
                 jobs: int) -> float:
    path = folder / f"{game}-{jobs}.{suffix}"
    summary = export(store, game, output, str(path), jobs=jobs)
    size = path.stat().st_size
    print(f"  {label:36} {summary.records:>8} {summary.seconds:>7.2f} {summary.rate:>10,.0f} "
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
    print(f"  {'API pages (read_page)':36} {records:>8} {spent:>7.2f} {records / spent:>10,.0f} "
          f"{'':>9}  {_support.load()}")
    return records / spent


def kept_breakdown(store: Store, made: list[Played]) -> None:
    """Where one single-process export's time goes when the kept decisions are read (as
    the export reads them: a growing chunk of matches a round trip)."""
    clock = time.perf_counter
    spent = {"read+decode replay, kept": 0.0, "unpack kept (zstd)": 0.0,
             "records' JSON parts": 0.0}
    count = 0
    sources = Sources(store, [record["match_id"] for record, _ in made])
    for record, _ in made:
        began = clock()
        source = sources.get(record["match_id"])
        read, kept = source.record(), source.kept
        assert kept is not None
        fetched = clock()
        written = unpack_kept(kept, read)
        assert written is not None
        unpacked = clock()
        MatchRecords.of(read).line_parts(
            Decision(step["step"], step["seat"], written[2 * index], written[2 * index + 1],
                     step["action"], None) for index, step in enumerate(read["steps"]))
        spent["read+decode replay, kept"] += fetched - began
        spent["unpack kept (zstd)"] += unpacked - fetched
        spent["records' JSON parts"] += clock() - unpacked
        count += len(read["steps"])
    report(spent, count, "from the kept decisions")


def replay_breakdown(store: Store, made: list[Played]) -> None:
    """Where one single-process export's time goes when every match is played again: the
    loop of `decisions` and `MatchRecords.line`, each part timed as it runs."""
    clock = time.perf_counter
    started = clock()
    read = [store.get_replay_steps(record["match_id"]) for record, _ in made]
    spent = {"read replays (Redis)": clock() - started, "engine observation": 0.0,
             "write JSON": 0.0, "engine apply": 0.0}
    count = 0
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
            head.line(decision)
            wrote = clock()
            state = state_after(engine, state, step)
            spent["engine observation"] += observed - began
            spent["write JSON"] += wrote - observed
            spent["engine apply"] += clock() - wrote
            count += 1
    report(spent, count, "every match played again")


def report(spent: dict[str, float], count: int, how: str) -> None:
    total = sum(spent.values())
    print(f"  per record, one process, {how} ({count} records):")
    for name, seconds in spent.items():
        print(f"    {name:26} {seconds / count * 1e6:>7.1f} us  {seconds / total:>5.0%}")
    print(f"    {'all':26} {total / count * 1e6:>7.1f} us  -> {count / total:,.0f} records/s")


def bench_game(url: str, store: Store, game: str, wanted: int, folder: Path) -> float:
    started = time.perf_counter()
    made = records_of(game, wanted)
    store_all(url, store, made)
    count = sum(len(record["steps"]) for record, _ in made)
    kept_bytes = sum(len(kept or b"") for _, kept in made)
    print(f"\n{game}: {len(made)} matches, {count} decisions (played and stored in "
          f"{_support.elapsed(started):.0f} s); kept decisions {kept_bytes / count:,.0f} "
          "bytes a decision in Redis")
    print(f"  {'how':36} {'records':>8} {'s':>7} {'records/s':>10} {'bytes/rec':>9}")
    best = max(timed_export("ndjson, 1 process", store, game, folder, NdjsonOut, "ndjson", 1),
               timed_export("ndjson, --jobs 2", store, game, folder, NdjsonOut, "ndjson", 2))
    timed_export("parquet, 1 process", store, game, folder, ParquetOut, "parquet", 1)
    timed_pages(store, game)
    kept_breakdown(store, made)
    store.redis.delete(*(match_key(record["match_id"], MatchPart.DECISIONS)
                         for record, _ in made))
    timed_export("played again: ndjson, 1 process", store, game, folder, NdjsonOut, "ndjson",
                 1)
    timed_export("played again: ndjson, --jobs 2", store, game, folder, NdjsonOut, "ndjson",
                 2)
    replay_breakdown(store, made)
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
