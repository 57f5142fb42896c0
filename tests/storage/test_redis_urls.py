"""Every way a `REDIS_URL` may name a Redis (docs/operations.md, `referee.config.
redis_target`), each against a real redis-server set up that way: a unix socket, a
password, an ACL user, IPv6, TLS. The API's and rq's client, the drivers' asyncio client
and its pipelined writer all connect with the referee's scripts loaded, and a worker plays
a match through it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from referee.redis_server import RedisServer, free_port
from tests.support.apitest import a_worker_plays
from tests.support.tls import tls_files
from tournament.store.connection import connect, connect_async, script_sources
from tournament.store.steps import StepWriter, resp

Setup = Callable[[Path, int], tuple[dict, str]]
"""(RedisServer's arguments, the URL) of a Redis set up in a directory, on a free port."""


def _unix(directory: Path, _: int) -> tuple[dict, str]:
    path = directory / "redis.sock"
    return ({"options": ["--unixsocket", str(path), "--unixsocketperm", "700"]},
            f"unix://{path}?db=0")


def _password(_: Path, port: int) -> tuple[dict, str]:
    return {"options": ["--requirepass", "pass word/%"]}, \
        f"redis://:pass%20word%2F%25@127.0.0.1:{port}/3"


def _acl_user(_: Path, port: int) -> tuple[dict, str]:
    return ({"options": ["--user", "default", "off", "--user", "referee", "on", ">its-pw",
                         "~*", "&*", "+@all"]}, f"redis://referee:its-pw@127.0.0.1:{port}/0")


def _ipv6(_: Path, port: int) -> tuple[dict, str]:
    return {"host": "::1"}, f"redis://[::1]:{port}/0"


def _tls(directory: Path, port: int) -> tuple[dict, str]:
    files, tls_port = tls_files(directory), free_port()
    options = ["--tls-port", str(tls_port), "--tls-cert-file", str(files["cert"]),
               "--tls-key-file", str(files["key"]), "--tls-ca-cert-file", str(files["ca"]),
               "--tls-auth-clients", "no"]
    return {"options": options}, f"rediss://127.0.0.1:{tls_port}/0?ssl_ca_certs={files['ca']}"


SETUPS: dict[str, Setup] = {"unix socket": _unix, "password": _password,
                            "ACL user": _acl_user, "IPv6": _ipv6, "TLS": _tls}


@pytest.fixture(scope="module", params=list(SETUPS))
def reached(request, tmp_path_factory) -> Iterator[str]:
    """A redis-server set up one of the ways; yields the URL that reaches it so."""
    directory = tmp_path_factory.mktemp("redis-url")
    port = free_port()
    arguments, url = SETUPS[request.param](directory, port)
    with RedisServer(directory, port=port, persistent=False, **arguments):
        yield url


@pytest.fixture
def redis_url(reached) -> str:
    """The fixtures' Redis (the API's, the worker's) is the one reached so, flushed."""
    client = redis.Redis.from_url(reached)
    client.flushall()
    client.close()
    return reached


def test_the_synchronous_client_connects_with_the_scripts_loaded(redis_url):
    client = connect(redis_url)
    try:
        shas = [redis.Redis().register_script(source).sha for source in script_sources()]
        assert client.script_exists(*shas) == [True] * len(shas)
        assert client.set("key", "value") and client.get("key") == b"value"
    finally:
        client.close()


def test_the_drivers_pipelined_writer_connects(redis_url):
    async def write_and_read() -> list:
        client = connect_async(redis_url)
        try:
            writer = StepWriter(client)
            await writer.call(resp(["SET", "key", "through the writer"]))
            return list(await asyncio.gather(writer.call(resp(["GET", "key"])),
                                             writer.call(resp(["INCR", "counter"]))))
        finally:
            await client.aclose()

    assert asyncio.run(write_and_read()) == [b"through the writer", 1]


def test_a_worker_plays_a_match(api, bot_server, run_worker):
    assert a_worker_plays(api, run_worker, bot_server.url("/random"), seed=5)["result"]
