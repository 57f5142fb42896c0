"""The results log (issue 25): Redis commands per append and per proof, the latency of
GET /log/proof/{match_id} against a tree of 1,000,000 leaves, and the log's Redis bytes
per match. Goals: (a) appending a leaf and serving a proof are O(log n) Redis reads;
(b) p99 <= 5 ms for a proof against 1,000,000 leaves, over HTTP (`referee serve --workers
1`, loopback); (c) <= 100 bytes of Redis per match, amortised.

    python3 bench/results_log.py [--leaves 1000000] [--requests 2000] [--quick]

The tree is built directly in Redis, as the store keeps it (`tournament.store.log`): leaf
i's hash is `merkle.leaf_hash(sha256(i as 8 bytes))`, every stored level (0, 4, 8...)
computed in Python and written in 1 MB pieces (APPEND for the leaves, SETRANGE above, as
the product writes them),
the match ids `m-{i:016x}` RPUSHed into `log:ids`. The matches whose proofs are asked (a
seeded sample) get a match hash (`Store.create_match`, then `status` finished and `log`
their index). Every head and proof served is checked against the tree computed here.

Commands per operation are the growth of `INFO commandstats` (INFO itself left out); round
trips are the growth of `total_reads_processed` (one read per pipeline or command sent).
Appends: `Store.append_leaf` (the APPEND_LEAF script; END_MATCH runs the same commands on
a finishing match), then `Store.complete_log` (what the next reader does), 1,000 times,
at 1,000 leaves and at the full size; (a) is met when commands per operation grow from
1,000 leaves to the full size by no more than log2 n does, and a proof takes a constant
number of round trips. Bytes: `MEMORY USAGE` of every `log:*` key divided
by the leaves, plus what the `log` field adds to a finished match's hash: a real match of
every game and player count (played in-process) stored twice through `Progress.finish`,
logged and with an empty leaf (no `log`, as a failed match), MEMORY USAGE of one less the
other, once Redis has finished rehashing each (a fresh copy of a hash without `log` is no
reference: a fresh 8-field hash has 8 dict buckets and a 9th field doubles them, while the
product's hash had 9 fields, `asked_at` still there, before `log`).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import _support
from api_latency import RandomSeat

import engines
from referee.match import merkle, replay
from referee.match.merkle import HASH_BYTES
from referee.match.runner import FailurePolicy, run_match
from referee.processes import python_module, stop_all
from referee.redis_server import RedisServer
from tournament import results_log
from tournament.store import Store, match_key
from tournament.store.keys import (
    MatchField,
    MatchStatus,
    log_complete_key,
    log_ids_key,
    log_level_key,
)
from tournament.store.log import STRIDE

GOAL_PROOF_MS = 5.0
GOAL_BYTES = 100
CHUNK = 1 << 20  # bytes per APPEND / SETRANGE while building
IDS_BATCH = 10_000
SAMPLE = 2000  # matches whose proofs are asked
APPENDS = 1000
PROOFS = 200  # in-process proofs per size, for the command counts
SMALL = 1000
ADMIN_TOKEN = "bench-admin-token"
LISTPACK_VALUE = 1024  # a hash-max-listpack-value that keeps a finished match's hash compact
READS = {"strlen", "getrange", "hget", "hgetall", "hmget", "get", "lrange", "llen"}


def leaf(index: int) -> bytes:
    return merkle.leaf_hash(hashlib.sha256(index.to_bytes(8, "big")).digest())


def match_id(index: int) -> str:
    return f"m-{index:016x}"


class Tree:
    """The tree computed in Python: level l holds the hash of every complete aligned
    subtree of 2^l leaves, as `log:level:{l}` does."""

    def __init__(self, size: int):
        self.size = size
        self.levels = [b"".join(leaf(index) for index in range(size))]
        while len(self.levels[-1]) >= 2 * HASH_BYTES:
            below = self.levels[-1]
            pairs = len(below) // (2 * HASH_BYTES) * 2 * HASH_BYTES
            self.levels.append(b"".join(
                merkle.node_hash(below[at:at + HASH_BYTES], below[at + HASH_BYTES:at + 64])
                for at in range(0, pairs, 2 * HASH_BYTES)))

    def node(self, level: int, index: int) -> bytes:
        return self.levels[level][index * HASH_BYTES:(index + 1) * HASH_BYTES]

    def root(self, size: int) -> bytes:
        nodes = {node: self.node(*node) for node in merkle.range_nodes(0, size)}
        return merkle.range_hash((0, size), nodes)


def write_tree(store: Store, tree: Tree) -> None:
    """Every level the store keeps (`tournament.store.log.STRIDE`: 0, 4, 8...) and every
    id, in pieces of at most 1 MB (ids: 10,000 a command); then the size they are filled
    to, as `complete_log` leaves it."""
    for level, data in enumerate(tree.levels):
        if level % STRIDE:
            continue
        with store.redis.pipeline(transaction=False) as pipe:
            for at in range(0, len(data), CHUNK):
                if level == 0:
                    pipe.append(log_level_key(0), data[at:at + CHUNK])
                else:
                    pipe.setrange(log_level_key(level), at, data[at:at + CHUNK])
            pipe.execute()
    for start in range(0, tree.size, 10 * IDS_BATCH):
        with store.redis.pipeline(transaction=False) as pipe:
            for batch in range(start, min(tree.size, start + 10 * IDS_BATCH), IDS_BATCH):
                pipe.rpush(log_ids_key(), *(match_id(index) for index in
                                            range(batch, min(tree.size, batch + IDS_BATCH))))
            pipe.execute()
    store.redis.set(log_complete_key(), tree.size)


def minimal_meta(identifier: str) -> dict:
    seats = [{"seat": seat, "kind": "bot", "bot_id": bot, "name": bot}
             for seat, bot in enumerate(("bot-a", "bot-b"))]
    return {"id": identifier, "game": "aladino", "num_players": 2, "seats": seats,
            "options": {}, "seed": 1}


def create_logged(store: Store, indexes: Iterable[int]) -> None:
    """A finished match hash for each leaf index, `log` set to it."""
    with store.redis.pipeline() as pipe:
        for index in indexes:
            identifier = match_id(index)
            store.create_match(minimal_meta(identifier), {}, 0, {}, pipe)  # type: ignore[arg-type]
            pipe.hset(match_key(identifier), mapping={
                MatchField.STATUS: MatchStatus.FINISHED.value, MatchField.LOG: index})
        pipe.execute()


# ----- counting Redis commands -------------------------------------------------------------
class Meter:
    """Commands (by name) and reads processed by Redis since the last `lap`."""

    def __init__(self, store: Store):
        self.redis = store.redis
        self.calls, self.reads = self._now()

    def _now(self) -> tuple[Counter, int]:
        info = self.redis.info("stats", "commandstats")
        calls = Counter({key.removeprefix("cmdstat_"): value["calls"]
                         for key, value in info.items() if key.startswith("cmdstat_")})
        return calls, int(info["total_reads_processed"])

    def lap(self) -> tuple[Counter, int]:
        """(commands by name, round trips) since the last lap, INFO left out."""
        calls, reads = self._now()
        spent = calls - self.calls
        spent.pop("info", None)
        round_trips = reads - self.reads - 1  # the INFO just sent
        self.calls, self.reads = calls, reads
        return spent, round_trips


def per_op(total: Counter, count: int) -> str:
    """`cmd n.n` for each command, per operation."""
    return ", ".join(f"{name} {calls / count:.1f}" for name, calls in total.most_common())


def reads_writes(total: Counter) -> tuple[int, int]:
    reads = sum(calls for name, calls in total.items() if name in READS)
    return reads, sum(total.values()) - reads


def measure_commands(store: Store, tree: Tree, appends: int, chooser: random.Random
                     ) -> dict:
    """Commands and round trips of a proof, a consistency proof and an append (writer
    and reader) on the tree in Redis; the appends are checked against a root computed
    here."""
    size = tree.size
    meter = Meter(store)
    results_log.current_size(store)  # warms the connection
    meter.lap()
    proofs, proof_trips = Counter(), 0
    for _ in range(PROOFS):
        results_log.inclusion_proof(store, chooser.randrange(size), size)
        spent, trips = meter.lap()
        proofs += spent
        proof_trips += trips
    consistency, consistency_trips = Counter(), 0
    for _ in range(PROOFS):
        second = chooser.randrange(2, size + 1)
        results_log.consistency_proof(store, chooser.randrange(1, second), second)
        spent, trips = meter.lap()
        consistency += spent
        consistency_trips += trips
    # appends: finished matches with no leaf yet (the script checks `status` and `log`)
    with store.redis.pipeline(transaction=False) as pipe:
        for number in range(appends):
            pipe.hset(match_key(f"a-{number}"), MatchField.STATUS, MatchStatus.FINISHED.value)
        pipe.execute()
    store.append_leaf("a-warm", b"")  # loads the script (not finished: nothing appended)
    meter.lap()
    writer, reader, writer_trips, reader_trips, reader_max = Counter(), Counter(), 0, 0, 0
    new_leaves = []
    for number in range(appends):
        new_leaves.append(leaf(size + number))
        index = store.append_leaf(f"a-{number}", new_leaves[-1])
        if index != size + number:
            raise RuntimeError(f"append {number} got index {index}, not {size + number}")
        spent, trips = meter.lap()
        writer += spent
        writer_trips += trips
        store.complete_log(size + number + 1)
        spent, trips = meter.lap()
        reader += spent
        reader_trips += trips
        reader_max = max(reader_max, sum(spent.values()))
    grown = size + appends
    frontier = merkle.Frontier()
    for leaf_hash in (*(tree.node(0, index) for index in range(size)), *new_leaves):
        frontier.append(leaf_hash)
    stored = merkle.range_hash((0, grown), store.log_nodes(merkle.range_nodes(0, grown)))
    if stored != frontier.root():
        raise RuntimeError(f"after {appends} appends the stored root is not the tree's")
    return {"size": size, "grown": grown, "proof": proofs, "proof_trips": proof_trips,
            "consistency": consistency, "consistency_trips": consistency_trips,
            "writer": writer, "writer_trips": writer_trips, "reader": reader,
            "reader_trips": reader_trips, "reader_max": reader_max, "appends": appends}


def print_commands(row: dict) -> None:
    size, appends = row["size"], row["appends"]
    log_n = math.log2(size)
    mean_log = math.log2((size + row["grown"]) / 2)
    lines = [
        ("inclusion_proof", row["proof"], row["proof_trips"], PROOFS, log_n),
        ("consistency_proof", row["consistency"], row["consistency_trips"], PROOFS, log_n),
        ("append_leaf (writer)", row["writer"], row["writer_trips"], appends, mean_log),
        ("complete_log (next reader)", row["reader"], row["reader_trips"], appends, mean_log),
    ]
    for label, total, trips, count, log2 in lines:
        commands = sum(total.values()) / count
        reads, writes = reads_writes(total)
        print(f"{size:>10,} {label:27} {commands:>6.1f} {reads / count:>6.1f} "
              f"{writes / count:>6.1f} {trips / count:>6.2f} {commands / log2:>7.2f}   "
              f"{per_op(total, count)}")
    print(f"{'':>10} (complete_log at most {row['reader_max']} commands at once; "
          f"{appends:,} appends took the log from {size:,} to {row['grown']:,} leaves)")


def append_commands(row: dict) -> float:
    return (sum(row["writer"].values()) + sum(row["reader"].values())) / row["appends"]


def proof_commands(row: dict) -> float:
    return sum(row["proof"].values()) / PROOFS


# ----- bytes per match ---------------------------------------------------------------------
def field_bytes(store: Store, redis_url: str, size: int, chooser: random.Random,
                tag: str = "") -> tuple[list[int], list[str]]:
    """What `log` adds to a real finished match hash: a random match of every game and
    player count is stored twice as a driver stores it (`Progress.finish`), once logged
    (its index then set to one of a log of `size` leaves) and once with an empty leaf (what
    a failed match passes: no `log`); MEMORY USAGE of one less the other, and the
    encoding."""
    added, encodings = [], []
    for game in engines.names():
        engine = engines.get(game)
        options = {"mode": "multi"} if game == "aldabas" else {}
        for players in range(max(2, engine.min_players), engine.max_players + 1):
            seed = 10 * players
            played = run_match(game, seed, options, [RandomSeat(seed + seat)
                                                     for seat in range(players)],
                               FailurePolicy(), f"m-sample-{game}-{players}")
            usage = {}
            for twin in ("logged", "unlogd"):  # ids of the same length
                identifier = f"m-sample-{game}-{players}-{tag}{twin}"
                bots = [(f"bot-bench{seat}", f"random {seat}") for seat in range(players)]
                meta = _support.bot_match_meta(identifier, game, engine.version, bots, seed,
                                               options, {}, deadline_ms=1000)
                state = engine.new_game(players, seed, options)
                store.create_match(meta, state, engine.current_seat(state), {})  # type: ignore[arg-type]
                record = replay.seal({**played, "match_id": identifier,
                                      "seats": [{**seat, "deadline_ms": 1000}
                                                for seat in meta["seats"]]}, None)
                if twin == "logged":
                    _support.store_finished(redis_url, identifier, record)
                    store.redis.hset(match_key(identifier), MatchField.LOG,
                                     chooser.randrange(size))
                else:
                    with mock.patch.object(merkle, "leaf_hash", return_value=b""):
                        _support.store_finished(redis_url, identifier, record)
                settle(store, match_key(identifier))
                usage[twin] = int(store.redis.memory_usage(match_key(identifier), samples=0))
                if twin == "logged":
                    encodings.append(store.redis.object("encoding",
                                                        match_key(identifier)).decode())
            added.append(usage["logged"] - usage["unlogd"])
    return added, encodings


def settle(store: Store, key: str) -> None:
    """Let Redis finish the incremental rehash of a hash's dict (one bucket per command on
    the key): until then MEMORY USAGE counts its old table too (64 bytes for 8 buckets)."""
    with store.redis.pipeline(transaction=False) as pipe:
        for _ in range(64):
            pipe.hget(key, MatchField.STATUS)
        pipe.execute()


def log_bytes(store: Store) -> dict[str, tuple[int, int]]:
    """MEMORY USAGE and data length of every `log:*` key."""
    sizes = {}
    for key in sorted(store.redis.scan_iter(match="referee:log:*", count=1000)):
        name = key.decode().removeprefix("referee:")
        kind = store.redis.type(key).decode()
        length = (store.redis.strlen(key) if kind == "string" else
                  sum(len(value) for value in store.redis.lrange(key, 0, -1)))
        sizes[name] = (int(store.redis.memory_usage(key, samples=0)), int(length))
    return sizes


# ----- latency over HTTP -------------------------------------------------------------------
def check_proofs(tree: Tree, root: bytes, bodies: list[dict], indexes: list[int]) -> None:
    for body, index in zip(bodies, indexes, strict=True):
        path = [bytes.fromhex(node) for node in body["audit_path"]]
        if (body["index"] != index or body["tree_size"] != tree.size
                or bytes.fromhex(body["leaf_hash"]) != tree.node(0, index)
                or not merkle.verify_inclusion(index, tree.size, tree.node(0, index), path,
                                               root)):
            raise RuntimeError(f"the proof of leaf {index} does not verify: {body}")


def check_consistency(tree: Tree, bodies: list[dict]) -> None:
    for body in bodies:
        first, second = body["first"], body["second"]
        proof = [bytes.fromhex(node) for node in body["proof"]]
        if not merkle.verify_consistency(first, second, tree.root(first), tree.root(second),
                                         proof):
            raise RuntimeError(f"the consistency proof {first} -> {second} does not verify")


def tree_cpu(pid: int) -> float:
    """CPU seconds of a process and of its live descendants (gunicorn's worker)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return _support.cpu_seconds(pid) + sum(tree_cpu(int(child)) for child in children)
    except OSError:
        return 0.0


@dataclass
class Run:
    """One endpoint's requests: latencies, and per request the Redis commands, round trips
    and CPU of the API process and of Redis."""

    label: str
    spent: list[float]
    commands: Counter
    trips: int
    api_cpu_ms: float
    redis_cpu_ms: float

    def line(self, goal: str) -> str:
        count = len(self.spent)
        return (f"{self.label:34} {count:>5} {self.p(0.5):>7.2f} {self.p(0.9):>7.2f} "
                f"{self.p(0.99):>7.2f} {max(self.spent):>7.2f} "
                f"{sum(self.commands.values()) / count:>6.1f} {self.trips / count:>6.2f} "
                f"{self.api_cpu_ms:>7.2f} {self.redis_cpu_ms:>7.3f}  {goal:9} {_support.load()}")

    def p(self, fraction: float) -> float:
        return _support.percentile(self.spent, fraction)


def run_endpoint(label: str, port: int, paths: list[str], meter: Meter, api_pid: int,
                 redis_pid: int) -> tuple[Run, list[dict]]:
    meter.lap()
    api_cpu, redis_cpu = tree_cpu(api_pid), _support.cpu_seconds(redis_pid)
    spent, bodies = _support.timed_gets(port, paths)
    api_cpu, redis_cpu = tree_cpu(api_pid) - api_cpu, _support.cpu_seconds(redis_pid) - redis_cpu
    commands, trips = meter.lap()
    count = len(paths)
    return Run(label, spent, commands, trips, api_cpu * 1000 / count,
               redis_cpu * 1000 / count), bodies


def endpoint_reads(store: Store, sample: list[int], count: int, chooser: random.Random
                   ) -> list[float]:
    """Milliseconds of the Redis reads GET /log/proof makes (`get_match`, the size, then
    `inclusion_proof`), in this process, without HTTP."""
    spent = []
    for _ in range(count):
        index = chooser.choice(sample)
        started = time.perf_counter()
        match = store.get_match(match_id(index))
        size = results_log.current_size(store)
        proof = results_log.inclusion_proof(store, match["log_index"], size)  # type: ignore[index]
        spent.append(_support.elapsed(started) * 1000)
        if proof["index"] != index:
            raise RuntimeError(f"match {match_id(index)} has index {proof['index']}")
    return spent


def serve_latency(store: Store, server: RedisServer, tree: Tree, sample: list[int],
                  requests: int, chooser: random.Random) -> dict:
    port = _support.free_port()
    api = _support.start(
        python_module("referee.cli", "serve", "--port", str(port), "--workers", "1"), port,
        env=_support.child_env(REDIS_URL=server.url, REFEREE_ADMIN_TOKEN=ADMIN_TOKEN))
    redis_pid = server.process.pid  # type: ignore[union-attr]
    root = tree.root(tree.size)
    try:
        _support.timed_gets(port, ["/log/head"] + [f"/log/proof/{match_id(index)}"
                                          for index in sample[:50]])  # warm up
        meter = Meter(store)
        _, heads = _support.timed_gets(port, ["/log/head"])
        if heads[0]["tree_size"] != tree.size or bytes.fromhex(heads[0]["root_hash"]) != root:
            raise RuntimeError(f"GET /log/head answered {heads[0]}, not root {root.hex()}")
        indexes = [sample[number % len(sample)] for number in range(requests)]
        chooser.shuffle(indexes)
        proofs, bodies = run_endpoint("/log/proof/{match_id}", port,
                                      [f"/log/proof/{match_id(index)}" for index in indexes],
                                      meter, api.pid, redis_pid)
        check_proofs(tree, root, bodies, indexes)
        heads_run, heads = run_endpoint("/log/head", port, ["/log/head"] * requests, meter,
                                        api.pid, redis_pid)
        if any(bytes.fromhex(head["root_hash"]) != root for head in heads):
            raise RuntimeError("a head's root is not the tree's")
        pairs = []
        for _ in range(requests):
            second = chooser.randrange(2, tree.size + 1)
            pairs.append((chooser.randrange(1, second), second))
        consistency, bodies = run_endpoint(
            "/log/consistency?first=M&second=N", port,
            [f"/log/consistency?first={first}&second={second}" for first, second in pairs],
            meter, api.pid, redis_pid)
        check_consistency(tree, bodies)
    finally:
        stop_all([api])
    print(f"every answer checked: {requests:,} inclusion proofs and {requests:,} "
          f"consistency proofs verify, every head's root is the tree's ({root.hex()[:16]}...)")
    print("per request: Redis commands, round trips, CPU ms of the API process and of Redis")
    print(f"{'GET (referee serve --workers 1)':34} {'reqs':>5} {'p50 ms':>7} {'p90 ms':>7} "
          f"{'p99 ms':>7} {'max ms':>7} {'cmds':>6} {'trips':>6} {'api cpu':>7} "
          f"{'rds cpu':>7}  goal")
    print(proofs.line(f"<= {GOAL_PROOF_MS:g} ms"))
    print(heads_run.line("-"))
    print(consistency.line("-"))
    print(f"commands per GET /log/proof: {per_op(proofs.commands, requests)}")
    reads_ms = endpoint_reads(store, sample, requests, chooser)
    print(f"its Redis reads alone, in-process (get_match, current_size, inclusion_proof): "
          f"p50 {_support.percentile(reads_ms, 0.5):.2f} ms, p99 "
          f"{_support.percentile(reads_ms, 0.99):.2f} ms  {_support.load()}")
    return {"proof": proofs, "requests": requests}


# ----- the run ------------------------------------------------------------------------------
def build(store: Store, size: int) -> Tree:
    store.redis.flushall()
    started = time.perf_counter()
    tree = Tree(size)
    computed = _support.elapsed(started)
    write_tree(store, tree)
    head = results_log.current_size(store)
    stored = merkle.range_hash((0, size), store.log_nodes(merkle.range_nodes(0, size)))
    if head != size or stored != tree.root(size):
        raise RuntimeError(f"the stored tree ({head} leaves) is not the computed one")
    print(f"built {size:,} leaves, {len(tree.levels)} levels: {computed:.1f} s in Python, "
          f"{_support.elapsed(started) - computed:.1f} s to Redis; root "
          f"{tree.root(size).hex()[:16]}...  {_support.load()}")
    return tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--leaves", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=2000, help="requests per endpoint")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    appends = APPENDS
    if args.quick:
        args.leaves, args.requests, appends = 5000, 50, 100
    _support.header(f"results log: appends, proofs and bytes at {args.leaves:,} leaves",
                    f"(a) append and proof O(log n) Redis reads; (b) p99 GET /log/proof <= "
                    f"{GOAL_PROOF_MS:g} ms at {args.leaves:,} leaves; (c) <= {GOAL_BYTES} "
                    "bytes of Redis per match, amortised")
    chooser = random.Random(25)
    with _support.redis_server() as server:
        store = Store.from_url(server.url)
        added, encodings = field_bytes(store, server.url, args.leaves, chooser)
        store.redis.config_set("hash-max-listpack-value", LISTPACK_VALUE)
        added_listpack, encodings_listpack = field_bytes(store, server.url, args.leaves,
                                                         chooser, "lp-")
        store.redis.config_set("hash-max-listpack-value", 64)
        sizes = sorted({min(SMALL, args.leaves), args.leaves})
        rows = []
        for size in sizes:
            tree = build(store, size)
            if size == args.leaves:
                memory = log_bytes(store)
                sample = chooser.sample(range(size), min(SAMPLE, size))
                create_logged(store, sample)
                served = serve_latency(store, server, tree, sample, args.requests, chooser)
            rows.append(measure_commands(store, tree, appends, chooser))
    print()
    print("Redis commands per operation (INFO commandstats), round trips (reads processed)")
    print(f"{'leaves':>10} {'operation':27} {'cmds':>6} {'reads':>6} {'writes':>6} "
          f"{'trips':>6} {'/log2 n':>7}   by command")
    for row in rows:
        print_commands(row)
    small, large = rows[0], rows[-1]
    log_ratio = math.log2(large["size"]) / math.log2(small["size"]) if small is not large else 1
    append_ratio = append_commands(large) / append_commands(small)
    proof_ratio = proof_commands(large) / proof_commands(small)
    print(f"from {small['size']:,} to {large['size']:,} leaves "
          f"(x{large['size'] / small['size']:,.0f}): log2 n x{log_ratio:.2f}, commands per "
          f"proof x{proof_ratio:.2f}, per append (writer + reader) x{append_ratio:.2f}")

    print()
    total_memory = sum(usage for usage, _ in memory.values())
    total_data = sum(length for _, length in memory.values())
    print(f"log keys at {args.leaves:,} leaves: MEMORY USAGE (data bytes)")
    for name, (usage, length) in memory.items():
        print(f"  {name:16} {usage:>12,} ({length:>12,})  {usage / args.leaves:>7.1f} per match")
    field_mean = sum(added) / len(added)
    per_match = total_memory / args.leaves + field_mean
    print(f"  {'all log keys':16} {total_memory:>12,} ({total_data:>12,})  "
          f"{total_memory / args.leaves:>7.1f} per match")
    print(f"  `log` field in a finished match hash ({len(added)} real matches, twins, "
          f"{'/'.join(sorted(set(encodings)))}): +{min(added)} to +{max(added)} bytes, "
          f"mean {field_mean:.1f}")
    print(f"  total per match: {per_match:.1f} bytes (goal <= {GOAL_BYTES})")
    listpack_mean = sum(added_listpack) / len(added_listpack)
    print(f"  (with hash-max-listpack-value {LISTPACK_VALUE} instead of Redis's 64, the "
          f"hashes are {'/'.join(sorted(set(encodings_listpack)))}: the field adds "
          f"+{min(added_listpack)} to +{max(added_listpack)} bytes, mean {listpack_mean:.1f}; "
          f"total {total_memory / args.leaves + listpack_mean:.1f})")

    print()
    append_ok = append_ratio <= log_ratio
    proof = served["proof"]
    proof_ok = proof_ratio <= log_ratio and large["proof_trips"] / PROOFS <= 3.5
    verdicts = [
        ("(a) append: O(log n) commands",
         f"{append_commands(small):.1f} at {small['size']:,}, {append_commands(large):.1f} at "
         f"{large['size']:,} (writer {sum(large['writer'].values()) / appends:.1f}, "
         f"O(1))", append_ok),
        ("(a) proof: O(log n) commands",
         f"{proof_commands(small):.1f} at {small['size']:,}, {proof_commands(large):.1f} at "
         f"{large['size']:,}; {large['proof_trips'] / PROOFS:.1f} round trips; over HTTP "
         f"{sum(proof.commands.values()) / served['requests']:.1f} commands, "
         f"{proof.trips / served['requests']:.1f} trips", proof_ok),
        (f"(b) p99 GET /log/proof <= {GOAL_PROOF_MS:g} ms",
         f"p99 {proof.p(0.99):.2f} ms (p50 {proof.p(0.5):.2f}; API CPU "
         f"{proof.api_cpu_ms:.2f} ms/req) at {args.leaves:,} leaves",
         proof.p(0.99) <= GOAL_PROOF_MS),
        (f"(c) <= {GOAL_BYTES} bytes per match",
         f"{per_match:.1f} bytes ({total_memory / args.leaves:.1f} log keys + "
         f"{field_mean:.1f} field)", per_match <= GOAL_BYTES),
    ]
    print(f"{'goal':34} {'measured':86} verdict")
    for goal, measured, met in verdicts:
        print(f"{goal:34} {measured:86} {'met' if met else 'MISSED'}")
    print(_support.load())


if __name__ == "__main__":
    main()
