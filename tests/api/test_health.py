"""GET /health: Redis and the games, and a 503 problem when Redis is unreachable."""

from __future__ import annotations

from dataclasses import replace

import engines
from referee.api.app import create_app
from referee.redis_server import free_port
from tests.support.apitest import ApiClient


def test_health_reports_redis(api):
    response = api.get("/health")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "redis": "ok", "games": engines.names()}


def test_health_without_redis_is_a_503_problem(config, openapi):
    down = ApiClient(create_app(replace(config, redis_url=f"redis://127.0.0.1:{free_port()}/0")),
                     openapi)
    response = down.get("/health")
    assert response.status_code == 503 and response.get_json()["title"] == "Service Unavailable"
