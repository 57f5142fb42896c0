"""marshmallow schemas of every request and response body of the API.

Request schemas refuse unknown fields; response schemas declare every field they send, so
the generated `openapi.yaml` (components) is exactly what the views produce.
"""

from __future__ import annotations

import secrets

from marshmallow import Schema, ValidationError, fields, post_load, validate, validates_schema

import engines
from referee.match import replay
from referee.match.botclient import DEFAULT_DEADLINE_MS, Fault
from referee.match.runner import DEFAULT_STRIKE_LIMIT, FORFEIT, POLICY_CHOICES, FailurePolicy
from referee.match.urls import BOT_URL_PATTERN, url_syntax_problem, without_credentials
from tournament.formats import (
    FORMAT_DEFAULTS,
    FORMAT_FIELDS,
    FORMATS,
    ROUND_ROBIN,
)
from tournament.pairing import DEALS, PAIRED

MAX_SAFE_INTEGER = (1 << 53) - 1  # the largest integer a JavaScript number holds exactly
MAX_SEED = MAX_SAFE_INTEGER
MAX_REPLAY_SEED = (1 << 63) - 1  # what the engines accept: referee-replay/1 records used it
SEED_RANGE = validate.Range(min=0, max=MAX_SEED, error=(
    "a seed is an integer from 0 to 2**53 - 1 = 9007199254740991, the largest integer "
    "every JSON client (JavaScript's JSON.parse) reads exactly"))
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


class SafeInteger(fields.Integer):
    """An integer at most 2**53 - 1 (documented as the `maximum`), so that it survives a
    JavaScript `JSON.parse`: every integer the API emits is one."""

    def __init__(self, *args, **kwargs):
        validators = kwargs.get("validate")
        validators = [] if validators is None else (
            list(validators) if isinstance(validators, list | tuple) else [validators])
        if not any(isinstance(v, validate.Range) and v.max is not None for v in validators):
            validators.append(validate.Range(max=MAX_SAFE_INTEGER))
        super().__init__(*args, **{**kwargs, "validate": validators})


def _required(field_class: type[fields.Field], *args, **kwargs) -> fields.Field:
    """A response field that is always present (it may still be null when allowed);
    integers are strict, so a submitted replay with "5" for 5 is refused, and safe."""
    if field_class is fields.Integer:
        field_class = SafeInteger
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


# ----- paging -------------------------------------------------------------------------
class ListQuerySchema(Schema):
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_OFFSET),
                            metadata={"description": "items to skip"})
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=MAX_PAGE))


class PageSchema(Schema):
    """What every list answers besides its items: the total and the page asked for."""

    total = _required(fields.Integer)
    offset = _required(fields.Integer)
    limit = _required(fields.Integer)


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


class BotUpdateSchema(Schema):
    """PATCH /bots/{id}: a new name or URL, both or neither (nothing changes)."""

    name = fields.String(validate=validate.Length(min=1, max=100))
    url = fields.String(validate=[validate.Length(min=1, max=2000), BotUrl()])


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
    retired_at = _required(fields.String, allow_none=True, metadata={
        "description": "when the bot was retired (DELETE /bots/{id}): it plays no new match "
                       "or tournament; null while active"})


class BotCreatedSchema(BotSchema):
    secret = _required(fields.String, metadata={
        "description": "the key the referee signs its requests to the bot with (32 bytes, "
                       "hex); shown in this answer only"})


class BotListSchema(PageSchema):
    bots = _required(fields.List, fields.Nested(BotSchema), metadata={
        "description": "by registration time, oldest first"})


# ----- matches ------------------------------------------------------------------------
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
    """A match's failure policy; records made before the strike limit have none."""

    timeout = _required(fields.String, validate=validate.OneOf(POLICY_CHOICES))
    crash = _required(fields.String, validate=validate.OneOf(POLICY_CHOICES))
    malformed = _required(fields.String, validate=validate.OneOf(POLICY_CHOICES))
    illegal = _required(fields.String, validate=validate.OneOf(POLICY_CHOICES))
    strike_limit = fields.Integer(allow_none=True, strict=True,
                                  validate=validate.Range(0, 100000))


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


