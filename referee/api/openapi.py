"""Builds the OpenAPI 3.1 description of the API from the marshmallow schemas.

The component schemas come from `referee.api.schemas` (apispec's marshmallow plugin), so the
spec cannot drift from the bodies the views load and dump; the paths are declared here.
`python -m referee.api.openapi > openapi.yaml` writes the committed file, and a test fails
when the committed file differs from what this module builds.
"""

from __future__ import annotations

import sys

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin

import engines
from referee.api import schemas
from referee.api.problems import MEDIA_TYPE

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
    404: "no such resource (a retired bot too: `GET /bots` still lists it)",
    408: "the request body did not arrive whole within 10 s (`referee serve`)",
    409: "conflicts with the current state: out of turn, stale step, match over, a bot name "
         "already registered (`detail` names its id), a retired bot",
    413: "request body too large",
    422: ("well formed but refused on what it means (`detail` says why): a move that "
          "breaks a rule, a bot not registered or not playing the game, a tournament over "
          "5,000 matches or with too few bots, a replay of another rules version"),
    429: "too many moves with this token (REFEREE_MOVE_RATE); retry after `Retry-After` s",
    500: "internal error (no internals are disclosed)",
    503: "Redis is unreachable",
}
REPLAY_503 = ("Redis is unreachable, or the stored replay is out of this server's reach (an "
              "archived replay without REFEREE_ARCHIVE_DIR, or one stored under another "
              "engine version)")
PAGE = {"in": "query", "schema": schemas.ListQuerySchema}

URI_TOO_LONG = ("request line over 4094 bytes: refused by the HTTP server (gunicorn) before "
                "the API sees it, as HTML")

MATCH_ID = {"name": "match_id", "in": "path", "required": True, "schema": {"type": "string"}}
BOT_ID = {"name": "bot_id", "in": "path", "required": True, "schema": {"type": "string"}}
STEP = {"name": "step", "in": "path", "required": True,
        "schema": {"type": "integer", "minimum": 0}}
GAME = {"name": "game", "in": "path", "required": True, "schema": {"type": "string"}}
TOURNAMENT_ID = {"name": "tournament_id", "in": "path", "required": True,
                 "schema": {"type": "string"}}


