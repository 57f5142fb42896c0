"""`referee serve [--host 127.0.0.1] [--port 8000]`: the API under gunicorn, gevent workers.

Why gevent workers: a gthread worker ties one of its threads to a connection until the
request has been read, so 10-20 sockets sending a header line every 5 s (slowloris) took
every thread and `GET /health` timed out. A gevent worker serves each connection with a
greenlet (a few kB, no thread), so slow clients, pull moves waiting for the runner and
long-lived responses (Server-Sent Events) cost a greenlet each, up to `worker_connections`
per process. gunicorn patches the standard library (sockets, locks, sleep) in each worker
before the app is loaded; redis-py, Flask and the store then block cooperatively.

The limits, each chosen:
- a request head (request line and headers) must arrive whole within KEEPALIVE_S:
  gunicorn's gevent worker reads every head, the first one too, under a timeout of
  `keepalive` seconds and drops the connection silently after it. So keep-alive idle time
  and the slowloris budget are the same 5 s.
- a request body must arrive whole within BODY_S (then 408), and is at most
  `MAX_BODY_BYTES` (413, Flask);
- the request line at most 4094 bytes (gunicorn answers 414, listed in the spec), at most
  50 header fields of at most 8190 bytes each (gunicorn answers 431);
- WORKER_CONNECTIONS concurrent connections per worker process;
- a worker whose event loop is blocked for `timeout` s (no heartbeat) is restarted.
gunicorn's own error answers (a request it cannot parse, past those limits, or a failure
outside the app) are problems like the API's, not its HTML pages: `ProblemWorker`.
No control socket: gunicorn 25+ opens one at a fixed path ($XDG_RUNTIME_DIR or
~/.gunicorn/gunicorn.ctl), so a second server on the same machine took over the first
one's, and it lets any process of the same user resize or stop the server.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from ssl import SSLError

import gevent
import orjson
from flask import Flask
from gunicorn import util as gunicorn_util
from gunicorn.app.base import BaseApplication
from gunicorn.http import errors as http_errors
from gunicorn.http.wsgi import Response, default_environ
from gunicorn.workers.ggevent import GeventWorker

import engines
from referee import logs
from referee.api.problems import INTERNAL_DETAIL, MEDIA_TYPE, Problem
from referee.config import Config, redacted_url
from referee.errors import (
    EXPECTATION_FAILED,
    HTTP_ERROR,
    INTERNAL,
    REQUEST_HEADERS_TOO_LARGE,
    REQUEST_LINE_TOO_LONG,
    REQUEST_MALFORMED,
    REQUEST_TIMEOUT,
    TRANSFER_CODING_UNSUPPORTED,
    ProblemType,
)

HELP = "serve the referee API under gunicorn"
log = logging.getLogger(__name__)
KEEPALIVE_S = 5
BODY_S = 10
WORKER_CONNECTIONS = 1000
DETAIL_CHARS = 200  # of gunicorn's words in a problem's detail: they quote the client


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--worker-connections", type=int, default=WORKER_CONNECTIONS,
                        help="concurrent connections per worker process (each a greenlet)")


def gunicorn_options(args: argparse.Namespace) -> dict:
    """gunicorn's settings for `referee serve` (see the module's docstring for each)."""
    return {
        "bind": f"{args.host}:{args.port}", "workers": args.workers,
        "worker_class": ProblemWorker, "worker_connections": args.worker_connections,
        "keepalive": KEEPALIVE_S, "timeout": 30, "graceful_timeout": 10,
        "limit_request_line": 4094, "limit_request_fields": 50,
        "limit_request_field_size": 8190, "control_socket_disable": True,
        "accesslog": "-",
    }


GUNICORN_ERRORS: tuple[tuple[tuple[type[BaseException], ...], ProblemType], ...] = (
    ((http_errors.InvalidResponseHeader, http_errors.InvalidResponseHeaderName), INTERNAL),
    ((http_errors.LimitRequestLine,), REQUEST_LINE_TOO_LONG),
    ((http_errors.LimitRequestHeaders,), REQUEST_HEADERS_TOO_LARGE),
    ((http_errors.ExpectationFailed,), EXPECTATION_FAILED),
    ((http_errors.UnsupportedTransferCoding,), TRANSFER_CODING_UNSUPPORTED),
    ((http_errors.ForbiddenProxyRequest, SSLError),
     replace(HTTP_ERROR, status=403, title="Forbidden")),
    ((http_errors.InvalidRequestLine, http_errors.InvalidRequestMethod,
      http_errors.InvalidHTTPVersion, http_errors.InvalidHeader, http_errors.InvalidHeaderName,
      http_errors.ObsoleteFolding, http_errors.InvalidSchemeHeaders,
      http_errors.InvalidChunkSize, http_errors.ChunkMissingTerminator,
      http_errors.InvalidChunkExtension, http_errors.InvalidProxyLine,
      http_errors.InvalidH2CPreface), REQUEST_MALFORMED),
)
"""The type answering each error gunicorn tells apart (the first that matches), of the
status gunicorn gives it (`Worker.handle_error` in gunicorn/workers/base.py): the client's
errors, and the app's invalid response headers, a 500 like any other error. The 403s come
with the PROXY protocol and TLS, which `referee serve` does not enable."""


def gunicorn_problem(error: BaseException) -> Problem:
    """The problem answering an error gunicorn raised: a client's in gunicorn's words
    (`quoted`), any other the server's failure, which says nothing more."""
    kind = next((kind for errors, kind in GUNICORN_ERRORS if isinstance(error, errors)),
                INTERNAL)
    if kind is INTERNAL:
        return Problem(INTERNAL, INTERNAL_DETAIL)
    return Problem(kind, quoted(str(error)))


