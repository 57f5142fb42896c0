"""`referee serve [--host 127.0.0.1] [--port 8000]`: the API under gunicorn."""

from __future__ import annotations

import argparse
import logging
import os
import secrets
from collections.abc import Callable

from flask import Flask
from gunicorn.app.base import BaseApplication

from referee import logs
from referee.config import Config, redacted_url

HELP = "serve the referee API under gunicorn"
log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=8,
                        help="threads per worker (a move waits briefly for the runner)")


class GunicornApp(BaseApplication):
    """gunicorn driven from Python: each worker process builds its own app with `factory`."""

    def __init__(self, options: dict, factory: Callable[[], Flask]):
        self.options = options
        self.factory = factory
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Flask:
        return self.factory()


def serve_app(factory: Callable[[], Flask], host: str, port: int, workers: int,
              threads: int) -> None:
    """Serve the app `factory` builds under gunicorn until stopped, its access log on
    stdout (JSON lines with REFEREE_LOG_FORMAT=json, see referee.logs)."""
    options = {"bind": f"{host}:{port}", "workers": workers, "threads": threads,
               "worker_class": "gthread", "accesslog": "-", "timeout": 60,
               **logs.gunicorn_options()}
    GunicornApp(options, factory).run()


def run(args: argparse.Namespace) -> int:
    logs.configure("api")
    if not os.environ.get("REFEREE_ADMIN_TOKEN"):
        if logs.json_enabled():
            log.error("REFEREE_ADMIN_TOKEN is not set: set it to serve with "
                      "REFEREE_LOG_FORMAT=json (a generated token would have to be written "
                      "into the logs)")
            return 2
        os.environ["REFEREE_ADMIN_TOKEN"] = secrets.token_urlsafe(32)
        print(f"REFEREE_ADMIN_TOKEN was not set; the admin token of this server is: "
              f"{os.environ['REFEREE_ADMIN_TOKEN']}", flush=True)
    config = Config.from_env()
    logs.announce(log, f"referee API listening on http://{args.host}:{args.port} "
                       f"(Redis {redacted_url(config.redis_url)}; spec at /openapi.yaml)")

    def create() -> Flask:
        from referee.app import create_app

        return create_app(config)

    serve_app(create, args.host, args.port, args.workers, args.threads)
    return 0
