"""Fixtures of the hardening tests: misbehaving bots on loopback, the server settings they run
under, and `referee serve` (gunicorn) on a free loopback port (the API client and the worker
processes come from tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import badbots
import hardening_procs as procs
import pytest
from apitest import ADMIN, SECRET

from referee.config import Config


@pytest.fixture
def bad_bots() -> Iterator:
    server = badbots.BadBots().start()
    yield server
    server.stop()


@pytest.fixture
def config(redis_url) -> Config:
    return Config(redis_url=redis_url, admin_token=ADMIN, secret=SECRET)


@pytest.fixture(scope="module")
def live_server(redis_server, tmp_path_factory) -> Iterator:
    server = procs.LiveServer(redis_server, tmp_path_factory.mktemp("serve") / "serve.log")
    yield server
    server.stop()
