"""Ladders (tournament.ladders): POST /ladders (admin), GET /ladders, GET/PATCH
/ladders/{id}, POST /ladders/{id}/entries (the bot's owner, or the admin), GET
/ladders/{id}/entries, DELETE /ladders/{id}/entries/{bot}, GET /ladders/{id}/matches and
GET /ladders/{id}/history (the events: `referee.api.events`)."""

from __future__ import annotations

from flask import Blueprint, Response
from marshmallow import Schema, fields, validate

from referee.api.auth import BOTS_WRITE, require_admin, require_scope
from referee.api.common import (
    DISPLAY_NAME,
    MAX_SEED,
    RECORD_ID,
    ListQuerySchema,
    PageSchema,
    SafeInteger,
    StrictBoolean,
    known_game,
    random_seed,
    required,
)
from referee.api.game_setups import every_option, per_game, setup_rule
from referee.api.matches import (
    PUSH_DEADLINE_MS,
    FailurePolicySchema,
    MatchListSchema,
    PolicySchema,
    TimeControlSchema,
    match_list,
)
from referee.api.operations import PAGE, id_parameter, operation
from referee.api.problems import Problem, invalid, not_found, unprocessable
from referee.api.web import load_body, load_query, reply, services
from referee.errors import AUTH_FORBIDDEN, BOT_RETIRED
from referee.match.botclient import DEFAULT_DEADLINE_MS
from referee.match.runner import FailurePolicy
from tournament import ladders
from tournament.formats import SetupError

bp = Blueprint("ladders", __name__)

LADDER_ID = id_parameter("ladder_id")
BOT_ID = id_parameter("bot_id")
MAX_CONCURRENCY = 256
DEFAULT_PLAYERS = 2
STATUSES = [ladders.CHECKING, ladders.ACTIVE, ladders.REJECTED, ladders.SUSPENDED,
            ladders.LEFT]
MAX_HISTORY = 5000


def _ladder_setups() -> dict:
    """The players and options each game's setups of two or more players take
    (`referee.api.game_setups`)."""
    return {
        "description": "`game` picks the rules of `allOf` that apply: the players (at least "
                       "2) and the options of one of its setups (GET /games/{game}: "
                       "`variants`)",
        "properties": {"options": every_option()},
        "allOf": per_game(lambda counts, options: [setup_rule(
            {"players": {"const": players}}, options,
            required=() if players == DEFAULT_PLAYERS else ("players",))
            for players in counts if players >= 2]),
    }


class LadderCreateSchema(Schema):
    JSON_SCHEMA = staticmethod(_ladder_setups)

    name = fields.String(validate=DISPLAY_NAME)
    game = fields.String(required=True, validate=known_game)
    players = fields.Integer(strict=True, load_default=DEFAULT_PLAYERS,
                             validate=validate.Range(min=2, max=16),
                             metadata={"description": "seats per match, within the game's "
                                                      "range"})
    options = fields.Dict(keys=fields.String(), values=fields.Raw(), load_default=dict)
    time_control = fields.Nested(TimeControlSchema, metadata={
        "description": "every match on this clock (then deadline_ms is not used)"})
    deadline_ms = fields.Integer(strict=True, load_default=DEFAULT_DEADLINE_MS,
                                 validate=validate.Range(*PUSH_DEADLINE_MS),
                                 metadata={"description": "per decision of a bot"})
    failure_policy = fields.Nested(FailurePolicySchema, load_default=FailurePolicy().to_dict)
    concurrency = fields.Integer(strict=True, load_default=ladders.DEFAULT_CONCURRENCY,
                                 validate=validate.Range(min=1, max=MAX_CONCURRENCY),
                                 metadata={"description": "matches playing at once"})
    seed = fields.Integer(strict=True, validate=validate.Range(min=0, max=MAX_SEED),
                          load_default=random_seed, metadata={
                              "description": "derives every match seed and breaks "
                                             "matchmaking's ties; drawn when absent"})


class LadderChangeSchema(Schema):
    paused = StrictBoolean(metadata={"description": "true: no new match is scheduled "
                                                     "(those under way finish and count)"})
    concurrency = fields.Integer(strict=True,
                                 validate=validate.Range(min=1, max=MAX_CONCURRENCY))


class LadderStandingSchema(Schema):
    bot = required(fields.String, metadata={"description": "the bot's id"})
    name = required(fields.String)
    version = required(fields.Integer, metadata={"description": "the version it plays"})
    mu = required(fields.Float, metadata={"description": "Weng-Lin skill in this ladder"})
    sigma = required(fields.Float, metadata={"description": "its uncertainty"})
    ordinal = required(fields.Float, metadata={"description": "mu - 3 sigma, the order"})
    matches = required(fields.Integer, metadata={"description": "ladder matches counted"})
    status = required(fields.String, validate=validate.OneOf(STATUSES))
    last_match_at = required(fields.String, allow_none=True)


