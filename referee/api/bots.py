"""Registered push bots (`tournament.bots`): POST /bots, PATCH and DELETE /bots/{id},
POST /bots/{id}/secret by the admin or the bot's owner (an account with `bots:write`,
issue 27); GET /bots, GET /bots/{id}, GET /bots/{id}/versions for anyone.

A bot's private fields (its URL, the URLs of its versions, its secret) are shown to the
admin and to its owner's tokens with `private:read` only. A change of URL is a new
version; every match records the version each seat played."""

import secrets

from flask import Blueprint, Response
from marshmallow import Schema, ValidationError, fields, validate

from referee.api.auth import BOTS_WRITE, PRIVATE_READ, Caller, caller, require_scope
from referee.api.common import ListQuerySchema, PageSchema, StrictBoolean, known_game, required
from referee.api.operations import PAGE, link, operation, path_parameter
from referee.api.problems import Problem, not_found
from referee.api.web import load_body, load_query, reply, services
from referee.errors import (
    AUTH_FORBIDDEN,
    AUTH_SCOPE_MISSING,
    BOT_HOST_NOT_ALLOWED,
    BOT_NAME_TAKEN,
    BOT_NOT_PUBLIC,
    BOT_OWNER_SUSPENDED,
    BOT_RETIRED_NOT_FOUND,
)
from referee.match.replay import utc_now
from referee.match.urls import BOT_URL_PATTERN, url_syntax_problem, without_credentials
from tournament import ladders, quotas
from tournament.bots import is_retired, new_secret, new_version, public_bot

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


class BotSettingsSchema(Schema):
    """What a bot's owner sets besides its name and URL."""

    updates = StrictBoolean(metadata={
        "description": "send the bot an `update` message after every step it does not "
                       "decide (docs/bots.md, Updates); default false"})
    public = StrictBoolean(metadata={
        "description": "whether any account may seat it in a match or tournament; default "
                       "true"})


class BotCreateSchema(BotSettingsSchema):
    name = fields.String(required=True, validate=validate.Length(min=1, max=100))
    url = fields.String(required=True, validate=[validate.Length(min=1, max=2000), BotUrl()],
                        metadata={"description": "http(s) URL of the bot; its host must be "
                                                 "on the allowlist (REFEREE_BOT_HOSTS)"})
    games = fields.List(fields.String(validate=known_game), required=True,
                        validate=validate.Length(min=1))


class BotUpdateSchema(BotSettingsSchema):
    """PATCH /bots/{id}: a new name, URL, `updates` or `public`, any of them or none
    (nothing changes)."""

    name = fields.String(validate=validate.Length(min=1, max=100))
    url = fields.String(validate=[validate.Length(min=1, max=2000), BotUrl()])


class PublicUrl(fields.String):
    """A stored bot URL, shown without credentials (`user:password@`): new URLs with them
    are refused, but a bot registered before may still carry some."""

    def _serialize(self, value, attr, obj, **kwargs):
        return super()._serialize(value and without_credentials(value), attr, obj, **kwargs)


class BotVersionSchema(Schema):
    version = required(fields.Integer, metadata={"description": "1, 2, ...: what played"})
    created_at = required(fields.String)
    url = PublicUrl(metadata={"description": "the admin's and the owner's (private:read)"})


class BotSchema(Schema):
    id = required(fields.String)
    name = required(fields.String)
    owner = required(fields.String, allow_none=True, metadata={
        "description": "the account that registered it; null: the admin's"})
    public = required(fields.Boolean, metadata={
        "description": "whether any account may seat it"})
    version = required(fields.Integer, metadata={"description": "its current version"})
    versions = required(fields.List, fields.Nested(BotVersionSchema), metadata={
        "description": "every version, oldest first (URLs: the admin's and the owner's)"})
    url = PublicUrl(metadata={
        "description": "its URL: shown to the admin and to its owner's tokens with "
                       "private:read only"})
    games = required(fields.List, fields.String())
    updates = required(fields.Boolean, metadata={
        "description": "whether the bot gets `update` messages between its decisions"})
    created_at = required(fields.String)
    retired_at = required(fields.String, allow_none=True, metadata={
        "description": "when the bot was retired (DELETE /bots/{id}): it plays no new match "
                       "or tournament; null while active"})


class BotCreatedSchema(BotSchema):
    secret = fields.String(metadata={
        "description": "the key the referee signs its requests to the bot with (32 bytes, "
                       "hex); shown in this answer only, to the admin and to a token with "
                       "private:read"})


class BotVersionListSchema(Schema):
    versions = required(fields.List, fields.Nested(BotVersionSchema))


