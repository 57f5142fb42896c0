"""GET /matches/{id}/replay: the replay record; while the match is not over, admin only."""

from __future__ import annotations

from flask import Blueprint, Response

import engines
from tournament.store import MatchStatus

from .. import replay
from ..auth import require_admin
from ..schemas import ReplaySchema
from ..web import reply, services
from .matches import find_match

bp = Blueprint("replays", __name__)


@bp.get("/matches/<match_id>/replay")
def get_replay(match_id: str) -> Response:
    match = find_match(match_id)
    if match["status"] == MatchStatus.FINISHED:
        return reply(ReplaySchema(), services().store.get_replay(match_id))
    require_admin(services().config.admin_token)
    return reply(ReplaySchema(), live_record(match))


def live_record(match: dict) -> dict:
    """The record of a match not over yet: its steps so far, no result."""
    engine = engines.get(match["game"])
    state = engine.new_game(num_players=match["num_players"], seed=match["seed"],
                            options=match["options"])
    deadlines = {"bot": match["deadline_ms"], "pull": match["pull_deadline_ms"]}
    record = replay.new_record(
        match_id=match["id"], game=match["game"], game_version=match["game_version"],
        num_players=match["num_players"], options=match["options"], seed=match["seed"],
        seats=[{**seat, "deadline_ms": deadlines[seat["kind"]]} for seat in match["seats"]],
        policy=match["policy"], initial_state_hash=replay.state_hash(state),
    )
    record["steps"] = services().store.steps(match["id"])
    for step in record["steps"]:
        record["strikes"][step["seat"]] += step["fault"] is not None
    record["started_at"] = match["started_at"]
    return record
