"""Replays: GET /matches/{id}/replay (the record, a file `referee verify` accepts),
GET /matches/{id}/replay/{step}?seat=N (a step as a seat or a spectator saw it) and
POST /replays/verify. While a match, or another match on its deal, is not over, its replay
is for the admin only."""

from __future__ import annotations

from typing import Any, cast

from flask import Blueprint, Response, request
from marshmallow import Schema, fields, validate

import engines
from referee.api import log
from referee.api.auth import require_admin
from referee.api.common import (
    MAX_RECORD_STEPS,
    MAX_SEATS,
    MAX_SEED,
    SEAT,
    SHA256_HEX,
    STEP,
    BoundedList,
    JsonNumber,
    known_game,
    required,
)
from referee.api.matches import (
    PULL_DEADLINE_MS,
    PUSH_DEADLINE_MS,
    ForfeitSchema,
    PolicySchema,
    ResultSchema,
    SeatInfoSchema,
    TimeControlSchema,
    find_match,
)
from referee.api.operations import MATCH_ID, REPLAY_503, operation, path_parameter
from referee.api.problems import Problem, invalid, not_found, refuse_over_rate
from referee.api.web import load_json, load_query, reply, services, shared, whole_numbers
from referee.errors import REPLAY_UNSUPPORTED, VERIFY_RATE_LIMITED
from referee.match import replay
from referee.match import verify as audit
from referee.match.botclient import Fault
from referee.match.canonical import CanonicalizationError
from referee.match.compact import StoredReplayError
from referee.match.replay import Record, SeatRecord
from referee.match.rerun import engine_for, state_before
from referee.match.runner import POLICY_CHOICES
from referee.match.sealing import Verifier, from_b64url
from referee.match.step_views import Viewer, see_step
from tournament import results_log
from tournament.deals import secret_deals
from tournament.store import MatchStatus, seat_deadline_ms

bp = Blueprint("replays", __name__)

MAX_REPLAY_SEED = (1 << 63) - 1  # what the engines accept: referee-replay/1 records used it


class FaultSchema(Schema):
    code = required(fields.String, validate=validate.OneOf(Fault.ALL))
    detail = required(fields.String)
    raw = required(fields.String, metadata={"description": "the answer, truncated"})
    policy = required(fields.String, validate=validate.OneOf(POLICY_CHOICES))


DEBUG_TEXT = ("what the bot said of its thinking with this move (its answer's `debug`, at "
              "most 4 KiB): while the match runs, for the admin and the seat itself only")
INFO_TEXT = ("its answer's `info` (at most 1 KiB of JSON, e.g. depth, score, nodes): as "
             "private as `debug`")


class StepClockSchema(Schema):
    remaining_ms = required(BoundedList, JsonNumber(), MAX_SEATS)
    overdraft_ms = required(BoundedList, JsonNumber(), MAX_SEATS)


class StepSchema(Schema):
    step = required(fields.Integer, validate=STEP)
    seat = required(fields.Integer, validate=SEAT)
    action = required(fields.Dict, allow_none=True)
    fault = required(fields.Nested, FaultSchema, allow_none=True)
    elapsed_ms = required(JsonNumber)
    state_hash = required(fields.String, validate=SHA256_HEX)
    clock = fields.Nested(StepClockSchema, metadata={
        "description": "on a match with a time control: every seat's clock and bank after "
                       "this move, increment added"})
    debug = fields.String(metadata={"description": DEBUG_TEXT})
    info = fields.Dict(metadata={"description": INFO_TEXT})
    debug_truncated = fields.Boolean(metadata={"description": "debug or info was cut"})


class ChainSchema(Schema):
    algorithm = required(fields.String, validate=validate.OneOf(["sha256"]))
    length = required(fields.Integer, validate=STEP)
    head = required(fields.String, validate=SHA256_HEX)


class LogSchema(Schema):
    index = required(fields.Integer, validate=log.TREE_SIZE, metadata={
        "description": "the record's leaf in the results log"})
    proof = fields.Nested(log.InclusionProofSchema, metadata={
        "description": "its inclusion proof against `head` (GET /log/proof/{match_id})"})
    head = fields.Nested(log.TreeHeadSchema, metadata={
        "description": "the signed tree head current when the replay was served"})


