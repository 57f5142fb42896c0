"""The replay record (design.md section 6, a public contract) and its canonical form.

A replay is one JSON object:

    format, match_id, game, game_version, num_players, options, seed, seats, policy,
    initial_state_hash, steps, result, forfeit, strikes, started_at, finished_at,
    chain, signature, log

Each step is `{"step", "seat", "action", "fault", "elapsed_ms", "state_hash"}` where
`state_hash` is the sha256 of the canonical JSON of the engine state *after* the step
(for a forfeit, the unchanged state) and `fault` is null or
`{"code", "detail", "raw", "policy"}`.

Formats. `referee-replay/3` (what the referee writes) signs the state hash of every
`CHECKPOINT_EVERY`-th step (steps 15, 31, 47, ...) and of the last step, beside the
initial state's: a step's *signed form* (`signed_steps`) keeps its `state_hash` only
there. Every state is still fixed by what is signed (the seed, options, player count and
every action, under the game version), and a verifier re-runs every step: it checks every
`state_hash` a record carries (a served record carries one on every step, computed when it
is read back, `compact.decode`) and needs the checkpoints'. Earlier formats sign every
step's hash: `referee-replay/2` and `/1`, which still verify as they always did.

Canonical JSON depends on the record's `format`: `referee-replay/3` and `/2` use RFC 8785
(`referee.match.canonical.jcs`), which any language reproduces after parsing and
re-writing the record; `referee-replay/1` used orjson with sorted keys, kept so that those
records verify exactly as before. A hash or a signature computed over the canonical form
does not depend on who wrote the record.

`seal` adds, on top of a finished record:
- `chain`: `{"algorithm": "sha256", "length", "head"}`, a hash chained over the steps in
  order: link(-1) = initial_state_hash, link(i) = sha256(link(i-1) bytes + canonical signed
  form of step i); `head` is the last link, so changing, dropping or reordering any step (or
  a checkpoint's hash) changes it;
- `signature`: `{"algorithm": "ed25519", "key_id", "value"}` (`referee.match.sealing`),
  over the canonical JSON of the whole record without `signature` and `log` (chain
  included); `key_id` names the key so a verifier holding several picks the right one.
  Records of an HMAC-only server (and those written before Ed25519) carry
  `{"algorithm": "hmac-sha256", ...}` instead; with neither key nor secret the record stays
  unsigned (`signature: null`).

Once the result is recorded, the record is a leaf of the results log (`tournament.log`):
`log: {"index"}` (served with `proof` and the signed `head` it holds against). The leaf's
data is `leaf_data(record)`, the sha256 of the canonical record without `log`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NotRequired, TypedDict, cast

from engines.base import Action, JsonObject, Result
from referee.match.canonical import jcs, sorted_json
from referee.match.clock import ClockRecord
from referee.match.sealing import Sealer, SignatureRecord

FORMAT_V1 = "referee-replay/1"
FORMAT_V2 = "referee-replay/2"
FORMAT = "referee-replay/3"
CANONICAL_FORMS: dict[str, Callable[[Any], bytes]] = {FORMAT_V1: sorted_json, FORMAT_V2: jcs,
                                                      FORMAT: jcs}
CHECKPOINT_EVERY = 16
"""In `referee-replay/3`, every 16th step's state hash is signed (and the last step's)."""


class FaultRecord(TypedDict):
    """A step's fault: what went wrong (a `referee.match.botclient.Fault` code) and what the
    failure policy did about it (`forfeit` or `random`)."""

    code: str
    detail: str
    raw: str
    policy: str


class StepRecord(TypedDict):
    """One recorded decision. `action` is None for a forfeited step; `state_hash` is absent
    from steps read without re-running the record (`compact.decode_steps`), and from the
    steps of a `referee-replay/3` match as they are played, but at its checkpoints."""

    step: int
    seat: int
    action: Action | None
    fault: FaultRecord | None
    elapsed_ms: float
    state_hash: NotRequired[str]
    clock: NotRequired[ClockRecord]
    debug: NotRequired[str]
    info: NotRequired[JsonObject]
    debug_truncated: NotRequired[bool]


class SeatInfo(TypedDict):
    """What the replay records about a seat (`runner.Seat.info()`); never a token. A bot
    seat's `version` is the bot's version it played (issue 27)."""

    kind: str
    bot_id: str | None
    name: str
    deadline_ms: int
    version: NotRequired[int]


class SeatRecord(SeatInfo):
    """A seat of the record: its info and its number."""

    seat: int


class ForfeitRecord(TypedDict):
    """The forfeit that ended a match: the seat, its step and its fault code."""

    seat: int
    step: int
    fault: str


class ChainRecord(TypedDict):
    algorithm: str
    length: int
    head: str


class LogProofRecord(TypedDict):
    """An inclusion proof (RFC 6962 2.1.1), as `GET /log/proof/{match_id}` answers it."""

    index: int
    tree_size: int
    leaf_hash: str
    audit_path: list[str]


class TreeHead(TypedDict):
    """A signed tree head of the results log, as `GET /log/head` answers it."""

    tree_size: int
    root_hash: str
    timestamp: int
    key_id: str | None
    signature: SignatureRecord | None


class LogRecord(TypedDict):
    """Where the record is in the results log; served with a proof against a head."""

    index: int
    proof: NotRequired[LogProofRecord]
    head: NotRequired[TreeHead]


class Record(TypedDict):
    """A replay record (the module's docstring); `result`, `forfeit`, `finished_at`, `chain`
    and `signature` are null until the match is over and sealed."""

    format: str
    match_id: str
    game: str
    game_version: str
    num_players: int
    options: JsonObject
    seed: int
    seats: list[SeatRecord]
    policy: JsonObject
    initial_state_hash: str
    steps: list[StepRecord]
    result: Result | None
    forfeit: ForfeitRecord | None
    strikes: list[int]
    started_at: str
    finished_at: str | None
    chain: ChainRecord | None
    signature: SignatureRecord | None
    log: NotRequired[LogRecord]
    time_control: NotRequired[JsonObject | None]


UNSIGNED_PARTS = ("signature", "log")  # never part of the signed bytes


def canonical(value: Any) -> bytes:
    """Compact JSON with sorted keys (orjson), how records are stored; also the canonical
    form of `referee-replay/1`."""
    return sorted_json(value)


def canonical_form(record_format: str) -> Callable[[Any], bytes]:
    """The canonical JSON writer of a record format (KeyError for an unknown one)."""
    return CANONICAL_FORMS[record_format]


def state_hash(state: JsonObject, record_format: str = FORMAT) -> str:
    """sha256 (hex) of the canonical JSON of an engine state."""
    return hashlib.sha256(canonical_form(record_format)(state)).hexdigest()


def utc_now() -> str:
    """An ISO 8601 UTC timestamp with milliseconds, for `started_at` / `finished_at`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_record(*, match_id: str, game: str, game_version: str, num_players: int,
               options: JsonObject, seed: int, seats: list[SeatRecord], policy: JsonObject,
               initial_state_hash: str) -> Record:
    """A record for a match that is about to start: no steps, no result yet."""
    return {
        "format": FORMAT,
        "match_id": match_id,
        "game": game,
        "game_version": game_version,
        "num_players": num_players,
        "options": options,
        "seed": seed,
        "seats": seats,
        "policy": policy,
        "initial_state_hash": initial_state_hash,
        "steps": [],
        "result": None,
        "forfeit": None,
        "strikes": [0] * len(seats),
        "started_at": utc_now(),
        "finished_at": None,
        "chain": None,
        "signature": None,
    }


def step_record(*, step: int, seat: int, action: Action | None, fault: FaultRecord | None,
                elapsed_ms: float, state_digest: str | None) -> StepRecord:
    """A step; `state_digest` None: the step carries no state hash."""
    entry: StepRecord = {"step": step, "seat": seat, "action": action, "fault": fault,
                         "elapsed_ms": elapsed_ms}
    if state_digest is not None:
        entry["state_hash"] = state_digest
    return entry


def with_state_hash(step: StepRecord, digest: str) -> StepRecord:
    """The step with its `state_hash` where a step record has it: after `elapsed_ms`."""
    items = [(key, value) for key, value in step.items() if key != "state_hash"]
    keys = [key for key, _ in items]
    at = keys.index("elapsed_ms") + 1 if "elapsed_ms" in keys else len(items)
    return cast(StepRecord, dict([*items[:at], ("state_hash", digest), *items[at:]]))


def checkpoint(record_format: str, index: int, last: bool) -> bool:
    """Whether step `index` (the last one, `last`) signs its state hash in `record_format`."""
    return record_format != FORMAT or (index + 1) % CHECKPOINT_EVERY == 0 or last


def signed_steps(record: Record) -> list[StepRecord]:
    """The steps as the chain and the signature cover them: in `referee-replay/3`, without
    the state hashes of the steps that are no checkpoint; as they are in earlier formats."""
    steps, record_format = record["steps"], record["format"]
    if record_format != FORMAT:
        return steps
    last = len(steps) - 1
    return [step if "state_hash" not in step or checkpoint(record_format, index, index == last)
            else cast(StepRecord, {k: v for k, v in step.items() if k != "state_hash"})
            for index, step in enumerate(steps)]


def fault_record(*, code: str, detail: str, raw: str, policy: str) -> FaultRecord:
    """A fault as recorded in a step: what went wrong and what the policy did about it."""
    return {"code": code, "detail": detail, "raw": raw, "policy": policy}


def chain_head(record: Record, written: list[bytes] | None = None) -> str:
    """The last link of the hash chain over the record's steps, in order (`written`: the
    steps' canonical bytes, when the caller has them already)."""
    link = bytes.fromhex(record["initial_state_hash"])
    for step in written_steps(record) if written is None else written:
        link = hashlib.sha256(link + step).digest()
    return link.hex()


def written_steps(record: Record) -> list[bytes]:
    """The canonical bytes of each step's signed form: what the chain links, and the
    `steps` of the record's signed bytes and leaf data (written once for the three by
    `sealed`)."""
    write = canonical_form(record["format"])
    return [write(step) for step in signed_steps(record)]


def signed_bytes(record: Record, written: list[bytes] | None = None) -> bytes:
    """The canonical bytes a record's signature is made over: all of it but `signature`
    and `log`."""
    return _record_bytes(record, UNSIGNED_PARTS, written)


def _record_bytes(record: Record, left_out: tuple[str, ...],
                  written: list[bytes] | None) -> bytes:
    """The canonical JSON of the record without `left_out`, its steps spliced in from
    their canonical bytes: an object's canonical form is its members' in key order, which
    for the record's own names (ASCII identifiers) is the order of the names; a record with
    other names is written whole."""
    write = canonical_form(record["format"])
    members = sorted(key for key in record if key not in left_out)
    if not all(_PLAIN_NAME.fullmatch(key) for key in members):
        return write({key: signed_steps(record) if key == "steps"
                      else record[key] for key in members})  # type: ignore[literal-required]
    steps = written_steps(record) if written is None else written
    parts = [b'"%s":%s' % (key.encode(), b"[%s]" % b",".join(steps) if key == "steps"
                          else write(record[key]))  # type: ignore[literal-required]
             for key in members]
    return b"{%s}" % b",".join(parts)


_PLAIN_NAME = re.compile(r"[a-z_]+")


HEAD_PARTS = ("tree_size", "root_hash", "timestamp", "key_id")  # what a head's signature covers


def head_bytes(head: TreeHead) -> bytes:
    """What a tree head's signature is made over: the canonical JSON (RFC 8785) of its
    `tree_size`, `root_hash`, `timestamp` and `key_id`."""
    return jcs({part: head.get(part) for part in HEAD_PARTS})


def leaf_data(record: Record, written: list[bytes] | None = None) -> bytes:
    """The record's leaf data in the results log: sha256 of its canonical bytes, the
    signature included and `log` excluded."""
    return hashlib.sha256(_record_bytes(record, ("log",), written)).digest()


def seal(record: Record, sealer: Sealer | None) -> Record:
    """The finished record with its chain and, when the sealer has a key or a secret, its
    signature."""
    return sealed(record, sealer)[0]


def sealed(record: Record, sealer: Sealer | None) -> tuple[Record, bytes]:
    """`seal`'s record and its `leaf_data`, its steps written once for both."""
    # A copy built key by key (the record's order, then the chain and the signature); the
    # two keys it lacks are set just below, so it is a whole Record when returned.
    done = cast(Record, {k: v for k, v in record.items()
                         if k not in ("chain", "signature", "log")})
    written = written_steps(record)
    done["chain"] = {"algorithm": "sha256", "length": len(record["steps"]),
                     "head": chain_head(record, written)}
    done["signature"] = None
    if sealer is not None:
        done["signature"] = sealer.sign(signed_bytes(done, written))
    return done, leaf_data(done, written)
