"""GET /metrics: the whole cluster's metrics in the Prometheus text format (tournament.metrics),
for the admin token or the read-only REFEREE_METRICS_TOKEN (docs/operations.md says why)."""

from __future__ import annotations

from flask import Blueprint, Response, request
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from referee.api.auth import is_admin, require_token
from referee.api.operations import operation
from referee.api.problems import Problem
from referee.api.web import services
from referee.errors import AUTH_FORBIDDEN
from tournament.metrics import ClusterCollector
from tournament.store import QUEUES

bp = Blueprint("metrics", __name__)

METRICS_TEXT = {
    "description": "the whole cluster's metrics in the Prometheus text format (OpenMetrics "
                   "when the Accept header asks for it); docs/operations.md lists them",
    "content": {"text/plain": {"schema": {"type": "string"}}, "application/openmetrics-text": {}}}

PATHS = {
    "/metrics": {"get": {**operation(
        "getMetrics", "Metrics for Prometheus (admin or metrics token)", "health",
        (200, METRICS_TEXT), (401, 403, 503)), "security": [{"admin": []}, {"metrics": []}]}},
}


@bp.get("/metrics")
def metrics() -> Response:
    require_metrics_reader()
    registry = CollectorRegistry()
    registry.register(ClusterCollector(services().store, QUEUES))
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    return Response(encode(registry), content_type=content_type)


def require_metrics_reader() -> None:
    """401 without a token; 403 unless it is the admin token or the metrics token."""
    token, config = require_token(), services().config
    if not any(is_admin(token, granted) for granted in (config.admin_token,
                                                         config.metrics_token)):
        raise Problem(AUTH_FORBIDDEN, "this request needs the metrics token or the admin token")