class ReplaySeatSchema(SeatInfoSchema):
    deadline_ms = required(fields.Integer, validate=validate.Range(PUSH_DEADLINE_MS[0],
                                                                  PULL_DEADLINE_MS[1]))


class ReplaySchema(Schema):
    format = required(fields.String, validate=validate.OneOf([replay.FORMAT_V2, replay.FORMAT]),
                      metadata={"description": "`referee-replay/3` for what this referee "
                                "writes; `referee-replay/2` for a record stored before"})
    match_id = required(fields.String)
    game = required(fields.String, validate=known_game)
    game_version = required(fields.String, metadata={
        "description": "the rules version it was played under; POST /replays/verify "
                       "answers 422 for a version other than this referee's"})
    num_players = required(fields.Integer, validate=validate.Range(1, MAX_SEATS))
    options = required(fields.Dict)
    seed = required(fields.Integer, validate=validate.Range(0, MAX_SEED))
    seats = required(BoundedList, fields.Nested(ReplaySeatSchema), MAX_SEATS)
    policy = required(fields.Nested, PolicySchema)
    initial_state_hash = required(fields.String, validate=SHA256_HEX)
    steps = required(BoundedList, fields.Nested(StepSchema), MAX_RECORD_STEPS)
    result = required(fields.Nested, ResultSchema, allow_none=True)
    forfeit = required(fields.Nested, ForfeitSchema, allow_none=True)
    strikes = required(BoundedList, fields.Integer(validate=STEP), MAX_SEATS)
    started_at = required(fields.String, allow_none=True)
    finished_at = required(fields.String, allow_none=True)
    chain = required(fields.Nested, ChainSchema, allow_none=True, metadata={
        "description": "hash chain over the steps; null until the match is over"})
    signature = required(fields.Nested, log.SignatureSchema, allow_none=True, metadata={
        "description": "Ed25519 (or, from an HMAC-only server and before Ed25519, HMAC) "
                       "over the record's canonical bytes without `signature` and `log`; "
                       "null when unsigned or not over"})
    time_control = fields.Nested(TimeControlSchema, metadata={
        "description": "the match's clock, when it was played on one"})
    log = fields.Nested(LogSchema, metadata={
        "description": "where the record is in the results log, once finished; not part "
                       "of what is signed or hashed into the leaf"})


class ReplaySubmissionSchema(ReplaySchema):
    """A record to verify: as a replay, but a seed up to 2**63 - 1, which records of format
    referee-replay/1 may carry."""

    seed = required(fields.Integer, validate=validate.Range(min=0, max=MAX_REPLAY_SEED))
    format = required(fields.String, validate=validate.OneOf(sorted(replay.CANONICAL_FORMS)))


class ReplayStepQuerySchema(Schema):
    seat = fields.Integer(validate=validate.Range(min=0), metadata={
        "description": "the seat whose view to show; absent: the spectator's view"})


class SeenFaultSchema(Schema):
    code = required(fields.String, validate=validate.OneOf(Fault.ALL))
    policy = required(fields.String, validate=validate.OneOf(POLICY_CHOICES))
    detail = fields.String(metadata={"description": "for the seat that committed it only"})
    raw = fields.String(metadata={"description": "for the seat that committed it only"})


class SeenStepSchema(Schema):
    """A recorded step as one viewer knows it."""

    step = required(fields.Integer)
    seat = required(fields.Integer, metadata={"description": "the seat that played it"})
    action = required(fields.Dict, allow_none=True, metadata={
        "description": "the action, shown to the seat that played it only (null for any "
                       "other viewer, and for a forfeited step): `events` say what the "
                       "others learnt of it"})
    fault = required(fields.Nested, SeenFaultSchema, allow_none=True)
    elapsed_ms = required(JsonNumber)
    state_hash = required(fields.String, validate=SHA256_HEX)
    clock = fields.Nested(StepClockSchema)
    debug = fields.String(metadata={"description": "the seat's own steps only"})
    info = fields.Dict(metadata={"description": "the seat's own steps only"})
    debug_truncated = fields.Boolean()
    events = required(fields.List, fields.Dict(), metadata={
        "description": "the entries this step added to the viewer's event log, exactly as "
                       "the viewer's observation shows them"})


