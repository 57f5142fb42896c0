"""POST /matches (admin), GET /matches, GET /matches/{id}: start matches and follow them.

A new match is stored with its initial state and queued as an rq job at once; a worker
plays it. Pull seats get one token each, shown only in the 201 answer. The shapes of a
match (its seats, policy, result, forfeit) are declared here for every resource.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from typing import Any

import orjson
from flask import Blueprint, Response
from marshmallow import Schema, ValidationError, fields, validate, validates_schema

import engines
from referee.api.auth import (
    MATCHES_WRITE,
    PRIVATE_READ,
    Caller,
    asked_by_admin,
    new_token,
    require_scope,
)
from referee.api.bots import check_seatable
from referee.api.common import (
    DISPLAY_NAME,
    MAX_SEATS,
    RECORD_ID,
    SEAT,
    SEED_RANGE,
    STEP,
    BoundedList,
    JsonNumber,
    ListQuerySchema,
    PageSchema,
    SafeInteger,
    known_game,
    random_seed,
    required,
)
from referee.api.game_setups import every_option, per_game, setup_rule
from referee.api.operations import MATCH_ID, link, operation
from referee.api.problems import Problem, engine_problem, not_found, unprocessable
from referee.api.web import dumper, load_body, load_query, reply, services
from referee.errors import AUTH_FORBIDDEN, BOT_RETIRED
from referee.match.botclient import DEFAULT_DEADLINE_MS, Fault
from referee.match.clock import MAX_CLOCK_MS, TimeControl, TimeControlError
from referee.match.runner import DEFAULT_STRIKE_LIMIT, FORFEIT, POLICY_CHOICES, FailurePolicy
from referee.match.setups import match_options
from tournament import quotas
from tournament.bots import is_retired
from tournament.deals import secret_deals
from tournament.recovery import requeue_abandoned
from tournament.scheduling import account_tag, clock_tag
from tournament.store import (
    MatchSeat,
    MatchStatus,
    SeatDeadline,
    Store,
    new_match_meta,
    token_digest,
)
from tournament.store.keys import account_lock, bot_lock
from tournament.wakeups import enqueue_match

STDERR_TEXT = {"description": "the program's stderr and the sandbox's notes, in order: a "
                              "note starts with `[`; every line the program wrote starts "
                              "with `| `, its control characters escaped (`\\r`, "
                              "`\\x1b`, `\\u2028`)",
               "content": {"text/plain": {"schema": {"type": "string"}}}}


class StderrQuerySchema(Schema):
    seat = fields.Integer(required=True, validate=validate.Range(min=0, max=1000))


bp = Blueprint("matches", __name__)

PUSH_DEADLINE_MS = (10, 60000)  # the range of a push bot's deadline per decision
PULL_DEADLINE_MS = (100, 86400000)  # the range of a pull seat's
SEAT_DEADLINE = ("this seat's own deadline per decision, instead of the match's deadline_ms "
                 "(a bot seat) or pull_deadline_ms (a pull seat)")


class FailurePolicySchema(Schema):
    """For each fault code: "forfeit" (the default) or "random"; loaded with every code.
    `strike_limit`: the strikes a seat may collect under "random" before its next fault
    forfeits (null: no limit)."""

    timeout = fields.String(load_default=FORFEIT, validate=validate.OneOf(POLICY_CHOICES))
    crash = fields.String(load_default=FORFEIT, validate=validate.OneOf(POLICY_CHOICES))
    malformed = fields.String(load_default=FORFEIT, validate=validate.OneOf(POLICY_CHOICES))
    illegal = fields.String(load_default=FORFEIT, validate=validate.OneOf(POLICY_CHOICES))
    strike_limit = fields.Integer(load_default=DEFAULT_STRIKE_LIMIT, allow_none=True,
                                  strict=True, validate=validate.Range(0, 100000))


class SeatSpecSchema(Schema):
    """A seat of a new match: a registered bot (push) or a client that polls (pull)."""

    JSON_SCHEMA = {  # the rules of the two validators below, for the spec
        "if": {"properties": {"kind": {"const": "bot"}}},
        "then": {"properties": {"deadline_ms": {
            "minimum": PUSH_DEADLINE_MS[0], "maximum": PUSH_DEADLINE_MS[1]}},
            "required": ["bot_id"], "not": {"required": ["name"]}},
        "else": {"properties": {"deadline_ms": {
            "minimum": PULL_DEADLINE_MS[0], "maximum": PULL_DEADLINE_MS[1]}},
            "not": {"required": ["bot_id"]}},
    }

    kind = fields.String(required=True, validate=validate.OneOf(["bot", "pull"]))
    bot_id = fields.String(validate=RECORD_ID)
    name = fields.String(validate=DISPLAY_NAME, metadata={
        "description": "a pull seat's name (default `seat {n}`); a bot seat is shown under its "
                       "bot's name, which no match creator may change"})
    deadline_ms = fields.Integer(strict=True, metadata={"description": SEAT_DEADLINE})

    @validates_schema
    def check_bot_id(self, data: dict, **kwargs) -> None:
        if data["kind"] == "bot" and "bot_id" not in data:
            raise ValidationError("a bot seat needs bot_id", field_name="bot_id")
        if data["kind"] == "pull" and "bot_id" in data:
            raise ValidationError("a pull seat has no bot_id", field_name="bot_id")
        if data["kind"] == "bot" and "name" in data:
            raise ValidationError("a bot seat is shown under its bot's name",
                                  field_name="name")

    @validates_schema
    def check_deadline(self, data: dict, **kwargs) -> None:
        """A seat's own deadline keeps to the range of the match field it stands in for."""
        low, high = PUSH_DEADLINE_MS if data["kind"] == "bot" else PULL_DEADLINE_MS
        if not low <= data.get("deadline_ms", low) <= high:
            raise ValidationError(f"a {data['kind']} seat's deadline_ms must be from {low} "
                                  f"to {high}", field_name="deadline_ms")


