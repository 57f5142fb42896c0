"""Fixtures of the live tests: `referee serve` (gunicorn, gevent workers) on a loopback
port against the test Redis, `referee worker` processes (tests/conftest.py), the API test
client for the replays, and a random bot over HTTP."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from apitest import ADMIN, SECRET
from loopback import serving

from bots.python import random_bot
from bots.python.sdk import make_server
from referee.config import Config

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hardening"))

import hardening_procs  # noqa: E402


@pytest.fixture
def config(redis_url) -> Config:
    return Config(redis_url=redis_url, admin_token=ADMIN, secret=SECRET)


@pytest.fixture(scope="module")
def live_server(redis_server, tmp_path_factory) -> Iterator[hardening_procs.LiveServer]:
    server = hardening_procs.LiveServer(redis_server,
                                        tmp_path_factory.mktemp("serve") / "serve.log")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def random_bot_url() -> Iterator[str]:
    """A random bot (bots/python/random_bot.py, seeded) on a loopback port."""
    server = make_server(random_bot.make_choose(seed=5), port=0)
    with serving(server) as port:
        yield f"http://127.0.0.1:{port}/"
