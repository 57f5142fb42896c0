"""Replay verification: re-run seed + actions through the engine and check every record.

`verify(record, keys)` answers a `Report`: the first problem found while re-running the
match (a step out of order, a seat that was not to move, an illegal action, a state hash
that differs, an inconsistent fault record, a result that differs), whether the hash chain
holds, and whether the signature holds for one of `keys` (secrets). A record is valid when
the re-run finds no problem, the chain holds, and the signature holds; with no key at
hand the signature is not checked (and may be absent), which the report's notes say.
A record made under another game version is refused (`UnsupportedReplay`) rather than
mis-verified.
Used by `POST /replays/verify` and, offline, by `referee verify FILE`.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import engines
from engines.base import Action, State
from referee.errors import RefereeError
from referee.match import replay, rerun
from referee.match.botclient import Fault
from referee.match.replay import Record, StepRecord
from referee.match.runner import FORFEIT, RANDOM, FailurePolicy, forfeit_result, substitute_action

VALID = "valid"
INVALID = "invalid"
MISSING = "missing"
UNKNOWN_KEY = "unknown-key"
NOT_CHECKED = "not-checked"


class UnsupportedReplay(rerun.RecordError):
    """The record cannot be verified here: unknown format, game or game version."""


@dataclass
class Problem:
    step: int | None
    field: str
    reason: str

    def __str__(self) -> str:
        where = f"step {self.step}" if self.step is not None else "record"
        return f"{where}, {self.field}: {self.reason}"


@dataclass
class Report:
    valid: bool
    steps_checked: int
    problem: Problem | None
    chain: str
    signature: str
    key_id: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Mismatch(RefereeError):
    def __init__(self, step: int | None, field_name: str, reason: str):
        super().__init__(reason)
        self.problem = Problem(step, field_name, reason)


def verify(record: Record, keys: list[str] | None = None) -> Report:
    """Check a replay record; `keys` are the secrets its signature may have been made with."""
    engine = _engine_for(record)
    progress = _Progress()
    problem = None
    try:
        _rerun(engine, record, progress)
    except _Mismatch as mismatch:
        problem = mismatch.problem
    chain = _check_chain(record)
    signature, used_key = _check_signature(record, keys or [])
    authentic = signature == VALID or (not keys and signature in (MISSING, NOT_CHECKED))
    valid = problem is None and chain == VALID and authentic
    return Report(valid, progress.steps, problem, chain, signature, used_key,
                  _notes(signature, bool(keys)))


def _notes(signature: str, keys_given: bool) -> list[str]:
    if signature == NOT_CHECKED:
        return ["the signature was not checked: no key given"]
    if signature == MISSING and not keys_given:
        return ["the replay is unsigned: it is consistent, but nothing proves who made it"]
    return []


def _engine_for(record: Record) -> engines.Game:
    if record.get("format") not in replay.CANONICAL_FORMS:
        raise UnsupportedReplay(f"unknown replay format {record.get('format')!r}; "
                                f"this referee reads {', '.join(replay.CANONICAL_FORMS)}")
    try:
        return rerun.engine_for(record)
    except rerun.RecordError as error:
        raise UnsupportedReplay(f"{error}: verify it with a referee of that version") from None


@dataclass
class _Progress:
    steps: int = 0


def _rerun(engine: engines.Game, record: Record, progress: _Progress) -> None:
    """Re-play the record step by step, counting the steps found consistent."""
    state = _initial_state(engine, record)
    tally = rerun.Tally.of(record["num_players"])
    checked = _StepChecker(_policy(record), record["seed"], tally)
    for index, (step, after) in enumerate(rerun.rerun(engine, record, checked, state)):
        if replay.state_hash(after, record["format"]) != step["state_hash"]:
            raise _Mismatch(index, "state_hash",
                            "the state after this step does not match the recorded hash")
        tally.count(step)
        progress.steps = index + 1
        state = after
    _check_end(engine, record, state, tally)


def _initial_state(engine: engines.Game, record: Record) -> State:
    try:
        state = rerun.initial_state(engine, record)
    except engines.InvalidSetup as error:
        raise _Mismatch(None, "setup", f"the setup cannot be re-created: {error.reason}") from None
    if replay.state_hash(state, record["format"]) != record["initial_state_hash"]:
        raise _Mismatch(None, "seed", "the seed, options and player count do not give the "
                                      "recorded initial state")
    return state


@dataclass
class _StepChecker:
    """Plays a recorded step after checking it follows the game and the failure policy."""

    policy: FailurePolicy
    seed: int
    tally: rerun.Tally
    played: int = 0

    def __call__(self, engine: engines.Game, state: State, step: StepRecord) -> State:
        index, self.played = self.played, self.played + 1
        if self.tally.forfeit is not None:
            raise _Mismatch(index, "steps", "a step follows a forfeit")
        if step["step"] != index:
            raise _Mismatch(index, "step", f"steps out of order: step {step['step']} is "
                                           f"recorded at position {index}")
        seat = engine.current_seat(state)
        if seat is None:
            raise _Mismatch(index, "steps", "a step follows the end of the game")
        if step["seat"] != seat:
            raise _Mismatch(index, "seat", f"seat {seat} was to move, not seat {step['seat']}")
        return _apply_step(engine, state, step, self.seed, self.policy,
                           self.tally.strikes[seat])


def _policy(record: Record) -> FailurePolicy:
    try:
        return FailurePolicy.from_dict(record["policy"])
    except (TypeError, ValueError) as error:
        raise _Mismatch(None, "policy", str(error)) from None


def _apply_step(engine: engines.Game, state: State, step: StepRecord, seed: int,
                policy: FailurePolicy, strikes: int) -> State:
    index, action, fault = step["step"], step["action"], step["fault"]
    if fault is None:
        if action is None:
            raise _Mismatch(index, "action", "a step without a fault needs an action")
        return _apply(engine, state, action, index)
    expected = policy.action_for(fault["code"], strikes) if fault["code"] in Fault.ALL else None
    if expected != fault["policy"]:
        raise _Mismatch(index, "fault", f"the fault record does not follow the match's "
                                        f"failure policy {policy.to_dict()}")
    if fault["policy"] == FORFEIT:
        if action is not None:
            raise _Mismatch(index, "fault", "a forfeited step records no action")
        return state
    substitute = substitute_action(seed, index, engine.legal_actions(state))
    if fault["policy"] == RANDOM and action != substitute:
        raise _Mismatch(index, "fault", "the substituted action is not the seeded random "
                                        "choice of the random policy")
    return _apply(engine, state, action, index)


def _apply(engine: engines.Game, state: State, action: Action | None, index: int) -> State:
    try:
        return engine.apply(state, action)
    except engines.EngineError as error:
        raise _Mismatch(index, "action", f"the action is refused: {error.reason}") from None


def _check_end(engine: engines.Game, record: Record, state: State, tally: rerun.Tally
               ) -> None:
    end, forfeit, strikes = len(record["steps"]), tally.forfeit, tally.strikes
    if forfeit is None and not engine.is_over(state):
        raise _Mismatch(end, "steps", "the game is not over after the last recorded step")
    if record["forfeit"] != forfeit:
        raise _Mismatch(None, "forfeit", f"the steps give forfeit {forfeit}, the record says "
                                         f"{record['forfeit']}")
    if record["strikes"] != strikes:
        raise _Mismatch(None, "strikes", f"the faults give strikes {strikes}, the record "
                                         f"says {record['strikes']}")
    expected: Mapping[str, Any] = (forfeit_result(record["num_players"], forfeit) if forfeit
                                   else engine.result(state))
    recorded: Mapping[str, Any] = record["result"] or {}
    for part in ("scores", "ranks", "details"):
        if recorded.get(part) != expected[part]:
            raise _Mismatch(None, f"result.{part}",
                            f"the re-run gives {part} {expected[part]}, the record says "
                            f"{recorded.get(part)}")


def _check_chain(record: Record) -> str:
    chain = record.get("chain")
    if not chain:
        return MISSING
    holds = chain["length"] == len(record["steps"]) and hmac.compare_digest(
        chain["head"], replay.chain_head(record))
    return VALID if holds else INVALID


def _check_signature(record: Record, keys: list[str]) -> tuple[str, str | None]:
    signature = record.get("signature")
    if not signature:
        return MISSING, None
    if not keys:
        return NOT_CHECKED, signature["key_id"]
    secret = next((k for k in keys if replay.key_id(k) == signature["key_id"]), None)
    if secret is None:
        return UNKNOWN_KEY, signature["key_id"]
    holds = hmac.compare_digest(signature["value"], replay.signature_value(record, secret))
    return (VALID if holds else INVALID), signature["key_id"]