def _match_setups() -> dict:
    """The seats and options each game's setups take (`referee.api.game_setups`)."""
    return {
        "description": "`game` picks the rules of `allOf` that apply: the number of seats "
                       "and the options of one of its setups (GET /games/{game}: "
                       "`variants`)",
        "properties": {"options": every_option()},
        "allOf": per_game(lambda counts, options: [setup_rule(
            {"seats": {"minItems": min(counts), "maxItems": max(counts)}}, options)]),
    }


CLOCK_MS = validate.Range(0, MAX_CLOCK_MS)


class TimeControlSchema(Schema):
    """A chess clock per seat (docs/bots.md, Clocks): each decision may take the seat's time
    left plus its bank, capped by max_move_ms, plus first_move_ms on its first."""

    base_ms = fields.Integer(strict=True, required=True,
                             validate=validate.Range(1, MAX_CLOCK_MS), metadata={
                                 "description": "every seat's time for the whole match"})
    increment_ms = fields.Integer(strict=True, load_default=0, validate=CLOCK_MS, metadata={
        "description": "added to the seat's clock after each of its moves"})
    max_move_ms = fields.Integer(strict=True, load_default=None, allow_none=True,
                                 validate=validate.Range(1, MAX_CLOCK_MS), metadata={
                                     "description": "no decision may take longer (null: "
                                                    "no cap)"})
    first_move_ms = fields.Integer(strict=True, load_default=0, validate=CLOCK_MS, metadata={
        "description": "extra time for a seat's first decision, used before its clock"})
    overdraft_ms = fields.Integer(strict=True, load_default=0, validate=CLOCK_MS, metadata={
        "description": "a bank per seat for the whole match, used once its clock is out"})

    @validates_schema
    def _gives_time(self, data: dict, **_: object) -> None:
        try:
            TimeControl(**data)
        except TimeControlError as error:
            raise ValidationError(str(error), "base_ms") from None


class MatchCreateSchema(Schema):
    JSON_SCHEMA = staticmethod(_match_setups)

    game = fields.String(required=True, validate=known_game)
    seats = BoundedList(fields.Nested(SeatSpecSchema), MAX_SEATS, required=True,
                        validate=validate.Length(min=1))
    seed = SafeInteger(strict=True, validate=SEED_RANGE, load_default=random_seed,
                       metadata={"description": "drawn by the server when absent"})
    options = fields.Dict(keys=fields.String(), values=fields.Raw(), load_default=dict)
    failure_policy = fields.Nested(FailurePolicySchema,
                                    load_default=FailurePolicy().to_dict)
    deadline_ms = fields.Integer(strict=True, load_default=DEFAULT_DEADLINE_MS,
                                 validate=validate.Range(*PUSH_DEADLINE_MS),
                                 metadata={"description": "per decision of a push bot"})
    pull_deadline_ms = fields.Integer(strict=True, load_default=300000,
                                      validate=validate.Range(*PULL_DEADLINE_MS),
                                      metadata={"description": "per decision of a pull seat"})
    time_control = fields.Nested(TimeControlSchema, metadata={
        "description": "put every seat on a clock: then each decision's deadline comes from "
                       "it, not from deadline_ms or pull_deadline_ms"})