def operation(summary: str, tag: str, ok: tuple[int, type | dict | None],
              errors: tuple[int, ...],
              *, body: type | None = None, security: str | None = None,
              optional_security: bool = False, parameters: list | None = None,
              description: str | None = None, links: dict | None = None,
              error_text: dict[int, str] | None = None) -> dict:
    """One operation: its success response (with the operations its answer `links` to),
    its problem responses (`error_text` says what a status means here, when it differs),
    body and security."""
    responses = {str(ok[0]): _success(ok[1])}
    if links:
        responses[str(ok[0])]["links"] = links
    text = {**ERROR_TEXT, **(error_text or {})}
    for status in sorted({*errors, 500, *((408,) if body else ())}):
        responses[str(status)] = {"description": text[status],
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


METRICS_TEXT = {
    "description": "the whole cluster's metrics in the Prometheus text format (OpenMetrics "
                   "when the Accept header asks for it); docs/operations.md lists them",
    "content": {"text/plain": {"schema": {"type": "string"}}, "application/openmetrics-text": {}}}


LAST_EVENT_ID = {
    "name": "Last-Event-ID", "in": "header", "required": False,
    "schema": {"type": "string", "pattern": f"^([0-9]{{1,{schemas.LAST_EVENT_ID_DIGITS}}})?$"},
    "description": "resume after this step: the steps after it, no `start` (EventSource "
                   "sends it when it reconnects); empty, as if absent. A step not recorded "
                   "yet of a match not over is a 409 (no event carried its id)"}
SSE_FORMAT = ("One Server-Sent Event (the stream starts with `retry: 3000` and has a "
              "comment `: ping` every 15 s): its `event` name, its `id` where it has one "
              "(a step's number), and its `data`, one line of JSON following the schema of "
              "its event (`contentSchema`).")


def event_stream(summary: str, events: dict[str, str]) -> dict:
    """A 200 answer that is a stream of Server-Sent Events. As OpenAPI 3.2's `itemSchema`
    (and schemathesis with a 3.1 `schema`), the schema is that of one event; `events`
    maps each event's name to the component its JSON data follows."""
    return {"description": summary, "content": {"text/event-stream": {"schema": {
        "type": "object", "description": SSE_FORMAT, "required": ["event", "data"],
        "properties": {
            "event": {"enum": list(events)},
            "id": {"type": "string", "pattern": "^[0-9]+$"},
            "retry": {"type": "integer"},
            "data": {"type": "string", "contentMediaType": "application/json"}},
        "oneOf": [{"properties": {
            "event": {"const": name},
            "data": {"contentSchema": {"$ref": f"#/components/schemas/{component}"}}}}
            for name, component in events.items()]}}}}


def link(path: str, method: str = "get", **parameters: str) -> dict:
    """An OpenAPI link to the operation `method path`, its parameters taken from the
    answer (e.g. `match_id="$response.body#/id"`): clients and schemathesis' stateful
    phase follow it."""
    pointer = path.replace("~", "~0").replace("/", "~1")
    return {"operationRef": f"#/paths/{pointer}/{method}", "parameters": parameters}


def _match_links(match_id: str) -> dict:
    """Where a match's id leads."""
    return {"GetMatch": link("/matches/{match_id}", match_id=match_id),
            "GetObservation": link("/matches/{match_id}/observation", match_id=match_id),
            "GetReplay": link("/matches/{match_id}/replay", match_id=match_id),
            "GetFirstStep": link("/matches/{match_id}/replay/{step}", match_id=match_id,
                                 step="0")}


def _success(schema: type | dict | None) -> dict:
    if isinstance(schema, dict):
        return schema
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
        "/metrics": {"get": {**operation(
            "Metrics for Prometheus (admin or metrics token)", "health", (200, METRICS_TEXT),
            (401, 403, 503)), "security": [{"admin": []}, {"metrics": []}]}},
        "/games": {"get": operation(
            "The registered games", "games", (200, schemas.GameListSchema), ())},
        "/games/{game}": {"get": operation(
            "A game: player counts, options, components, action reference", "games",
            (200, schemas.GameDetailSchema), (404,), parameters=[GAME])},
        "/bots": {
            "post": operation("Register a push bot (admin)", "bots",
                              (201, schemas.BotCreatedSchema), (400, 401, 403, 409, 413),
                              body=schemas.BotCreateSchema, security="admin",
                              links={"GetBot": link("/bots/{bot_id}",
                                                    bot_id="$response.body#/id")},
                              description="The URL must be unambiguous (the `url` pattern; "
                                          "no credentials): 400 saying why otherwise. A "
                                          "host off the allowlist (REFEREE_BOT_HOSTS) is "
                                          "a 403. A name already registered (without "
                                          "regard to case; retired bots included) is a 409 "
                                          "naming that bot's id. The answer holds the bot's "
                                          "`secret`, the key of the signatures on the "
                                          "referee's requests: shown here only."),
            "get": operation("The registered bots, retired ones included (a page)", "bots",
                             (200, schemas.BotListSchema), (400,), parameters=[PAGE]),
        },
        "/bots/{bot_id}": {
            "get": operation("A registered bot", "bots", (200, schemas.BotSchema), (404,),
                             parameters=[BOT_ID],
                             description="404 too once the bot is retired (`detail` says so; "
                                         "`GET /bots` still lists it, with `retired_at`)."),
            "patch": operation(
                "Change a bot's name or URL (admin)", "bots", (200, schemas.BotSchema),
                (400, 401, 403, 404, 409, 413), body=schemas.BotUpdateSchema,
                parameters=[BOT_ID], security="admin",
                description="The URL is checked as at registration; a name another bot has "
                            "is a 409. Matches already recorded keep the old name."),
            "delete": operation(
                "Retire a bot (admin)", "bots", (200, schemas.BotSchema),
                (401, 403, 404), parameters=[BOT_ID], security="admin",
                description="No new match or tournament accepts it (409 `bot/retired`); its "
                            "matches, replays and ratings stay, and `GET /bots` lists it "
                            "with `retired_at`, while `/bots/{bot_id}` answers 404. "
                            "Retiring it again changes nothing."),
        },
        "/bots/{bot_id}/secret": {"post": operation(
            "A new signing secret for a bot (admin)", "bots", (200, schemas.BotCreatedSchema),
            (401, 403, 404), parameters=[BOT_ID], security="admin",
            description="The old secret stops at once; the new one is shown in this answer "
                        "only.")},
        "/matches": {
            "post": operation(
                "Start a match (admin)", "matches", (201, schemas.MatchCreatedSchema),
                (400, 401, 403, 409, 413, 422), body=schemas.MatchCreateSchema,
                security="admin", links=_match_links("$response.body#/id"),
                description="Answers at once; an rq worker plays the match. Each pull seat "
                            "gets a token, shown only in this answer. When the options do "
                            "not fit the number of seats and the game has one setup for "
                            "it, that setup is played (one seat of Aldabas: its solo mode); "
                            "a retired bot is a 409 `bot/retired`."),
            "get": operation("The matches, newest first", "matches",
                             (200, schemas.MatchListSchema), (400,),
                             parameters=[{"in": "query", "schema": schemas.MatchListQuerySchema}],
                             security="admin", optional_security=True),
        },
        "/matches/{match_id}": {"get": operation(
            "A match: status, whose turn, step, result when over", "matches",
            (200, schemas.MatchSchema), (404,), parameters=[MATCH_ID], security="admin",
            optional_security=True,
            description="The seed is null until the match and every match that shares its "
                        "deal (its tournament's seat rotations, an SPRT pair) are over, "
                        "unless the admin asks.")},
        "/matches/{match_id}/observation": {"get": operation(
            "A pull seat's view and legal actions (seat token)", "seats",
            (200, schemas.ObservationSchema),
            (401, 403, 404, 503), parameters=[MATCH_ID], security="seat",
            error_text={503: REPLAY_503})},
        "/matches/{match_id}/actions": {"post": operation(
            "A pull seat's move (seat token)", "seats", (200, schemas.MoveAcceptedSchema),
            (400, 401, 403, 404, 409, 413, 422, 429), body=schemas.MoveSchema,
            parameters=[MATCH_ID], security="seat",
            description="Checked against the live state: turn (409), step (409), the "
                        "game's action schema (400 `action/invalid`: what a push bot's "
                        "`malformed` fault is), rules (422 `action/illegal`: a push bot's "
                        "`illegal`), rate (429, per token, REFEREE_MOVE_RATE); both refusals "
                        "carry the engine's reason in `detail`. The answer waits briefly "
                        "until the runner has played it.")},
        "/matches/{match_id}/replay": {"get": operation(
            "The replay record (while the match or one on its deal runs: admin only)",
            "replays", (200, schemas.ReplaySchema), (401, 403, 404, 503), parameters=[MATCH_ID],
            security="admin", optional_security=True, error_text={503: REPLAY_503},
            description="Served as an attachment: the file `referee verify` checks. A "
                        "tournament match's replay is public once every match on its deal "
                        "is over (it tells the seed, so the deck and hidden cards). An "
                        "archived replay (`referee archive`) is read from the archive.")},
        "/matches/{match_id}/replay/{step}": {"get": operation(
            "A step as a seat (or a spectator) saw it", "replays", (200, schemas.ReplayStepSchema),
            (400, 401, 403, 404, 503),
            parameters=[MATCH_ID, STEP, {"in": "query", "schema": schemas.ReplayStepQuerySchema}],
            security="admin", optional_security=True, error_text={503: REPLAY_503},
            description="With `seat`: exactly the observation that seat had before the "
                        "decision of `step`, and the step played from it as that seat knows "
                        "it (another seat's move only through `played.events`); without: "
                        "what every seat could see. Public when the replay is.")},
        "/replays/verify": {"post": operation(
            "Re-run a replay and check its steps, result, chain and signature", "replays",
            (200, schemas.VerifyReportSchema), (400, 413, 422), body=schemas.ReplaySubmissionSchema,
            description="422 when the replay was made under another game version (or an "
                        "unknown game or format): refused rather than mis-verified. A record "
                        "over the body limit (MAX_BODY_BYTES, 1 MiB) is a 413: `referee "
                        "verify FILE` checks it offline.")},
        **tournament_paths(),
        **live_paths(),
    }


