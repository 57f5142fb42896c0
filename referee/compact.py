"""The stored form of a finished replay: compact, and the same record when read back.

A replay's per-step state hashes are most of its weight once compressed (32 random bytes
a step), and they follow from the seed and the actions: the stored form leaves them out
and compresses the rest (zlib), and reading it back re-runs the engine to put them in again
(about 50 us a step). The record read back is byte for byte the record that was sealed,
so its chain and signature still hold; a stored form whose re-run does not give the sealed
chain head is refused rather than served (`StoredReplayError`).

Re-running needs the engine of the record's `game_version`: finished replays of a game are
archived (`referee archive`, which writes full records) before its engine version changes.
Records stored as plain JSON by earlier versions of the referee are read as they are.
"""

from __future__ import annotations

import zlib

import orjson

import engines

from . import replay

MAGIC = b"RZ1\n"


class StoredReplayError(Exception):
    """A stored replay cannot be read back faithfully (see the reason)."""


def encode(record: dict) -> bytes:
    """The stored form of a sealed record."""
    steps = [{k: v for k, v in step.items() if k != "state_hash"} for step in record["steps"]]
    return MAGIC + zlib.compress(orjson.dumps({**record, "steps": steps}), 6)


def decode(data: bytes) -> dict:
    """The sealed record back from its stored form (or from plain JSON)."""
    if not data.startswith(MAGIC):
        return orjson.loads(data)
    record = orjson.loads(zlib.decompress(data[len(MAGIC):]))
    _restore_hashes(record)
    return record


def decode_steps(data: bytes) -> dict:
    """The record without re-running it: its steps have no `state_hash` (enough to count
    faults or read actions)."""
    if not data.startswith(MAGIC):
        return orjson.loads(data)
    return orjson.loads(zlib.decompress(data[len(MAGIC):]))


def _restore_hashes(record: dict) -> None:
    try:
        engine = engines.get(record["game"])
    except engines.UnknownGame as error:
        raise StoredReplayError(error.reason) from None
    if engine.version != record["game_version"]:
        raise StoredReplayError(
            f"the replay was stored under {engine.name} version {record['game_version']!r} "
            f"and this referee runs version {engine.version!r}: archive finished replays "
            "before upgrading an engine (docs/operations.md)")
    state = engine.new_game(record["num_players"], record["seed"], record["options"])
    for step in record["steps"]:
        if step["action"] is not None:
            state = engine.apply(state, step["action"])
        step["state_hash"] = replay.state_hash(state, record["format"])
    chain = record.get("chain")
    if chain and chain["head"] != replay.chain_head(record):
        raise StoredReplayError("the stored replay does not re-run to its sealed chain head")
