"""GET /ratings/{game}: the game's leaderboard (live Elo, latest tournament interval, games
played) and every bot's rating history (tournament.tournaments.leaderboard), kept in Redis
until the ratings change."""

from __future__ import annotations

import orjson
from flask import Blueprint, Response

import engines
from tournament.tournaments import leaderboard_page

from ..problems import not_found
from ..schemas import RatingsSchema
from ..web import services, shared

bp = Blueprint("ratings", __name__)


@bp.get("/ratings/<game>")
def get_ratings(game: str) -> Response:
    if game not in engines.names():
        raise not_found(f"game {game!r}")
    page = leaderboard_page(services().store, game,
                            lambda board: orjson.dumps(shared(RatingsSchema).dump(board)))
    return Response(page, mimetype="application/json")
