"""Replay verification: re-run seed + actions through the engine and check every record.

`verify(record, keys)` answers a `Report`: the first problem found while re-running the
match (a step out of order, a seat that was not to move, an illegal action, a state hash
that differs, or is missing where the record's format signs it, an inconsistent fault
record, a result that differs), whether the hash chain
holds, and whether the signature holds for one of `keys` (a `sealing.Verifier`: public
Ed25519 keys, HMAC secrets). A record is valid when the re-run finds no problem, the chain
holds, and the signature holds; with no key at hand the signature is not checked (and may
be absent), which the report's notes say. The record's `log` member is not part of what
is signed; `check_log` checks it (an inclusion proof against a signed tree head).
A record made under another game version is refused (`UnsupportedReplay`) rather than
mis-verified.
Used by `POST /replays/verify` and, offline, by `referee verify FILE`.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import engines
from engines.base import Action, State
from referee.errors import RefereeError
from referee.match import merkle, replay, rerun
from referee.match.botclient import Fault
from referee.match.clock import Clocks, TimeControl, TimeControlError
from referee.match.replay import LogProofRecord, Record, StepRecord, TreeHead
from referee.match.runner import FORFEIT, RANDOM, FailurePolicy, forfeit_result, substitute_action
from referee.match.sealing import INVALID, MISSING, NOT_CHECKED, UNKNOWN_KEY, VALID, Verifier

__all__ = ["INVALID", "MISSING", "NOT_CHECKED", "UNKNOWN_KEY", "VALID", "Report",
           "UnsupportedReplay", "verify", "check_log", "check_head", "well_formed_head"]


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
    log: str = MISSING
    log_problem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


MAX_REASON_CHARS = 1000
"""A problem's reason is cut here: it quotes what the record says, which may be most of a
submitted record (a result's details of 90,000 keys made a 0.9 MB report)."""


class _Mismatch(RefereeError):
    def __init__(self, step: int | None, field_name: str, reason: str):
        if len(reason) > MAX_REASON_CHARS:
            reason = reason[:MAX_REASON_CHARS - 3] + "..."
        super().__init__(reason)
        self.problem = Problem(step, field_name, reason)


def verify(record: Record, keys: Verifier | None = None) -> Report:
    """Check a replay record; `keys` are what its signature may have been made with."""
    engine = _engine_for(record)
    progress = _Progress()
    problem = None
    try:
        _rerun(engine, record, progress)
    except _Mismatch as mismatch:
        problem = mismatch.problem
    chain = _check_chain(record)
    keys = keys or Verifier()
    signature = keys.check(record.get("signature"), replay.signed_bytes(record))
    sealed = record.get("signature")
    used_key = sealed.get("key_id") if isinstance(sealed, Mapping) else None
    authentic = signature == VALID or (keys.empty and signature in (MISSING, NOT_CHECKED))
    log, log_problem = _check_own_log(record, keys)
    valid = problem is None and chain == VALID and authentic and log != INVALID
    return Report(valid, progress.steps, problem, chain, signature,
                  used_key if isinstance(used_key, str) else None,
                  _notes(signature, not keys.empty), log, log_problem)


def _check_own_log(record: Record, keys: Verifier) -> tuple[str, str | None]:
    """The record's own `log.proof` against its own `log.head`: VALID, MISSING (none to
    check), NOT_CHECKED (no key to check the head with) or INVALID with why."""
    logged = record.get("log")
    if not isinstance(logged, Mapping) or "proof" not in logged or "head" not in logged:
        return MISSING, None
    if keys.empty:
        return NOT_CHECKED, None
    outcome = check_log(record, logged["proof"], logged["head"], keys)
    return (VALID, None) if outcome == VALID else (INVALID, outcome)


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
    clocks = _clocks(record)
    last = len(record["steps"]) - 1
    for index, (step, after) in enumerate(rerun.rerun(engine, record, checked, state)):
        _check_state_hash(record["format"], step, after, index, index == last)
        if clocks is not None:
            _check_clock(clocks, step, index)
        tally.count(step)
        progress.steps = index + 1
        state = after
    _check_end(engine, record, state, tally)


def _check_state_hash(record_format: str, step: StepRecord, after: State, index: int,
                      last: bool) -> None:
    """The step's state hash, if it has one, is the re-run state's; a step whose hash the
    format signs (every step before `referee-replay/3`, a checkpoint since) has one."""
    recorded = step.get("state_hash")
    if recorded is None:
        if replay.checkpoint(record_format, index, last):
            raise _Mismatch(index, "state_hash", "the step has no state hash, which its "
                                                 f"format ({record_format}) signs here")
    elif replay.state_hash(after, record_format) != recorded:
        raise _Mismatch(index, "state_hash",
                        "the state after this step does not match the recorded hash")


def _clocks(record: Record) -> Clocks | None:
    try:
        control = TimeControl.from_dict(record.get("time_control"))
    except TimeControlError as error:
        raise _Mismatch(None, "time_control", str(error)) from None
    return None if control is None else Clocks.start(control, record["num_players"])


def _check_clock(clocks: Clocks, step: StepRecord, index: int) -> None:
    """The step's clock is its seat's charged with its `elapsed_ms`, and a step over its
    time is a timeout."""
    over = clocks.charge(step["seat"], step["elapsed_ms"])
    if over and (step["fault"] is None or step["fault"]["code"] != Fault.TIMEOUT):
        raise _Mismatch(index, "fault", "the step took longer than the seat's time left, "
                                        "but is not recorded as a timeout")
    if step.get("clock") != clocks.record():
        raise _Mismatch(index, "clock", f"the clocks after this step are {clocks.record()}, "
                                        f"the record says {step.get('clock')}")


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
    holds = chain["length"] == len(record["steps"]) and secrets.compare_digest(
        str(chain["head"]).encode(), replay.chain_head(record).encode())
    return VALID if holds else INVALID


def check_head(head: TreeHead, keys: Verifier) -> str:
    """VALID when the head is well formed and signed with one of `keys`; else why not."""
    if not well_formed_head(head):
        return "the tree head is malformed"
    outcome = keys.check(head.get("signature"), replay.head_bytes(head))
    return VALID if outcome == VALID else f"the tree head's signature is {outcome}"


def check_log(record: Record, proof: LogProofRecord, head: TreeHead, keys: Verifier) -> str:
    """VALID when `proof` shows that the record is leaf `record.log.index` of the tree
    that the signed `head` describes; else why not."""
    head_check = check_head(head, keys)
    if head_check != VALID:
        return head_check
    logged = record.get("log")
    index = logged.get("index") if isinstance(logged, Mapping) else None
    try:
        path = [bytes.fromhex(node) for node in proof["audit_path"]]
        leaf, root = bytes.fromhex(proof["leaf_hash"]), bytes.fromhex(head["root_hash"])
        size = proof["tree_size"]
    except (KeyError, TypeError, ValueError):
        return "the inclusion proof is malformed"
    if proof.get("index") != index or size != head["tree_size"]:
        return (f"the proof is for leaf {proof.get('index')} of a tree of {size}, the record "
                f"is leaf {index} and the head is of a tree of {head['tree_size']}")
    if leaf != merkle.leaf_hash(replay.leaf_data(record)):
        return "the record does not hash to the proof's leaf: it was changed after logging"
    if not isinstance(index, int) or not merkle.verify_inclusion(index, size, leaf, path, root):
        return f"the audit path does not lead from leaf {index} to the head's root"
    return VALID


def well_formed_head(head: object) -> bool:
    """Whether `head` has a tree head's fields, of their types (not whether it is signed)."""
    if not isinstance(head, Mapping):
        return False
    size, root = head.get("tree_size"), head.get("root_hash")
    return (isinstance(size, int) and size >= 0 and isinstance(root, str)
            and len(root) == 64 and all(c in "0123456789abcdef" for c in root)
            and isinstance(head.get("timestamp"), int))
