"""The replay record (design.md section 6, a public contract) and its canonical form.

A replay is one JSON object:

    format, match_id, game, game_version, num_players, options, seed, seats, policy,
    initial_state_hash, steps, result, forfeit, strikes, started_at, finished_at

Each step is `{"step", "seat", "action", "fault", "elapsed_ms", "state_hash"}` where
`state_hash` is the sha256 of the canonical JSON of the engine state *after* the step
(for a forfeit, the unchanged state) and `fault` is null or
`{"code", "detail", "raw", "policy"}`. Canonical JSON is orjson with sorted keys, so a
hash or a signature computed over it does not depend on who wrote the record.

`seal` (the replay/audit issue) adds `chain` and `signature` on top of a finished record;
every other field is settled before it runs.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

import orjson

FORMAT = "referee-replay/1"


def canonical(value: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, no whitespace, UTF-8."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def state_hash(state: dict) -> str:
    """sha256 (hex) of the canonical JSON of an engine state."""
    return hashlib.sha256(canonical(state)).hexdigest()


def utc_now() -> str:
    """An ISO 8601 UTC timestamp with milliseconds, for `started_at` / `finished_at`."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_record(*, match_id: str, game: str, game_version: str, num_players: int,
               options: dict, seed: int, seats: list[dict], policy: dict,
               initial_state_hash: str) -> dict:
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
    }


def step_record(*, step: int, seat: int, action: dict | None, fault: dict | None,
                elapsed_ms: float, state_digest: str) -> dict:
    return {
        "step": step,
        "seat": seat,
        "action": action,
        "fault": fault,
        "elapsed_ms": elapsed_ms,
        "state_hash": state_digest,
    }


def fault_record(*, code: str, detail: str, raw: str, policy: str) -> dict:
    """A fault as recorded in a step: what went wrong and what the policy did about it."""
    return {"code": code, "detail": detail, "raw": raw, "policy": policy}
