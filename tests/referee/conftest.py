"""Fixtures of the referee tests: test bots on loopback, the API with every response checked
against openapi.yaml, and real `referee worker` processes."""

from __future__ import annotations

import subprocess

import pytest
from apitest import ADMIN, ROOT, SECRET, ApiClient, load_openapi, worker_command, worker_env
from botserver import BotServer
from openapi_core import OpenAPI
from worker_procs import Workers

from referee.app import create_app
from referee.config import Config
from referee.redis_server import free_port


@pytest.fixture(scope="session")
def bot_server():
    server = BotServer().start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def refused_url() -> str:
    """A loopback URL where nothing listens: connection refused."""
    return f"http://127.0.0.1:{free_port()}/bot"


@pytest.fixture(scope="session")
def openapi() -> OpenAPI:
    return load_openapi()


@pytest.fixture
def config(redis_url) -> Config:
    return Config(redis_url=redis_url, admin_token=ADMIN, secret=SECRET,
                  max_body_bytes=64 * 1024, move_wait_s=5.0)


@pytest.fixture
def api(config, openapi) -> ApiClient:
    return ApiClient(create_app(config), openapi)


@pytest.fixture
def run_worker(redis_url):
    """Run `referee worker --burst` to the end of the queue; returns its output."""

    def run(timeout: float = 60, *extra: str) -> str:
        done = subprocess.run(worker_command("--burst", *extra), env=worker_env(redis_url),
                              cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, done.stderr
        return done.stdout + done.stderr

    return run


@pytest.fixture
def background_worker(redis_url, tmp_path):
    """Start `referee worker --burst` in the background; stopped at the end of the test."""
    workers = Workers(redis_url, tmp_path)
    yield lambda: workers.start(burst=True)[0]
    workers.stop_all()  # a failed test left it waiting: stop it and its work horse
