"""marshmallow schemas of every request and response body of the API.

Request schemas refuse unknown fields; response schemas declare every field they send, so
the generated `openapi.yaml` (components) is exactly what the views produce.
"""

from __future__ import annotations

import secrets

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

import engines

from . import replay
from .botclient import Fault
from .config import BOT_URL_PATTERN, url_syntax_problem, without_credentials
from .runner import FORFEIT, POLICY_CHOICES, FailurePolicy

MAX_SEED = (1 << 63) - 1
SHA256_HEX = validate.Regexp(r"^[0-9a-f]{64}$", error="not a sha256 hex digest")
MAX_PAGE = 200
MAX_OFFSET = 1 << 40
MAX_SEATS = 16
MAX_STEPS = (1 << 31) - 1
SEAT = validate.Range(min=0, max=MAX_SEATS - 1)
STEP = validate.Range(min=0, max=MAX_STEPS)


def random_seed() -> int:
    """A seed drawn by the server for a match or tournament created without one."""
    return secrets.randbelow(MAX_SEED + 1)


# a validator (an enum in the spec), named like the function it replaced
_known_game = validate.OneOf(engines.names(), error="unknown game; known games: {choices}")


class JsonNumber(fields.Field):
    """A JSON number passed through as it is (an int stays an int), so records dumped
    through a schema keep their canonical form."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError("not a number")
        return value


def _required(field_class: type[fields.Field], *args, **kwargs) -> fields.Field:
    """A response field that is always present (it may still be null when allowed);
    integers are strict, so a submitted replay with "5" for 5 is refused."""
    if field_class is fields.Integer:
        kwargs.setdefault("strict", True)
    return field_class(*args, required=True, **kwargs)


# ----- problems ------------------------------------------------------------------------
class ProblemSchema(Schema):
    type = _required(fields.String)
    title = _required(fields.String)
    status = _required(fields.Integer)
    detail = _required(fields.String)
    errors = fields.Dict(keys=fields.String(), values=fields.Raw(),
                         metadata={"description": "field -> messages, for validation errors"})


# ----- health and games ----------------------------------------------------------------
class HealthSchema(Schema):
    status = _required(fields.String, validate=validate.OneOf(["ok"]))
    redis = _required(fields.String, validate=validate.OneOf(["ok"]))
    games = _required(fields.List, fields.String())


class GameSummarySchema(Schema):
    name = _required(fields.String)
    version = _required(fields.String)
    min_players = _required(fields.Integer)
    max_players = _required(fields.Integer)


class GameListSchema(Schema):
    games = _required(fields.List, fields.Nested(GameSummarySchema))


class GameDetailSchema(GameSummarySchema):
    description = _required(fields.Dict, metadata={
        "description": "the engine's describe(): options, components, action reference"})
    variants = _required(fields.List, fields.Dict(), metadata={
        "description": "every supported setup: num_players and options"})


# ----- bots --------------------------------------------------------------------------
class BotUrl(validate.Regexp):
    """A bot URL matching BOT_URL_PATTERN (the spec's `pattern`), on which urllib3 and
    urllib.parse agree; a refusal says what is wrong."""

    def __init__(self):
        super().__init__(BOT_URL_PATTERN)

    def __call__(self, value: str) -> str:
        problem = url_syntax_problem(value)
        if problem:
            raise ValidationError(problem)
        return value


class BotCreateSchema(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=100))
    url = fields.String(required=True, validate=[validate.Length(min=1, max=2000), BotUrl()],
                        metadata={"description": "http(s) URL of the bot; its host must be "
                                                 "on the allowlist (REFEREE_BOT_HOSTS)"})
    games = fields.List(fields.String(validate=_known_game), required=True,
                        validate=validate.Length(min=1))


class PublicUrl(fields.String):
    """A stored bot URL, shown without credentials (`user:password@`): new URLs with them
    are refused, but a bot registered before may still carry some."""

    def _serialize(self, value, attr, obj, **kwargs):
        return super()._serialize(value and without_credentials(value), attr, obj, **kwargs)


class BotSchema(Schema):
    id = _required(fields.String)
    name = _required(fields.String)
    url = _required(PublicUrl)
    games = _required(fields.List, fields.String())
    created_at = _required(fields.String)


class BotListSchema(Schema):
    bots = _required(fields.List, fields.Nested(BotSchema))


# ----- matches ------------------------------------------------------------------------
class FailurePolicySchema(Schema):
    """For each fault code: "forfeit" (the default) or "random"; loaded with every code."""

    timeout = fields.String(load_default=FORFEIT, validate=validate.OneOf(POLICY_CHOICES))
    crash = fields.String(load_default=FORFEIT, validate=validate.OneOf(POLICY_CHOICES))
    malformed = fields.String(load_default=FORFEIT, validate=validate.OneOf(POLICY_CHOICES))
    illegal = fields.String(load_default=FORFEIT, validate=validate.OneOf(POLICY_CHOICES))


PUSH_DEADLINE_MS = (10, 60000)  # the range of a push bot's deadline per decision
PULL_DEADLINE_MS = (100, 86400000)  # the range of a pull seat's
SEAT_DEADLINE = ("this seat's own deadline per decision, instead of the match's deadline_ms "
                 "(a bot seat) or pull_deadline_ms (a pull seat)")


class SeatSpecSchema(Schema):
    """A seat of a new match: a registered bot (push) or a client that polls (pull)."""

    JSON_SCHEMA = {"oneOf": [  # the rules of the two validators below, for the spec
        {"properties": {"kind": {"const": "bot"}, "deadline_ms": {
            "minimum": PUSH_DEADLINE_MS[0], "maximum": PUSH_DEADLINE_MS[1]}},
         "required": ["bot_id"]},
        {"properties": {"kind": {"const": "pull"}, "deadline_ms": {
            "minimum": PULL_DEADLINE_MS[0], "maximum": PULL_DEADLINE_MS[1]}},
         "not": {"required": ["bot_id"]}},
    ]}

    kind = fields.String(required=True, validate=validate.OneOf(["bot", "pull"]))
    bot_id = fields.String(validate=validate.Length(min=1, max=100))
    name = fields.String(validate=validate.Length(min=1, max=100))
    deadline_ms = fields.Integer(strict=True, metadata={"description": SEAT_DEADLINE})

    @validates_schema
    def check_bot_id(self, data: dict, **kwargs) -> None:
        if data["kind"] == "bot" and "bot_id" not in data:
            raise ValidationError("a bot seat needs bot_id", field_name="bot_id")
        if data["kind"] == "pull" and "bot_id" in data:
            raise ValidationError("a pull seat has no bot_id", field_name="bot_id")

    @validates_schema
    def check_deadline(self, data: dict, **kwargs) -> None:
        """A seat's own deadline keeps to the range of the match field it stands in for."""
        low, high = PUSH_DEADLINE_MS if data["kind"] == "bot" else PULL_DEADLINE_MS
        if not low <= data.get("deadline_ms", low) <= high:
            raise ValidationError(f"a {data['kind']} seat's deadline_ms must be from {low} "
                                  f"to {high}", field_name="deadline_ms")


class MatchCreateSchema(Schema):
    game = fields.String(required=True, validate=_known_game)
    seats = fields.List(fields.Nested(SeatSpecSchema), required=True,
                        validate=validate.Length(min=1, max=16))
    seed = fields.Integer(strict=True, validate=validate.Range(min=0, max=MAX_SEED),
                          load_default=random_seed,
                          metadata={"description": "drawn by the server when absent"})
    options = fields.Dict(keys=fields.String(), values=fields.Raw(), load_default=dict)
    failure_policy = fields.Nested(FailurePolicySchema,
                                    load_default=FailurePolicy().to_dict)
    deadline_ms = fields.Integer(strict=True, load_default=2000,
                                 validate=validate.Range(*PUSH_DEADLINE_MS),
                                 metadata={"description": "per decision of a push bot"})
    pull_deadline_ms = fields.Integer(strict=True, load_default=300000,
                                      validate=validate.Range(*PULL_DEADLINE_MS),
                                      metadata={"description": "per decision of a pull seat"})


class SeatTokenSchema(Schema):
    seat = _required(fields.Integer)
    token = _required(fields.String)


class SeatInfoSchema(Schema):
    seat = _required(fields.Integer, validate=SEAT)
    kind = _required(fields.String, validate=validate.OneOf(["bot", "pull"]))
    bot_id = _required(fields.String, allow_none=True)
    name = _required(fields.String)
    deadline_ms = fields.Integer(validate=validate.Range(PUSH_DEADLINE_MS[0],
                                                         PULL_DEADLINE_MS[1]),
                                 metadata={"description": "present when the seat was given "
                                                          "its own deadline"})


class PolicySchema(Schema):
    timeout = _required(fields.String, validate=validate.OneOf(POLICY_CHOICES))
    crash = _required(fields.String, validate=validate.OneOf(POLICY_CHOICES))
    malformed = _required(fields.String, validate=validate.OneOf(POLICY_CHOICES))
    illegal = _required(fields.String, validate=validate.OneOf(POLICY_CHOICES))


class ResultSchema(Schema):
    scores = _required(fields.List, JsonNumber())
    ranks = _required(fields.List, fields.Integer(validate=validate.Range(1, MAX_SEATS)))
    details = _required(fields.Dict)


class ForfeitSchema(Schema):
    seat = _required(fields.Integer, validate=SEAT)
    step = _required(fields.Integer, validate=STEP)
    fault = _required(fields.String, validate=validate.OneOf(Fault.ALL))


class MatchSchema(Schema):
    id = _required(fields.String)
    game = _required(fields.String)
    game_version = _required(fields.String)
    status = _required(fields.String,
                       validate=validate.OneOf(["queued", "running", "finished", "failed"]))
    num_players = _required(fields.Integer)
    seats = _required(fields.List, fields.Nested(SeatInfoSchema))
    options = _required(fields.Dict)
    policy = _required(fields.Nested, PolicySchema)
    deadline_ms = _required(fields.Integer)
    pull_deadline_ms = _required(fields.Integer)
    seed = _required(fields.Integer, allow_none=True, metadata={
        "description": "hidden (null) until the match is over, unless asked with the admin "
                       "token: the seed determines every hidden card"})
    step = _required(fields.Integer, metadata={"description": "decisions played so far"})
    to_move = _required(fields.Integer, allow_none=True)
    result = _required(fields.Nested, ResultSchema, allow_none=True)
    forfeit = _required(fields.Nested, ForfeitSchema, allow_none=True)
    error = _required(fields.String, allow_none=True)
    created_at = _required(fields.String)
    started_at = _required(fields.String, allow_none=True)
    finished_at = _required(fields.String, allow_none=True)


class MatchCreatedSchema(MatchSchema):
    tokens = _required(fields.List, fields.Nested(SeatTokenSchema), metadata={
        "description": "one token per pull seat, shown only in this answer"})


class ListQuerySchema(Schema):
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_OFFSET),
                            metadata={"description": "items to skip"})
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=MAX_PAGE))


