"""How a resource module describes its operations for `openapi.yaml`: `operation()` builds
one (its operationId, success and problem responses, body, security), `link()` points an
answer at another operation, and the parameters several resources share.

Each resource module declares `PATHS` (path -> method -> operation) beside its routes and
schemas; `referee.api.openapi` assembles them.
"""

from __future__ import annotations

from werkzeug.routing import BaseConverter

from referee.api.common import ListQuerySchema, ProblemSchema
from referee.api.problems import MEDIA_TYPE
from tournament.store.keys import ID_PATTERN

ERROR_TEXT = {
    400: "malformed JSON or invalid fields (named in `errors`)",
    401: "no bearer token (an Authorization header of another scheme is no token)",
    403: "a token that does not grant this (POST /bots: also a bot host off the allowlist)",
    404: "no such resource (a retired bot too: `GET /bots` still lists it)",
    408: "the request body did not arrive whole within 10 s (`referee serve`)",
    409: "conflicts with the current state: out of turn, stale step, match over, a bot name "
         "already registered (`detail` names its id), a retired bot",
    413: "request body too large",
    422: ("well formed but refused on what it means (`detail` says why): a move that "
          "breaks a rule, a bot not registered or not playing the game, a tournament over "
          "5,000 matches or with too few bots, a replay of another rules version, a hosted "
          "bot's source whose paths, entry file, archive or size are refused"),
    429: "too many moves with this token (REFEREE_MOVE_RATE); retry after `Retry-After` s",
    500: "internal error (no internals are disclosed)",
    503: "Redis is unreachable",
}
REPLAY_503 = ("Redis is unreachable, or the stored replay is out of this server's reach (an "
              "archived replay without REFEREE_ARCHIVE_DIR, or one stored under another "
              "engine version)")
URI_TOO_LONG = ("request line over 4094 bytes: refused by the HTTP server (gunicorn) before "
                "the API sees it")

PAGE = {"in": "query", "schema": ListQuerySchema}


def path_parameter(name: str, schema: dict | None = None) -> dict:
    """A path parameter (a string unless `schema` says otherwise)."""
    return {"name": name, "in": "path", "required": True,
            "schema": schema or {"type": "string"}}


class IdConverter(BaseConverter):
    """`<id:...>` in a route: a record's id (`ID_PATTERN`); any other text in its place is
    no route, a 404, before it can name a Redis key."""

    regex = ID_PATTERN


def id_parameter(name: str) -> dict:
    """A path parameter that is a record's id, as `IdConverter` matches it."""
    return path_parameter(name, {"type": "string", "pattern": f"^{ID_PATTERN}$"})


MATCH_ID = id_parameter("match_id")
GAME = path_parameter("game")
TOURNAMENT_ID = id_parameter("tournament_id")


def operation(operation_id: str, summary: str, tag: str, ok: tuple[int, type | dict],
              errors: tuple[int, ...],
              *, body: type | None = None, security: str | tuple[str, ...] | None = None,
              optional_security: bool = False, parameters: list | None = None,
              description: str | None = None, links: dict | None = None,
              error_text: dict[int, str] | None = None) -> dict:
    """One operation: its stable id (what generated clients name their method), its
    success response (a schema class, or the response itself) with the operations its
    answer `links` to, its problem responses (`error_text` says what a status means here,
    when it differs), body and security."""
    responses = {str(ok[0]): _success(ok[1])}
    if links:
        responses[str(ok[0])]["links"] = links
    text = {**ERROR_TEXT, **(error_text or {})}
    # a token is optional, but one given is checked: a suspended account's is a 403
    implied = (500, *((408,) if body else ()), *((403,) if optional_security else ()))
    for status in sorted({*errors, *implied}):
        responses[str(status)] = {"description": text[status],
                                  "content": {MEDIA_TYPE: {"schema": ProblemSchema}}}
    responses["414"] = {"description": URI_TOO_LONG,
                        "content": {MEDIA_TYPE: {"schema": ProblemSchema}}}
    if 429 in errors:
        responses["429"]["headers"] = {"Retry-After": {
            "description": "seconds until the request may be made again",
            "schema": {"type": "integer", "minimum": 1}}}
    op: dict = {"operationId": operation_id, "summary": summary, "tags": [tag],
                "responses": responses}
    if description:
        op["description"] = description
    if parameters:
        op["parameters"] = parameters
    if body:
        op["requestBody"] = {"required": True,
                             "content": {"application/json": {"schema": body}}}
    if security:
        names = (security,) if isinstance(security, str) else security
        schemes: list[dict[str, list]] = [{name: []} for name in names]
        op["security"] = [*schemes, {}] if optional_security else schemes
    return op


def link(operation_id: str, **parameters: str) -> dict:
    """An OpenAPI link to the operation `operation_id`, its parameters taken from the
    answer (e.g. `match_id="$response.body#/id"`): clients and schemathesis' stateful
    phase follow it."""
    return {"operationId": operation_id, "parameters": parameters}


def component_name(schema: type) -> str:
    """The name of a marshmallow schema class's component: `MatchSchema` is `Match`."""
    return schema.__name__.removesuffix("Schema")


def component_ref(schema: type) -> dict:
    return {"$ref": f"#/components/schemas/{component_name(schema)}"}


def _success(schema: type | dict) -> dict:
    if isinstance(schema, dict):
        return schema
    return {"description": "success", "content": {"application/json": {"schema": schema}}}
