"""POST /bots, PATCH and DELETE /bots/{id}, POST /bots/{id}/secret (admin); GET /bots,
GET /bots/{id}: registered push bots (`tournament.bots`)."""

import secrets

from flask import Blueprint, Response
from marshmallow import Schema, ValidationError, fields, validate

from referee.api.auth import require_admin
from referee.api.common import ListQuerySchema, PageSchema, known_game, required
from referee.api.operations import PAGE, link, operation, path_parameter
from referee.api.problems import Problem, not_found
from referee.api.web import load_body, load_query, reply, services
from referee.errors import BOT_HOST_NOT_ALLOWED, BOT_NAME_TAKEN, BOT_RETIRED_NOT_FOUND
from referee.match.replay import utc_now
from referee.match.urls import BOT_URL_PATTERN, url_syntax_problem, without_credentials
from tournament.bots import is_retired, new_secret, public_bot

bp = Blueprint("bots", __name__)


class BotUrl(validate.Regexp):
    """A bot URL matching BOT_URL_PATTERN (the spec's `pattern`), on which urllib3 and
    urllib.parse agree; a refusal says what is wrong."""

    def __init__(self):
        super().__init__(BOT_URL_PATTERN)

    # Only the String fields above use it: never given bytes, which Regexp also takes.
    def __call__(self, value: str) -> str:  # type: ignore[override]
        problem = url_syntax_problem(value)
        if problem:
            raise ValidationError(problem)
        return value


class BotCreateSchema(Schema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=100))
    url = fields.String(required=True, validate=[validate.Length(min=1, max=2000), BotUrl()],
                        metadata={"description": "http(s) URL of the bot; its host must be "
                                                 "on the allowlist (REFEREE_BOT_HOSTS)"})
    games = fields.List(fields.String(validate=known_game), required=True,
                        validate=validate.Length(min=1))
    updates = fields.Boolean(metadata={
        "description": "send the bot an `update` message after every step it does not "
                       "decide (docs/bots.md, Updates); default false"})


class BotUpdateSchema(Schema):
    """PATCH /bots/{id}: a new name, URL or `updates`, any of them or none (nothing
    changes)."""

    name = fields.String(validate=validate.Length(min=1, max=100))
    url = fields.String(validate=[validate.Length(min=1, max=2000), BotUrl()])
    updates = fields.Boolean(metadata={
        "description": "send the bot an `update` message after every step it does not "
                       "decide (docs/bots.md, Updates); default false"})


class PublicUrl(fields.String):
    """A stored bot URL, shown without credentials (`user:password@`): new URLs with them
    are refused, but a bot registered before may still carry some."""

    def _serialize(self, value, attr, obj, **kwargs):
        return super()._serialize(value and without_credentials(value), attr, obj, **kwargs)


class BotSchema(Schema):
    id = required(fields.String)
    name = required(fields.String)
    url = required(PublicUrl)
    games = required(fields.List, fields.String())
    updates = required(fields.Boolean, metadata={
        "description": "whether the bot gets `update` messages between its decisions"})
    created_at = required(fields.String)
    retired_at = required(fields.String, allow_none=True, metadata={
        "description": "when the bot was retired (DELETE /bots/{id}): it plays no new match "
                       "or tournament; null while active"})


class BotCreatedSchema(BotSchema):
    secret = required(fields.String, metadata={
        "description": "the key the referee signs its requests to the bot with (32 bytes, "
                       "hex); shown in this answer only"})


class BotListSchema(PageSchema):
    bots = required(fields.List, fields.Nested(BotSchema), metadata={
        "description": "by registration time, oldest first"})


BOT_ID = path_parameter("bot_id")

PATHS = {
    "/bots": {
        "post": operation(
            "createBot", "Register a push bot (admin)", "bots", (201, BotCreatedSchema),
            (400, 401, 403, 409, 413), body=BotCreateSchema, security="admin",
            links={"GetBot": link("getBot", bot_id="$response.body#/id")},
            description="The URL must be unambiguous (the `url` pattern; no credentials): "
                        "400 saying why otherwise. A host off the allowlist "
                        "(REFEREE_BOT_HOSTS) is a 403. A name already registered (without "
                        "regard to case; retired bots included) is a 409 naming that bot's "
                        "id. The answer holds the bot's `secret`, the key of the signatures "
                        "on the referee's requests: shown here only."),
        "get": operation("listBots", "The registered bots, retired ones included (a page)",
                         "bots", (200, BotListSchema), (400,), parameters=[PAGE]),
    },
    "/bots/{bot_id}": {
        "get": operation("getBot", "A registered bot", "bots", (200, BotSchema), (404,),
                         parameters=[BOT_ID],
                         description="404 too once the bot is retired (`detail` says so; "
                                     "`GET /bots` still lists it, with `retired_at`)."),
        "patch": operation(
            "updateBot", "Change a bot's name, URL or updates (admin)", "bots", (200, BotSchema),
            (400, 401, 403, 404, 409, 413), body=BotUpdateSchema, parameters=[BOT_ID],
            security="admin",
            description="The URL is checked as at registration; a name another bot has is a "
                        "409. Matches already recorded keep the old name."),
        "delete": operation(
            "retireBot", "Retire a bot (admin)", "bots", (200, BotSchema), (401, 403, 404),
            parameters=[BOT_ID], security="admin",
            description="No new match or tournament accepts it (409 `bot/retired`); its "
                        "matches, replays and ratings stay, and `GET /bots` lists it with "
                        "`retired_at`, while `/bots/{bot_id}` answers 404. Retiring it again "
                        "changes nothing."),
    },
    "/bots/{bot_id}/secret": {"post": operation(
        "rotateBotSecret", "A new signing secret for a bot (admin)", "bots",
        (200, BotCreatedSchema), (401, 403, 404), parameters=[BOT_ID], security="admin",
        description="The old secret stops at once; the new one is shown in this answer "
                    "only.")},
}


