"""The stored forms of what Redis keeps per match: compact, and the same value when read back.

A finished replay (`encode`/`decode`): its per-step state hashes are most of its weight
once compressed (32 random bytes a step), and they follow from the seed and the actions,
so the stored form leaves them out; the steps are stored as columns (seats, actions,
faults, times: each compresses better among its kind) and the whole is deflated with a
preset dictionary (below). Reading it back re-runs the engine to put the hashes in again
(about 50 us a step). The record read back is the record that was sealed, so its chain and
signature still hold (a `referee-replay/3` record's steps all carry their state hash once
read back: those between its checkpoints, which it does not sign, are computed too); a
stored form whose re-run does not give the sealed chain head is refused rather than served
(`StoredReplayError`).

A small JSON value of a match hash (its meta, its result, an archived match's summary:
`pack`/`unpack`) is deflated with the same dictionary when that makes it shorter: a few
hundred bytes of JSON shrink to about a fifth, where plain zlib saves a third.

The preset dictionary (`compact_dictionary.json`, made by
`scripts/make_compact_dictionary.py`) holds samples of exactly these values for every game
and player count. It never changes: its sha256 is checked, and a new one would come with a
new magic, the old one kept for reading.

Re-running needs the engine of the record's `game_version` (`engines.get(game, version)`:
the engines keep every earlier version of their rules playable).
Earlier stored forms stay readable: `RZ1` (zlib, steps as rows) and plain JSON.
"""

from __future__ import annotations

import hashlib
import zlib
from functools import cache
from pathlib import Path
from typing import Any, Literal

import orjson

from referee.errors import RefereeError
from referee.match import replay, rerun
from referee.match.replay import Record

MAGIC_V1 = b"RZ1\n"
MAGIC = b"RZ2\n"
PACKED = b"\x00z1"  # never the first byte of JSON
DICTIONARY_FILE = Path(__file__).with_name("compact_dictionary.json")
DICTIONARY_SHA256 = "c15eac5f047c770fe0532b23a0a43b7fce6bdc06f1607179591dc7c6fbdb3c4c"
StepColumn = Literal["seat", "action", "fault", "elapsed_ms"]
STEP_COLUMNS: tuple[StepColumn, ...] = ("seat", "action", "fault", "elapsed_ms")
ROW_KEYS = ("step", *STEP_COLUMNS, "state_hash")
OPTIONAL_COLUMNS = ("clock", "debug", "info", "debug_truncated")
"""Step members some steps have (clocks, the debug channel): a column of their own, null
where a step has none (none of them is ever null where present)."""


class StoredReplayError(RefereeError):
    """A stored replay cannot be read back faithfully (see the reason)."""


# ----- replays ------------------------------------------------------------------------
def encode(record: Record) -> bytes:
    """The stored form of a sealed record."""
    return MAGIC + _deflate(stored_body(record))


def stored_body(record: Record) -> bytes:
    """The record without state hashes, its steps as columns when they have the usual
    shape (else as rows), as JSON: what `encode` deflates."""
    steps = record["steps"]
    stored: list[Any] | dict[str, Any]
    if all(_columnar(step, index) for index, step in enumerate(steps)):
        columns: dict[str, list[Any]] = {column: [step[column] for step in steps]
                                         for column in STEP_COLUMNS}
        for column in OPTIONAL_COLUMNS:
            if any(column in step for step in steps):
                columns[column] = [step.get(column) for step in steps]
        stored = columns
    else:
        stored = [{k: v for k, v in step.items() if k != "state_hash"} for step in steps]
    return orjson.dumps({**record, "steps": stored})


def decode(data: bytes) -> Record:
    """The sealed record back from its stored form (or from plain JSON)."""
    record = decode_steps(data)
    if data.startswith((MAGIC, MAGIC_V1)):
        _restore_hashes(record)
    return record


def decode_steps(data: bytes) -> Record:
    """The record without re-running it: its steps have no `state_hash` (enough to count
    faults or read actions)."""
    if data.startswith(MAGIC):
        record = orjson.loads(_inflate(data[len(MAGIC):]))
    elif data.startswith(MAGIC_V1):
        record = orjson.loads(zlib.decompress(data[len(MAGIC_V1):]))
    else:
        return orjson.loads(data)
    if isinstance(record["steps"], dict):
        record["steps"] = _rows(record["steps"])
    return record


def _columnar(step: Any, index: int) -> bool:
    """Whether a step can be stored in the columns: the usual members, in their order (its
    state hash, when it has one, where read back puts it), then any of the optional ones,
    none null."""
    keys = tuple(step)
    if "state_hash" not in step:
        keys = (*keys[:len(ROW_KEYS) - 1], "state_hash", *keys[len(ROW_KEYS) - 1:])
    return (keys[:len(ROW_KEYS)] == ROW_KEYS and step["step"] == index
            and all(key in OPTIONAL_COLUMNS and step[key] is not None
                    for key in keys[len(ROW_KEYS):]))


def _rows(columns: dict[str, list[Any]]) -> list[Any]:
    """The steps of stored columns, each with its optional members where it has them."""
    keys = ("step", *STEP_COLUMNS)
    steps = [dict(zip(keys, (index, *values), strict=True)) for index, values
             in enumerate(zip(*(columns[c] for c in STEP_COLUMNS), strict=True))]
    for column in OPTIONAL_COLUMNS:  # column by column: each step's stay in this order
        for step, value in zip(steps, columns.get(column, [None] * len(steps)), strict=True):
            if value is not None:
                step[column] = value
    return steps


def _restore_hashes(record: Record) -> None:
    try:
        engine = rerun.engine_for(record)
    except rerun.RecordError as error:
        raise StoredReplayError(str(error)) from None
    record["steps"] = rerun.with_state_hashes(engine, record)
    chain = record.get("chain")
    if chain and chain["head"] != replay.chain_head(record):
        raise StoredReplayError("the stored replay does not re-run to its sealed chain head")


# ----- small values -------------------------------------------------------------------
def pack(value: Any) -> bytes:
    """`value` as JSON, deflated with the dictionary when that is shorter."""
    plain = orjson.dumps(value)
    packed = PACKED + _deflate(plain)
    return packed if len(packed) < len(plain) else plain


def unpack(data: bytes | None) -> Any:
    """What `pack` (or plain `orjson.dumps`) stored; None for None."""
    if data is None:
        return None
    if data.startswith(PACKED):
        return orjson.loads(_inflate(data[len(PACKED):]))
    return orjson.loads(data)


# ----- the dictionary -----------------------------------------------------------------
def _deflate(data: bytes) -> bytes:
    compressor = _primed_compressor().copy()
    return compressor.compress(data) + compressor.flush()


def _inflate(data: bytes) -> bytes:
    decompressor = _primed_decompressor().copy()
    return decompressor.decompress(data) + decompressor.flush()


@cache
def _primed_compressor() -> zlib._Compress:
    """A compressor that has read the dictionary, copied for each value (setting the
    dictionary, 31 KB, took two thirds of a small value's time; a copy writes the same
    bytes)."""
    return zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, dictionary())


@cache
def _primed_decompressor() -> zlib._Decompress:
    return zlib.decompressobj(-15, dictionary())


@cache
def dictionary() -> bytes:
    """The preset dictionary, checked against its sha256."""
    samples = orjson.loads(DICTIONARY_FILE.read_bytes())["samples"]
    data = "".join(samples).encode()
    if hashlib.sha256(data).hexdigest() != DICTIONARY_SHA256:
        raise StoredReplayError(f"{DICTIONARY_FILE.name} was changed: stored records need "
                                "the dictionary they were written with")
    return data