class LadderEntrySchema(LadderStandingSchema):
    version = required(fields.Integer, allow_none=True, metadata={
        "description": "the version it plays; null until one passed its check"})
    owner = required(fields.String, allow_none=True)
    checking = required(fields.Integer, allow_none=True, metadata={
        "description": "the version whose entry check is under way"})
    reasons = required(fields.List, fields.String(), metadata={
        "description": "why it was rejected or suspended, or why its new version failed"})
    version_matches = required(fields.Integer, metadata={
        "description": "matches of its current version"})
    entered_at = required(fields.String)


class LadderSchema(Schema):
    id = required(fields.String)
    name = required(fields.String)
    game = required(fields.String)
    game_version = required(fields.String)
    players = required(fields.Integer)
    options = required(fields.Dict)
    time_control = required(fields.Nested, TimeControlSchema, allow_none=True)
    deadline_ms = required(fields.Integer)
    policy = required(fields.Nested, PolicySchema)
    concurrency = required(fields.Integer)
    paused = required(fields.Boolean)
    created_at = required(fields.String)
    scheduled = SafeInteger(metadata={"description": "matches scheduled so far"})
    running = SafeInteger(metadata={"description": "matches under way"})
    counted = SafeInteger(metadata={"description": "matches played and counted"})
    standings = fields.List(fields.Nested(LadderStandingSchema), metadata={
        "description": "the entries with a version in play, by ordinal, best first"})


class LadderListSchema(PageSchema):
    ladders = required(fields.List, fields.Nested(LadderSchema))


class LadderEntryRequestSchema(Schema):
    bot = fields.String(required=True, validate=RECORD_ID,
                        metadata={"description": "the bot's id"})


class LadderEntryListSchema(PageSchema):
    entries = required(fields.List, fields.Nested(LadderEntrySchema))


class LadderHistoryQuerySchema(Schema):
    since = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_SEED),
                           metadata={"description": "from the n-th counted match on"})


class LadderHistorySchema(Schema):
    points = required(fields.List, fields.List(fields.Raw(), validate=validate.Length(
        equal=3)), metadata={"description": f"[n, bot, ordinal] after the ladder's n-th "
                                            f"counted match, for each of its bots (the "
                                            f"newest {MAX_HISTORY} at most)"})


PATHS = {
    "/ladders": {
        "post": operation(
            "createLadder", "Start a ladder (the admin)", "ladders", (201, LadderSchema),
            (400, 401, 403, 422), body=LadderCreateSchema, security="admin",
            description="A ladder plays on for as long as it runs: `concurrency` matches at "
                        "a time between its active entries, chosen by matchmaking "
                        "(docs/ratings.md)."),
        "get": operation("listLadders", "The ladders, newest first", "ladders",
                         (200, LadderListSchema), (400,), parameters=[PAGE]),
    },
    "/ladders/{ladder_id}": {
        "get": operation("getLadder", "A ladder's settings and standings", "ladders",
                         (200, LadderSchema), (404,), parameters=[LADDER_ID]),
        "patch": operation("changeLadder", "Pause or resume a ladder, change its "
                           "concurrency (the admin)", "ladders", (200, LadderSchema),
                           (400, 401, 403, 404), body=LadderChangeSchema,
                           parameters=[LADDER_ID], security="admin"),
    },
    "/ladders/{ladder_id}/entries": {
        "post": operation(
            "enterLadder", "Enter a bot (its owner with bots:write, or the admin)", "ladders",
            (202, LadderEntrySchema), (400, 401, 403, 404, 422), body=LadderEntryRequestSchema,
            parameters=[LADDER_ID], security=("admin", "account"),
            description="202 `checking`: a worker checks the bot (decisions of every phase, "
                        "self-play matches without a fault), then the entry is `active` or "
                        "`rejected` with the reasons. Entering again after a rejection or a "
                        "suspension checks again."),
        "get": operation("listLadderEntries", "Every entry, with its status and reasons "
                         "(a page)", "ladders", (200, LadderEntryListSchema), (400, 404),
                         parameters=[LADDER_ID, PAGE]),
    },
    "/ladders/{ladder_id}/entries/{bot_id}": {"delete": operation(
        "leaveLadder", "Take a bot out of a ladder (its owner, or the admin)", "ladders",
        (200, LadderEntrySchema), (401, 403, 404), parameters=[LADDER_ID, BOT_ID],
        security=("admin", "account"),
        description="The entry stays, `left`, with its history; its matches under way "
                    "finish and count.")},
    "/ladders/{ladder_id}/matches": {"get": operation(
        "listLadderMatches", "A ladder's matches, newest first (a page)", "ladders",
        (200, MatchListSchema), (400, 404), parameters=[LADDER_ID, PAGE])},
    "/ladders/{ladder_id}/history": {"get": operation(
        "getLadderHistory", "Each entry's ordinal after each counted match", "ladders",
        (200, LadderHistorySchema), (400, 404),
        parameters=[LADDER_ID, {"in": "query", "schema": LadderHistoryQuerySchema}])},
}


