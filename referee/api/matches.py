"""POST /matches (admin), GET /matches, GET /matches/{id}: start matches and follow them.

A new match is stored with its initial state and queued as an rq job at once; a worker
plays it. Pull seats get one token each, shown only in the 201 answer.
"""

from __future__ import annotations

from flask import Blueprint, Response

import engines
from referee.api.auth import asked_by_admin, new_token, require_admin
from referee.api.problems import conflict, invalid, not_found, unprocessable
from referee.api.schemas import (
    MatchCreatedSchema,
    MatchCreateSchema,
    MatchListQuerySchema,
    MatchListSchema,
    MatchSchema,
)
from referee.api.web import load_body, load_query, reply, services
from referee.match.setups import match_options
from tournament.bots import is_retired
from tournament.deals import secret_deals
from tournament.jobs import enqueue_match
from tournament.recovery import requeue_abandoned
from tournament.store import MatchStatus, Store, new_match_meta, token_digest

bp = Blueprint("matches", __name__)


@bp.post("/matches")
def create_match() -> Response:
    require_admin()
    store = services().store
    data = load_body(MatchCreateSchema)
    engine = engines.get(data["game"])
    seats = _seat_infos(store, data["seats"], engine.name)
    seed = data["seed"]
    state = _initial_state(engine, len(seats), seed, data["options"])
    meta = new_match_meta(engine.name, engine.version, seats, state["options"], seed,
                          data["failure_policy"], data["deadline_ms"], data["pull_deadline_ms"])
    tokens = {seat["seat"]: new_token() for seat in seats if seat["kind"] == "pull"}
    store.create_match(meta, state, engine.current_seat(state),
                       {seat: token_digest(token) for seat, token in tokens.items()})
    enqueue_match(store, meta)
    body = {**store.get_match(meta["id"]),
            "tokens": [{"seat": seat, "token": token} for seat, token in tokens.items()]}
    return reply(MatchCreatedSchema, body, 201, headers={"Location": f"/matches/{meta['id']}"})


@bp.get("/matches")
def list_matches() -> Response:
    query = load_query(MatchListQuerySchema)
    ids, total = services().store.list_match_ids(query["offset"], query["limit"],
                                                 query.get("game"))
    return match_list(ids, total, query)


def match_list(ids: list[str], total: int, query: dict) -> Response:
    """A page of matches (`ids`) as the asker may see them (`public_match`)."""
    store = services().store
    found = [match for match in store.get_matches(ids) if match]
    secret = set() if asked_by_admin() else secret_deals(store, found)
    matches = [public_match(match, match["id"] in secret) for match in found]
    return reply(MatchListSchema, {"matches": matches, "total": total, **query})


@bp.get("/matches/<match_id>")
def get_match(match_id: str) -> Response:
    """Reading a running match also queues it again when its worker died (no lease)."""
    match = find_match(match_id)
    if match["status"] == MatchStatus.RUNNING and requeue_abandoned(services().store,
                                                                    [match_id]):
        match = find_match(match_id)
    secret = not asked_by_admin() and bool(secret_deals(services().store, [match]))
    return reply(MatchSchema, public_match(match, secret))


def find_match(match_id: str) -> dict:
    match = services().store.get_match(match_id)
    if match is None:
        raise not_found(f"match {match_id!r}")
    return match


def public_match(match: dict, secret: bool) -> dict:
    """The match as the asker may see it: the seed (which fixes every hidden card) is null
    while `secret` (`tournament.deals.secret_deals`: for anyone but the admin, until the
    match and every match on its deal are over)."""
    return {**match, "seed": None if secret else match["seed"]}


def _seat_infos(store: Store, specs: list[dict], game: str) -> list[dict]:
    """Check every bot seat (registered, plays this game: else 400; not retired: else 409);
    name every seat. The bots are read in one round trip."""
    errors: dict = {}
    retired: list[str] = []
    seats = []
    bots = iter(store.get_bots([spec["bot_id"] for spec in specs if spec["kind"] == "bot"]))
    for index, spec in enumerate(specs):
        if spec["kind"] == "pull":
            seats.append({"seat": index, "kind": "pull", "bot_id": None,
                          "name": spec.get("name", f"seat {index}"), **_own_deadline(spec)})
            continue
        bot = next(bots)
        if bot is None:
            errors[str(index)] = {"bot_id": [f"no registered bot {spec['bot_id']!r}"]}
        elif game not in bot["games"]:
            errors[str(index)] = {"bot_id": [f"bot {bot['id']} does not play {game}"]}
        elif is_retired(bot):
            retired.append(f"{bot['id']} ({bot['name']})")
        else:
            seats.append({"seat": index, "kind": "bot", "bot_id": bot["id"],
                          "name": spec.get("name", bot["name"]), **_own_deadline(spec)})
    if errors:
        raise unprocessable({"seats": errors})
    if retired:
        raise conflict("bot/retired", f"retired bots play no new match: {', '.join(retired)}")
    return seats


def _own_deadline(spec: dict) -> dict:
    """The seat's own deadline, kept with the seat only when one was given."""
    return {"deadline_ms": spec["deadline_ms"]} if "deadline_ms" in spec else {}


def _initial_state(engine: engines.Game, num_players: int, seed: int, options: dict) -> dict:
    """The match's first state (one seat of Aldabas: its solo mode, `referee.match.setups`); an
    unsupported player count or option is a 400 naming the game's setups."""
    try:
        return engine.new_game(num_players=num_players, seed=seed,
                               options=match_options(engine, num_players, options))
    except engines.InvalidSetup as error:
        field = "options" if options else "seats"
        raise invalid({field: [error.reason]}) from None