@bp.post("/bots")
def register_bot() -> Response:
    """201 with the bot and its secret, shown in this answer only; 409 for a taken name."""
    require_admin()
    data = load_body(BotCreateSchema)
    check_bot_host(data["url"])
    _check_name_free(data["name"])
    bot = {"id": f"bot-{secrets.token_hex(6)}", "name": data["name"], "url": data["url"],
           "games": sorted(set(data["games"])), "updates": data.get("updates", False),
           "created_at": utc_now(),
           "secret": new_secret()}
    services().store.save_bot(bot)
    return reply(BotCreatedSchema, {**public_bot(bot), "secret": bot["secret"]}, 201,
                 headers={"Location": f"/bots/{bot['id']}"})


def check_bot_host(url: str) -> None:
    """403 for a (well-formed) bot URL whose host is off the allowlist: the request is
    valid, the server's policy refuses to call that host."""
    problem = services().config.bot_host_problem(url)
    if problem:
        raise Problem(BOT_HOST_NOT_ALLOWED, problem, errors={"url": [problem]})


@bp.get("/bots")
def list_bots() -> Response:
    """A page of the bots, oldest first (retired ones included)."""
    query = load_query(ListQuerySchema)
    bots, total = services().store.bot_page(query["offset"], query["limit"])
    return reply(BotListSchema, {"bots": [public_bot(bot) for bot in bots], "total": total,
                                 **query})


@bp.get("/bots/<bot_id>")
def get_bot(bot_id: str) -> Response:
    return reply(BotSchema, public_bot(_find_bot(bot_id)))


@bp.patch("/bots/<bot_id>")
def change_bot(bot_id: str) -> Response:
    """A new name or URL (checked as at registration); its matches keep the old ones."""
    require_admin()
    bot = _find_bot(bot_id)
    data = load_body(BotUpdateSchema)
    if "url" in data:
        check_bot_host(data["url"])
    if "name" in data:
        _check_name_free(data["name"], other_than=bot_id)
    bot.update(data)
    services().store.update_bot(bot)
    return reply(BotSchema, public_bot(bot))


@bp.delete("/bots/<bot_id>")
def retire_bot(bot_id: str) -> Response:
    """Retire the bot: no new match or tournament accepts it; its history stays."""
    require_admin()
    bot = _find_bot(bot_id, retired_too=True)
    if not is_retired(bot):
        bot["retired_at"] = utc_now()
        services().store.update_bot(bot)
    return reply(BotSchema, public_bot(bot))


@bp.post("/bots/<bot_id>/secret")
def rotate_secret(bot_id: str) -> Response:
    """A new secret for the bot, shown in this answer only; the old one stops at once."""
    require_admin()
    bot = _find_bot(bot_id)
    bot["secret"] = new_secret()
    services().store.update_bot(bot)
    return reply(BotCreatedSchema, {**public_bot(bot), "secret": bot["secret"]})


def _find_bot(bot_id: str, retired_too: bool = False) -> dict:
    """The bot; 404 when there is none, or when it is retired (unless `retired_too`): a
    retired bot is gone from `/bots/{id}`, while `GET /bots` still lists it."""
    bot = services().store.get_bot(bot_id)
    if bot is None:
        raise not_found(f"bot {bot_id!r}")
    if is_retired(bot) and not retired_too:
        raise Problem(BOT_RETIRED_NOT_FOUND,
                      f"bot {bot_id} ({bot['name']}) was retired at {bot['retired_at']}: its "
                      "matches, replays and ratings stay; GET /bots lists it")
    return bot


def _check_name_free(name: str, other_than: str | None = None) -> None:
    """409 naming the bot that already has this name (retired or not)."""
    holder = services().store.bot_named(name, other_than)
    if holder is not None:
        retired = " (retired)" if is_retired(holder) else ""
        detail = f"a bot named {holder['name']!r} is already registered: {holder['id']}{retired}"
        raise Problem(BOT_NAME_TAKEN, detail, errors={"name": [detail]})
