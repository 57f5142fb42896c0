"""`referee dashboard [--host 127.0.0.1] [--port 9181]`: rq-dashboard, the rq ecosystem's own
web view of the queues, their jobs and the workers, under gunicorn, for the admin.

It is a process of its own rather than a part of the API: a browser cannot send the API's
bearer tokens, so the dashboard asks for HTTP basic auth (user `admin`, password: the admin
token), which the API never accepts; rq-dashboard keeps module-wide state (its Redis
connection, its serializer) that is better kept out of the API's processes; and it can
listen on a private address while the API is public (docs/operations.md). Deleting jobs and
emptying queues are disabled: a match whose job is gone would stay queued forever."""

from __future__ import annotations

import argparse
import hmac
import logging
import os
import secrets
from urllib.parse import urlsplit, urlunsplit

from flask import Flask, Response, request
from rq.serializers import JSONSerializer

from referee import logs
from referee.commands.serve import serve_app
from referee.config import Config, redacted_url, redis_target

HELP = "serve rq-dashboard (queues, jobs, workers) for the admin, under gunicorn"
DEFAULT_PORT = 9181
USER = "admin"
log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default: loopback only)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)


def without_wait_options(redis_url: str) -> str:
    """The URL as rq-dashboard reads it (it knows redis+sentinel:// too, but not the WAIT
    options, which only the referee's writes use)."""
    target = redis_target(redis_url)
    return target.url or urlunsplit(urlsplit(redis_url)._replace(query=""))


def create_dashboard(redis_url: str, password: str) -> Flask:
    """rq-dashboard on the referee's Redis, behind basic auth (user `admin`, `password`)."""
    from rq_dashboard import web
    from rq_dashboard.cli import make_flask_app

    web.config.serializer = JSONSerializer  # the match jobs are JSON (tournament.jobs)
    app = make_flask_app(None, None, None, url_prefix="")
    app.config.update(RQ_DASHBOARD_REDIS_URL=without_wait_options(redis_url),
                      RQ_DASHBOARD_DISABLE_DELETE=True)
    web.setup_rq_connection(app)

    @app.before_request
    def require_admin_password() -> Response | None:
        auth = request.authorization
        if (auth is not None and auth.type == "basic" and auth.username == USER
                and hmac.compare_digest((auth.password or "").encode(), password.encode())):
            return None
        return Response("the dashboard needs user admin and the admin token as password\n",
                        401, {"WWW-Authenticate": 'Basic realm="referee rq dashboard"'},
                        mimetype="text/plain")

    app.before_request(refuse_changes_from_other_sites)
    app.after_request(browser_headers)
    return app


CHANGING_GETS = ("/requeue/",)  # rq-dashboard's one GET that changes something


def refuse_changes_from_other_sites() -> Response | None:
    """403 for a change another site's page asks for (CSRF): the browser sends the cached
    basic-auth password with it. A browser names the page's site (`Sec-Fetch-Site`) and,
    for a POST, its origin; a client that is not a browser sends neither, and is let by."""
    changes = (request.method not in ("GET", "HEAD", "OPTIONS")
               or request.path.startswith(CHANGING_GETS))
    origin = request.headers.get("Origin")
    elsewhere = request.headers.get("Sec-Fetch-Site") in ("cross-site", "same-site") or (
        origin is not None and urlsplit(origin).netloc != request.host)
    if changes and elsewhere:
        return Response("refused: a change asked for by another site's page\n", 403,
                        mimetype="text/plain")
    return None


def browser_headers(response: Response) -> Response:
    """Never in a frame (a click on a hidden dashboard), never sniffed, no Referer."""
    for name, value in (("X-Frame-Options", "DENY"), ("X-Content-Type-Options", "nosniff"),
                        ("Referrer-Policy", "no-referrer")):
        response.headers.setdefault(name, value)
    return response


def run(args: argparse.Namespace) -> int:
    logs.configure("dashboard")
    config = Config.from_env()
    password = config.admin_token
    if not password:
        if logs.json_enabled():
            log.error("REFEREE_ADMIN_TOKEN is not set: set it to serve the dashboard with "
                      "REFEREE_LOG_FORMAT=json")
            return 2
        password = os.environ["REFEREE_ADMIN_TOKEN"] = secrets.token_urlsafe(32)
        print(f"REFEREE_ADMIN_TOKEN was not set; the dashboard's password is: {password}",
              flush=True)
    logs.announce(log, f"rq dashboard at http://{args.host}:{args.port}/ (user {USER}, "
                       f"password: the admin token; Redis {redacted_url(config.redis_url)})")
    serve_app(lambda: create_dashboard(config.redis_url, password), args.host, args.port,
              workers=1, threads=4)
    return 0