class ReplayStepSchema(Schema):
    match_id = required(fields.String)
    step = required(fields.Integer, metadata={
        "description": "the state before the decision of this step (the number of steps: "
                       "the final state)"})
    seat = required(fields.Integer, allow_none=True)
    to_move = required(fields.Integer, allow_none=True)
    view = required(fields.Dict, metadata={
        "description": "exactly the observation the seat had, or the spectator's view"})
    played = required(fields.Nested, SeenStepSchema, allow_none=True, metadata={
        "description": "the step played from this state, as the viewer knows it; null at "
                       "the end"})


class VerifyProblemSchema(Schema):
    step = required(fields.Integer, allow_none=True)
    field = required(fields.String)
    reason = required(fields.String)


class VerifyReportSchema(Schema):
    valid = required(fields.Boolean)
    steps_checked = required(fields.Integer)
    problem = required(fields.Nested, VerifyProblemSchema, allow_none=True, metadata={
        "description": "the first inconsistency found while re-running the match"})
    chain = required(fields.String, validate=validate.OneOf(["valid", "invalid", "missing"]))
    signature = required(fields.String, validate=validate.OneOf(
        ["valid", "invalid", "missing", "unknown-key", "not-checked"]))
    key_id = required(fields.String, allow_none=True)
    notes = required(fields.List, fields.String())
    log = required(fields.String, validate=validate.OneOf(
        ["valid", "invalid", "missing", "not-checked"]), metadata={
        "description": "the record's own `log.proof` against its `log.head`: missing when "
                       "it carries none"})
    log_problem = required(fields.String, allow_none=True)


STEP_NUMBER = path_parameter("step", {"type": "integer", "minimum": 0})

PATHS = {
    "/matches/{match_id}/replay": {"get": operation(
        "getReplay",
        "The replay record (while the match or one on its deal runs: admin only)", "replays",
        (200, ReplaySchema), (401, 403, 404, 503), parameters=[MATCH_ID], security="admin",
        optional_security=True, error_text={503: REPLAY_503},
        description="Served as an attachment: the file `referee verify` checks. A "
                    "tournament match's replay is public once every match on its deal is "
                    "over (it tells the seed, so the deck and hidden cards). An archived "
                    "replay (`referee archive`) is read from the archive.")},
    "/matches/{match_id}/replay/{step}": {"get": operation(
        "getReplayStep", "A step as a seat (or a spectator) saw it", "replays",
        (200, ReplayStepSchema), (400, 401, 403, 404, 503),
        parameters=[MATCH_ID, STEP_NUMBER, {"in": "query", "schema": ReplayStepQuerySchema}],
        security="admin", optional_security=True, error_text={503: REPLAY_503},
        description="With `seat`: exactly the observation that seat had before the "
                    "decision of `step`, and the step played from it as that seat knows it "
                    "(another seat's move only through `played.events`); without: what "
                    "every seat could see. Public when the replay is.")},
    "/replays/verify": {"post": operation(
        "verifyReplay", "Re-run a replay and check its steps, result, chain and signature",
        "replays", (200, VerifyReportSchema), (400, 413, 422, 429), body=ReplaySubmissionSchema,
        error_text={429: "too many replays verified from this address "
                         "(REFEREE_VERIFY_RATE); retry after `Retry-After` s"},
        description="Anonymous. Ed25519 signatures are checked with the published keys "
                    "(GET /keys), HMAC ones with the server's secret; a `log.proof` with "
                    "its `log.head` is checked too. 422 when the replay was made under "
                    "another game version (or an unknown game or format), or when it has "
                    "no canonical JSON (a value nested too deeply): refused rather "
                    "than mis-verified. A record over the body limit (MAX_BODY_BYTES, "
                    "1 MiB) is a 413: `referee verify FILE` checks it offline. Re-running "
                    "costs CPU per step, so each client address may verify "
                    "REFEREE_VERIFY_RATE records per window (429 past it).")},
}


@bp.get("/matches/<id:match_id>/replay")
def get_replay(match_id: str) -> Response:
    match = find_match(match_id)
    record = _with_log(_readable_record(match), match.get("log_index"))
    return reply(ReplaySchema, record, headers={
        "Content-Disposition": f'attachment; filename="{match_id}.replay.json"'})


