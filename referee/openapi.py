"""Builds the OpenAPI 3.1 description of the API from the marshmallow schemas.

The component schemas come from `referee.schemas` (apispec's marshmallow plugin), so the
spec cannot drift from the bodies the views load and dump; the paths are declared here.
`python -m referee.openapi > openapi.yaml` writes the committed file, and a test fails
when the committed file differs from what this module builds.
"""

from __future__ import annotations

import sys

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin

from . import schemas
from .problems import MEDIA_TYPE

TITLE = "game-referee API"
VERSION = "1.0.0"
DESCRIPTION = """A referee for tabletop games played by bots over HTTP.

Every error is `application/problem+json` with `type`, `title`, `status`, `detail`, and
for validation errors `errors` (field -> messages). Admin writes need the admin token and
pull-seat requests the seat's token, both as `Authorization: Bearer <token>`.
"""

ERROR_TEXT = {
    400: "malformed JSON or invalid fields (named in `errors`)",
    401: "no bearer token (an Authorization header of another scheme is no token)",
    403: "a token that does not grant this (POST /bots: also a bot host off the allowlist)",
    404: "no such resource",
    408: "the request body did not arrive whole within 10 s (`referee serve`)",
    409: "out of turn, stale step, or the match is over",
    413: "request body too large",
    422: "the move breaks a rule; `detail` gives the engine's reason",
    429: "too many moves with this token (REFEREE_MOVE_RATE); retry after `Retry-After` s",
    500: "internal error (no internals are disclosed)",
    503: "Redis is unreachable",
}

URI_TOO_LONG = ("request line over 4094 bytes: refused by the HTTP server (gunicorn) before "
                "the API sees it, as HTML")

MATCH_ID = {"name": "match_id", "in": "path", "required": True, "schema": {"type": "string"}}
BOT_ID = {"name": "bot_id", "in": "path", "required": True, "schema": {"type": "string"}}
STEP = {"name": "step", "in": "path", "required": True,
        "schema": {"type": "integer", "minimum": 0}}
GAME = {"name": "game", "in": "path", "required": True, "schema": {"type": "string"}}
TOURNAMENT_ID = {"name": "tournament_id", "in": "path", "required": True,
                 "schema": {"type": "string"}}


def operation(summary: str, tag: str, ok: tuple[int, type | None], errors: tuple[int, ...],
              *, body: type | None = None, security: str | None = None,
              optional_security: bool = False, parameters: list | None = None,
              description: str | None = None) -> dict:
    """One operation: its success response, its problem responses, body and security."""
    responses = {str(ok[0]): _success(ok[1])}
    for status in sorted({*errors, 500, *((408,) if body else ())}):
        responses[str(status)] = {"description": ERROR_TEXT[status],
                                  "content": {MEDIA_TYPE: {"schema": schemas.ProblemSchema}}}
    responses["414"] = {"description": URI_TOO_LONG, "content": {"text/html": {
        "schema": {"type": "string"}}}}
    if 429 in errors:
        responses["429"]["headers"] = {"Retry-After": {
            "description": "seconds until the token may post again",
            "schema": {"type": "integer", "minimum": 1}}}
    op: dict = {"summary": summary, "tags": [tag], "responses": responses}
    if description:
        op["description"] = description
    if parameters:
        op["parameters"] = parameters
    if body:
        op["requestBody"] = {"required": True,
                             "content": {"application/json": {"schema": body}}}
    if security:
        op["security"] = [{security: []}, {}] if optional_security else [{security: []}]
    return op


def _success(schema: type | None) -> dict:
    if schema is None:
        return {"description": "the OpenAPI description of this API",
                "content": {"application/yaml": {}}}
    return {"description": "success", "content": {"application/json": {"schema": schema}}}


