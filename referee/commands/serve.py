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
  50 header fields of at most 8190 bytes each (gunicorn answers 400);
- WORKER_CONNECTIONS concurrent connections per worker process;
- a worker whose event loop is blocked for `timeout` s (no heartbeat) is restarted.
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
import time
from collections.abc import Callable

import gevent
from flask import Flask
from gunicorn.app.base import BaseApplication

import engines
from referee import logs
from referee.api.problems import Problem
from referee.config import Config, redacted_url
from referee.errors import REQUEST_TIMEOUT

HELP = "serve the referee API under gunicorn"
log = logging.getLogger(__name__)
KEEPALIVE_S = 5
BODY_S = 10
WORKER_CONNECTIONS = 1000


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
        "worker_class": "gevent", "worker_connections": args.worker_connections,
        "keepalive": KEEPALIVE_S, "timeout": 30, "graceful_timeout": 10,
        "limit_request_line": 4094, "limit_request_fields": 50,
        "limit_request_field_size": 8190, "control_socket_disable": True,
        "accesslog": "-",
    }


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
    """`wsgi.input` whose reads fail with a 408 once the body's deadline has passed."""

    def __init__(self, stream, deadline: float, seconds: float):
        self.stream = stream
        self.deadline = deadline
        self.too_slow = Problem(REQUEST_TIMEOUT,
                                f"the request body did not arrive within {seconds:g} s")

    def _within_deadline(self, read, *args):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.too_slow
        with gevent.Timeout(left, self.too_slow):
            return read(*args)

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