class SeatTokenSchema(Schema):
    seat = required(fields.Integer)
    token = required(fields.String)


class SeatInfoSchema(Schema):
    seat = required(fields.Integer, validate=SEAT)
    kind = required(fields.String, validate=validate.OneOf(["bot", "pull"]))
    bot_id = required(fields.String, allow_none=True)
    name = required(fields.String)
    deadline_ms: fields.Field = fields.Integer(  # a required one in ReplaySeatSchema
        validate=validate.Range(PUSH_DEADLINE_MS[0], PULL_DEADLINE_MS[1]),
        metadata={"description": "present when the seat was given its own deadline"})
    version = SafeInteger(validate=validate.Range(min=1), metadata={
        "description": "a bot seat: the version of the bot it plays (matches made before "
                       "versions have none)"})


class PolicySchema(Schema):
    """A match's failure policy; records made before the strike limit have none."""

    timeout = required(fields.String, validate=validate.OneOf(POLICY_CHOICES))
    crash = required(fields.String, validate=validate.OneOf(POLICY_CHOICES))
    malformed = required(fields.String, validate=validate.OneOf(POLICY_CHOICES))
    illegal = required(fields.String, validate=validate.OneOf(POLICY_CHOICES))
    strike_limit = fields.Integer(allow_none=True, strict=True,
                                  validate=validate.Range(0, 100000))


class ResultSchema(Schema):
    scores = required(BoundedList, JsonNumber(), MAX_SEATS)
    ranks = required(BoundedList, fields.Integer(validate=validate.Range(1, MAX_SEATS)),
                     MAX_SEATS)
    details = required(fields.Dict)


class ForfeitSchema(Schema):
    seat = required(fields.Integer, validate=SEAT)
    step = required(fields.Integer, validate=STEP)
    fault = required(fields.String, validate=validate.OneOf(Fault.ALL))


class MatchSchema(Schema):
    id = required(fields.String)
    game = required(fields.String)
    game_version = required(fields.String)
    status = required(fields.String,
                      validate=validate.OneOf(["queued", "running", "finished", "failed"]))
    num_players = required(fields.Integer)
    seats = required(fields.List, fields.Nested(SeatInfoSchema))
    options = required(fields.Dict)
    policy = required(fields.Nested, PolicySchema)
    deadline_ms = required(fields.Integer)
    pull_deadline_ms = required(fields.Integer)
    seed = required(fields.Integer, allow_none=True, metadata={
        "description": "hidden (null) until the match is over, unless asked with the admin "
                       "token: the seed determines every hidden card"})
    step = required(fields.Integer, metadata={"description": "decisions played so far"})
    to_move = required(fields.Integer, allow_none=True)
    result = required(fields.Nested, ResultSchema, allow_none=True)
    forfeit = required(fields.Nested, ForfeitSchema, allow_none=True)
    error = required(fields.String, allow_none=True)
    created_at = required(fields.String)
    started_at = required(fields.String, allow_none=True)
    finished_at = required(fields.String, allow_none=True)
    log_index = SafeInteger(allow_none=True, metadata={
        "description": "its record's leaf in the results log (GET /log/proof/{match_id}); "
                       "null until it is finished"})
    time_control = fields.Nested(TimeControlSchema, metadata={
        "description": "its clock, when it is played on one"})


class MatchCreatedSchema(MatchSchema):
    tokens = required(fields.List, fields.Nested(SeatTokenSchema), metadata={
        "description": "one token per pull seat, shown only in this answer"})


class MatchListQuerySchema(ListQuerySchema):
    game = fields.String(validate=known_game, metadata={"description": "only this game's"})


class MatchListSchema(PageSchema):
    matches = required(fields.List, fields.Nested(MatchSchema))


