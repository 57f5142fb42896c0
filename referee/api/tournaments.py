"""POST /tournaments (admin), GET /tournaments, GET /tournaments/{id},
GET /tournaments/{id}/matches: tournaments of every format played by rq workers, one job
per match (tournament.tournaments)."""

from __future__ import annotations

import time
from functools import partial

from flask import Blueprint, Response
from marshmallow import Schema, fields, post_load, validate

from referee.api.auth import TOURNAMENTS_WRITE, Caller, asked_by_admin, require_scope
from referee.api.bots import check_seatable
from referee.api.common import (
    DISPLAY_NAME,
    MAX_PAGE,
    MAX_SEED,
    RECORD_ID,
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
from referee.api.matches import (
    PUSH_DEADLINE_MS,
    FailurePolicySchema,
    MatchListSchema,
    PolicySchema,
    TimeControlSchema,
    match_list,
)
from referee.api.operations import PAGE, TOURNAMENT_ID, link, operation
from referee.api.problems import Problem, invalid, not_found, unprocessable
from referee.api.web import load_body, load_query, reply, services
from referee.errors import AUTH_FORBIDDEN, BOT_RETIRED
from referee.match.botclient import DEFAULT_DEADLINE_MS
from referee.match.runner import FailurePolicy
from tournament import quotas, tournaments
from tournament.formats import FORMAT_DEFAULTS, FORMAT_FIELDS, FORMATS, ROUND_ROBIN
from tournament.pairing import DEALS, PAIRED
from tournament.store.keys import bot_lock
from tournament.tournaments import RetiredBot, SetupError

bp = Blueprint("tournaments", __name__)

DEFAULT_PLAYERS = 2
MAX_ELO = 1000.0
ERROR_RATE = validate.Range(min=1e-6, max=0.4999)  # inclusive, as the spec can say


def _format_field(field_class: type[fields.Field], name: str, description: str,
                  **kwargs) -> fields.Field:
    """A field of some formats only: absent unless given (`FORMAT_DEFAULTS` fills it in
    after the check that it belongs to the format). Its default is told in the description,
    not as `default`, which code generators would send with every tournament, whatever
    its format (a field of another format is refused)."""
    if name in FORMAT_DEFAULTS:
        description = f"{description} (default {FORMAT_DEFAULTS[name]})"
    return field_class(metadata={"description": description}, **kwargs)


def _tournament_setups() -> dict:
    """The players, bots and options each game's setups take (`referee.api.game_setups`):
    at least as many bots as players."""
    return {
        "description": "`game` picks the rules of `allOf` that apply: the players and the "
                       "options of one of its setups (GET /games/{game}: `variants`), and "
                       "at least as many bots as players",
        "properties": {"options": every_option(), "bots": {"uniqueItems": True}},
        "allOf": per_game(lambda counts, options: [setup_rule(
            {"players": {"const": players}, "bots": {"minItems": players}}, options,
            required=() if players == DEFAULT_PLAYERS else ("players",))
            for players in counts]),
    }


class TournamentCreateSchema(Schema):
    JSON_SCHEMA = staticmethod(_tournament_setups)

    game = fields.String(required=True, validate=known_game)
    format = fields.String(load_default=ROUND_ROBIN, validate=validate.OneOf(FORMATS),
                           metadata={"description": "round_robin: every combination in every "
                                     "seat rotation; gauntlet: every match holds the "
                                     "challenger; swiss: rounds paired by score; sprt: pairs "
                                     "of matches until the LLR decides"})
    bots = BoundedList(fields.String(validate=RECORD_ID), 64, required=True,
                       validate=validate.Length(min=1),
                       metadata={"description": "registered bot ids, each at most once (sprt: "
                                                "[challenger, baseline]; gauntlet: the field)"})
    players = fields.Integer(strict=True, load_default=DEFAULT_PLAYERS,
                             validate=validate.Range(min=1, max=16),
                             metadata={"description": "seats per match, within the game's "
                                                      "range (1: solo Aldabas; swiss: 2; "
                                                      "sprt: 2 or 1)"})
    rounds = _format_field(fields.Integer, "rounds", "round_robin, gauntlet: times the whole "
                           "schedule is played, each on new seeds; swiss: rounds paired",
                           strict=True, validate=validate.Range(min=1, max=1000))
    challenger = _format_field(fields.String, "challenger", "gauntlet: the bot in every match "
                               "(not one of `bots`)", validate=validate.Length(min=1, max=100))
    elo0 = _format_field(fields.Float, "elo0", "sprt: H0, the challenger is elo0 logistic "
                         "Elo stronger", validate=validate.Range(min=-MAX_ELO, max=MAX_ELO))
    elo1 = _format_field(fields.Float, "elo1", "sprt: H1, elo1 stronger (elo0 < elo1)",
                         validate=validate.Range(min=-MAX_ELO, max=MAX_ELO))
    alpha = _format_field(fields.Float, "alpha", "sprt: the chance of accepting H1 when H0 "
                          "holds", validate=ERROR_RATE)
    beta = _format_field(fields.Float, "beta", "sprt: the chance of accepting H0 when H1 "
                         "holds", validate=ERROR_RATE)
    max_matches = _format_field(fields.Integer, "max_matches", "sprt: matches scheduled at "
                                "most (whole pairs: an odd number is rounded down); no "
                                "decision if the LLR is still within its bounds then",
                                strict=True, validate=validate.Range(min=2, max=5000))
    concurrency = _format_field(fields.Integer, "concurrency", "sprt: matches queued or "
                                "playing at once (whole pairs); at least the match slots of "
                                "the workers, or they idle", strict=True,
                                validate=validate.Range(min=2, max=256))
    deals = fields.String(load_default=PAIRED, validate=validate.OneOf(DEALS), metadata={
        "description": "paired: the matches of one combination (its seat rotations, an SPRT "
                       "pair, a Swiss pairing, a solo round) share one deal, so luck evens "
                       "out, but a bot that remembers an earlier rotation knows the deck and "
                       "dice of the later ones; independent: every match has its own deal"})
    seed = fields.Integer(strict=True, validate=validate.Range(min=0, max=MAX_SEED),
                          load_default=random_seed,
                          metadata={"description": "derives every match seed; drawn by the "
                                                   "server when absent"})
    options = fields.Dict(keys=fields.String(), values=fields.Raw(), load_default=dict)
    failure_policy = fields.Nested(FailurePolicySchema,
                                    load_default=FailurePolicy().to_dict)
    deadline_ms = fields.Integer(strict=True, load_default=DEFAULT_DEADLINE_MS,
                                 validate=validate.Range(*PUSH_DEADLINE_MS),
                                 metadata={"description": "per decision of a bot"})
    time_control = fields.Nested(TimeControlSchema, metadata={
        "description": "every match on this clock (then deadline_ms is not used)"})
    name = fields.String(validate=DISPLAY_NAME)

    @post_load
    def fill_format_defaults(self, data: dict, **kwargs) -> dict:
        for name in FORMAT_FIELDS[data["format"]]:
            if name in FORMAT_DEFAULTS:
                data.setdefault(name, FORMAT_DEFAULTS[name])
        return data


class TournamentProgressSchema(Schema):
    total = required(fields.Integer, metadata={"description": "matches in the schedule"})
    done = required(fields.Integer, metadata={"description": "matches over (failed included)"})
    failed = required(fields.Integer)
    running = SafeInteger()
    queued = SafeInteger()


class TournamentBotSchema(Schema):
    bot_id = required(fields.String)
    name = required(fields.String)
    version = SafeInteger(metadata={"description": "the bot's version it plays"})


class StandingSchema(TournamentBotSchema):
    rank = required(fields.Integer)
    matches = required(fields.Integer)
    points = required(fields.Float, metadata={
        "description": "per match, the mean pair score against the other seats"})
    wins = required(fields.Integer, metadata={"description": "matches finished first alone"})
    draws = required(fields.Integer, metadata={
        "description": "matches finished first with another seat (shared rank 1)"})
    average_score = required(fields.Float)
    average_rank = required(fields.Float)
    faults = required(fields.Integer)
    forfeits = required(fields.Integer)


class CrossTableSchema(Schema):
    bots = required(fields.List, fields.String(), metadata={"description": "standings order"})
    names = required(fields.Dict, keys=fields.String(), values=fields.String())
    cells = required(fields.Dict, keys=fields.String(),
                      values=fields.Dict(keys=fields.String(), values=fields.Float()),
                      metadata={"description": "cells[a][b]: a's pair scores against b summed "
                                               "over their matches (1 ahead, 0.5 tied)"})


class TournamentRatingSchema(TournamentBotSchema):
    rating = required(fields.Float)
    low = required(fields.Float)
    high = required(fields.Float)
    games = required(fields.Integer)


class SoloRankingSchema(TournamentBotSchema):
    games = required(fields.Integer)
    mean = required(fields.Float)
    stdev = required(fields.Float, allow_none=True)
    low = required(fields.Float, allow_none=True)
    high = required(fields.Float, allow_none=True)


class TournamentSummarySchema(Schema):
    id = required(fields.String)
    name = required(fields.String)
    game = required(fields.String)
    format = required(fields.String, validate=validate.OneOf(FORMATS))
    players = required(fields.Integer)
    rounds = required(fields.Integer, metadata={
        "description": "sprt: the most pairs it may play (max_matches / 2)"})
    status = required(fields.String, validate=validate.OneOf(["running", "finished"]))
    progress = required(fields.Nested, TournamentProgressSchema)
    created_at = required(fields.String)
    finished_at = required(fields.String, allow_none=True)


class SprtSchema(Schema):
    elo0 = required(fields.Float)
    elo1 = required(fields.Float)
    alpha = required(fields.Float)
    beta = required(fields.Float)
    max_matches = required(fields.Integer)
    concurrency = required(fields.Integer)
    llr = required(fields.Float, metadata={
        "description": "log-likelihood ratio of H1 against H0 (pentanomial GSPRT, logistic "
                       "Elo; see docs/ratings.md)"})
    lower = required(fields.Float, metadata={"description": "log(beta / (1 - alpha))"})
    upper = required(fields.Float, metadata={"description": "log((1 - beta) / alpha)"})
    decision = required(fields.String, allow_none=True, validate=validate.OneOf(["H1", "H0"]),
                         metadata={"description": "null until the LLR leaves its bounds"})
    decided_after = required(fields.Integer, allow_none=True,
                              metadata={"description": "pairs counted when it was decided"})
    pentanomial = required(fields.List, SafeInteger(), validate=validate.Length(equal=5),
                            metadata={"description": "pairs [LL, LD, WL+DD, WD, WW] from the "
                                                     "challenger's side (solo: [L, 0, D, 0, W])"})
    pairs = required(fields.Integer, metadata={"description": "pairs counted"})
    games = required(fields.Integer, metadata={"description": "games in the counted pairs"})
    void_pairs = required(fields.Integer, metadata={
        "description": "pairs with a failed match: not counted"})
    scheduled_pairs = required(fields.Integer)
    elo = required(fields.Float, metadata={"description": "the challenger's logistic Elo "
                                                           "over the baseline"})
    elo_low = required(fields.Float, metadata={"description": "95% interval"})
    elo_high = required(fields.Float)
    history = required(fields.List, fields.List(JsonNumber()), metadata={
        "description": "[pairs counted, LLR, the pair's pentanomial bucket 0-4] after each "
                       "counted pair, in the order they were counted"})


class SwissPairingSchema(Schema):
    bots = required(fields.List, fields.String(), metadata={
        "description": "the higher-placed bot first; it takes seat 0 in the first match"})
    matches = required(fields.List, fields.String())


class SwissRoundSchema(Schema):
    round = required(fields.Integer)
    bye = required(fields.String, allow_none=True)
    pairings = required(fields.List, fields.Nested(SwissPairingSchema))


class SwissStandingSchema(TournamentBotSchema):
    rank = required(fields.Integer)
    points = required(fields.Float, metadata={
        "description": "pair scores of its matches (1 ahead, 0.5 tied), 2 per bye"})
    buchholz = required(fields.Float, metadata={
        "description": "the sum of its opponents' points, the tie-break"})
    opponents = required(fields.List, fields.String())
    byes = required(fields.Integer)


class SwissSchema(Schema):
    rounds = required(fields.List, fields.Nested(SwissRoundSchema))
    standings = required(fields.List, fields.Nested(SwissStandingSchema))


class TournamentSchema(TournamentSummarySchema):
    game_version = required(fields.String)
    seed = required(fields.Integer, allow_none=True, metadata={
        "description": "null until the tournament is over, unless asked with the admin token"})
    options = required(fields.Dict)
    policy = required(fields.Nested, PolicySchema)
    deadline_ms = required(fields.Integer)
    time_control = fields.Nested(TimeControlSchema, allow_none=True, metadata={
        "description": "the clock of its matches; null: deadline_ms per decision"})
    bots = required(fields.List, fields.Nested(TournamentBotSchema))
    standings = required(fields.List, fields.Nested(StandingSchema))
    cross_table = required(fields.Nested, CrossTableSchema)
    faults = required(fields.Dict, keys=fields.String(), values=SafeInteger(),
                       metadata={"description": "bot id -> faults committed"})
    ratings = required(fields.List, fields.Nested(TournamentRatingSchema), allow_none=True,
                        metadata={"description": "Bradley-Terry maximum likelihood with 95% "
                                                 "intervals, once every match is over"})
    solo_ranking = required(fields.List, fields.Nested(SoloRankingSchema), allow_none=True,
                             metadata={"description": "solo tournaments, once over: average "
                                                      "score with its 95% interval"})
    matches = required(fields.List, fields.String(), metadata={
        "description": f"the first {MAX_PAGE} match ids in schedule order; every match, "
                       "a page at a time: GET /tournaments/{id}/matches"})
    matches_total = required(fields.Integer, metadata={"description": "matches scheduled"})
    deals = required(fields.String, validate=validate.OneOf(DEALS))
    challenger = required(fields.String, allow_none=True, metadata={
        "description": "gauntlet and sprt: the challenger's bot id"})
    sprt = required(fields.Nested, SprtSchema, allow_none=True)
    swiss = required(fields.Nested, SwissSchema, allow_none=True)


class TournamentListSchema(PageSchema):
    tournaments = required(fields.List, fields.Nested(TournamentSummarySchema))




PATHS = {
    "/tournaments": {
        "post": operation(
            "createTournament", "Start a tournament: round-robin, gauntlet, Swiss or SPRT "
            "(the admin, or an account with tournaments:write)", "tournaments",
            (201, TournamentSchema), (400, 401, 403, 409, 413, 422, 429),
            body=TournamentCreateSchema, security=("admin", "account"),
            links={"GetTournament": link("getTournament", tournament_id="$response.body#/id")},
            description="round_robin: every combination of `players` bots plays in every "
                        "seat rotation, `rounds` times; gauntlet: the same over the "
                        "combinations holding the challenger; swiss: `rounds` rounds paired "
                        "by points, both seat orders per pairing; sprt: pairs on one deal, "
                        "both seat orders, until the LLR leaves its bounds or "
                        "`max_matches`. One rq job per match. An account enters its own "
                        "bots and public ones (403 `bot/not-public`), at least one of its "
                        "own (403), within its quotas (429: tournaments_per_day, and "
                        "matches_per_day counting every match the tournament may play)."),
        "get": operation("listTournaments", "The tournaments, newest first", "tournaments",
                         (200, TournamentListSchema), (400,), parameters=[PAGE]),
    },
    "/tournaments/{tournament_id}": {"get": operation(
        "getTournament", "Progress, standings, cross-table, faults, the format's own view; "
        "final ratings once over", "tournaments", (200, TournamentSchema), (404,),
        parameters=[TOURNAMENT_ID], security="admin", optional_security=True,
        description="The seed is null until the tournament is over, unless the admin asks. "
                    "Reading it also queues again any match whose worker died. `matches` "
                    "lists the first match ids only; `/tournaments/{tournament_id}/matches` "
                    "pages through all of them.")},
    "/tournaments/{tournament_id}/matches": {"get": operation(
        "listTournamentMatches", "A tournament's matches in schedule order (a page)",
        "tournaments", (200, MatchListSchema), (400, 404), parameters=[TOURNAMENT_ID, PAGE],
        security="admin", optional_security=True,
        description="Each match as `GET /matches/{match_id}` shows it (the seed null while "
                    "its deal is being played, unless the admin asks).")},
}


@bp.post("/tournaments")
def create_tournament() -> Response:
    who = require_scope(TOURNAMENTS_WRITE)
    store = services().store
    data = load_body(TournamentCreateSchema)
    policy = data.pop("failure_policy")
    spec = {**data, "policy": policy, "account": who.account_id}
    entrants = [*data["bots"], *([data["challenger"]] if data.get("challenger") else [])]
    try:
        with store.serialized(*map(bot_lock, entrants)):  # none retired before it is stored
            meta = tournaments.create_tournament(store, spec, partial(_admit, who))
    except RetiredBot as error:
        raise Problem(BOT_RETIRED, error.reason) from None
    except SetupError as error:  # 400 for what the spec says, 422 for what it cannot
        raise (invalid if error.in_spec else unprocessable)(
            {error.field: [error.reason]}) from None
    view = tournaments.tournament_view(store, meta["id"], admin=who.admin)
    return reply(TournamentSchema, view, 201, headers={"Location": f"/tournaments/{meta['id']}"})


def _admit(who: Caller, bots: list[dict], meta: dict) -> None:
    """An account's tournament: its bots seatable by it, one of them its own, within its
    daily quotas of tournaments and of matches (all the matches it may play count)."""
    check_seatable(bots, who)
    account_id = who.account_id
    if account_id is None:
        return
    if not any(who.owns(bot) for bot in bots):
        raise Problem(AUTH_FORBIDDEN, "an account's tournament enters one of its own bots")
    store, limits, now = services().store, services().config.quotas, time.time()
    quotas.take_daily(store, account_id, "tournaments_per_day", 1, limits, now)
    try:
        quotas.take_daily(store, account_id, "matches_per_day", meta["total"], limits, now)
    except quotas.QuotaExceeded:
        store.take_daily(account_id, "tournaments_per_day", -1, limits.tournaments_per_day,
                         quotas.Day.of(now, limits.day_s).label)
        raise


@bp.get("/tournaments")
def list_tournaments() -> Response:
    query = load_query(ListQuerySchema)
    found, total = tournaments.list_tournaments(services().store, query["offset"],
                                                query["limit"])
    return reply(TournamentListSchema, {"tournaments": found, "total": total, **query})


@bp.get("/tournaments/<id:tournament_id>")
def get_tournament(tournament_id: str) -> Response:
    view = tournaments.tournament_view(services().store, tournament_id, asked_by_admin())
    if view is None:
        raise not_found(f"tournament {tournament_id!r}")
    return reply(TournamentSchema, view)


@bp.get("/tournaments/<id:tournament_id>/matches")
def list_tournament_matches(tournament_id: str) -> Response:
    """A page of the tournament's matches in schedule order."""
    store = services().store
    if tournaments.get_meta(store, tournament_id) is None:
        raise not_found(f"tournament {tournament_id!r}")
    query = load_query(ListQuerySchema)
    ids, total = tournaments.match_id_page(store, tournament_id, query["offset"],
                                           query["limit"])
    return match_list(ids, total, query)
