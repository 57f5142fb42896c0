"""What `referee serve` answers to requests gunicorn refuses before the API sees them (a
request line, header or body that breaks HTTP/1.1, or past the limits), and to a failure
outside the app: `application/problem+json` of the catalogue, like every other error, with
the status gunicorn gives, never its HTML page; what the client sent is quoted escaped and
cut short. Each request goes to a real `referee serve` over a raw socket."""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import sys
from http import HTTPStatus
from pathlib import Path

import pytest
from gunicorn.config import Config as GunicornConfig
from gunicorn.glogging import Logger
from gunicorn.http import errors as gunicorn_errors
from gunicorn.workers.base import Worker

from referee.api.problems import INTERNAL_DETAIL, MEDIA_TYPE
from referee.commands.serve import DETAIL_CHARS, ProblemWorker, quoted
from referee.errors import CATALOGUE, INTERNAL, REQUEST_MALFORMED
from referee.redis_server import free_port, wait_for_port
from tests.support.apitest import ROOT
from tests.support.live_server import LiveServer

HOST = b"Host: x\r\n"
BODY = b"Content-Type: application/json\r\n"
MARKER = b"Q" * 3000  # an attacker's long run of bytes

REFUSED_HEADS = {  # request bytes -> the status gunicorn answers them with
    "no method, target and version": (b"GARBAGE\r\n\r\n", 400),
    "a method that is no token": (b"G@T / HTTP/1.1\r\n" + HOST + b"\r\n", 400),
    "a lower-case method": (b"get / HTTP/1.1\r\n" + HOST + b"\r\n", 400),
    "an HTTP version 2.7": (b"GET / HTTP/2.7\r\n" + HOST + b"\r\n", 400),
    "an HTTP version that is no number": (b"GET / HTTP/1.x\r\n" + HOST + b"\r\n", 400),
    "a line ending in a bare LF": (b"GET /health HTTP/1.1\n" + HOST + b"\n", 400),
    "a request line over 4094 bytes": (b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\n" + HOST
                                       + b"\r\n", 414),
    "51 header fields": (b"GET /health HTTP/1.1\r\n" + HOST
                         + b"".join(b"X-%d: y\r\n" % i for i in range(50)) + b"\r\n", 431),
    "a header field over 8190 bytes": (b"GET /health HTTP/1.1\r\n" + HOST + b"X-Big: "
                                       + b"a" * 9000 + b"\r\n\r\n", 431),
    "a header name with a space": (b"GET /health HTTP/1.1\r\n" + HOST + b"Bad Name: x\r\n\r\n",
                                   400),
    "a header line without a colon": (b"GET /health HTTP/1.1\r\n" + HOST + b"NoColon\r\n\r\n",
                                      400),
    "a NUL in a header value": (b"GET /health HTTP/1.1\r\n" + HOST + b"X-A: a\x00b\r\n\r\n",
                                400),
    "a folded header line": (b"GET /health HTTP/1.1\r\n" + HOST + b"X-A: a\r\n  b\r\n\r\n", 400),
    "a Content-Length that is no number": (b"POST /replays/verify HTTP/1.1\r\n" + HOST
                                           + b"Content-Length: abc\r\n\r\n", 400),
    "two Content-Lengths": (b"POST /replays/verify HTTP/1.1\r\n" + HOST
                            + b"Content-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400),
    "Transfer-Encoding and Content-Length": (
        b"POST /replays/verify HTTP/1.1\r\n" + HOST
        + b"Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n", 400),
    "a Transfer-Encoding that does not end in chunked": (
        b"POST /replays/verify HTTP/1.1\r\n" + HOST + b"Transfer-Encoding: gzip\r\n\r\n", 400),
    "an unknown transfer coding": (b"POST /replays/verify HTTP/1.1\r\n" + HOST
                                   + b"Transfer-Encoding: foo, chunked\r\n\r\n0\r\n\r\n", 501),
    "an Expect other than 100-continue": (
        b"POST /replays/verify HTTP/1.1\r\n" + HOST
        + b"Expect: teapot\r\nContent-Length: 2\r\n\r\n{}", 417),
    "contradictory scheme headers from a trusted proxy address": (
        b"GET /health HTTP/1.1\r\n" + HOST
        + b"X-Forwarded-Proto: https\r\nX-Forwarded-SSL: off\r\n\r\n", 400),
    # an attacker's bytes, quoted escaped and cut short
    "non-UTF-8 bytes in the request line": (b"GET /\xff\xfe\x80 HTTP/1.1\r\n" + HOST + b"\r\n",
                                            400),
    "a TLS ClientHello": (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40
                          + b"\r\n\r\n", 400),
    "a 4000-byte request line of binary and quotes": (
        b'GET /"\\' + b"\xff\x00" * 500 + MARKER + b" HTTP/1.1 extra\r\n" + HOST + b"\r\n", 400),
    "an 8000-byte binary header name": (b"GET /health HTTP/1.1\r\n" + HOST + b"\x80\xc3" * 1000
                                        + MARKER + b": x\r\n\r\n", 400),
    "a JSON-breaking header name": (b'GET /health HTTP/1.1\r\n' + HOST
                                    + b'"}\\u0000<script>: x\r\n\r\n', 400),
}

REFUSED_BODIES = {  # chunked bodies gunicorn refuses while the API reads them
    "a chunk size that is no number": b"zz\r\n{}\r\n0\r\n\r\n",
    "a chunk without its CRLF": b"2\r\n{}XX0\r\n\r\n",
    "a chunk extension with a control byte": b"2;\x01\r\n{}\r\n0\r\n\r\n",
}


def exchange(port: int, request: bytes) -> bytes:
    """Everything the server sends back to `request` until it closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def parse(answer: bytes) -> tuple[int, dict[str, str], bytes]:
    """(status, headers by lower-case name, body) of one HTTP/1.1 answer."""
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip()
               for name, _, value in (line.partition(":") for line in lines)}
    return int(status_line.split(" ")[1]), headers, body


def assert_problem(answer: bytes, status: int) -> dict:
    """`answer` is one problem+json of the catalogue with `status`; returns the problem."""
    got, headers, body = parse(answer)
    assert got == status, answer[:300]
    assert headers["content-type"] == MEDIA_TYPE, answer[:300]
    assert int(headers["content-length"]) == len(body)
    problem = json.loads(body)
    kind = next(kind for kind in CATALOGUE if kind.uri == problem["type"])
    assert kind.status in (status, None)
    assert problem["title"] == (kind.title if kind.status else HTTPStatus(status).phrase)
    assert problem["status"] == status
    return problem


@pytest.mark.parametrize("request_bytes, status", REFUSED_HEADS.values(), ids=REFUSED_HEADS)
def test_a_request_gunicorn_refuses_is_answered_with_a_problem(live_server, request_bytes,
                                                               status):
    answer = exchange(live_server.port, request_bytes)
    problem = assert_problem(answer, status)
    assert parse(answer)[1]["connection"] == "close"
    assert len(problem["detail"]) <= DETAIL_CHARS
    assert problem["detail"].isascii() and problem["detail"].isprintable()


@pytest.mark.parametrize("body", REFUSED_BODIES.values(), ids=REFUSED_BODIES)
def test_a_chunked_body_gunicorn_refuses_is_a_400_problem_not_the_servers_failure(
        live_server, body):
    """The API reads the body (gunicorn parses its chunks then): the error escaped the
    views, and was a 500 `internal` logged with its traceback."""
    request = (b"POST /replays/verify HTTP/1.1\r\n" + HOST + BODY
               + b"Transfer-Encoding: chunked\r\n\r\n" + body)
    problem = assert_problem(exchange(live_server.port, request), 400)
    assert problem["type"] == REQUEST_MALFORMED.uri


def test_a_body_shorter_than_its_content_length_is_malformed_not_read_as_sent(live_server):
    """A client that stops sending (shuts its side) after `{}` of a body of 100 bytes: the
    API read the `{}` as the whole body and judged it (400 `request/invalid`, or whatever
    a body cut at that point would have meant)."""
    with socket.create_connection(("127.0.0.1", live_server.port), timeout=30) as sock:
        sock.sendall(b"POST /replays/verify HTTP/1.1\r\n" + HOST
                     + b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{}")
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    problem = assert_problem(answer, 400)
    assert problem["type"] == REQUEST_MALFORMED.uri and "2 of the 100 bytes" in problem["detail"]


def test_the_server_lives_on_and_answers_after_refusing(live_server):
    refused = [exchange(live_server.port, request) for request, _ in REFUSED_HEADS.values()]
    health = exchange(live_server.port, b"GET /health HTTP/1.1\r\n" + HOST
                      + b"Connection: close\r\n\r\n")
    assert all(answer for answer in refused)
    assert parse(health)[0] == 200


def test_a_failure_outside_the_app_is_a_500_problem_that_discloses_nothing(tmp_path: Path):
    """An app that raises under the production worker and settings, as a streamed answer
    failing before its first byte would: gunicorn wrote its own HTML 500."""
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tests.support.failing_app", str(port)],
                                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, timeout=30)
        answer = exchange(port, b"GET /anything HTTP/1.1\r\n" + HOST + b"\r\n")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    problem = assert_problem(answer, 500)
    assert problem == {"type": INTERNAL.uri, "title": INTERNAL.title, "status": 500,
                       "detail": INTERNAL_DETAIL}
    assert parse(answer)[1]["connection"] == "close"
    assert "secret internals" in log.read_text()  # logged, not answered


@pytest.mark.parametrize("text, detail", [
    ("Invalid HTTP Header: 'X-A'", "Invalid HTTP Header: 'X-A'"),
    ("\xff\x00\r\n\u00e9\u2028\U0001f600\"\\", "\\xff\\x00\\r\\n\\xe9\\u2028\\U0001f600\"\\"),
    ("a" * DETAIL_CHARS, "a" * DETAIL_CHARS),
    ("a" * (DETAIL_CHARS + 1), "a" * (DETAIL_CHARS - 3) + "..."),
    ("\x00" * 51, "\\x00" * 49 + "\\..."),
], ids=["printable", "escaped", "at the limit", "cut", "escaped and cut"])
def test_a_detail_quotes_gunicorns_words_in_printable_ascii_cut_short(text, detail):
    assert quoted(text) == detail


# ----- the worker's statuses are gunicorn's ------------------------------------------------

def gunicorn_errors_handled() -> list[BaseException]:
    """An instance of every exception gunicorn's HTTP parser defines, of the TLS error and
    of any other failure: each kind `Worker.handle_error` tells apart."""
    defined = [value for value in vars(gunicorn_errors).values()
               if isinstance(value, type) and issubclass(value, Exception)]
    return [kind("x") for kind in defined] + [ssl.SSLError("x"), RuntimeError("x")]


def status_written(worker: Worker, error: BaseException) -> int:
    """The status of the answer `worker.handle_error` writes to a real socket for `error`."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        worker.handle_error(None, ours, ("127.0.0.1", 1), error)
        ours.shutdown(socket.SHUT_WR)
        answer = theirs.recv(65536)
    return parse(answer)[0]


@pytest.mark.parametrize("error", gunicorn_errors_handled(), ids=lambda error: type(error).__name__)
def test_the_worker_answers_each_error_with_the_status_gunicorn_gives_it(error, tmp_path):
    """gunicorn's own `handle_error`, which ours replaces, is the reference: an upgrade of
    gunicorn that adds an error or changes a status fails here."""
    config = GunicornConfig()
    config.set("worker_tmp_dir", str(tmp_path))
    gunicorns, ours = [kind(0, 0, [], None, 30, config, Logger(config))
                       for kind in (Worker, ProblemWorker)]
    try:
        assert status_written(ours, error) == status_written(gunicorns, error)
    finally:
        gunicorns.tmp.close()
        ours.tmp.close()


def test_a_refused_request_is_one_access_record_with_its_path_status_and_size(redis_server,
                                                                              tmp_path):
    """A request refused for a header gunicorn had read it with is in the access log. Its
    record had no path, which the JSON lines' logger failed on: the answer was a 500."""
    server = LiveServer(redis_server, tmp_path / "serve.log", REFEREE_LOG_FORMAT="json")
    try:
        answer = exchange(server.port, b"POST /replays/verify?x=1 HTTP/1.1\r\n" + HOST
                          + b"Content-Length: abc\r\n\r\n")
    finally:
        server.stop()
    assert_problem(answer, 400)
    records = [json.loads(line) for line in server.log().splitlines() if line.startswith("{")]
    refused = [record for record in records
               if record["logger"] == "gunicorn.access" and record["method"] == "POST"]
    assert [(record["path"], record["query"], record["status"], record["bytes"])
            for record in refused] == [("/replays/verify", "x=1", 400, len(parse(answer)[2]))]