def _match_links(match_id: str) -> dict:
    """Where a match's id leads."""
    return {"GetMatch": link("getMatch", match_id=match_id),
            "GetObservation": link("getObservation", match_id=match_id),
            "GetReplay": link("getReplay", match_id=match_id),
            "GetFirstStep": link("getReplayStep", match_id=match_id, step="0")}


PATHS = {
    "/matches": {
        "post": operation(
            "createMatch", "Start a match (the admin, or an account with matches:write)",
            "matches", (201, MatchCreatedSchema), (400, 401, 403, 409, 413, 422, 429),
            body=MatchCreateSchema, security=("admin", "account"),
            links=_match_links("$response.body#/id"),
            description="Answers at once; an rq worker plays the match. Each pull seat gets "
                        "a token, shown only in this answer. When the options do not fit "
                        "the number of seats and the game has one setup for it, that setup "
                        "is played (one seat of Aldabas: its solo mode); a retired bot is a "
                        "409 `bot/retired`, one of a suspended account 409 "
                        "`bot/owner-suspended`. An account seats its own bots and public "
                        "ones (403 `bot/not-public`), at least one of its own or a pull seat "
                        "(403), within its quotas (429 `quota/exceeded`: concurrent_matches, "
                        "matches_per_day). Each bot seat records its bot's `version`."),
        "get": operation("listMatches", "The matches, newest first", "matches",
                         (200, MatchListSchema), (400,),
                         parameters=[{"in": "query", "schema": MatchListQuerySchema}],
                         security="admin", optional_security=True),
    },
    "/matches/{match_id}/stderr": {"get": operation(
        "getMatchStderr", "What a hosted seat's program wrote on stderr (its owner, the admin)",
        "matches", (200, STDERR_TEXT), (400, 401, 403, 404), parameters=[
            MATCH_ID, {"in": "query", "schema": StderrQuerySchema}],
        security=("admin", "account"),
        description="The admin's, and the seat's bot's owner's (a token with private:read). "
                    "Capped at 64 KiB (its start and its end), with the sandbox's notes "
                    "(start, exit, limits hit); kept 7 days. 404 while nothing is kept "
                    "(a push seat, or a program not stopped yet).")},
    "/matches/{match_id}": {"get": operation(
        "getMatch", "A match: status, whose turn, step, result when over", "matches",
        (200, MatchSchema), (404,), parameters=[MATCH_ID], security="admin",
        optional_security=True,
        description="The seed is null until the match and every match that shares its deal "
                    "(its tournament's seat rotations, an SPRT pair) are over, unless the "
                    "admin asks.")},
}


@bp.post("/matches")
def create_match() -> Response:
    who = require_scope(MATCHES_WRITE)
    store = services().store
    data = load_body(MatchCreateSchema)
    # its bots' locks: none retired between the check of its seats and its store
    with store.serialized(*(bot_lock(seat["bot_id"]) for seat in data["seats"]
                            if "bot_id" in seat)):
        return _create(store, data, who)


def _create(store: Store, data: dict[str, Any], who: Caller) -> Response:
    """The match stored and queued (its bots' locks held: none retired meanwhile)."""
    engine = engines.get(data["game"])
    seats = _seat_infos(store, data["seats"], engine.name, who)
    seed = data["seed"]
    state = _initial_state(engine, len(seats), seed, data["options"])
    meta = new_match_meta(engine.name, engine.version, seats, state["options"], seed,
                          data["failure_policy"], data["deadline_ms"], data["pull_deadline_ms"],
                          **clock_tag(data), **account_tag({"account": who.account_id}))
    tokens = {seat["seat"]: new_token() for seat in seats if seat["kind"] == "pull"}
    with (store.serialized(account_lock(who.account_id, "matches")) if who.account_id is not None
          else nullcontext()):  # the quota checked, then taken
        if who.account_id is not None:
            _admit_match(who.account_id)
        store.create_match(meta, state, engine.current_seat(state),
                           {seat: token_digest(token) for seat, token in tokens.items()})
        if who.account_id is not None:
            store.add_account_match(who.account_id, [meta["id"]])
    enqueue_match(store, meta)
    body = {**find_match(meta["id"]),
            "tokens": [{"seat": seat, "token": token} for seat, token in tokens.items()]}
    return reply(MatchCreatedSchema, body, 201, headers={"Location": f"/matches/{meta['id']}"})


