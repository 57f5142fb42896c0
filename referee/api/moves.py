"""GET /matches/{id}/observation and POST /matches/{id}/actions: pull seats.

The seat is the one whose token comes in the Authorization header. A move is checked
against the live state (turn, step, rules) before it is handed to the runner through
Redis; only the first move for a step is accepted, and it queues the match again (a match
waiting for its pull seat holds no worker).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response
from marshmallow import Schema, fields, validate

import engines
from referee.api.auth import bearer_token, require_token
from referee.api.common import JsonNumber, SafeInteger, required
from referee.api.operations import MATCH_ID, REPLAY_503, operation
from referee.api.problems import Problem, engine_problem, not_found, refuse_over_rate
from referee.api.web import load_body, load_query, reply, services
from referee.errors import (
    ACTION_OUT_OF_TURN,
    ACTION_RATE_LIMITED,
    ACTION_STALE_STEP,
    AUTH_FORBIDDEN,
    MATCH_OVER,
    OBSERVATION_LOG_AHEAD,
)
from referee.match.botclient import debug_channel
from referee.match.clock import Clocks, TimeControl
from referee.match.compact import StoredReplayError
from referee.match.rerun import state_before
from referee.match.runner import decision_payload
from tournament.store import MatchStatus, seat_deadline_ms
from tournament.wakeups import enqueue_match

bp = Blueprint("moves", __name__)


class DecisionClockSchema(Schema):
    remaining_ms = required(fields.List, JsonNumber())
    increment_ms = required(fields.Integer)
    overdraft_ms = required(fields.List, JsonNumber())
    deadline_ms = required(fields.Integer)


class ObservationSchema(Schema):
    """The same fields as a push decision request, plus the match status."""

    protocol = required(fields.String)
    match_id = required(fields.String)
    game = required(fields.String)
    seat = required(fields.Integer)
    step = required(fields.Integer)
    to_move = required(fields.Integer, allow_none=True)
    status = required(fields.String)
    deadline_ms = required(fields.Integer)
    clock = fields.Nested(DecisionClockSchema, metadata={
        "description": "on a match with a time control: the clocks, and what this decision "
                       "may take (`deadline_ms`, the same as above)"})
    log_from = SafeInteger(strict=True, metadata={
        "description": "when asked for (`log_from` in the query): the observation's `log` "
                       "holds the entries from this one on only"})
    observation = required(fields.Dict)
    legal_actions = required(fields.List, fields.Dict())


class ObservationQuerySchema(Schema):
    log_from = SafeInteger(validate=validate.Range(min=0), metadata={
        "description": "the log entries the client has already (the `log`'s length in its "
                       "last observation): the `log` then holds the later entries only; "
                       "more than the log has is refused (409)"})


class MoveSchema(Schema):
    step = fields.Integer(required=True, strict=True, validate=validate.Range(min=0),
                          metadata={"description": "the step the move answers (from the "
                                                   "observation); a stale step is refused"})
    action = fields.Dict(required=True, keys=fields.String(), values=fields.Raw())
    debug = fields.Raw(metadata={"description": "what the seat thought, kept with its step "
                                                "(a string, cut to 4 KiB)"})
    info = fields.Raw(metadata={"description": "an object of at most 1 KiB of JSON, e.g. "
                                               "depth and score, kept with its step"})


class MoveAcceptedSchema(Schema):
    match_id = required(fields.String)
    seat = required(fields.Integer)
    step = required(fields.Integer, metadata={"description": "the step this move played"})
    applied = required(fields.Boolean, metadata={
        "description": "false when the runner had not yet played it when this answer left"})
    status = required(fields.String)
    current_step = required(fields.Integer)
    to_move = required(fields.Integer, allow_none=True)


PATHS = {
    "/matches/{match_id}/observation": {"get": operation(
        "getObservation", "A pull seat's view and legal actions (seat token)", "seats",
        (200, ObservationSchema), (400, 401, 403, 404, 409, 503),
        parameters=[MATCH_ID, {"in": "query", "schema": ObservationQuerySchema}],
        security="seat", error_text={503: REPLAY_503})},
    "/matches/{match_id}/actions": {"post": operation(
        "submitMove", "A pull seat's move (seat token)", "seats", (200, MoveAcceptedSchema),
        (400, 401, 403, 404, 409, 413, 422, 429), body=MoveSchema, parameters=[MATCH_ID],
        security="seat",
        description="Checked against the live state: turn (409), step (409), the game's "
                    "action schema (400 `action/invalid`: what a push bot's `malformed` "
                    "fault is), rules (422 `action/illegal`: a push bot's `illegal`), rate "
                    "(429, per token, REFEREE_MOVE_RATE); both refusals carry the engine's "
                    "reason in `detail`. The answer waits briefly until the runner has "
                    "played it.")},
}


@bp.get("/matches/<id:match_id>/observation")
def observation(match_id: str) -> Response:
    match, seat, live = _seat_request(match_id)
    log_from = load_query(ObservationQuerySchema).get("log_from", 0)
    engine = engines.get(match["game"], match["game_version"])
    control = TimeControl.from_dict(match.get("time_control"))
    clocks = None if control is None else Clocks.from_snapshot(
        control, match["num_players"], live.get("clocks"))
    seen = engine.observation(live["state"], seat)
    if log_from > len(seen["log"]):
        raise Problem(OBSERVATION_LOG_AHEAD, f"log_from={log_from} is past the log's "
                                            f"{len(seen['log'])} entries")
    shown = {**seen, "log": seen["log"][log_from:]} if log_from else seen
    payload = decision_payload(engine.name, shown, seen["legal_actions"], match_id, seat,
                               live["step"],
                               seat_deadline_ms(match, seat) if clocks is None
                               else clocks.deadline_ms(seat))
    if log_from:
        payload["log_from"] = log_from
    if clocks is not None:
        payload["clock"] = clocks.payload(seat)
    return reply(ObservationSchema, {**payload, "status": match["status"],
                                       "to_move": seen["to_move"]})


@bp.post("/matches/<id:match_id>/actions")
def post_action(match_id: str) -> Response:
    match, seat, live = _seat_request(match_id)
    _check_rate()
    move = load_body(MoveSchema)
    store = services().store
    if match["status"] in (MatchStatus.FINISHED, MatchStatus.FAILED):
        raise Problem(MATCH_OVER, f"the match is {match['status']}: no more moves")
    _check_turn(engines.get(match["game"], match["game_version"]), live, seat, move)
    debug, info, cut = debug_channel(move)  # cut here: Redis keeps no more than the step will
    said = {key: value for key, value in (("debug", debug), ("info", info),
                                          ("debug_truncated", cut or None)) if value is not None}
    if not store.post_move(match_id, seat, move["step"], move["action"], said):
        raise Problem(ACTION_STALE_STEP, f"a move for step {move['step']} was already accepted")
    enqueue_match(store, match, reason=f"s{move['step']}")
    applied = store.wait_applied(match_id, move["step"], services().config.move_wait_s)
    now = store.get_match(match_id)
    if now is None:
        raise not_found(f"match {match_id!r}")
    return reply(MoveAcceptedSchema, {
        "match_id": match_id, "seat": seat, "step": move["step"], "applied": applied,
        "status": now["status"], "current_step": now["step"], "to_move": now["to_move"],
    })


def _seat_request(match_id: str) -> tuple[dict[str, Any], int, dict[str, Any]]:
    """The match, the seat whose token the request carries, and the live state, read in one
    round trip: 404 for an unknown match, 401 without a token, 403 for a token that is not
    one of its seat tokens."""
    match, seat, live = services().store.seat_view(match_id, bearer_token())
    if match is None:
        raise not_found(f"match {match_id!r}")
    require_token()
    if seat is None:
        raise Problem(AUTH_FORBIDDEN, "this token is not a seat token of this match")
    return match, seat, live or _final_state(match)


def _final_state(match: dict[str, Any]) -> dict[str, Any]:
    """A finished match keeps no live state: its last one, re-run from the replay."""
    record = services().store.get_replay(match["id"])
    if record is None:
        raise StoredReplayError(f"match {match['id']} has no live state and no replay")
    engine = engines.get(match["game"], match["game_version"])
    steps = len(record["steps"])
    return {"step": steps, "state": state_before(engine, record, steps)}


def _check_rate() -> None:
    """429 with Retry-After once the token has posted its quota of moves in the last
    window (REFEREE_MOVE_RATE; counted in Redis, so shared by every API process)."""
    limit, window_s = services().config.move_rate
    retry_s = services().store.count_move(require_token(), limit, window_s)
    refuse_over_rate(ACTION_RATE_LIMITED, retry_s,
                     f"at most {limit} moves per {window_s} s with one seat token")


def _check_turn(engine: engines.Game, live: dict, seat: int, move: dict) -> None:
    """409 out of turn or stale; 422 against the rules (IllegalAction); 400 for an action
    that fails the game's action schema (InvalidAction). Both carry the engine's reason;
    a push bot's same answers are the faults `illegal` and `malformed`."""
    to_move = engine.current_seat(live["state"])
    if to_move != seat:
        whose = "nobody's: the game is over" if to_move is None else f"seat {to_move}'s"
        raise Problem(ACTION_OUT_OF_TURN, f"it is {whose} turn, not seat {seat}'s")
    if move["step"] != live["step"]:
        raise Problem(ACTION_STALE_STEP, f"the match is at step {live['step']}; "
                                         f"this move answers step {move['step']}")
    try:
        engine.apply(live["state"], move["action"])
    except (engines.IllegalAction, engines.InvalidAction) as error:
        raise engine_problem(error, "action") from None
