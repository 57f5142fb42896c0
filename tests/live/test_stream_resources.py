"""What streams cost the server (`referee serve`): a quiet stream is kept alive with
comments; streams share one pub/sub connection per API process; clients that never read
hold no Redis connection of their own; the subscription goes once its streams are gone."""

from __future__ import annotations

import socket
import time
from contextlib import ExitStack
from urllib.parse import urlsplit

import redis

from referee.api.live import PING_S
from tests.support.apitest import ADMIN
from tests.support.sse import open_stream
from tournament.store import events_channel

GAME = "aladino"
STREAMS = 30


def parked_match(api, bot_url: str) -> str:
    """A match parked at its pull seat 0: nobody moves, so it stays running and quiet."""
    bot = api.register_bot(bot_url, [GAME], name="random")
    return api.create_match(GAME, [{"kind": "pull"}, {"kind": "bot", "bot_id": bot}],
                            seed=1)["id"]


def raw_stream(base: str, path: str) -> socket.socket:
    """A client that sends the request and then never reads a byte; returned once the
    answer has begun to arrive (seen with MSG_PEEK, which leaves it unread)."""
    parts = urlsplit(base)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                 "Accept: text/event-stream\r\n\r\n".encode())
    assert sock.recv(12, socket.MSG_PEEK).startswith(b"HTTP/1.1 200")
    return sock


def subscribers(client: redis.Redis, channel: str) -> int:
    return dict(client.pubsub_numsub(channel))[channel.encode()]


def wait_until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_quiet_stream_says_its_retry_and_pings(live_server, api, redis_url,
                                                 random_bot_url):
    match_id = parked_match(api, random_bot_url)
    stream = open_stream(f"{live_server.url}/matches/{match_id}/events")
    try:
        events = stream.events()
        assert next(events).name == "start"
        started = time.monotonic()
        lines = stream.response.iter_lines(chunk_size=1)
        assert next(lines) == b": ping"  # nothing else happens in the match
        assert time.monotonic() - started < PING_S * 4  # generous: the machine is shared
        assert stream.retry == 3000
    finally:
        stream.close()


def test_streams_that_never_read_hold_no_redis_connection(live_server, api, redis_url,
                                                          random_bot_url):
    match_id = parked_match(api, random_bot_url)
    client = redis.Redis.from_url(redis_url)
    channel = events_channel(match_id)
    path = f"/matches/{match_id}/events"
    with ExitStack() as stack:
        first = open_stream(live_server.url + path, ADMIN)
        stack.callback(first.close)
        assert next(first.events()).name == "start"
        wait_until(lambda: subscribers(client, channel) == 1, 30, "the hub did not subscribe")
        before = len(client.client_list())
        for _ in range(STREAMS):  # one after the other: each is served, then waits
            stack.callback(raw_stream(live_server.url, path).close)
        assert subscribers(client, channel) == 1  # one pub/sub connection for them all
        assert len(client.client_list()) - before <= 3  # none held by a waiting stream
    # every client gone: the streams notice at their next write and unsubscribe
    wait_until(lambda: subscribers(client, channel) == 0, PING_S * 4,
               "the subscription outlived its streams")
    client.close()
