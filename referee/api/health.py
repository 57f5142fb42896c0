"""GET /health: liveness and Redis reachability."""

from flask import Blueprint, Response
from marshmallow import Schema, fields, validate

import engines
from referee.api.common import required
from referee.api.operations import operation
from referee.api.problems import Problem
from referee.api.web import reply, services
from referee.errors import REDIS_UNREACHABLE

bp = Blueprint("health", __name__)


class HealthSchema(Schema):
    status = required(fields.String, validate=validate.OneOf(["ok"]))
    redis = required(fields.String, validate=validate.OneOf(["ok"]))
    games = required(fields.List, fields.String())


PATHS = {
    "/health": {"get": operation(
        "getHealth", "Liveness and Redis reachability", "health", (200, HealthSchema),
        (503,))},
}


@bp.get("/health")
def health() -> Response:
    if not services().store.ping():
        raise Problem(REDIS_UNREACHABLE, "Redis does not answer")
    return reply(HealthSchema, {"status": "ok", "redis": "ok", "games": engines.names()})