def tournament_paths() -> dict[str, dict]:
    return {
        "/tournaments": {
            "post": operation(
                "Start a tournament: round-robin, gauntlet, Swiss or SPRT (admin)",
                "tournaments", (201, schemas.TournamentSchema), (400, 401, 403, 409, 413, 422),
                body=schemas.TournamentCreateSchema, security="admin",
                links={"GetTournament": link("/tournaments/{tournament_id}",
                                             tournament_id="$response.body#/id")},
                description="round_robin: every combination of `players` bots plays in every "
                            "seat rotation, `rounds` times; gauntlet: the same over the "
                            "combinations holding the challenger; swiss: `rounds` rounds "
                            "paired by points, both seat orders per pairing; sprt: pairs on "
                            "one deal, both seat orders, until the LLR leaves its bounds or "
                            "`max_matches`. One rq job per match."),
            "get": operation("The tournaments, newest first", "tournaments",
                             (200, schemas.TournamentListSchema), (400,), parameters=[PAGE]),
        },
        "/tournaments/{tournament_id}": {"get": operation(
            "Progress, standings, cross-table, faults, the format's own view; final ratings "
            "once over", "tournaments",
            (200, schemas.TournamentSchema), (404,), parameters=[TOURNAMENT_ID],
            security="admin", optional_security=True,
            description="The seed is null until the tournament is over, unless the admin "
                        "asks. Reading it also queues again any match whose worker died. "
                        "`matches` lists the first match ids only; "
                        "`/tournaments/{tournament_id}/matches` pages through all of them.")},
        "/tournaments/{tournament_id}/matches": {"get": operation(
            "A tournament's matches in schedule order (a page)", "tournaments",
            (200, schemas.MatchListSchema), (400, 404), parameters=[TOURNAMENT_ID, PAGE],
            security="admin", optional_security=True,
            description="Each match as `GET /matches/{match_id}` shows it (the seed null "
                        "while its deal is being played, unless the admin asks).")},
        "/ratings/{game}": {"get": operation(
            "A game's leaderboard: live Elo, interval, games (a page)", "ratings",
            (200, schemas.RatingsSchema), (400, 404), parameters=[GAME, PAGE],
            description="Bots by live Elo, best first. A bot's rating history is "
                        "`/ratings/{game}/history?bot={bot_id}`.")},
        "/ratings/{game}/history": {"get": operation(
            "A bot's rating history in a game (a page)", "ratings",
            (200, schemas.RatingHistorySchema), (400, 404),
            parameters=[GAME, {"in": "query", "schema": schemas.HistoryQuerySchema}],
            description="`[n, Elo]` after each of the bot's rated matches, oldest first; "
                        "the latest L points start at offset = games - L (`games` of the "
                        "leaderboard). 404 for an unknown game or bot; a bot with no rated "
                        "match has none (total 0).")},
    }


