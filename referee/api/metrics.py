"""GET /metrics: the whole cluster's metrics in the Prometheus text format (tournament.metrics),
for the admin token or the read-only REFEREE_METRICS_TOKEN (docs/operations.md says why)."""

from __future__ import annotations

from flask import Blueprint, Response, request
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from referee.api.auth import is_admin, require_token
from referee.api.problems import Problem
from referee.api.web import services
from tournament.metrics import ClusterCollector
from tournament.store import QUEUES, running_key

bp = Blueprint("metrics", __name__)


@bp.get("/metrics")
def metrics() -> Response:
    require_metrics_reader()
    registry = CollectorRegistry()
    registry.register(ClusterCollector(services().store.redis, QUEUES, running_key()))
    encode, content_type = choose_encoder(request.headers.get("Accept", ""))
    return Response(encode(registry), content_type=content_type)


def require_metrics_reader() -> None:
    """401 without a token; 403 unless it is the admin token or the metrics token."""
    token, config = require_token(), services().config
    if not any(is_admin(token, granted) for granted in (config.admin_token,
                                                         config.metrics_token)):
        raise Problem(403, "auth/forbidden", "Forbidden",
                      "this request needs the metrics token or the admin token")
