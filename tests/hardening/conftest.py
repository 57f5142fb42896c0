"""Fixtures of the hardening tests: misbehaving bots on loopback, the API client of
tests/referee (every response checked against openapi.yaml), `referee worker` processes
with their output kept, and `referee serve` (gunicorn) on a free loopback port."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from openapi_core import OpenAPI

from referee.app import create_app
from referee.config import Config

REFEREE_TESTS = Path(__file__).resolve().parents[1] / "referee"
sys.path.insert(0, str(REFEREE_TESTS))
apitest = importlib.import_module("apitest")  # the referee tests' helpers, by their own name
procs = importlib.import_module("hardening_procs")
worker_procs = importlib.import_module("worker_procs")
badbots = importlib.import_module("badbots")


@pytest.fixture
def bad_bots() -> Iterator:
    server = badbots.BadBots().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def openapi() -> OpenAPI:
    return apitest.load_openapi()


@pytest.fixture
def config(redis_url) -> Config:
    return Config(redis_url=redis_url, admin_token=apitest.ADMIN, secret=apitest.SECRET,
                  max_body_bytes=64 * 1024)


@pytest.fixture
def api(config, openapi):
    return apitest.ApiClient(create_app(config), openapi)


@pytest.fixture
def workers(redis_url, tmp_path) -> Iterator:
    pool = worker_procs.Workers(redis_url, tmp_path)
    yield pool
    pool.stop_all()


@pytest.fixture(scope="module")
def live_server(redis_server, tmp_path_factory) -> Iterator:
    server = procs.LiveServer(redis_server, tmp_path_factory.mktemp("serve") / "serve.log")
    yield server
    server.stop()