class MatchListQuerySchema(ListQuerySchema):
    game = fields.String(validate=_known_game, metadata={"description": "only this game's"})


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


class ReplaySubmissionSchema(ReplaySchema):
    """A record to verify: as a replay, but a seed up to 2**63 - 1, which records of format
    referee-replay/1 may carry."""

    seed = _required(fields.Integer, validate=validate.Range(min=0, max=MAX_REPLAY_SEED))
    format = _required(fields.String, validate=validate.OneOf(sorted(replay.CANONICAL_FORMS)))


class ReplayStepQuerySchema(Schema):
    seat = fields.Integer(validate=validate.Range(min=0), metadata={
        "description": "the seat whose view to show; absent: the spectator's view"})


class SeenFaultSchema(Schema):
    code = _required(fields.String, validate=validate.OneOf(Fault.ALL))
    policy = _required(fields.String, validate=validate.OneOf(POLICY_CHOICES))
    detail = fields.String(metadata={"description": "for the seat that committed it only"})
    raw = fields.String(metadata={"description": "for the seat that committed it only"})


class SeenStepSchema(Schema):
    """A recorded step as one viewer knows it."""

    step = _required(fields.Integer)
    seat = _required(fields.Integer, metadata={"description": "the seat that played it"})
    action = _required(fields.Dict, allow_none=True, metadata={
        "description": "the action, shown to the seat that played it only (null for any "
                       "other viewer, and for a forfeited step): `events` say what the "
                       "others learnt of it"})
    fault = _required(fields.Nested, SeenFaultSchema, allow_none=True)
    elapsed_ms = _required(JsonNumber)
    state_hash = _required(fields.String, validate=SHA256_HEX)
    events = _required(fields.List, fields.Dict(), metadata={
        "description": "the entries this step added to the viewer's event log, exactly as "
                       "the viewer's observation shows them"})


class ReplayStepSchema(Schema):
    match_id = _required(fields.String)
    step = _required(fields.Integer, metadata={
        "description": "the state before the decision of this step (the number of steps: "
                       "the final state)"})
    seat = _required(fields.Integer, allow_none=True)
    to_move = _required(fields.Integer, allow_none=True)
    view = _required(fields.Dict, metadata={
        "description": "exactly the observation the seat had, or the spectator's view"})
    played = _required(fields.Nested, SeenStepSchema, allow_none=True, metadata={
        "description": "the step played from this state, as the viewer knows it; null at "
                       "the end"})


# ----- live event streams (text/event-stream; docs/bots.md "Watching live") --------------
LAST_EVENT_ID_DIGITS = 10  # a Last-Event-ID header is a step number of at most 10 digits


class MatchEventsQuerySchema(Schema):
    seat = fields.Integer(validate=validate.Range(min=0), metadata={
        "description": "the seat whose view to stream: the admin's choice (absent: the "
                       "spectator's view, every step whole), anyone's once the replay is "
                       "public; a seat token streams its own seat"})
    last_event_id = fields.Integer(validate=STEP, metadata={
        "description": "resume after this step (as the `Last-Event-ID` header does, which "
                       "wins when both are given): for clients that cannot set headers"})


class StartEventSchema(Schema):
    """`start`: the viewer's view before the first step (sent unless resuming)."""

    match_id = _required(fields.String)
    game = _required(fields.String)
    seat = _required(fields.Integer, allow_none=True, metadata={
        "description": "the viewer's seat; null: the spectator"})
    step = _required(fields.Integer, metadata={"description": "0"})
    to_move = _required(fields.Integer, allow_none=True)
    view = _required(fields.Dict, metadata={
        "description": "the viewer's observation of the initial state"})


