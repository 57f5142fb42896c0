"""GET /ratings/{game}: the game's leaderboard (live Elo, latest tournament interval, games
played) and every bot's rating history (tournament.tournaments.leaderboard)."""

from __future__ import annotations

from flask import Blueprint, Response

import engines
from tournament.tournaments import leaderboard

from ..problems import not_found
from ..schemas import RatingsSchema
from ..web import reply, services

bp = Blueprint("ratings", __name__)


@bp.get("/ratings/<game>")
def get_ratings(game: str) -> Response:
    if game not in engines.names():
        raise not_found(f"game {game!r}")
    return reply(RatingsSchema(), leaderboard(services().store, game))