def paths() -> dict[str, dict]:
    return {
        "/health": {"get": operation(
            "Liveness and Redis reachability", "health", (200, schemas.HealthSchema), (503,))},
        "/openapi.yaml": {"get": operation(
            "This description", "health", (200, None), ())},
        "/games": {"get": operation(
            "The registered games", "games", (200, schemas.GameListSchema), ())},
        "/games/{game}": {"get": operation(
            "A game: player counts, options, components, action reference", "games",
            (200, schemas.GameDetailSchema), (404,), parameters=[GAME])},
        "/bots": {
            "post": operation("Register a push bot (admin)", "bots", (201, schemas.BotSchema),
                              (400, 401, 403, 413), body=schemas.BotCreateSchema,
                              security="admin",
                              description="The URL must be unambiguous (the `url` pattern; "
                                          "no credentials): 400 saying why otherwise. A "
                                          "host off the allowlist (REFEREE_BOT_HOSTS) is "
                                          "a 403."),
            "get": operation("The registered bots", "bots", (200, schemas.BotListSchema), ()),
        },
        "/bots/{bot_id}": {"get": operation(
            "A registered bot", "bots", (200, schemas.BotSchema), (404,), parameters=[BOT_ID])},
        "/matches": {
            "post": operation(
                "Start a match (admin)", "matches", (201, schemas.MatchCreatedSchema),
                (400, 401, 403, 413), body=schemas.MatchCreateSchema, security="admin",
                description="Answers at once; an rq worker plays the match. Each pull seat "
                            "gets a token, shown only in this answer."),
            "get": operation("The matches, newest first", "matches",
                             (200, schemas.MatchListSchema), (400,),
                             parameters=[{"in": "query", "schema": schemas.MatchListQuerySchema}],
                             security="admin", optional_security=True),
        },
        "/matches/{match_id}": {"get": operation(
            "A match: status, whose turn, step, result when over", "matches",
            (200, schemas.MatchSchema), (404,), parameters=[MATCH_ID], security="admin",
            optional_security=True,
            description="The seed is null until the match is over, unless the admin asks.")},
        "/matches/{match_id}/observation": {"get": operation(
            "A pull seat's view and legal actions (seat token)", "seats",
            (200, schemas.ObservationSchema),
            (401, 403, 404), parameters=[MATCH_ID], security="seat")},
        "/matches/{match_id}/actions": {"post": operation(
            "A pull seat's move (seat token)", "seats", (200, schemas.MoveAcceptedSchema),
            (400, 401, 403, 404, 409, 413, 422, 429), body=schemas.MoveSchema,
            parameters=[MATCH_ID], security="seat",
            description="Checked against the live state: turn (409), step (409), rules "
                        "(422), rate (429, per token, REFEREE_MOVE_RATE). The answer waits "
                        "briefly until the runner has played it.")},
        "/matches/{match_id}/replay": {"get": operation(
            "The replay record (while the match runs: admin only)", "replays",
            (200, schemas.ReplaySchema), (401, 403, 404), parameters=[MATCH_ID],
            security="admin", optional_security=True,
            description="Served as an attachment: the file `referee verify` checks.")},
        "/matches/{match_id}/replay/{step}": {"get": operation(
            "A step as a seat (or a spectator) saw it", "replays", (200, schemas.ReplayStepSchema),
            (400, 401, 403, 404),
            parameters=[MATCH_ID, STEP, {"in": "query", "schema": schemas.ReplayStepQuerySchema}],
            security="admin", optional_security=True,
            description="With `seat`: exactly the observation that seat had before the "
                        "decision of `step`; without: what every seat could see.")},
        "/replays/verify": {"post": operation(
            "Re-run a replay and check its steps, result, chain and signature", "replays",
            (200, schemas.VerifyReportSchema), (400, 413, 422), body=schemas.ReplaySchema,
            description="422 when the replay was made under another game version (or an "
                        "unknown game or format): refused rather than mis-verified.")},
        **tournament_paths(),
    }


def tournament_paths() -> dict[str, dict]:
    return {
        "/tournaments": {
            "post": operation(
                "Start a round-robin tournament (admin)", "tournaments",
                (201, schemas.TournamentSchema), (400, 401, 403, 413),
                body=schemas.TournamentCreateSchema, security="admin",
                description="Every combination of `players` bots plays in every seat rotation "
                            "on one derived seed, `rounds` times; one rq job per match."),
            "get": operation("The tournaments, newest first", "tournaments",
                             (200, schemas.TournamentListSchema), (400,),
                             parameters=[{"in": "query", "schema": schemas.ListQuerySchema}]),
        },
        "/tournaments/{tournament_id}": {"get": operation(
            "Progress, standings, cross-table, faults; final ratings once over", "tournaments",
            (200, schemas.TournamentSchema), (404,), parameters=[TOURNAMENT_ID],
            security="admin", optional_security=True,
            description="The seed is null until the tournament is over, unless the admin "
                        "asks. Reading it also queues again any match whose worker died.")},
        "/ratings/{game}": {"get": operation(
            "A game's leaderboard (live Elo, interval, games) and rating history", "ratings",
            (200, schemas.RatingsSchema), (404,), parameters=[GAME])},
    }


def build_spec() -> APISpec:
    marshmallow_plugin = MarshmallowPlugin()
    spec = APISpec(TITLE, VERSION, "3.1.0", plugins=[marshmallow_plugin],
                   info={"description": DESCRIPTION})
    marshmallow_plugin.map_to_openapi_type(schemas.JsonNumber, "number", None)
    for name in sorted(n for n in dir(schemas) if n.endswith("Schema") and n != "Schema"):
        schema = getattr(schemas, name)
        component = name.removesuffix("Schema")
        registered = component in spec.components.schemas  # already added as a nested one
        if isinstance(schema, type) and issubclass(schema, schemas.Schema) and not registered:
            spec.components.schema(component, schema=schema)
    for kind in ("admin", "seat"):
        spec.components.security_scheme(kind, {
            "type": "http", "scheme": "bearer",
            "description": f"the {kind} token as `Authorization: Bearer <token>`"})
    for path, operations in paths().items():
        spec.path(path=path, operations=operations)
    return spec


def spec_yaml() -> str:
    return build_spec().to_yaml()


if __name__ == "__main__":
    sys.stdout.write(spec_yaml())