class MatchListQuerySchema(ListQuerySchema):
    game = fields.String(validate=_known_game, metadata={"description": "only this game's"})


class PageSchema(Schema):
    """What every list answers besides its items: the total and the page asked for."""

    total = _required(fields.Integer)
    offset = _required(fields.Integer)
    limit = _required(fields.Integer)


class MatchListSchema(PageSchema):
    matches = _required(fields.List, fields.Nested(MatchSchema))


# ----- seats: observation and moves -----------------------------------------------------
class ObservationSchema(Schema):
    """The same fields as a push decision request, plus the match status."""

    protocol = _required(fields.String)
    match_id = _required(fields.String)
    game = _required(fields.String)
    seat = _required(fields.Integer)
    step = _required(fields.Integer)
    to_move = _required(fields.Integer, allow_none=True)
    status = _required(fields.String)
    deadline_ms = _required(fields.Integer)
    observation = _required(fields.Dict)
    legal_actions = _required(fields.List, fields.Dict())


class MoveSchema(Schema):
    step = fields.Integer(required=True, strict=True, validate=validate.Range(min=0),
                          metadata={"description": "the step the move answers (from the "
                                                   "observation); a stale step is refused"})
    action = fields.Dict(required=True, keys=fields.String(), values=fields.Raw())


