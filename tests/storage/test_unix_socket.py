"""A Redis on this machine named by its unix socket (`REDIS_URL=unix:///path?db=0`, which
`referee.config.redis_target` accepts): every client connects without TCP's keepalive
options, which a unix socket does not take, and a worker plays a match through it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
import redis

from referee.redis_server import RedisServer
from tournament.store.connection import connect, connect_async, script_sources
from tournament.store.steps import StepWriter, resp


@pytest.fixture(scope="module")
def unix_server(tmp_path_factory) -> Iterator[str]:
    """A redis-server listening on a unix socket too; yields its `unix://` URL."""
    directory = tmp_path_factory.mktemp("unix")
    socket_path = directory / "redis.sock"
    with RedisServer(directory, persistent=False,
                     options=["--unixsocket", str(socket_path), "--unixsocketperm", "700"]):
        yield f"unix://{socket_path}?db=0"


@pytest.fixture
def redis_url(unix_server) -> str:
    """The fixtures' Redis (the API's, the worker's) is the unix socket's, flushed."""
    client = redis.Redis.from_url(unix_server)
    client.flushall()
    client.close()
    return unix_server


def test_a_client_connects_through_a_unix_socket_with_the_scripts_loaded(redis_url):
    client = connect(redis_url)
    try:
        assert client.ping()
        assert client.connection_pool.connection_kwargs["path"].endswith("redis.sock")
        shas = [redis.Redis().register_script(source).sha for source in script_sources()]
        assert client.script_exists(*shas) == [True] * len(shas)
    finally:
        client.close()


def test_the_drivers_client_connects_through_a_unix_socket(redis_url):
    async def write_and_read() -> bytes:
        client = connect_async(redis_url)
        try:
            writer = StepWriter(client)
            await writer.call(resp(["SET", "unix-key", "through the socket"]))
            return await writer.call(resp(["GET", "unix-key"]))
        finally:
            await client.aclose()

    assert asyncio.run(write_and_read()) == b"through the socket"


def test_a_worker_plays_a_match_through_a_unix_socket(api, bot_server, run_worker):
    bot = api.register_bot(bot_server.url("/random"), name="random")
    match = api.create_match("aladino", [{"kind": "bot", "bot_id": bot}] * 2, seed=5)
    run_worker(60)
    status = api.get(f"/matches/{match['id']}").get_json()
    assert status["status"] == "finished", status
    assert api.get(f"/matches/{match['id']}/replay").status_code == 200