def live_paths() -> dict[str, dict]:
    """The event streams (text/event-stream), documented in docs/bots.md."""
    return {
        "/matches/{match_id}/events": {"get": {**operation(
            "Follow a match live: each step as the caller may see it (Server-Sent Events)",
            "live", (200, event_stream(
                "`start` (unless resuming), `step` per recorded step (id = the step "
                "number), `result` at the end (then the stream ends)",
                {"start": "StartEvent", "step": "StepEvent", "result": "ResultEvent"})),
            (400, 401, 403, 404, 409),
            parameters=[MATCH_ID, {"in": "query", "schema": schemas.MatchEventsQuerySchema},
                        LAST_EVENT_ID],
            description="The hidden-information rules of the replay endpoints: without a "
                        "token the spectator's view, with a seat token that seat's, with "
                        "the admin token every step whole (and the engine state). A client "
                        "joining late gets every step it missed first; `Last-Event-ID` "
                        "resumes after that step with no gap and no repeat. While another "
                        "match on its deal is being played, the match is the admin's only "
                        "(401/403)."),
            "security": [{"admin": []}, {"seat": []}, {}]}},
        "/tournaments/{tournament_id}/events": {"get": operation(
            "Follow a tournament live: counted matches and the new table (Server-Sent "
            "Events)", "live", (200, event_stream(
                "`standings` on connecting, then `match` and `standings` for every match "
                "counted, and `finished` once the final ratings are stored (then the "
                "stream ends)",
                {"standings": "StandingsEvent", "match": "MatchCountedEvent",
                 "finished": "StandingsEvent"})),
            (404,), parameters=[TOURNAMENT_ID], security="admin", optional_security=True,
            description="The seed in the table is null until the tournament is over, "
                        "unless the admin asks.")},
        "/ratings/{game}/events": {"get": operation(
            "Follow a game's leaderboard live (Server-Sent Events)", "live",
            (200, event_stream(
                "`leaderboard` (the first page of 200 bots, as `GET /ratings/{game}?limit=200` "
                "answers it) on connecting and whenever a rated match is counted or a "
                "tournament's intervals are stored",
                {"leaderboard": "Ratings"})),
            (404,), parameters=[GAME])},
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
    for kind in ("admin", "seat", "metrics"):
        spec.components.security_scheme(kind, {
            "type": "http", "scheme": "bearer",
            "description": f"the {kind} token as `Authorization: Bearer <token>`"})
    for path, operations in paths().items():
        spec.path(path=path, operations=operations)
    _add_cross_field_rules(spec.components.schemas)
    return spec


def _add_cross_field_rules(components: dict[str, dict]) -> None:
    """What a marshmallow field cannot say alone, added to the components: each schema
    class's `JSON_SCHEMA` (e.g. a bot seat needs bot_id), and for a new match or
    tournament the setups each game accepts (player counts and options, from the engines),
    so that a request the spec admits is one the server accepts."""
    for name in list(components):
        extra = getattr(schemas, f"{name}Schema", None)
        components[name].update(getattr(extra, "JSON_SCHEMA", {}))
    every_option = _every_option()
    for name in ("MatchCreate", "TournamentCreate"):
        components[name]["properties"]["options"].update(every_option)
    components["MatchCreate"]["anyOf"] = [
        _setup_rule(game, {"seats": {"minItems": min(counts), "maxItems": max(counts)}},
                    options)
        for game, counts, options in game_setups()]
    components["TournamentCreate"]["anyOf"] = [
        _setup_rule(game, {"players": {"const": players}, "bots": {"minItems": players}},
                    options, required=() if players == DEFAULT_PLAYERS else ("players",))
        for game, counts, options in game_setups() for players in counts]
    components["TournamentCreate"]["properties"]["bots"]["uniqueItems"] = True


DEFAULT_PLAYERS = 2  # TournamentCreateSchema's players when absent


def _every_option() -> dict:
    """The options any game describes (each setup narrows them further)."""
    properties = {}
    for game in engines.names():
        for name, described in engines.get(game).describe().get("options", {}).items():
            properties[name] = _option_rule(described)
    return {"properties": properties, "additionalProperties": False}


def _option_rule(described: dict) -> dict:
    rule = {key: described[key] for key in OPTION_KEYWORDS if key in described}
    return {**rule, "description": described.get("doc", "")}


def _setup_rule(game: str, properties: dict, options: dict, required: tuple = ()) -> dict:
    needs_options = ("options",) if options.get("required") else ()
    return {"properties": {"game": {"const": game}, **properties, "options": options},
            "required": ["game", *required, *needs_options]}


OPTION_KEYWORDS = ("type", "enum", "minimum", "maximum", "default")


def game_setups() -> list[tuple[str, list[int], dict]]:
    """Every setup of every game: (game, player counts, JSON Schema of its options). The
    setups are the engine's variants grouped by options; which described option each
    setup admits, and which it needs, is asked of the engine (`normalize_options`)."""
    setups = []
    for game in engines.names():
        engine = engines.get(game)
        groups: dict[str, tuple[list[int], dict]] = {}
        for variant in engine.variants():
            key = repr(sorted(variant["options"].items()))
            groups.setdefault(key, ([], variant["options"]))[0].append(variant["num_players"])
        for counts, chosen in groups.values():
            setups.append((game, sorted(counts), _options_schema(engine, counts[0], chosen)))
    return setups


def _options_schema(engine: engines.Game, players: int, chosen: dict) -> dict:
    """The options of the setup that `chosen` selects: its own options as constants
    (required unless leaving one out selects the same setup), plus every described option
    the engine accepts with it."""
    properties, required = {}, []
    for name, described in engine.describe().get("options", {}).items():
        if name in chosen:
            properties[name] = {"const": chosen[name]}
            rest = {key: value for key, value in chosen.items() if key != name}
            if _normalized(engine, players, rest) != _normalized(engine, players, chosen):
                required.append(name)
        elif _normalized(engine, players, {**chosen, name: described.get("default")}):
            properties[name] = _option_rule(described)
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _normalized(engine: engines.Game, players: int, options: dict) -> dict | None:
    try:
        return engine.normalize_options(players, dict(options))
    except engines.InvalidSetup:
        return None


def spec_yaml() -> str:
    return build_spec().to_yaml()


if __name__ == "__main__":
    sys.stdout.write(spec_yaml())
