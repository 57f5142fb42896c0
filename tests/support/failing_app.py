"""`python -m tests.support.failing_app PORT`: gunicorn with `referee serve`'s worker and
settings, serving an app that raises (a failure outside the API's error handler)."""

from __future__ import annotations

import sys

from gevent import monkey

monkey.patch_all()  # as `referee serve` does (referee.cli), before the imports below

from referee.cli import build_parser  # noqa: E402
from referee.commands.serve import GunicornApp, gunicorn_options  # noqa: E402


def failing_app(environ, start_response):
    raise RuntimeError("secret internals: /srv/referee/keys")


if __name__ == "__main__":
    args = build_parser("serve").parse_args(["serve", "--port", sys.argv[1], "--workers", "1"])
    GunicornApp(gunicorn_options(args), lambda: failing_app).run()
