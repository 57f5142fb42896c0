"""`create_app(config)`: the Flask application of the referee API."""

from __future__ import annotations

from flask import Flask, Response

from referee import ui
from referee.api import (
    accounts,
    bots,
    events,
    export,
    games,
    health,
    ladders,
    log,
    matches,
    metrics,
    moves,
    problems,
    ratings,
    replays,
    spec,
    tournaments,
)
from referee.api.operations import IdConverter
from referee.api.proxies import TrustedProxies
from referee.api.web import Services
from referee.config import Config
from tournament.archive import ReplayArchive
from tournament.store import Store

# One module per resource: its blueprint `bp`, its schemas and its `PATHS` (openapi.yaml's
# paths in this order)
RESOURCES = (health, spec, metrics, games, accounts, bots, matches, moves, replays, export,
             log, tournaments, ladders, ratings, events)
BLUEPRINTS = (*(resource.bp for resource in RESOURCES), ui.bp, ui.root)


def create_app(config: Config | None = None) -> Flask:
    config = config or Config.from_env()
    app = Flask("referee")
    app.url_map.converters["id"] = IdConverter  # before the routes that use it
    app.config["MAX_CONTENT_LENGTH"] = config.max_body_bytes
    archive = ReplayArchive(config.archive_dir) if config.archive_dir else None
    store = Store.from_url(config.redis_url, archive)
    app.extensions["referee"] = Services(config=config, store=store, sealer=config.sealer())
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    problems.register(app)
    app.after_request(_security_headers)
    if config.trusted_proxies:
        app.wsgi_app = TrustedProxies(app.wsgi_app, config.trusted_proxies)  # type: ignore[method-assign]
    return app


SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'"}
"""On every answer (the pages set their own policy first): no type sniffing (a text answer
is never run as HTML), never in a frame, no address in a Referer."""


def _security_headers(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response