class BotListSchema(PageSchema):
    bots = required(fields.List, fields.Nested(BotSchema), metadata={
        "description": "by registration time, oldest first"})


BOT_ID = path_parameter("bot_id")

WRITERS = ("admin", "account")
PATHS = {
    "/bots": {
        "post": operation(
            "createBot", "Register a push bot (the admin, or an account with bots:write)",
            "bots", (201, BotCreatedSchema), (400, 401, 403, 409, 413, 429),
            body=BotCreateSchema, security=WRITERS,
            links={"GetBot": link("getBot", bot_id="$response.body#/id"),
                   "GetBotVersions": link("getBotVersions", bot_id="$response.body#/id")},
            description="The URL must be unambiguous (the `url` pattern; no credentials): "
                        "400 saying why otherwise. A host off the allowlist "
                        "(REFEREE_BOT_HOSTS) is a 403. A name already registered (without "
                        "regard to case; retired bots included) is a 409 naming that bot's "
                        "id. An account's bot is its own (`owner`); past REFEREE_QUOTA_BOTS "
                        "bots not retired, 429. The answer holds the bot's `secret`, the key "
                        "of the signatures on the referee's requests, shown here only (to "
                        "the admin, and to a token with private:read)."),
        "get": operation("listBots", "The registered bots, retired ones included (a page)",
                         "bots", (200, BotListSchema), (400,), parameters=[PAGE],
                         security=WRITERS, optional_security=True,
                         description="URLs are shown to the admin and to the owner's tokens "
                                     "with private:read only."),
    },
    "/bots/{bot_id}": {
        "get": operation("getBot", "A registered bot", "bots", (200, BotSchema), (404,),
                         parameters=[BOT_ID], security=WRITERS, optional_security=True,
                         description="404 too once the bot is retired (`detail` says so; "
                                     "`GET /bots` still lists it, with `retired_at`). Its "
                                     "URL: the admin's and its owner's (private:read)."),
        "patch": operation(
            "updateBot", "Change a bot's name, URL, updates or public (its owner, the admin)",
            "bots", (200, BotSchema), (400, 401, 403, 404, 409, 413), body=BotUpdateSchema,
            parameters=[BOT_ID], security=WRITERS,
            description="The URL is checked as at registration, and a new one makes a new "
                        "version (`GET /bots/{id}/versions`); a name another bot has is a "
                        "409. Matches already recorded keep the old name and version. "
                        "Another account's bot: 403."),
        "delete": operation(
            "retireBot", "Retire a bot (its owner, the admin)", "bots", (200, BotSchema),
            (401, 403, 404), parameters=[BOT_ID], security=WRITERS,
            description="No new match or tournament accepts it (409 `bot/retired`); its "
                        "matches, replays and ratings stay, and `GET /bots` lists it with "
                        "`retired_at`, while `/bots/{bot_id}` answers 404. Retiring it again "
                        "changes nothing."),
    },
    "/bots/{bot_id}/versions": {"get": operation(
        "getBotVersions", "Every version of a bot, oldest first", "bots",
        (200, BotVersionListSchema), (404,), parameters=[BOT_ID], security=WRITERS,
        optional_security=True,
        description="Numbers and dates for anyone; each version's URL for the admin and "
                    "the owner's tokens with private:read. 404 once the bot is retired, as "
                    "`GET /bots/{bot_id}`.")},
    "/bots/{bot_id}/secret": {"post": operation(
        "rotateBotSecret", "A new signing secret for a bot (its owner, the admin)", "bots",
        (200, BotCreatedSchema), (401, 403, 404), parameters=[BOT_ID], security=WRITERS,
        description="Needs bots:write and private:read (the answer shows the secret). The "
                    "old secret stops at once; the new one is shown in this answer only.")},
}


