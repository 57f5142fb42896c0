"""GET /games and GET /games/{game}: the registered engines and what they describe."""

from flask import Blueprint, Response
from marshmallow import Schema, fields

import engines
from referee.api.common import required
from referee.api.operations import GAME, operation
from referee.api.web import path_game, reply

bp = Blueprint("games", __name__)


class GameSummarySchema(Schema):
    name = required(fields.String)
    version = required(fields.String)
    min_players = required(fields.Integer)
    max_players = required(fields.Integer)


class GameListSchema(Schema):
    games = required(fields.List, fields.Nested(GameSummarySchema))


class GameDetailSchema(GameSummarySchema):
    description = required(fields.Dict, metadata={
        "description": "the engine's describe(): options, components, action reference"})
    variants = required(fields.List, fields.Dict(), metadata={
        "description": "every supported setup: num_players and options"})


PATHS = {
    "/games": {"get": operation(
        "listGames", "The registered games", "games", (200, GameListSchema), ())},
    "/games/{game}": {"get": operation(
        "getGame", "A game: player counts, options, components, action reference", "games",
        (200, GameDetailSchema), (404,), parameters=[GAME])},
}


def summary(game: engines.Game) -> dict:
    return {"name": game.name, "version": game.version, "min_players": game.min_players,
            "max_players": game.max_players}


@bp.get("/games")
def list_games() -> Response:
    return reply(GameListSchema, {"games": [summary(engines.get(n)) for n in engines.names()]})


@bp.get("/games/<name>")
def get_game(name: str) -> Response:
    game = path_game(name)
    return reply(GameDetailSchema, {**summary(game), "description": game.describe(),
                                      "variants": game.variants()})