class StepEventSchema(Schema):
    """`step` (SSE id = `step`): a recorded step as the viewer may see it, exactly as the
    replay endpoints show it: `played` is `GET /matches/{id}/replay/{step}?seat=N`'s
    `played`, `view` the `view` of `/replay/{step + 1}` without its `log` (which grows with
    every step: the entries this step added are `played.events`, so the log is the `start`
    event's followed by every step's `played.events`)."""

    match_id = _required(fields.String)
    step = _required(fields.Integer)
    seat = _required(fields.Integer, allow_none=True, metadata={
        "description": "the viewer's seat; null: the spectator (or the admin without `seat`)"})
    played = _required(fields.Nested, SeenStepSchema, metadata={
        "description": "the step as the viewer knows it (the admin: whole)"})
    view = _required(fields.Dict, metadata={
        "description": "the viewer's observation after the step, without `log`"})
    to_move = _required(fields.Integer, allow_none=True, metadata={
        "description": "the seat to move after the step; null once the game is over"})
    state = fields.Dict(metadata={"description": "the admin only: the engine state after the "
                                                 "step"})


class ResultEventSchema(Schema):
    """`result`: the match is over; the stream ends."""

    match_id = _required(fields.String)
    status = _required(fields.String, validate=validate.OneOf(["finished", "failed"]))
    steps = _required(fields.Integer, metadata={"description": "steps recorded"})
    result = _required(fields.Nested, ResultSchema, allow_none=True)
    forfeit = _required(fields.Nested, ForfeitSchema, allow_none=True)
    error = _required(fields.String, allow_none=True)


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
MAX_ELO = 1000.0
ERROR_RATE = validate.Range(min=1e-6, max=0.4999)  # inclusive, as the spec can say


def _format_field(field_class: type[fields.Field], name: str, description: str,
                  **kwargs) -> fields.Field:
    """A field of some formats only: absent unless given (`FORMAT_DEFAULTS` fills it in
    after the check that it belongs to the format), its default documented."""
    metadata = {"description": description}
    if name in FORMAT_DEFAULTS:
        metadata["default"] = FORMAT_DEFAULTS[name]
    return field_class(metadata=metadata, **kwargs)