@bp.get("/matches/<id:match_id>/replay/<int:step>")
def get_replay_step(match_id: str, step: int) -> Response:
    record = _readable_record(find_match(match_id))
    seat = load_query(ReplayStepQuerySchema).get("seat")
    if seat is not None and seat >= len(record["seats"]):
        raise not_found(f"seat {seat} (this match has seats 0 to {len(record['seats']) - 1})")
    if step > len(record["steps"]):
        raise not_found(f"step {step} (the record has steps 0 to {len(record['steps'])})")
    engine = engine_for(record)
    state = state_before(engine, record, step)
    view = engine.observation(state, seat)
    played = (see_step(engine, state, view, record["steps"][step], Viewer(seat)).played
              if step < len(record["steps"]) else None)
    return reply(ReplayStepSchema, {"match_id": match_id, "step": step, "seat": seat,
                                      "to_move": view["to_move"], "view": view,
                                      "played": played})


@bp.post("/replays/verify")
def verify_replay() -> Response:
    _check_verify_rate()
    body = whole_numbers(shared(ReplaySubmissionSchema), load_json())
    errors = shared(ReplaySubmissionSchema).validate(body) if isinstance(body, dict) else {
        "_body": ["a replay record is a JSON object"]}
    if errors or not isinstance(body, dict):
        raise invalid(errors)
    record = cast(Record, body)  # as ReplaySubmissionSchema validated it
    try:
        report = audit.verify(record, _verifier())
    except audit.UnsupportedReplay as error:
        raise Problem(REPLAY_UNSUPPORTED, str(error)) from None
    except CanonicalizationError as error:  # no record this referee writes
        raise Problem(REPLAY_UNSUPPORTED, f"the record has no canonical form: {error}") from None
    services().store.count_verification(report.valid)
    return reply(VerifyReportSchema, report.to_dict())


def _check_verify_rate() -> None:
    """429 with Retry-After once the client address has verified its quota of records in
    the last window (REFEREE_VERIFY_RATE, counted in Redis: shared by every API process)."""
    limit, window_s = services().config.verify_rate
    address = request.remote_addr or "unknown"
    retry_s = services().store.count_verification_request(address, limit, window_s)
    refuse_over_rate(VERIFY_RATE_LIMITED, retry_s,
                     f"at most {limit} replays verified per {window_s} s from one address")


def _verifier() -> Verifier:
    """The published public keys and the server's secret (HMAC records)."""
    services().publish_keys()
    public = [from_b64url(key["public_key"]) for key in services().store.published_keys()]
    return Verifier.of(public, [services().config.secret])


def _with_log(record: Record, index: int | None) -> Record:
    """A finished record with `log`: its index, and its proof against the head current
    now (signed now)."""
    if index is None:
        return record
    store = services().store
    head = results_log.signed_head(store, services().sealer)
    proof = results_log.inclusion_proof(store, index, head["tree_size"])
    return {**record, "log": {"index": index, "proof": proof, "head": head}}


def _readable_record(match: dict[str, Any]) -> Record:
    """The record, public once the match and every match on its deal are over (it tells
    the seed); the admin's before, while the match is not finished its live record."""
    if secret_deals(services().store, [match]):
        require_admin()
    if match["status"] == MatchStatus.FINISHED:
        record = services().store.get_replay(match["id"])
        if record is None:
            raise StoredReplayError(f"match {match['id']} is finished but has no replay")
        return record
    require_admin()
    return live_record(match)


def live_record(match: dict[str, Any]) -> Record:
    """The record of a match not over yet: its steps so far, no result, not sealed."""
    engine = engines.get(match["game"], match["game_version"])
    state = engine.new_game(num_players=match["num_players"], seed=match["seed"],
                            options=match["options"])
    record = replay.new_record(
        match_id=match["id"], game=match["game"], game_version=match["game_version"],
        num_players=match["num_players"], options=match["options"], seed=match["seed"],
        # each seat of the match (a `MatchSeat`) with its deadline
        seats=[cast(SeatRecord, {**seat, "deadline_ms": seat_deadline_ms(match, seat["seat"])})
               for seat in match["seats"]],
        policy=match["policy"], initial_state_hash=replay.state_hash(state),
    )
    record["steps"] = services().store.steps(match["id"])
    for step in record["steps"]:
        record["strikes"][step["seat"]] += step["fault"] is not None
    record["started_at"] = match["started_at"]
    if match.get("time_control") is not None:
        record["time_control"] = match["time_control"]
    return record