@bp.post("/bots")
def register_bot() -> Response:
    """201 with the bot (and its secret, to whom may see it); 409 for a taken name."""
    who = require_scope(BOTS_WRITE)
    data = load_body(BotCreateSchema)
    check_bot_host(data["url"])
    _check_name_free(data["name"])
    store = services().store
    if who.account_id is not None:
        quotas.check_held("bots", quotas.bots_held(store, who.account_id),
                          services().config.quotas)
    now = utc_now()
    bot = {"id": f"bot-{secrets.token_hex(6)}", "name": data["name"], "url": data["url"],
           "games": sorted(set(data["games"])), "updates": data.get("updates", False),
           "public": data.get("public", True), "owner": who.account_id, "created_at": now,
           "secret": new_secret(), "version": 1,
           "versions": [{"version": 1, "created_at": now, "url": data["url"]}]}
    store.save_bot(bot)
    if who.account_id is not None:
        store.add_account_bot(who.account_id, bot["id"])
    return reply(BotCreatedSchema, _shown(bot, who, with_secret=True), 201,
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
    who = caller()
    return reply(BotListSchema, {"bots": [_shown(bot, who) for bot in bots], "total": total,
                                 **query})


@bp.get("/bots/<bot_id>")
def get_bot(bot_id: str) -> Response:
    return reply(BotSchema, _shown(_find_bot(bot_id), caller()))


@bp.get("/bots/<bot_id>/versions")
def get_versions(bot_id: str) -> Response:
    return reply(BotVersionListSchema,
                 {"versions": _shown(_find_bot(bot_id), caller())["versions"]})


@bp.patch("/bots/<bot_id>")
def change_bot(bot_id: str) -> Response:
    """New fields (checked as at registration); a new URL is a new version. Matches
    already recorded keep the old name and version."""
    who = require_scope(BOTS_WRITE)
    bot = _own_bot(bot_id, who)
    data = load_body(BotUpdateSchema)
    if "url" in data:
        check_bot_host(data["url"])
    if "name" in data:
        _check_name_free(data["name"], other_than=bot_id)
    versioned = "url" in data and data["url"] != bot["url"]
    if versioned:
        bot = new_version(bot, data["url"], utc_now())
    bot.update(data)
    services().store.update_bot(bot)
    services().store.forget_leaderboards(bot["games"])  # its name, its interval's width
    if versioned:
        ladders.new_version(services().store, bot)
    return reply(BotSchema, _shown(bot, who))


@bp.delete("/bots/<bot_id>")
def retire_bot(bot_id: str) -> Response:
    """Retire the bot: no new match or tournament accepts it; its history stays."""
    who = require_scope(BOTS_WRITE)
    bot = _own_bot(bot_id, who, retired_too=True)
    if not is_retired(bot):
        bot["retired_at"] = utc_now()
        services().store.update_bot(bot)
        ladders.retired(services().store, bot_id)
    return reply(BotSchema, _shown(bot, who))


@bp.post("/bots/<bot_id>/secret")
def rotate_secret(bot_id: str) -> Response:
    """A new secret for the bot, shown in this answer only; the old one stops at once."""
    who = require_scope(BOTS_WRITE)
    if PRIVATE_READ not in who.scopes:
        raise Problem(AUTH_SCOPE_MISSING, "rotating a secret shows it: this token needs "
                                          f"the scope {PRIVATE_READ} too",
                      members={"scope": PRIVATE_READ})
    bot = _own_bot(bot_id, who)
    bot["secret"] = new_secret()
    services().store.update_bot(bot)
    return reply(BotCreatedSchema, _shown(bot, who, with_secret=True))


def check_seatable(bots: list[dict], who: Caller) -> None:
    """Refuse to seat a bot of a suspended account (409 `bot/owner-suspended`), or, for an
    account, another account's bot that is not public (403 `bot/not-public`)."""
    store = services().store
    owners = {bot["owner"] for bot in bots if bot.get("owner")}
    suspended = {owner for owner in owners
                 if (store.get_account(owner) or {}).get("suspended")}
    for bot in bots:
        if bot.get("owner") in suspended:
            raise Problem(BOT_OWNER_SUSPENDED, f"bot {bot['id']} ({bot['name']}) belongs to a "
                                               "suspended account: it plays no new match")
        if not who.admin and not who.owns(bot) and not bot.get("public", True):
            raise Problem(BOT_NOT_PUBLIC, f"bot {bot['id']} ({bot['name']}) is not public: "
                                          "only its owner seats it")


def _shown(bot: dict, who: Caller, with_secret: bool = False) -> dict:
    """The bot as `who` may see it: its URLs (and, when asked, its secret) only when it
    may see the bot's private fields."""
    shown = public_bot(bot)
    if who.sees_private(bot):
        return {**shown, "secret": bot["secret"]} if with_secret else shown
    return {**{k: v for k, v in shown.items() if k != "url"},
            "versions": [{k: v for k, v in version.items() if k != "url"}
                         for version in shown["versions"]]}


def _own_bot(bot_id: str, who: Caller, retired_too: bool = False) -> dict:
    """The bot, when `who` may change it (the admin, its owner): 403 otherwise."""
    bot = _find_bot(bot_id, retired_too)
    if not who.may_change(bot):
        raise Problem(AUTH_FORBIDDEN, f"bot {bot_id} is not this account's")
    return bot


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
