"""GET /ratings/{game}: a page of the game's leaderboard (live Elo, latest tournament
interval, games played), its rows kept in Redis until the ratings change
(tournament.tournaments.leaderboard_rows); GET /ratings/{game}/history?bot=ID: a page of
one bot's rating history. Neither grows with the matches played."""

from __future__ import annotations

import orjson
from flask import Blueprint, Response

import engines
from referee.api.problems import not_found
from referee.api.schemas import (
    HistoryQuerySchema,
    LeaderboardEntrySchema,
    ListQuerySchema,
    RatingHistorySchema,
)
from referee.api.web import load_query, reply, services, shared
from tournament.store import Store
from tournament.tournaments import leaderboard_rows, rating_history

bp = Blueprint("ratings", __name__)


@bp.get("/ratings/<game>")
def get_ratings(game: str) -> Response:
    _check_game(game)
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
    _check_game(game)
    query = load_query(HistoryQuerySchema)
    store = services().store
    if store.get_bot(query["bot"]) is None:
        raise not_found(f"bot {query['bot']!r}")
    points, total = rating_history(store, game, query["bot"], query["offset"], query["limit"])
    return reply(RatingHistorySchema, {"game": game, "bot_id": query["bot"], "history": points,
                                       "total": total, "offset": query["offset"],
                                       "limit": query["limit"]})


def _check_game(game: str) -> None:
    if game not in engines.names():
        raise not_found(f"game {game!r}")
