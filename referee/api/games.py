"""GET /games and GET /games/{game}: the registered engines and what they describe."""

from flask import Blueprint, Response

import engines
from referee.api.problems import not_found
from referee.api.schemas import GameDetailSchema, GameListSchema
from referee.api.web import reply

bp = Blueprint("games", __name__)


def summary(game: engines.Game) -> dict:
    return {"name": game.name, "version": game.version, "min_players": game.min_players,
            "max_players": game.max_players}


@bp.get("/games")
def list_games() -> Response:
    return reply(GameListSchema, {"games": [summary(engines.get(n)) for n in engines.names()]})


@bp.get("/games/<name>")
def get_game(name: str) -> Response:
    if name not in engines.names():
        raise not_found(f"game {name!r}")
    game = engines.get(name)
    return reply(GameDetailSchema, {**summary(game), "description": game.describe(),
                                      "variants": game.variants()})