@bp.get("/matches")
def list_matches() -> Response:
    query = load_query(MatchListQuerySchema)
    ids, total = services().store.list_match_ids(query["offset"], query["limit"],
                                                 query.get("game"))
    return match_list(ids, total, query)


def match_list(ids: list[str], total: int, query: dict) -> Response:
    """A page of matches (`ids`) as the asker may see them (`public_match`), each row
    rendered once per process while its match is unchanged (`referee.api.match_rows`)."""
    store = services().store
    rows = services().match_rows.rows_of(ids, store.get_match_hashes(ids))
    secret = set() if asked_by_admin() else secret_deals(store, [row.match for row in rows])
    answer = dumper(MatchListSchema)({"matches": [], "total": total, **query})
    answer["matches"] = [orjson.Fragment(row.json(row.match["id"] in secret, _match_row))
                         for row in rows]
    return Response(orjson.dumps(answer), mimetype="application/json")


def _match_row(match: dict, secret: bool) -> bytes:
    return orjson.dumps(dumper(MatchSchema)(public_match(match, secret)))


@bp.get("/matches/<id:match_id>/stderr")
def get_stderr(match_id: str) -> Response:
    """A hosted seat's stderr, as text, to the admin and the bot's owner (private:read)."""
    who = require_scope(PRIVATE_READ)
    seat = load_query(StderrQuerySchema)["seat"]
    match = find_match(match_id)
    if seat >= len(match["seats"]) or not match["seats"][seat].get("bot_id"):
        raise not_found(f"a bot seat {seat} of match {match_id!r}")
    bot = services().store.get_bot(match["seats"][seat]["bot_id"]) or {}
    if not who.sees_private(bot):
        raise Problem(AUTH_FORBIDDEN, f"seat {seat}'s stderr is its bot's owner's (with "
                                      "private:read) and the admin's")
    text = services().store.match_stderr(match_id, seat)
    if text is None:
        raise not_found(f"stderr of seat {seat} of match {match_id!r}")
    return Response(text, 200, mimetype="text/plain")


@bp.get("/matches/<id:match_id>")
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


def _admit_match(account_id: str) -> None:
    """An account's match within its quotas (matches not over, matches a day): else 429."""
    store, limits = services().store, services().config.quotas
    quotas.check_held("concurrent_matches", store.running_account_matches(account_id), limits)
    quotas.take_daily(store, account_id, "matches_per_day", 1, limits, time.time())


def _seat_infos(store: Store, specs: list[dict[str, Any]], game: str, who: Caller
                ) -> list[MatchSeat]:
    """Check every bot seat (registered, plays this game: else 400; not retired: else 409;
    seatable by `who`: `check_seatable`); an account's match has one of its own bots or a
    pull seat (else 403). Name every seat, and give each bot seat its bot's version. The
    bots are read in one round trip."""
    errors: dict[str, Any] = {}
    retired: list[str] = []
    seats: list[MatchSeat] = []
    found = store.get_bots([spec["bot_id"] for spec in specs if spec["kind"] == "bot"])
    check_seatable([bot for bot in found if bot is not None and not is_retired(bot)], who)
    if not who.admin and not any(spec["kind"] == "pull" for spec in specs) and not any(
            bot is not None and who.owns(bot) for bot in found):
        raise Problem(AUTH_FORBIDDEN, "an account's match seats one of its own bots or a "
                                      "pull seat")
    bots = iter(found)
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
                          "name": bot["name"],
                          "version": bot.get("version", 1), **_own_deadline(spec)})
    if errors:
        raise unprocessable({"seats": errors})
    if retired:
        raise Problem(BOT_RETIRED, f"retired bots play no new match: {', '.join(retired)}")
    return seats


def _own_deadline(spec: dict[str, Any]) -> SeatDeadline:
    """The seat's own deadline, kept with the seat only when one was given."""
    return {"deadline_ms": spec["deadline_ms"]} if "deadline_ms" in spec else {}


def _initial_state(engine: engines.Game, num_players: int, seed: int, options: dict) -> dict:
    """The match's first state (one seat of Aldabas: its solo mode, `referee.match.setups`); an
    unsupported player count or option is a 400 naming the game's setups."""
    try:
        return engine.new_game(num_players=num_players, seed=seed,
                               options=match_options(engine, num_players, options))
    except engines.InvalidSetup as error:
        raise engine_problem(error, "options" if options else "seats") from None