class MoveAcceptedSchema(Schema):
    match_id = _required(fields.String)
    seat = _required(fields.Integer)
    step = _required(fields.Integer, metadata={"description": "the step this move played"})
    applied = _required(fields.Boolean, metadata={
        "description": "false when the runner had not yet played it when this answer left"})
    status = _required(fields.String)
    current_step = _required(fields.Integer)
    to_move = _required(fields.Integer, allow_none=True)


# ----- replays ------------------------------------------------------------------------
class FaultSchema(Schema):
    code = _required(fields.String, validate=validate.OneOf(Fault.ALL))
    detail = _required(fields.String)
    raw = _required(fields.String, metadata={"description": "the answer, truncated"})
    policy = _required(fields.String, validate=validate.OneOf(POLICY_CHOICES))


class StepSchema(Schema):
    step = _required(fields.Integer, validate=STEP)
    seat = _required(fields.Integer, validate=SEAT)
    action = _required(fields.Dict, allow_none=True)
    fault = _required(fields.Nested, FaultSchema, allow_none=True)
    elapsed_ms = _required(JsonNumber)
    state_hash = _required(fields.String, validate=SHA256_HEX)


class ChainSchema(Schema):
    algorithm = _required(fields.String, validate=validate.OneOf(["sha256"]))
    length = _required(fields.Integer, validate=STEP)
    head = _required(fields.String, validate=SHA256_HEX)


