"""Replays: GET /matches/{id}/replay (the record, a file `referee verify` accepts),
GET /matches/{id}/replay/{step}?seat=N (a step as a seat or a spectator saw it) and
POST /replays/verify. While a match, or another match on its deal, is not over, its replay
is for the admin only."""

from __future__ import annotations

from flask import Blueprint, Response

import engines
from referee.api.auth import require_admin
from referee.api.matches import find_match
from referee.api.problems import Problem, invalid, not_found
from referee.api.schemas import (
    ReplaySchema,
    ReplayStepQuerySchema,
    ReplayStepSchema,
    ReplaySubmissionSchema,
    VerifyReportSchema,
)
from referee.api.web import load_json, load_query, reply, services, shared, whole_numbers
from referee.match import replay
from referee.match import verify as audit
from referee.match.rerun import state_before
from referee.match.step_views import Viewer, see_step
from tournament import metrics
from tournament.deals import secret_deals
from tournament.store import MatchStatus, seat_deadline_ms

bp = Blueprint("replays", __name__)


@bp.get("/matches/<match_id>/replay")
def get_replay(match_id: str) -> Response:
    record = _readable_record(find_match(match_id))
    return reply(ReplaySchema, record, headers={
        "Content-Disposition": f'attachment; filename="{match_id}.replay.json"'})


@bp.get("/matches/<match_id>/replay/<int:step>")
def get_replay_step(match_id: str, step: int) -> Response:
    record = _readable_record(find_match(match_id))
    seat = load_query(ReplayStepQuerySchema).get("seat")
    if seat is not None and seat >= len(record["seats"]):
        raise not_found(f"seat {seat} (this match has seats 0 to {len(record['seats']) - 1})")
    if step > len(record["steps"]):
        raise not_found(f"step {step} (the record has steps 0 to {len(record['steps'])})")
    engine = engines.get(record["game"])
    state = state_before(engine, record, step)
    view = engine.observation(state, seat)
    played = (see_step(engine, state, view, record["steps"][step], Viewer(seat)).played
              if step < len(record["steps"]) else None)
    return reply(ReplayStepSchema, {"match_id": match_id, "step": step, "seat": seat,
                                      "to_move": view["to_move"], "view": view,
                                      "played": played})


@bp.post("/replays/verify")
def verify_replay() -> Response:
    record = whole_numbers(shared(ReplaySubmissionSchema), load_json())
    errors = shared(ReplaySubmissionSchema).validate(record) if isinstance(record, dict) else {
        "_body": ["a replay record is a JSON object"]}
    if errors:
        raise invalid(errors)
    secret = services().config.secret
    try:
        report = audit.verify(record, [secret] if secret else [])
    except audit.UnsupportedReplay as error:
        raise Problem(422, "replay/unsupported", "Replay cannot be verified here",
                      str(error)) from None
    metrics.record_verification(services().store.redis, report.valid)
    return reply(VerifyReportSchema, report.to_dict())


def _readable_record(match: dict) -> dict:
    """The record, public once the match and every match on its deal are over (it tells
    the seed); the admin's before, while the match is not finished its live record."""
    if secret_deals(services().store, [match]):
        require_admin()
    if match["status"] == MatchStatus.FINISHED:
        return services().store.get_replay(match["id"])
    require_admin()
    return live_record(match)


def live_record(match: dict) -> dict:
    """The record of a match not over yet: its steps so far, no result, not sealed."""
    engine = engines.get(match["game"])
    state = engine.new_game(num_players=match["num_players"], seed=match["seed"],
                            options=match["options"])
    record = replay.new_record(
        match_id=match["id"], game=match["game"], game_version=match["game_version"],
        num_players=match["num_players"], options=match["options"], seed=match["seed"],
        seats=[{**seat, "deadline_ms": seat_deadline_ms(match, seat["seat"])}
               for seat in match["seats"]],
        policy=match["policy"], initial_state_hash=replay.state_hash(state),
    )
    record["steps"] = services().store.steps(match["id"])
    for step in record["steps"]:
        record["strikes"][step["seat"]] += step["fault"] is not None
    record["started_at"] = match["started_at"]
    return record
