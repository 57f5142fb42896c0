"""GET /ratings/{game}: a page of the game's leaderboard (live Elo, latest tournament
interval, games played), its rows kept in Redis until the ratings change
(tournament.tournaments.leaderboard_rows); GET /ratings/{game}/history?bot=ID: a page of
one bot's rating history. Neither grows with the matches played."""

from __future__ import annotations

import orjson
from flask import Blueprint, Response
from marshmallow import Schema, fields, validate

from referee.api.common import (
    MAX_OFFSET,
    RECORD_ID,
    JsonNumber,
    ListQuerySchema,
    PageSchema,
    required,
)
from referee.api.operations import GAME, PAGE, operation
from referee.api.problems import not_found
from referee.api.tournaments import TournamentBotSchema
from referee.api.web import load_query, path_game, reply, services, shared
from tournament.store import Store
from tournament.tournaments import leaderboard_rows, rating_history

bp = Blueprint("ratings", __name__)


class SkillSchema(Schema):
    mu = required(fields.Float)
    sigma = required(fields.Float)
    ordinal = required(fields.Float, metadata={"description": "mu - 3 sigma"})


class LeaderboardEntrySchema(TournamentBotSchema):
    rating = required(fields.Float, metadata={"description": "live Elo"})
    low = required(fields.Float, allow_none=True, metadata={
        "description": "the bot's latest tournament's Bradley-Terry 95% interval, centred on "
                       "the live Elo; null when it played no finished tournament"})
    high = required(fields.Float, allow_none=True)
    games = required(fields.Integer, metadata={"description": "rated matches"})
    mu = required(fields.Float, metadata={
        "description": "Weng-Lin skill (openskill's Bradley-Terry) over every rated match "
                       "of the game"})
    sigma = required(fields.Float, metadata={"description": "the skill's uncertainty"})
    ordinal = required(fields.Float, metadata={"description": "mu - 3 sigma"})
    by_players = required(fields.Dict, keys=fields.String(), values=fields.Nested(
        SkillSchema), metadata={
            "description": "the skill over the rated matches of each number of players"})



class RatingsSchema(PageSchema):
    game = required(fields.String)
    leaderboard = required(fields.List, fields.Nested(LeaderboardEntrySchema), metadata={
        "description": "bots by live Elo, best first; each bot's history: "
                       "GET /ratings/{game}/history?bot={bot_id}"})


MAX_HISTORY_PAGE = 1000


class HistoryQuerySchema(Schema):
    bot = fields.String(required=True, validate=RECORD_ID,
                        metadata={"description": "the bot's id"})
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_OFFSET),
                            metadata={"description": "points to skip (oldest first); the "
                                                     "latest L points: offset = games - L"})
    limit = fields.Integer(load_default=200, validate=validate.Range(min=1,
                                                                      max=MAX_HISTORY_PAGE))


class RatingHistorySchema(PageSchema):
    game = required(fields.String)
    bot_id = required(fields.String)
    history = required(fields.List, fields.List(JsonNumber(), validate=validate.Length(
        min=2, max=3)), metadata={
            "description": "[n, Elo after the bot's n-th rated match, the bot's version it "
                           "played], n from offset + 1 (points recorded before versions "
                           "have no version); total: its rated matches"})


PATHS = {
    "/ratings/{game}": {"get": operation(
        "getRatings", "A game's leaderboard: live Elo, interval, games (a page)", "ratings",
        (200, RatingsSchema), (400, 404), parameters=[GAME, PAGE],
        description="Bots by live Elo, best first. A bot's rating history is "
                    "`/ratings/{game}/history?bot={bot_id}`.")},
    "/ratings/{game}/history": {"get": operation(
        "getRatingHistory", "A bot's rating history in a game (a page)", "ratings",
        (200, RatingHistorySchema), (400, 404),
        parameters=[GAME, {"in": "query", "schema": HistoryQuerySchema}],
        description="`[n, Elo, version]` after each of the bot's rated matches, oldest "
                    "first; the "
                    "latest L points start at offset = games - L (`games` of the "
                    "leaderboard). 404 for an unknown game or bot; a bot with no rated match "
                    "has none (total 0).")},
}


@bp.get("/ratings/<game>")
def get_ratings(game: str) -> Response:
    path_game(game)
    query = load_query(ListQuerySchema)
    return Response(leaderboard_page(services().store, game, query["offset"], query["limit"]),
                    mimetype="application/json")


def leaderboard_page(store: Store, game: str, offset: int, limit: int) -> bytes:
    """A page of the leaderboard as `GET /ratings/{game}` answers it (`RatingsSchema`):
    its rows spliced in as they are kept, nothing parsed."""
    rows = leaderboard_rows(store, game,
                            lambda row: orjson.dumps(shared(LeaderboardEntrySchema).dump(row)))
    page = rows[offset:offset + limit]
    return orjson.dumps({"game": game, "leaderboard": [orjson.Fragment(row) for row in page],
                         "total": len(rows), "offset": offset, "limit": limit})


@bp.get("/ratings/<game>/history")
def get_history(game: str) -> Response:
    path_game(game)
    query = load_query(HistoryQuerySchema)
    store = services().store
    if store.get_bot(query["bot"]) is None:
        raise not_found(f"bot {query['bot']!r}")
    points, total = rating_history(store, game, query["bot"], query["offset"], query["limit"])
    return reply(RatingHistorySchema, {"game": game, "bot_id": query["bot"], "history": points,
                                       "total": total, "offset": query["offset"],
                                       "limit": query["limit"]})

