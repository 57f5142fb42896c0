"""POST /tournaments (admin), GET /tournaments, GET /tournaments/{id},
GET /tournaments/{id}/matches: tournaments of every format played by rq workers, one job
per match (tournament.tournaments)."""

from __future__ import annotations

from flask import Blueprint, Response

from referee.api.auth import asked_by_admin, require_admin
from referee.api.matches import match_list
from referee.api.problems import conflict, invalid, not_found, unprocessable
from referee.api.schemas import (
    ListQuerySchema,
    TournamentCreateSchema,
    TournamentListSchema,
    TournamentSchema,
)
from referee.api.web import load_body, load_query, reply, services
from tournament import tournaments
from tournament.tournaments import RetiredBot, SetupError

bp = Blueprint("tournaments", __name__)


@bp.post("/tournaments")
def create_tournament() -> Response:
    require_admin()
    store = services().store
    data = load_body(TournamentCreateSchema)
    policy = data.pop("failure_policy")
    spec = {**data, "policy": policy}
    try:
        meta = tournaments.create_tournament(store, spec)
    except RetiredBot as error:
        raise conflict("bot/retired", error.reason) from None
    except SetupError as error:  # 400 for what the spec says, 422 for what it cannot
        raise (invalid if error.in_spec else unprocessable)(
            {error.field: [error.reason]}) from None
    view = tournaments.tournament_view(store, meta["id"], admin=True)
    return reply(TournamentSchema, view, 201, headers={"Location": f"/tournaments/{meta['id']}"})


@bp.get("/tournaments")
def list_tournaments() -> Response:
    query = load_query(ListQuerySchema)
    found, total = tournaments.list_tournaments(services().store, query["offset"],
                                                query["limit"])
    return reply(TournamentListSchema, {"tournaments": found, "total": total, **query})


@bp.get("/tournaments/<tournament_id>")
def get_tournament(tournament_id: str) -> Response:
    view = tournaments.tournament_view(services().store, tournament_id, asked_by_admin())
    if view is None:
        raise not_found(f"tournament {tournament_id!r}")
    return reply(TournamentSchema, view)


@bp.get("/tournaments/<tournament_id>/matches")
def list_tournament_matches(tournament_id: str) -> Response:
    """A page of the tournament's matches in schedule order."""
    store = services().store
    if tournaments.get_meta(store, tournament_id) is None:
        raise not_found(f"tournament {tournament_id!r}")
    query = load_query(ListQuerySchema)
    ids, total = tournaments.match_id_page(store, tournament_id, query["offset"],
                                           query["limit"])
    return match_list(ids, total, query)
