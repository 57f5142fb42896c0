"""Fixtures of the live tests: a random bot over HTTP. `referee serve` (gunicorn, gevent
workers) on a loopback port against the test Redis, the `referee worker` processes and the
API test client for the replays are tests/conftest.py's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bots.python import random_bot
from bots.python.sdk import make_server
from tests.support.loopback import serving


@pytest.fixture(scope="module")
def random_bot_url() -> Iterator[str]:
    """A random bot (bots/python/random_bot.py, seeded) on a loopback port."""
    server = make_server(random_bot.make_choose(seed=5), port=0)
    with serving(server) as port:
        yield f"http://127.0.0.1:{port}/"
