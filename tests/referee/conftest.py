"""Fixtures of the referee tests: test bots on loopback, the API with every response checked
against openapi.yaml, and real `referee worker` processes."""

from __future__ import annotations

import subprocess

import pytest
from apitest import ADMIN, ROOT, SECRET, worker_command, worker_env
from botserver import BotServer

from referee.config import Config


@pytest.fixture(scope="session")
def bot_server():
    server = BotServer().start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def config(redis_url) -> Config:
    return Config(redis_url=redis_url, admin_token=ADMIN, secret=SECRET,
                  max_body_bytes=64 * 1024, move_wait_s=5.0)


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
def background_worker(workers):
    """Start a waiting `referee worker` in the background, stopped at the end of the test. Not
    `--burst`: a burst worker leaves after a second with nothing queued, which a pull
    match parked between two moves of a slow (loaded) client may well be."""
    return lambda: workers.start_ready(1)[0]