def quoted(text: str) -> str:
    """`text` in printable ASCII (any other character escaped as Python writes it, `\\xff`),
    at most DETAIL_CHARS long: gunicorn's messages quote what the client sent."""
    printable = "".join(char if " " <= char <= "~" else ascii(char)[1:-1]
                        for char in text[:DETAIL_CHARS + 1])
    if len(printable) <= DETAIL_CHARS:
        return printable
    return printable[:DETAIL_CHARS - 3] + "..."


class ProblemWorker(GeventWorker):
    """gunicorn's gevent worker whose own error answers are problems (`gunicorn_problem`)
    rather than HTML pages; each is logged as gunicorn logs it (the client's bytes cut
    short) and closes the connection, as gunicorn's do."""

    def handle_quit(self, sig, frame) -> None:
        """Ctrl-C (SIGINT) and SIGQUIT, gunicorn's quick stop, in a greenlet of its own as
        gunicorn's gevent worker does (`_quit_now`)."""
        gevent.spawn(self._quit_now)

    def _quit_now(self) -> None:
        """Exit at once, the logs flushed: gunicorn's own quick stop calls `sys.exit` in a
        greenlet, which gevent reports with two tracebacks at every Ctrl-C (gunicorn
        #3239). Requests in flight are cut short, as a quick stop means (SIGTERM is the
        graceful one)."""
        self.alive = False
        self.cfg.worker_int(self)
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    def handle_error(self, req, client, addr, exc) -> None:
        started = datetime.now()
        problem = gunicorn_problem(exc)
        ip, port = addr or ("", -1)  # none: a Unix socket
        if problem.kind is INTERNAL:
            self.log.exception("Error handling request %s", getattr(req, "uri", "(no URI read)"))
        else:
            self.log.warning("Invalid request from ip=%s: %s", ip, problem.detail)
        body = orjson.dumps(problem.body())
        if req is None and isinstance(exc, http_errors.InvalidHeader):
            req = exc.req  # the request of a framing header's error (None for others)
        if req is not None:  # logged before the answer is written, as gunicorn does
            self._log_access(req, client, (ip, port), problem.kind, len(body), started)
        head = (f"HTTP/1.1 {problem.kind.status} {problem.kind.title}\r\n"
                f"Connection: close\r\nContent-Type: {MEDIA_TYPE}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n")
        try:
            gunicorn_util.write_nonblock(client, head.encode("ascii") + body)
        except OSError:
            self.log.debug("Failed to send error message.")

    def _log_access(self, req, client, addr: tuple[str, int], kind: ProblemType, size: int,
                    started: datetime) -> None:
        """The access log's line of a request `handle_error` answered with a problem of
        type `kind`: with its path and status (gunicorn's own line had neither, and the
        JSON lines' logger failed on it, which made the answer a 500)."""
        environ = default_environ(req, client, self.cfg)
        environ["REMOTE_ADDR"], environ["REMOTE_PORT"] = addr[0], str(addr[1])
        environ["PATH_INFO"] = req.path
        response = Response(req, client, self.cfg)
        response.status, response.status_code = f"{kind.status} {kind.title}", kind.status
        response.sent = size
        self.log.access(response, req, environ, datetime.now() - started)


