"""The referee's errors: `RefereeError`, the base of its own exceptions (the engines' are
`engines.EngineError`), and the catalogue of every problem type the API answers (RFC 9457
`type`, HTTP status, title, meaning), with the type answering each engine error code.

A leaf module (the standard library and the engines only): the match core, the runtime and
the API all use it. `openapi.yaml` lists the catalogue in the Problem schema.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import engines

TYPE_BASE = "/problems/"


class RefereeError(Exception):
    """Base of every exception the referee defines."""


@dataclass(frozen=True)
class ProblemType:
    """A problem `type` of the API: its slug (the URI is `/problems/{slug}`), the HTTP status
    it answers with (None: the status of the HTTP error it stands for), its title, and what
    it means (documented in openapi.yaml)."""

    slug: str
    status: int | None
    title: str
    meaning: str

    @property
    def uri(self) -> str:
        return TYPE_BASE + self.slug


REQUEST_MALFORMED = ProblemType(
    "request/malformed", 400, "Bad Request",
    "an HTTP request the server cannot read: a request line, header or chunked body that "
    "breaks HTTP/1.1")
REQUEST_INVALID = ProblemType(
    "request/invalid", 400, "Invalid request",
    "malformed JSON, invalid fields (named in `errors`), or a setup the game refuses")
ACTION_INVALID = ProblemType(
    engines.InvalidAction.code, 400, "Invalid action",
    "a move that fails the game's action schema (a push bot's `malformed` fault)")
AUTH_MISSING_TOKEN = ProblemType(
    "auth/missing-token", 401, "Unauthorized", "no bearer token")
AUTH_FORBIDDEN = ProblemType(
    "auth/forbidden", 403, "Forbidden", "a token that does not grant this request")
AUTH_SCOPE_MISSING = ProblemType(
    "auth/scope-missing", 403, "Forbidden",
    "an account token without the scope this request needs (named in `scope`)")
BOT_NOT_PUBLIC = ProblemType(
    "bot/not-public", 403, "Forbidden",
    "another account's bot that is not public, seated by an account")
SIGNUP_REFUSED = ProblemType(
    "account/signup-refused", 403, "Forbidden",
    "an account asked for that this server's sign-up mode (REFEREE_SIGNUP) does not allow: "
    "closed, or an invite code that is missing, used or unknown")
BOT_HOST_NOT_ALLOWED = ProblemType(
    "bot/host-not-allowed", 403, "Forbidden",
    "a bot URL whose host is off the allowlist (REFEREE_BOT_HOSTS)")
NOT_FOUND = ProblemType("not-found", 404, "Not Found", "no such resource")
METHOD_NOT_ALLOWED = ProblemType(
    "method-not-allowed", 405, "Method Not Allowed",
    "a method the path does not serve (`Allow` lists those it does)")
REQUEST_TIMEOUT = ProblemType(
    "request/timeout", 408, "Request Timeout",
    "the request body did not arrive whole in time (`referee serve`)")
BOT_RETIRED = ProblemType(
    "bot/retired", 409, "Conflict", "a retired bot named for a new match or tournament")
BOT_RETIRED_NOT_FOUND = replace(
    BOT_RETIRED, status=404, title="Not Found",
    meaning="the bot asked for is retired (`GET /bots` still lists it)")
BOT_NAME_TAKEN = ProblemType(
    "bot/name-taken", 409, "Conflict",
    "a bot name already registered, without regard to case (`detail` names that bot)")
ACCOUNT_NAME_TAKEN = ProblemType(
    "account/name-taken", 409, "Conflict",
    "an account name already taken, without regard to case")
BOT_OWNER_SUSPENDED = ProblemType(
    "bot/owner-suspended", 409, "Conflict",
    "a bot of a suspended account named for a new match or tournament")
BOT_NOT_READY = ProblemType(
    "bot/not-ready", 409, "Conflict",
    "a hosted bot whose current version is not built (building, or build_failed) named for "
    "a new match, tournament or ladder")
MATCH_OVER = ProblemType("match/over", 409, "Conflict", "a move for a match that is over")
ACTION_OUT_OF_TURN = ProblemType(
    "action/out-of-turn", 409, "Conflict", "a move by a seat whose turn it is not")
ACTION_STALE_STEP = ProblemType(
    "action/stale-step", 409, "Conflict",
    "a move answering a step that is not the current one, or already answered")
EVENTS_STEP_NOT_RECORDED = ProblemType(
    "events/step-not-recorded", 409, "Step not recorded yet",
    "a stream resumed after a step the running match has not recorded")
OBSERVATION_LOG_AHEAD = ProblemType(
    "observation/log-ahead", 409, "Conflict",
    "an observation asked from a log entry past the entries the seat's log has")
REQUEST_TOO_LARGE = ProblemType(
    "request/too-large", 413, "Request Entity Too Large", "a request body over the limit")
REQUEST_LINE_TOO_LONG = ProblemType(
    "request/line-too-long", 414, "URI Too Long",
    "a request line longer than the server reads (`referee serve`'s limit)")
UNSUPPORTED_MEDIA_TYPE = ProblemType(
    "request/unsupported-media-type", 415, "Unsupported Media Type",
    "a body of a media type the path does not take")
EXPECTATION_FAILED = ProblemType(
    "request/expectation-failed", 417, "Expectation Failed",
    "an `Expect` header other than `100-continue`")
REQUEST_UNPROCESSABLE = ProblemType(
    "request/unprocessable", 422, "Unprocessable request",
    "well formed but refused on what it means, which no schema can say (fields in `errors`)")
ACTION_ILLEGAL = ProblemType(
    engines.IllegalAction.code, 422, "Illegal action",
    "a well-formed move that breaks a rule (a push bot's `illegal` fault)")
REPLAY_UNSUPPORTED = ProblemType(
    "replay/unsupported", 422, "Replay cannot be verified here",
    "a replay of another rules version, or of an unknown game or format")
ACTION_RATE_LIMITED = ProblemType(
    "action/rate-limited", 429, "Too Many Requests",
    "too many moves with one seat token (REFEREE_MOVE_RATE); retry after `Retry-After` s")
VERIFY_RATE_LIMITED = ProblemType(
    "replay/rate-limited", 429, "Too Many Requests",
    "too many replays verified from one client address (REFEREE_VERIFY_RATE); retry after "
    "`Retry-After` s")
STREAMS_TOO_MANY = ProblemType(
    "stream/too-many", 429, "Too Many Requests",
    "too many live streams open from one client address (REFEREE_STREAMS_PER_ADDRESS); "
    "close one, or retry after `Retry-After` s")
STREAMS_SERVER_FULL = ProblemType(
    "stream/server-full", 503, "Service Unavailable",
    "this API process holds all the live streams it may (REFEREE_STREAMS_PER_PROCESS); retry "
    "after `Retry-After` s")
QUOTA_EXCEEDED = ProblemType(
    "quota/exceeded", 429, "Too Many Requests",
    "over one of the account's quotas (`quota`, its `limit`, `remaining` 0); retry after "
    "`Retry-After` s")
SIGNUP_RATE_LIMITED = ProblemType(
    "account/rate-limited", 429, "Too Many Requests",
    "too many accounts asked for from one client address (REFEREE_SIGNUP_RATE); retry after "
    "`Retry-After` s")
LOG_NOT_LOGGED = ProblemType(
    "log/not-logged", 404, "Not Found",
    "a match that has no leaf in the results log: not finished (yet), or failed")
LOG_OUT_OF_RANGE = ProblemType(
    "log/out-of-range", 409, "Conflict",
    "a tree size or leaf the results log does not have (yet), or a first tree larger than "
    "the second")
REQUEST_HEADERS_TOO_LARGE = ProblemType(
    "request/headers-too-large", 431, "Request Header Fields Too Large",
    "more header fields than the server reads, or one too long (`referee serve`'s limits)")
HTTP_ERROR = ProblemType(
    "http-error", None, "HTTP error", "any other HTTP error, with its status and name")
INTERNAL = ProblemType(
    "internal", 500, "Internal Server Error", "the server failed (the error is logged)")
TRANSFER_CODING_UNSUPPORTED = ProblemType(
    "request/transfer-coding-unsupported", 501, "Not Implemented",
    "a `Transfer-Encoding` other than chunked, gzip, deflate, compress and identity")
REDIS_UNREACHABLE = ProblemType(
    "redis/unreachable", 503, "Service Unavailable", "the referee's Redis does not answer")
REPLAY_UNAVAILABLE = ProblemType(
    "replay/unavailable", 503, "Service Unavailable",
    "a stored replay this server cannot read now (archived out of reach, or stored under "
    "another engine version)")

CATALOGUE: tuple[ProblemType, ...] = (
    REQUEST_MALFORMED, REQUEST_INVALID, ACTION_INVALID, AUTH_MISSING_TOKEN, AUTH_FORBIDDEN,
    AUTH_SCOPE_MISSING, BOT_NOT_PUBLIC, SIGNUP_REFUSED, ACCOUNT_NAME_TAKEN, BOT_OWNER_SUSPENDED,
    QUOTA_EXCEEDED, SIGNUP_RATE_LIMITED, BOT_HOST_NOT_ALLOWED, NOT_FOUND, BOT_RETIRED_NOT_FOUND,
    METHOD_NOT_ALLOWED,
    REQUEST_TIMEOUT, BOT_RETIRED, BOT_NAME_TAKEN, BOT_NOT_READY, MATCH_OVER, ACTION_OUT_OF_TURN,
    ACTION_STALE_STEP, EVENTS_STEP_NOT_RECORDED, OBSERVATION_LOG_AHEAD, REQUEST_TOO_LARGE,
    REQUEST_LINE_TOO_LONG, UNSUPPORTED_MEDIA_TYPE, EXPECTATION_FAILED,
    REQUEST_UNPROCESSABLE, ACTION_ILLEGAL, REPLAY_UNSUPPORTED, ACTION_RATE_LIMITED,
    VERIFY_RATE_LIMITED, STREAMS_TOO_MANY, STREAMS_SERVER_FULL, REQUEST_HEADERS_TOO_LARGE,
    LOG_NOT_LOGGED, LOG_OUT_OF_RANGE,
    HTTP_ERROR, INTERNAL, TRANSFER_CODING_UNSUPPORTED, REDIS_UNREACHABLE, REPLAY_UNAVAILABLE,
)
"""Every problem type the API answers."""

HTTP_PROBLEMS: dict[int | None, ProblemType] = {
    kind.status: kind for kind in (REQUEST_MALFORMED, AUTH_MISSING_TOKEN, AUTH_FORBIDDEN,
                                   NOT_FOUND, METHOD_NOT_ALLOWED, REQUEST_TOO_LARGE,
                                   UNSUPPORTED_MEDIA_TYPE)}
"""The type of an HTTP error (werkzeug's) by its status; `HTTP_ERROR` for any other."""

ENGINE_PROBLEMS: dict[str, ProblemType] = {
    engines.InvalidAction.code: ACTION_INVALID,
    engines.IllegalAction.code: ACTION_ILLEGAL,
    engines.UnknownGame.code: NOT_FOUND,
    engines.InvalidSetup.code: REQUEST_INVALID,
    engines.UnknownVersion.code: NOT_FOUND,
    engines.InvalidState.code: REQUEST_INVALID,
}
"""The type answering an engine's refusal, by the error's `code`."""


def engine_problem_type(error: engines.EngineError) -> ProblemType:
    """The type answering `error`: that of its code, else of the nearest base class's (a
    new kind of engine error refines a known one); an engine error of no known kind is
    the server's failure."""
    for kind in type(error).__mro__:
        code = getattr(kind, "code", None)
        if code in ENGINE_PROBLEMS:
            return ENGINE_PROBLEMS[code]
    return INTERNAL
