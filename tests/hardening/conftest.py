"""Fixtures of the hardening tests: the misbehaving bots on loopback. The settings, the API
client, `referee serve` and the worker processes are tests/conftest.py's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.badbots import BadBots


@pytest.fixture
def bad_bots() -> Iterator[BadBots]:
    server = BadBots().start()
    yield server
    server.stop()
