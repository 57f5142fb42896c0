"""GET /health: liveness and Redis reachability."""

from flask import Blueprint, Response

import engines
from referee.api.problems import Problem
from referee.api.schemas import HealthSchema
from referee.api.web import reply, services

bp = Blueprint("health", __name__)


@bp.get("/health")
def health() -> Response:
    if not services().store.ping():
        raise Problem(503, "redis/unreachable", "Service Unavailable", "Redis does not answer")
    return reply(HealthSchema, {"status": "ok", "redis": "ok", "games": engines.names()})
