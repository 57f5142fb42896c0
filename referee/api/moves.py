"""GET /matches/{id}/observation and POST /matches/{id}/actions: pull seats.

The seat is the one whose token comes in the Authorization header. A move is checked
against the live state (turn, step, rules) before it is handed to the runner through
Redis; only the first move for a step is accepted, and it queues the match again (a match
waiting for its pull seat holds no worker).
"""

from __future__ import annotations

import math
import time

from flask import Blueprint, Response

import engines
from referee.api.auth import bearer_token, require_token
from referee.api.problems import Problem, conflict, not_found
from referee.api.schemas import MoveAcceptedSchema, MoveSchema, ObservationSchema
from referee.api.web import load_body, reply, services
from referee.match.rerun import state_before
from referee.match.runner import decision_payload
from tournament.jobs import enqueue_match
from tournament.store import MatchStatus, seat_deadline_ms

bp = Blueprint("moves", __name__)


@bp.get("/matches/<match_id>/observation")
def observation(match_id: str) -> Response:
    match, seat, live = _seat_request(match_id)
    payload = decision_payload(engines.get(match["game"]), live["state"], match_id, seat,
                               live["step"], seat_deadline_ms(match, seat))
    return reply(ObservationSchema, {**payload, "status": match["status"],
                                       "to_move": payload["observation"]["to_move"]})


@bp.post("/matches/<match_id>/actions")
def post_action(match_id: str) -> Response:
    match, seat, live = _seat_request(match_id)
    _check_rate()
    move = load_body(MoveSchema)
    store = services().store
    if match["status"] in (MatchStatus.FINISHED, MatchStatus.FAILED):
        raise conflict("match/over", f"the match is {match['status']}: no more moves")
    _check_turn(engines.get(match["game"]), live, seat, move)
    if not store.post_move(match_id, seat, move["step"], move["action"]):
        raise conflict("action/stale-step", f"a move for step {move['step']} was already accepted")
    enqueue_match(store, match, reason=f"s{move['step']}")
    applied = store.wait_applied(match_id, move["step"], services().config.move_wait_s)
    now = store.get_match(match_id)
    return reply(MoveAcceptedSchema, {
        "match_id": match_id, "seat": seat, "step": move["step"], "applied": applied,
        "status": now["status"], "current_step": now["step"], "to_move": now["to_move"],
    })


def _seat_request(match_id: str) -> tuple[dict, int, dict]:
    """The match, the seat whose token the request carries, and the live state, read in one
    round trip: 404 for an unknown match, 401 without a token, 403 for a token that is not
    one of its seat tokens."""
    match, seat, live = services().store.seat_view(match_id, bearer_token())
    if match is None:
        raise not_found(f"match {match_id!r}")
    require_token()
    if seat is None:
        raise Problem(403, "auth/forbidden", "Forbidden",
                      "this token is not a seat token of this match")
    return match, seat, live or _final_state(match)


def _final_state(match: dict) -> dict:
    """A finished match keeps no live state: its last one, re-run from the replay."""
    record = services().store.get_replay(match["id"])
    engine = engines.get(match["game"])
    steps = len(record["steps"])
    return {"step": steps, "state": state_before(engine, record, steps)}


def _check_rate() -> None:
    """429 with Retry-After once the token has posted its quota of moves in this window
    (REFEREE_MOVE_RATE; counted in Redis, so shared by every API process)."""
    limit, window_s = services().config.move_rate
    wait_s = services().store.count_move(require_token(), limit, window_s, time.time())
    if wait_s is not None:
        retry_s = max(1, math.ceil(wait_s))
        raise Problem(429, "action/rate-limited", "Too Many Requests",
                      f"at most {limit} moves per {window_s} s with one seat token; "
                      f"retry in {retry_s} s", headers={"Retry-After": str(retry_s)})


def _check_turn(engine: engines.Game, live: dict, seat: int, move: dict) -> None:
    """409 out of turn or stale; 422 against the rules (IllegalAction); 400 for an action
    that fails the game's action schema (InvalidAction). Both carry the engine's reason;
    a push bot's same answers are the faults `illegal` and `malformed`."""
    to_move = engine.current_seat(live["state"])
    if to_move != seat:
        whose = "nobody's: the game is over" if to_move is None else f"seat {to_move}'s"
        raise conflict("action/out-of-turn", f"it is {whose} turn, not seat {seat}'s")
    if move["step"] != live["step"]:
        raise conflict("action/stale-step", f"the match is at step {live['step']}; "
                                            f"this move answers step {move['step']}")
    try:
        engine.apply(live["state"], move["action"])
    except engines.IllegalAction as error:
        raise Problem(422, "action/illegal", "Illegal action", error.reason) from None
    except engines.InvalidAction as error:
        raise Problem(400, "action/invalid", "Invalid action", error.reason,
                      errors={"action": [error.reason]}) from None