class SignatureSchema(Schema):
    algorithm = _required(fields.String, validate=validate.OneOf(["hmac-sha256"]))
    key_id = _required(fields.String)
    value = _required(fields.String, validate=SHA256_HEX)


class ReplaySeatSchema(SeatInfoSchema):
    deadline_ms = _required(fields.Integer, validate=validate.Range(PUSH_DEADLINE_MS[0],
                                                                   PULL_DEADLINE_MS[1]))


class ReplaySchema(Schema):
    format = _required(fields.String, validate=validate.OneOf([replay.FORMAT]))
    match_id = _required(fields.String)
    game = _required(fields.String, validate=_known_game)
    game_version = _required(fields.String, metadata={
        "description": "the rules version it was played under; POST /replays/verify "
                       "answers 422 for a version other than this referee's"})
    num_players = _required(fields.Integer, validate=validate.Range(1, MAX_SEATS))
    options = _required(fields.Dict)
    seed = _required(fields.Integer, validate=validate.Range(0, MAX_SEED))
    seats = _required(fields.List, fields.Nested(ReplaySeatSchema))
    policy = _required(fields.Nested, PolicySchema)
    initial_state_hash = _required(fields.String, validate=SHA256_HEX)
    steps = _required(fields.List, fields.Nested(StepSchema))
    result = _required(fields.Nested, ResultSchema, allow_none=True)
    forfeit = _required(fields.Nested, ForfeitSchema, allow_none=True)
    strikes = _required(fields.List, fields.Integer(validate=STEP))
    started_at = _required(fields.String, allow_none=True)
    finished_at = _required(fields.String, allow_none=True)
    chain = _required(fields.Nested, ChainSchema, allow_none=True, metadata={
        "description": "hash chain over the steps; null until the match is over"})
    signature = _required(fields.Nested, SignatureSchema, allow_none=True, metadata={
        "description": "HMAC of the record; null when unsigned or not over"})


class ReplayStepQuerySchema(Schema):
    seat = fields.Integer(validate=validate.Range(min=0), metadata={
        "description": "the seat whose view to show; absent: the spectator's view"})


class ReplayStepSchema(Schema):
    match_id = _required(fields.String)
    step = _required(fields.Integer, metadata={
        "description": "the state before the decision of this step (the number of steps: "
                       "the final state)"})
    seat = _required(fields.Integer, allow_none=True)
    to_move = _required(fields.Integer, allow_none=True)
    view = _required(fields.Dict, metadata={
        "description": "exactly the observation the seat had, or the spectator's view"})
    played = _required(fields.Nested, StepSchema, allow_none=True, metadata={
        "description": "the step recorded from this state; null at the end"})


class VerifyProblemSchema(Schema):
    step = _required(fields.Integer, allow_none=True)
    field = _required(fields.String)
    reason = _required(fields.String)


class VerifyReportSchema(Schema):
    valid = _required(fields.Boolean)
    steps_checked = _required(fields.Integer)
    problem = _required(fields.Nested, VerifyProblemSchema, allow_none=True, metadata={
        "description": "the first inconsistency found while re-running the match"})
    chain = _required(fields.String, validate=validate.OneOf(["valid", "invalid", "missing"]))
    signature = _required(fields.String, validate=validate.OneOf(
        ["valid", "invalid", "missing", "unknown-key", "not-checked"]))
    key_id = _required(fields.String, allow_none=True)
    notes = _required(fields.List, fields.String())


# ----- tournaments and ratings -----------------------------------------------------------
class TournamentCreateSchema(Schema):
    game = fields.String(required=True, validate=_known_game)
    bots = fields.List(fields.String(validate=validate.Length(min=1, max=100)), required=True,
                       validate=validate.Length(min=1, max=64),
                       metadata={"description": "registered bot ids, each at most once"})
    players = fields.Integer(strict=True, load_default=2, validate=validate.Range(min=1, max=16),
                             metadata={"description": "seats per match, within the game's "
                                                      "range (1: solo Aldabas)"})
    rounds = fields.Integer(strict=True, load_default=1, validate=validate.Range(min=1, max=1000),
                            metadata={"description": "times the whole round-robin is played, "
                                                     "each on new seeds"})
    seed = fields.Integer(strict=True, validate=validate.Range(min=0, max=MAX_SEED),
                          load_default=random_seed,
                          metadata={"description": "derives every match seed; drawn by the "
                                                   "server when absent"})
    options = fields.Dict(keys=fields.String(), values=fields.Raw(), load_default=dict)
    failure_policy = fields.Nested(FailurePolicySchema,
                                    load_default=FailurePolicy().to_dict)
    deadline_ms = fields.Integer(strict=True, load_default=2000,
                                 validate=validate.Range(min=10, max=60000),
                                 metadata={"description": "per decision of a bot"})
    name = fields.String(validate=validate.Length(min=1, max=100))


