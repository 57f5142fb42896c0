"""`referee serve [--host 127.0.0.1] [--port 8000]`: the API under gunicorn."""

from __future__ import annotations

import argparse
import os
import secrets

from gunicorn.app.base import BaseApplication

from referee.config import Config, redacted_url

HELP = "serve the referee API under gunicorn"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=8,
                        help="threads per worker (a move waits briefly for the runner)")


class _Gunicorn(BaseApplication):
    """gunicorn driven from Python: each worker process builds its own app."""

    def __init__(self, options: dict, config: Config):
        self.options = options
        self.referee_config = config
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self):
        from referee.app import create_app

        return create_app(self.referee_config)


def run(args: argparse.Namespace) -> int:
    if not os.environ.get("REFEREE_ADMIN_TOKEN"):
        os.environ["REFEREE_ADMIN_TOKEN"] = secrets.token_urlsafe(32)
        print(f"REFEREE_ADMIN_TOKEN was not set; the admin token of this server is: "
              f"{os.environ['REFEREE_ADMIN_TOKEN']}", flush=True)
    config = Config.from_env()
    print(f"referee API listening on http://{args.host}:{args.port} "
          f"(Redis {redacted_url(config.redis_url)}; spec at /openapi.yaml)", flush=True)
    options = {"bind": f"{args.host}:{args.port}", "workers": args.workers,
               "threads": args.threads, "worker_class": "gthread", "accesslog": "-",
               "timeout": 60}
    _Gunicorn(options, config).run()
    return 0