class TournamentCreateSchema(Schema):
    game = fields.String(required=True, validate=_known_game)
    format = fields.String(load_default=ROUND_ROBIN, validate=validate.OneOf(FORMATS),
                           metadata={"description": "round_robin: every combination in every "
                                     "seat rotation; gauntlet: every match holds the "
                                     "challenger; swiss: rounds paired by score; sprt: pairs "
                                     "of matches until the LLR decides"})
    bots = fields.List(fields.String(validate=validate.Length(min=1, max=100)), required=True,
                       validate=validate.Length(min=1, max=64),
                       metadata={"description": "registered bot ids, each at most once (sprt: "
                                                "[challenger, baseline]; gauntlet: the field)"})
    players = fields.Integer(strict=True, load_default=2, validate=validate.Range(min=1, max=16),
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
    name = fields.String(validate=validate.Length(min=1, max=100))

    @post_load
    def fill_format_defaults(self, data: dict, **kwargs) -> dict:
        for name in FORMAT_FIELDS[data["format"]]:
            if name in FORMAT_DEFAULTS:
                data.setdefault(name, FORMAT_DEFAULTS[name])
        return data


class TournamentProgressSchema(Schema):
    total = _required(fields.Integer, metadata={"description": "matches in the schedule"})
    done = _required(fields.Integer, metadata={"description": "matches over (failed included)"})
    failed = _required(fields.Integer)
    running = SafeInteger()
    queued = SafeInteger()


class TournamentBotSchema(Schema):
    bot_id = _required(fields.String)
    name = _required(fields.String)


class StandingSchema(TournamentBotSchema):
    rank = _required(fields.Integer)
    matches = _required(fields.Integer)
    points = _required(fields.Float, metadata={
        "description": "per match, the mean pair score against the other seats"})
    wins = _required(fields.Integer, metadata={"description": "matches finished first alone"})
    draws = _required(fields.Integer, metadata={
        "description": "matches finished first with another seat (shared rank 1)"})
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
    format = _required(fields.String, validate=validate.OneOf(FORMATS))
    players = _required(fields.Integer)
    rounds = _required(fields.Integer, metadata={
        "description": "sprt: the most pairs it may play (max_matches / 2)"})
    status = _required(fields.String, validate=validate.OneOf(["running", "finished"]))
    progress = _required(fields.Nested, TournamentProgressSchema)
    created_at = _required(fields.String)
    finished_at = _required(fields.String, allow_none=True)


class SprtSchema(Schema):
    elo0 = _required(fields.Float)
    elo1 = _required(fields.Float)
    alpha = _required(fields.Float)
    beta = _required(fields.Float)
    max_matches = _required(fields.Integer)
    concurrency = _required(fields.Integer)
    llr = _required(fields.Float, metadata={
        "description": "log-likelihood ratio of H1 against H0 (pentanomial GSPRT, logistic "
                       "Elo; see docs/ratings.md)"})
    lower = _required(fields.Float, metadata={"description": "log(beta / (1 - alpha))"})
    upper = _required(fields.Float, metadata={"description": "log((1 - beta) / alpha)"})
    decision = _required(fields.String, allow_none=True, validate=validate.OneOf(["H1", "H0"]),
                         metadata={"description": "null until the LLR leaves its bounds"})
    decided_after = _required(fields.Integer, allow_none=True,
                              metadata={"description": "pairs counted when it was decided"})
    pentanomial = _required(fields.List, SafeInteger(), validate=validate.Length(equal=5),
                            metadata={"description": "pairs [LL, LD, WL+DD, WD, WW] from the "
                                                     "challenger's side (solo: [L, 0, D, 0, W])"})
    pairs = _required(fields.Integer, metadata={"description": "pairs counted"})
    games = _required(fields.Integer, metadata={"description": "games in the counted pairs"})
    void_pairs = _required(fields.Integer, metadata={
        "description": "pairs with a failed match: not counted"})
    scheduled_pairs = _required(fields.Integer)
    elo = _required(fields.Float, metadata={"description": "the challenger's logistic Elo "
                                                           "over the baseline"})
    elo_low = _required(fields.Float, metadata={"description": "95% interval"})
    elo_high = _required(fields.Float)
    history = _required(fields.List, fields.List(JsonNumber()), metadata={
        "description": "[pairs counted, LLR, the pair's pentanomial bucket 0-4] after each "
                       "counted pair, in the order they were counted"})


class SwissPairingSchema(Schema):
    bots = _required(fields.List, fields.String(), metadata={
        "description": "the higher-placed bot first; it takes seat 0 in the first match"})
    matches = _required(fields.List, fields.String())


class SwissRoundSchema(Schema):
    round = _required(fields.Integer)
    bye = _required(fields.String, allow_none=True)
    pairings = _required(fields.List, fields.Nested(SwissPairingSchema))


class SwissStandingSchema(TournamentBotSchema):
    rank = _required(fields.Integer)
    points = _required(fields.Float, metadata={
        "description": "pair scores of its matches (1 ahead, 0.5 tied), 2 per bye"})
    buchholz = _required(fields.Float, metadata={
        "description": "the sum of its opponents' points, the tie-break"})
    opponents = _required(fields.List, fields.String())
    byes = _required(fields.Integer)


class SwissSchema(Schema):
    rounds = _required(fields.List, fields.Nested(SwissRoundSchema))
    standings = _required(fields.List, fields.Nested(SwissStandingSchema))


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
    faults = _required(fields.Dict, keys=fields.String(), values=SafeInteger(),
                       metadata={"description": "bot id -> faults committed"})
    ratings = _required(fields.List, fields.Nested(TournamentRatingSchema), allow_none=True,
                        metadata={"description": "Bradley-Terry maximum likelihood with 95% "
                                                 "intervals, once every match is over"})
    solo_ranking = _required(fields.List, fields.Nested(SoloRankingSchema), allow_none=True,
                             metadata={"description": "solo tournaments, once over: average "
                                                      "score with its 95% interval"})
    matches = _required(fields.List, fields.String(), metadata={
        "description": f"the first {MAX_PAGE} match ids in schedule order; every match, "
                       "a page at a time: GET /tournaments/{id}/matches"})
    matches_total = _required(fields.Integer, metadata={"description": "matches scheduled"})
    deals = _required(fields.String, validate=validate.OneOf(DEALS))
    challenger = _required(fields.String, allow_none=True, metadata={
        "description": "gauntlet and sprt: the challenger's bot id"})
    sprt = _required(fields.Nested, SprtSchema, allow_none=True)
    swiss = _required(fields.Nested, SwissSchema, allow_none=True)


class MatchCountedEventSchema(Schema):
    """`match` of `GET /tournaments/{id}/events`: a match of the tournament is over and
    counted."""

    match_id = _required(fields.String)
    tournament_id = _required(fields.String)
    status = _required(fields.String, validate=validate.OneOf(["finished", "failed"]))
    seats = _required(fields.List, fields.Nested(SeatInfoSchema))
    result = _required(fields.Nested, ResultSchema, allow_none=True)
    forfeit = _required(fields.Nested, ForfeitSchema, allow_none=True)
    steps = _required(fields.Integer)


class StandingsEventSchema(Schema):
    """`standings` (first on connecting, then after each `match`) and `finished` (the
    last, once the final ratings are stored): the tournament's table as
    `GET /tournaments/{id}` shows it, without its list of matches."""

    id = _required(fields.String)
    status = _required(fields.String, validate=validate.OneOf(["running", "finished"]))
    progress = _required(fields.Nested, TournamentProgressSchema)
    standings = _required(fields.List, fields.Nested(StandingSchema))
    cross_table = _required(fields.Nested, CrossTableSchema)
    faults = _required(fields.Dict, keys=fields.String(), values=SafeInteger())
    ratings = _required(fields.List, fields.Nested(TournamentRatingSchema), allow_none=True)
    solo_ranking = _required(fields.List, fields.Nested(SoloRankingSchema), allow_none=True)
    sprt = _required(fields.Nested, SprtSchema, allow_none=True)
    swiss = _required(fields.Nested, SwissSchema, allow_none=True)
    seed = _required(fields.Integer, allow_none=True)
    finished_at = _required(fields.String, allow_none=True)


class TournamentListSchema(PageSchema):
    tournaments = _required(fields.List, fields.Nested(TournamentSummarySchema))


class LeaderboardEntrySchema(TournamentBotSchema):
    rating = _required(fields.Float, metadata={"description": "live Elo"})
    low = _required(fields.Float, allow_none=True, metadata={
        "description": "the bot's latest tournament's Bradley-Terry 95% interval, centred on "
                       "the live Elo; null when it played no finished tournament"})
    high = _required(fields.Float, allow_none=True)
    games = _required(fields.Integer, metadata={"description": "rated matches"})


class RatingsSchema(PageSchema):
    game = _required(fields.String)
    leaderboard = _required(fields.List, fields.Nested(LeaderboardEntrySchema), metadata={
        "description": "bots by live Elo, best first; each bot's history: "
                       "GET /ratings/{game}/history?bot={bot_id}"})


MAX_HISTORY_PAGE = 1000


class HistoryQuerySchema(Schema):
    bot = fields.String(required=True, validate=validate.Length(min=1, max=100),
                        metadata={"description": "the bot's id"})
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_OFFSET),
                            metadata={"description": "points to skip (oldest first); the "
                                                     "latest L points: offset = games - L"})
    limit = fields.Integer(load_default=200, validate=validate.Range(min=1,
                                                                      max=MAX_HISTORY_PAGE))


class RatingHistorySchema(PageSchema):
    game = _required(fields.String)
    bot_id = _required(fields.String)
    history = _required(fields.List, fields.List(JsonNumber(), validate=validate.Length(
        equal=2)), metadata={"description": "[n, Elo after the bot's n-th rated match], n "
                                            "from offset + 1; total: its rated matches"})