class TournamentProgressSchema(Schema):
    total = _required(fields.Integer, metadata={"description": "matches in the schedule"})
    done = _required(fields.Integer, metadata={"description": "matches over (failed included)"})
    failed = _required(fields.Integer)
    running = fields.Integer()
    queued = fields.Integer()


class TournamentBotSchema(Schema):
    bot_id = _required(fields.String)
    name = _required(fields.String)


class StandingSchema(TournamentBotSchema):
    rank = _required(fields.Integer)
    matches = _required(fields.Integer)
    points = _required(fields.Float, metadata={
        "description": "per match, the mean pair score against the other seats"})
    wins = _required(fields.Integer)
    average_score = _required(fields.Float)
    average_rank = _required(fields.Float)
    faults = _required(fields.Integer)
    forfeits = _required(fields.Integer)


class CrossTableSchema(Schema):
    bots = _required(fields.List, fields.String(), metadata={"description": "standings order"})
    names = _required(fields.Dict, keys=fields.String(), values=fields.String())
    cells = _required(fields.Dict, keys=fields.String(),
                      values=fields.Dict(keys=fields.String(), values=fields.Float()),
                      metadata={"description": "cells[a][b]: a's pair scores against b summed "
                                               "over their matches (1 ahead, 0.5 tied)"})


class TournamentRatingSchema(TournamentBotSchema):
    rating = _required(fields.Float)
    low = _required(fields.Float)
    high = _required(fields.Float)
    games = _required(fields.Integer)


class SoloRankingSchema(TournamentBotSchema):
    games = _required(fields.Integer)
    mean = _required(fields.Float)
    stdev = _required(fields.Float, allow_none=True)
    low = _required(fields.Float, allow_none=True)
    high = _required(fields.Float, allow_none=True)


class TournamentSummarySchema(Schema):
    id = _required(fields.String)
    name = _required(fields.String)
    game = _required(fields.String)
    players = _required(fields.Integer)
    rounds = _required(fields.Integer)
    status = _required(fields.String, validate=validate.OneOf(["running", "finished"]))
    progress = _required(fields.Nested, TournamentProgressSchema)
    created_at = _required(fields.String)
    finished_at = _required(fields.String, allow_none=True)


class TournamentSchema(TournamentSummarySchema):
    game_version = _required(fields.String)
    seed = _required(fields.Integer, allow_none=True, metadata={
        "description": "null until the tournament is over, unless asked with the admin token"})
    options = _required(fields.Dict)
    policy = _required(fields.Nested, PolicySchema)
    deadline_ms = _required(fields.Integer)
    bots = _required(fields.List, fields.Nested(TournamentBotSchema))
    standings = _required(fields.List, fields.Nested(StandingSchema))
    cross_table = _required(fields.Nested, CrossTableSchema)
    faults = _required(fields.Dict, keys=fields.String(), values=fields.Integer(),
                       metadata={"description": "bot id -> faults committed"})
    ratings = _required(fields.List, fields.Nested(TournamentRatingSchema), allow_none=True,
                        metadata={"description": "Bradley-Terry maximum likelihood with 95% "
                                                 "intervals, once every match is over"})
    solo_ranking = _required(fields.List, fields.Nested(SoloRankingSchema), allow_none=True,
                             metadata={"description": "solo tournaments, once over: average "
                                                      "score with its 95% interval"})
    matches = _required(fields.List, fields.String(), metadata={"description": "schedule order"})


class TournamentListSchema(PageSchema):
    tournaments = _required(fields.List, fields.Nested(TournamentSummarySchema))


class LeaderboardEntrySchema(TournamentBotSchema):
    rating = _required(fields.Float, metadata={"description": "live Elo"})
    low = _required(fields.Float, allow_none=True, metadata={
        "description": "the bot's latest tournament's Bradley-Terry 95% interval, centred on "
                       "the live Elo; null when it played no finished tournament"})
    high = _required(fields.Float, allow_none=True)
    games = _required(fields.Integer, metadata={"description": "rated matches"})


class RatingsSchema(Schema):
    game = _required(fields.String)
    leaderboard = _required(fields.List, fields.Nested(LeaderboardEntrySchema))
    history = _required(fields.Dict, keys=fields.String(),
                        values=fields.List(fields.List(JsonNumber())),
                        metadata={"description": "bot id -> [n, Elo after its n-th rated "
                                                 "match]"})
