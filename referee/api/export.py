"""GET /export/{game}: the decisions of finished matches as training records (issue 30), one
JSON object per line (NDJSON), a page at a time, resumable by cursor
(`tournament.export`). A match whose deal is public is anyone's; before, its records are
the admin's, and an account token with `private:read` reads those of the seats its own
bots played."""

from __future__ import annotations

from urllib.parse import urlencode

from flask import Blueprint, Response, request
from marshmallow import Schema, fields, validate

import engines
from referee.api.auth import PRIVATE_READ, Caller, caller
from referee.api.common import (
    MAX_SEATS,
    SEAT,
    STEP,
    FullMatch,
    JsonNumber,
    known_game,
    required,
)
from referee.api.operations import operation, path_parameter
from referee.api.problems import unprocessable
from referee.api.web import load_query, path_game, services
from referee.match.botclient import Fault
from referee.match.decisions import seat_mask
from tournament.export import Cursor, ExportError, SecretSeats, parse_since, read_page

bp = Blueprint("export", __name__)

MEDIA_TYPE = "application/x-ndjson"
DEFAULT_LIMIT, MAX_LIMIT = 1000, 10_000
MAX_PAGE_BYTES = 8 << 20  # a page stops after the record that reaches it
MAX_SCANNED = 2000  # matches of the results log looked at per page, other games' included
CURSOR_HEADER = "Referee-Next-Cursor"
GAME = path_parameter("game", {"type": "string", "enum": engines.names()})
SINCE_PATTERN = (r"^([0-9]{1,11}(\.[0-9]{1,6})?|[0-9]{4}-[0-9]{2}-[0-9]{2}"
                 r"([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?)$")


class ExportQuerySchema(Schema):
    cursor = fields.String(validate=FullMatch(r"^[A-Za-z0-9_-]{1,200}$"), metadata={
        "description": f"where to go on: the `{CURSOR_HEADER}` of the previous page (absent: "
                       "from the first finished match)"})
    since = fields.String(validate=FullMatch(SINCE_PATTERN), metadata={
        "description": "only matches finished at this time or later: ISO 8601 (UTC unless "
                       "it names a zone) or seconds since the epoch"})
    limit = fields.Integer(load_default=DEFAULT_LIMIT, validate=validate.Range(1, MAX_LIMIT),
                           metadata={"description": "records at most in this page (a page "
                                                    "also stops past 8 MiB)"})


class DecisionRecordSchema(Schema):
    """One line of an export: one decision of a finished match."""

    match_id = required(fields.String)
    game = required(fields.String, validate=known_game)
    game_version = required(fields.String, metadata={
        "description": "the rules version the match was played under: "
                       "engines.get(game, game_version) replays it"})
    num_players = required(fields.Integer, validate=validate.Range(1, MAX_SEATS))
    finished_at = required(fields.String, allow_none=True)
    step = required(fields.Integer, validate=STEP)
    seat = required(fields.Integer, validate=SEAT, metadata={"description": "the seat to move"})
    bot_id = required(fields.String, allow_none=True, metadata={
        "description": "the seat's bot (null: a pull seat)"})
    bot_version = required(fields.Integer, allow_none=True, validate=validate.Range(min=1),
                           metadata={"description": "the bot's version it played"})
    rank = required(fields.Integer, validate=validate.Range(1, MAX_SEATS), metadata={
        "description": "the seat's final rank (1 is best)"})
    score = required(JsonNumber, metadata={"description": "the seat's final score"})
    fault = required(fields.String, allow_none=True, validate=validate.OneOf(Fault.ALL),
                     metadata={"description": "the fault of the seat's answer, if any: then "
                                              "`action` is the move substituted (random "
                                              "policy) or null (a forfeit)"})
    action = required(fields.Dict, allow_none=True, metadata={
        "description": "the action recorded for this decision"})
    legal_actions = required(fields.List, fields.Dict(), metadata={
        "description": "the seat's legal actions, as it was sent them"})
    observation = required(fields.Dict, metadata={
        "description": "the seat's observation at this decision, as it was sent it: "
                       "game.observation(state, seat)"})


NDJSON_PAGE = {
    "description": "the page's records, one DecisionRecord (JSON) per line, in the order "
                   "the matches finished and then by step",
    "headers": {
        CURSOR_HEADER: {"required": True, "schema": {"type": "string"}, "description": (
            "the cursor after this page: pass it as `cursor` to go on (now, or later for "
            "the matches finished since)")},
        "Link": {"schema": {"type": "string"}, "description": (
            'present when more records may be read now: `<...>; rel="next"`')}},
    # No `schema`: OpenAPI 3.1 has none for a sequence of JSON lines (3.2's `itemSchema`
    # is what `x-item-schema` says); validators and schemathesis then take the body as it is.
    "content": {MEDIA_TYPE: {
        "x-item-schema": {"$ref": "#/components/schemas/DecisionRecord"}}}}

PATHS = {
    "/export/{game}": {"get": operation(
        "exportDecisions", "Decision records of finished matches, for training (NDJSON)",
        "export", (200, NDJSON_PAGE), (400, 403, 404, 422, 503),
        parameters=[GAME, {"in": "query", "schema": ExportQuerySchema}],
        security=("admin", "account"), optional_security=True,
        error_text={422: "a cursor or a `since` the spec admits but that means nothing "
                         "here: not a cursor this server gave, one of another game's export, "
                         "a date that does not exist",
                    503: "Redis is unreachable, or a stored replay is out of this server's "
                         "reach"},
        description="One record per decision of each finished match of the game: its "
                    "observation, legal actions, action, and the seat's final rank and "
                    "score. A match whose deal is public (it and every match on its deal "
                    "over) is readable by anyone; before, by the admin, and by an account "
                    "token with `private:read` for the seats of its own bots. A reader "
                    "who may see only some seats of a match waits there: the page ends, "
                    "and the cursor goes on once the deal is public.")},
}


@bp.get("/export/<name>")
def export_decisions(name: str) -> Response:
    game = path_game(name)
    query = load_query(ExportQuerySchema)
    try:
        cursor = Cursor.decode(query["cursor"], game.name) if "cursor" in query else Cursor()
        since = parse_since(query["since"]) if "since" in query else None
    except ExportError as error:
        raise unprocessable({error.field: [error.reason]}) from None
    page = read_page(services().store, game.name, cursor, query["limit"], MAX_PAGE_BYTES,
                     MAX_SCANNED, since, _secret_seats(caller()))
    headers = {CURSOR_HEADER: page.cursor.encode(game.name)}
    if page.more:
        headers["Link"] = f'<{_next_url(page.cursor.encode(game.name))}>; rel="next"'
    return Response(b"".join(page.lines), mimetype=MEDIA_TYPE, headers=headers)


def _secret_seats(who: Caller) -> SecretSeats | None:
    """What `who` sees of a match whose deal is secret: the admin every seat (None), an
    account with `private:read` the seats of its bots, anyone else none."""
    if who.admin:
        return None
    if who.account_id is None or PRIVATE_READ not in who.scopes:
        return lambda match: 0
    owned = set(services().store.account_bots(who.account_id))
    return lambda match: seat_mask(
        seat["seat"] for seat in match["seats"]
        if seat["kind"] == "bot" and seat["bot_id"] in owned)


def _next_url(cursor: str) -> str:
    """This request's URL with the next page's cursor."""
    kept = {key: request.args[key] for key in ("since", "limit") if key in request.args}
    return f"{request.path}?{urlencode({**kept, 'cursor': cursor})}"

