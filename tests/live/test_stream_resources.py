"""What streams cost the server (`referee serve`): a quiet stream is kept alive with
comments; streams share one pub/sub connection per API process; clients that never read
hold no Redis connection of their own; the subscription goes once its streams are gone; one
client address holds a bounded share of a process's streams."""

from __future__ import annotations

import re
import socket
import time
from contextlib import ExitStack
from urllib.parse import urlsplit

import redis
import requests

from referee.api.live import PING_S
from tests.support.apitest import ADMIN
from tests.support.live_server import LiveServer
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


def stream_from(base: str, source: str, path: str = "/ratings/aladino/events",
                forwarded_for: str = "") -> tuple[socket.socket, bytes]:
    """A stream asked for from the loopback address `source` (with this `X-Forwarded-For`),
    never read past its head: (the socket, the answer's head and whatever of its body came
    with it)."""
    parts = urlsplit(base)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=30,
                                    source_address=(source, 0))
    forwarded = f"X-Forwarded-For: {forwarded_for}\r\n" if forwarded_for else ""
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n{forwarded}"
                 "Accept: text/event-stream\r\n\r\n".encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(65536)
    head, body = answer.split(b"\r\n\r\n", 1)
    length = re.search(rb"(?i)\r\ncontent-length: *([0-9]+)", head)
    while length and len(body) < int(length.group(1)):  # a refusal: its problem, whole
        body += sock.recv(65536)
    return sock, head + b"\r\n\r\n" + body


def test_an_address_holds_its_share_of_streams_and_the_process_its_bound(redis_server,
                                                                          tmp_path):
    """1,000 anonymous streams that never read took every connection of a `referee serve`
    worker, each for up to MAX_STREAM_S, and GET /health timed out (an audit). Now one
    address holds REFEREE_STREAMS_PER_ADDRESS streams of a process, and the process
    REFEREE_STREAMS_PER_PROCESS; a closed stream's slot comes back."""
    server = LiveServer(redis_server, tmp_path / "serve.log", REFEREE_STREAMS_PER_ADDRESS="3",
                        REFEREE_STREAMS_PER_PROCESS="4")
    with ExitStack() as stack:
        stack.callback(server.stop)
        held = []
        for _ in range(3):
            sock, head = stream_from(server.url, "127.0.0.1")
            stack.callback(sock.close)
            assert head.startswith(b"HTTP/1.1 200"), head
            held.append(sock)
        sock, refused = stream_from(server.url, "127.0.0.1")
        sock.close()
        assert refused.startswith(b"HTTP/1.1 429") and b"/problems/stream/too-many" in refused
        assert b"application/problem+json" in refused and b"Retry-After: 5" in refused
        sock, other = stream_from(server.url, "127.0.0.2")
        stack.callback(sock.close)
        assert other.startswith(b"HTTP/1.1 200"), other
        sock, full = stream_from(server.url, "127.0.0.3")
        sock.close()
        assert full.startswith(b"HTTP/1.1 503") and b"/problems/stream/server-full" in full
        assert requests.get(f"{server.url}/health", timeout=30).status_code == 200
        held[0].close()  # noticed at the stream's next write (a ping, every PING_S)

        def third_address_streams() -> bool:
            sock, head = stream_from(server.url, "127.0.0.3")
            stack.callback(sock.close)
            return head.startswith(b"HTTP/1.1 200")

        wait_until(third_address_streams, PING_S * 8, "the closed stream's slot stayed taken")


def test_behind_a_trusted_proxy_each_client_holds_its_own_share(redis_server, tmp_path):
    """With REFEREE_TRUSTED_PROXIES naming the proxy (127.0.0.1 here), the streams it
    relays are counted per client, as `X-Forwarded-For` names it; another address's header
    counts for nothing. The access log shows the client (a refusal is logged at once, a
    stream once it ends)."""
    server = LiveServer(redis_server, tmp_path / "serve.log", REFEREE_STREAMS_PER_ADDRESS="1",
                        REFEREE_TRUSTED_PROXIES="127.0.0.1")
    with ExitStack() as stack:
        stack.callback(server.stop)

        def status(source: str, client: str) -> bytes:
            sock, head = stream_from(server.url, source, forwarded_for=client)
            stack.callback(sock.close)
            return head.split(b" ", 2)[1]

        assert status("127.0.0.1", "198.51.100.1") == b"200"
        assert status("127.0.0.1", "198.51.100.1") == b"429"
        assert status("127.0.0.1", "6.6.6.6, 198.51.100.2") == b"200"
        assert status("127.0.0.1", "6.6.6.6, " * 700 + "198.51.100.5") == b"200"  # 6 KB forged
        assert status("127.0.0.1", "junk\u00ff, 198.51.100.5") == b"429"  # the same client
        assert status("127.0.0.2", "198.51.100.3") == b"200"  # counted as 127.0.0.2
        assert status("127.0.0.2", "198.51.100.4") == b"429"
        wait_until(lambda: b'198.51.100.1 - - [' in server.log_path.read_bytes(), 30,
                   "the access log did not show the refused client behind the proxy")
