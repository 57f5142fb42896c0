"""Shared fixtures: a real redis-server on a free loopback port for the whole run, and the
API test kit of tests/referee (the app with every response checked against openapi.yaml,
`referee worker` processes) for the folders that test through the API.

Each of those folders defines its own `config` fixture (the server settings it tests under)."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from referee.api.app import create_app
from referee.config import Config
from referee.redis_server import RedisServer, free_port

sys.path.insert(0, str(Path(__file__).resolve().parent / "referee"))  # apitest, worker_procs

from apitest import ApiClient, load_openapi  # noqa: E402
from openapi_core import OpenAPI  # noqa: E402
from worker_procs import Workers  # noqa: E402


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """A real redis-server for the whole test run; yields its URL."""
    with RedisServer(tmp_path_factory.mktemp("redis"), persistent=False) as server:
        yield server.url


@pytest.fixture
def redis_url(redis_server):
    """The shared server's URL with the database flushed before the test."""
    client = redis.Redis.from_url(redis_server)
    client.flushall()
    client.close()
    return redis_server


@pytest.fixture
def refused_url() -> str:
    """A loopback URL where nothing listens: every decision is a connection error."""
    return f"http://127.0.0.1:{free_port()}/bot"


@pytest.fixture(scope="session")
def openapi() -> OpenAPI:
    return load_openapi()


@pytest.fixture
def api(config: Config, openapi: OpenAPI) -> ApiClient:
    return ApiClient(create_app(config), openapi)


@pytest.fixture
def workers(redis_url, tmp_path) -> Iterator[Workers]:
    """Long-running `referee worker` processes a test may start and kill; all stopped after."""
    pool = Workers(redis_url, tmp_path)
    yield pool
    pool.stop_all()
