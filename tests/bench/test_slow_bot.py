"""`bench/slow_bot.py --lean`, the stand-in bot of the CPU benchmarks, against what a client
may send it: a decision is answered with one of its legal actions after the delay, anything
else with a 400 (bytes that are not HTTP: and the connection closed), never a hang."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.redis_server import free_port, wait_for_port

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "slow_bot.py"


@pytest.fixture(scope="module")
def lean_bot() -> Iterator[int]:
    port = free_port()
    process = subprocess.Popen([sys.executable, str(SCRIPT), "--port", str(port),
                                "--delay-ms", "5", "--lean"])
    try:
        wait_for_port(port, timeout=30)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)


def exchange(port: int, raw: bytes) -> bytes:
    """What the bot sends back to `raw` until it closes or goes quiet for 10 s."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw)
        received = b""
        try:
            while b"\r\n\r\n" not in received or not _whole(received):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += chunk
        except TimeoutError:
            pass
    return received


def _whole(received: bytes) -> bool:
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    return len(body) >= length


def post(body: bytes) -> bytes:
    return (b"POST / HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body))


def test_a_decision_gets_one_of_its_legal_actions(lean_bot):
    legal = [{"take": 1}, {"take": 2}]
    answer = exchange(lean_bot, post(json.dumps({"observation": {}, "legal_actions": legal})
                                     .encode()))
    assert answer.startswith(b"HTTP/1.1 200 OK")
    assert json.loads(answer.partition(b"\r\n\r\n")[2])["action"] in legal


@pytest.mark.parametrize("body", [
    b"not json", b"[1, 2]", b'{"legal_actions": []}', b'{"observation": {}}',
    b"[" * 5000 + b"]" * 5000, b"1" + b"0" * 5000,
    b'{"observation": {}, "legal_actions": 7}',
])
def test_a_body_that_is_no_decision_gets_a_400(lean_bot, body):
    assert exchange(lean_bot, post(body)).startswith(b"HTTP/1.1 400")


def test_a_notice_is_answered_at_once_with_an_empty_object(lean_bot):
    answer = exchange(lean_bot, post(b'{"type": "result", "result": {}}'))
    assert answer.startswith(b"HTTP/1.1 200 OK") and answer.endswith(b"\r\n\r\n{}")


def test_bytes_that_are_not_http_get_a_400_and_the_connection_closed(lean_bot):
    with socket.create_connection(("127.0.0.1", lean_bot), timeout=10) as sock:
        sock.sendall(b"\x00\x01 GARBAGE\r\n\r\n")
        received = b""
        while chunk := sock.recv(65536):  # a connection left open times out here instead
            received += chunk
    assert received.startswith(b"HTTP/1.1 400") and received.count(b"HTTP/1.1 400") == 1