@bp.post("/ladders")
def create_ladder() -> Response:
    require_admin()
    data = load_body(LadderCreateSchema)
    spec = {**data, "policy": data.pop("failure_policy")}
    try:
        meta = ladders.create_ladder(services().store, spec, services().config.bot_max_matches)
    except SetupError as error:
        raise (invalid if error.in_spec else unprocessable)(
            {error.field: [error.reason]}) from None
    return reply(LadderSchema, ladders.ladder_view(services().store, meta["id"]), 201,
                 headers={"Location": f"/ladders/{meta['id']}"})


@bp.get("/ladders")
def list_ladders() -> Response:
    query = load_query(ListQuerySchema)
    found, total = services().store.ladder_page(query["offset"], query["limit"])
    return reply(LadderListSchema, {"ladders": found, "total": total, **query})


@bp.get("/ladders/<id:ladder_id>")
def get_ladder(ladder_id: str) -> Response:
    return reply(LadderSchema, _view(ladder_id))


@bp.patch("/ladders/<id:ladder_id>")
def change_ladder(ladder_id: str) -> Response:
    require_admin()
    changes = load_body(LadderChangeSchema)
    if ladders.change_settings(services().store, ladder_id, changes) is None:
        raise not_found(f"ladder {ladder_id!r}")
    return reply(LadderSchema, _view(ladder_id))


@bp.post("/ladders/<id:ladder_id>/entries")
def enter_ladder(ladder_id: str) -> Response:
    who = require_scope(BOTS_WRITE)
    meta = _meta(ladder_id)
    bot_id = load_body(LadderEntryRequestSchema)["bot"]
    store = services().store
    bot = store.get_bot(bot_id)
    if bot is None:
        raise unprocessable({"bot": [f"no registered bot {bot_id!r}"]})
    if not who.may_change(bot):
        raise Problem(AUTH_FORBIDDEN, "only the bot's owner (or the admin) enters it")
    if bot.get("retired_at"):
        raise Problem(BOT_RETIRED, f"bot {bot_id} is retired: it enters no ladder")
    if meta["game"] not in bot["games"]:
        raise unprocessable({"bot": [f"bot {bot_id} does not play {meta['game']}"]})
    if bot.get("language"):
        raise unprocessable({"bot": [f"bot {bot_id} is hosted: hosted bots do not enter "
                                     "ladders yet (their entry check calls a URL)"]})
    entry = ladders.enter(store, ladder_id, bot)
    return reply(LadderEntrySchema, ladders.entry_view(entry), 202,
                 headers={"Location": f"/ladders/{ladder_id}/entries"})


@bp.get("/ladders/<id:ladder_id>/entries")
def list_entries(ladder_id: str) -> Response:
    _meta(ladder_id)
    query = load_query(ListQuerySchema)
    entries = list(services().store.ladder_entries(ladder_id).values())
    page = entries[query["offset"]:query["offset"] + query["limit"]]
    return reply(LadderEntryListSchema, {"entries": [ladders.entry_view(e) for e in page],
                                   "total": len(entries), **query})


@bp.delete("/ladders/<id:ladder_id>/entries/<id:bot_id>")
def leave_ladder(ladder_id: str, bot_id: str) -> Response:
    who = require_scope(BOTS_WRITE)
    _meta(ladder_id)
    store = services().store
    bot = store.get_bot(bot_id)
    if bot is not None and not who.may_change(bot):
        raise Problem(AUTH_FORBIDDEN, "only the bot's owner (or the admin) takes it out")
    try:
        entry = ladders.leave(store, ladder_id, bot_id)
    except ladders.NotEntered:
        raise not_found(f"entry of bot {bot_id!r} in ladder {ladder_id!r}") from None
    return reply(LadderEntrySchema, ladders.entry_view(entry))


@bp.get("/ladders/<id:ladder_id>/matches")
def list_ladder_matches(ladder_id: str) -> Response:
    _meta(ladder_id)
    query = load_query(ListQuerySchema)
    ids, total = services().store.ladder_match_page(ladder_id, query["offset"],
                                                    query["limit"])
    return match_list(ids, total, query)


@bp.get("/ladders/<id:ladder_id>/history")
def ladder_history(ladder_id: str) -> Response:
    _meta(ladder_id)
    since = load_query(LadderHistoryQuerySchema)["since"]
    points = services().store.ladder_history(ladder_id, since, MAX_HISTORY)
    return reply(LadderHistorySchema, {"points": points})


def _meta(ladder_id: str) -> dict:
    meta = services().store.ladder_meta(ladder_id)
    if meta is None:
        raise not_found(f"ladder {ladder_id!r}")
    return meta


def _view(ladder_id: str) -> dict:
    view = ladders.ladder_view(services().store, ladder_id)
    if view is None:
        raise not_found(f"ladder {ladder_id!r}")
    return view