class GunicornApp(BaseApplication):
    """gunicorn driven from Python: each worker process builds its own app with `factory`."""

    def __init__(self, options: dict, factory: Callable[[], object]):
        self.options = options
        self.factory = factory
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> object:
        return self.factory()


def serve_app(factory: Callable[[], Flask], host: str, port: int, workers: int,
              threads: int) -> None:
    """Serve the app `factory` builds under gunicorn until stopped, its access log on
    stdout (JSON lines with REFEREE_LOG_FORMAT=json, see referee.logs)."""
    options = {"bind": f"{host}:{port}", "workers": workers, "threads": threads,
               "worker_class": "gthread", "accesslog": "-", "timeout": 60,
               "control_socket_disable": True,
               **logs.gunicorn_options()}
    GunicornApp(options, factory).run()


class _DeadlineInput:
    """`wsgi.input` whose reads fail with a 408 once the body's deadline has passed, and
    with the problem `gunicorn_problem` answers when gunicorn refuses the body (a malformed
    chunk or trailer: the API, which reads it, would take that for its own failure)."""

    def __init__(self, stream, deadline: float, seconds: float):
        self.stream = stream
        self.deadline = deadline
        self.too_slow = Problem(REQUEST_TIMEOUT,
                                f"the request body did not arrive within {seconds:g} s")

    def _within_deadline(self, read, *args):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.too_slow
        try:
            with gevent.Timeout(left, self.too_slow):
                return read(*args)
        except http_errors.ParseException as error:
            raise gunicorn_problem(error) from error

    def read(self, *args):
        return self._within_deadline(self.stream.read, *args)

    def readline(self, *args):
        return self._within_deadline(self.stream.readline, *args)

    def __iter__(self):
        return iter(self.readline, b"")


class BodyDeadline:
    """WSGI middleware: reading a request body that is still arriving `seconds` after the
    request started is a 408 problem, so a client trickling a body holds its greenlet for
    that long at most (gunicorn then drains what is left under the head timeout)."""

    def __init__(self, app, seconds: float):
        self.app = app
        self.seconds = seconds

    def __call__(self, environ, start_response):
        environ["wsgi.input"] = _DeadlineInput(environ["wsgi.input"],
                                               time.monotonic() + self.seconds, self.seconds)
        return self.app(environ, start_response)


def freeze_startup_objects() -> None:
    """Move every object alive once the app is built (modules, engines, schemas, the spec:
    ~10^5 of them) out of the garbage collector's reach: a full collection traversed them
    all, 30 ms of CPU that stalled every connection of the worker process, 100-340 ms while
    a tournament ran on the same cores. What requests allocate is still collected."""
    engines.names()  # every engine loaded now, not by a first request
    gc.collect()
    gc.freeze()


def run(args: argparse.Namespace) -> int:
    logs.configure("api")
    config = Config.from_env()  # a bad variable: one line (referee.cli), no token printed
    if not config.admin_token:
        if logs.json_enabled():
            log.error("REFEREE_ADMIN_TOKEN is not set: set it to serve with "
                      "REFEREE_LOG_FORMAT=json (a generated token would have to be written "
                      "into the logs)")
            return 2
        os.environ["REFEREE_ADMIN_TOKEN"] = secrets.token_urlsafe(32)
        print(f"REFEREE_ADMIN_TOKEN was not set; the admin token of this server is: "
              f"{os.environ['REFEREE_ADMIN_TOKEN']}", flush=True)
        config = Config.from_env()
    sealer = config.sealer()  # no key file (and HMAC-only not chosen): one line, exit 2
    logs.announce(log, f"referee API listening on http://{args.host}:{args.port} "
                       f"(Redis {redacted_url(config.redis_url)}; spec at /openapi.yaml; "
                       f"signing with key {sealer.key_id})")

    def create() -> BodyDeadline:
        from referee.api.app import create_app

        app = BodyDeadline(create_app(config), BODY_S)
        freeze_startup_objects()
        return app

    GunicornApp({**gunicorn_options(args), **logs.gunicorn_options()}, create).run()
    return 0
