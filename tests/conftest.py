"""Shared fixtures: a real redis-server on a free loopback port for the whole run."""

import pytest
import redis

from referee.redis_server import RedisServer


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
