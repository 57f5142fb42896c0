"""Registered bots (`tournament.bots`): POST /bots, PATCH and DELETE /bots/{id},
POST /bots/{id}/secret by the admin or the bot's owner (an account with `bots:write`,
issue 27); GET /bots, GET /bots/{id}, GET /bots/{id}/versions for anyone; GET
/bots/{id}/build (owner, admin) and GET /languages for hosted bots (issue 29).

A bot is a push bot (a `url`) or a hosted one (`source`, built and run by hosted workers:
`tournament.hosted`). A bot's private fields (its URL, the URLs of its versions, its
secret) are shown to the admin and to its owner's tokens with `private:read` only. A
change of URL or of source is a new version; every match records the version each seat
played."""

import hashlib
import secrets

from flask import Blueprint, Response, request
from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from referee.api.auth import BOTS_WRITE, PRIVATE_READ, Caller, caller, require_scope
from referee.api.common import (
    DISPLAY_NAME,
    BoundedList,
    ListQuerySchema,
    PageSchema,
    StrictBoolean,
    known_game,
    required,
)
from referee.api.operations import PAGE, id_parameter, link, operation
from referee.api.problems import Problem, not_found, unprocessable
from referee.api.web import load_body, load_query, reply, services
from referee.errors import (
    AUTH_FORBIDDEN,
    AUTH_SCOPE_MISSING,
    BOT_HOST_NOT_ALLOWED,
    BOT_NAME_TAKEN,
    BOT_NOT_PUBLIC,
    BOT_NOT_READY,
    BOT_OWNER_SUSPENDED,
    BOT_RETIRED_NOT_FOUND,
)
from referee.match import sandbox
from referee.match.replay import utc_now
from referee.match.urls import BOT_URL_PATTERN, url_syntax_problem, without_credentials
from tournament import hosted, ladders, quotas
from tournament.bots import is_retired, new_secret, new_version, public_bot
from tournament.store import BuildStatus, Store
from tournament.store.keys import BOT_NAMES_LOCK, bot_lock

BUILD_STATUSES = validate.OneOf([status.value for status in BuildStatus])
MAX_UPLOAD_BODY_BYTES = 3 << 20  # 1 MiB of source, as JSON text or base64, and the rest

bp = Blueprint("bots", __name__)


MAX_BOT_URL_CHARS = 2000
MAX_GAMES_LISTED = 16  # a bot's `games`, repeats included


class BotUrl(validate.Regexp):
    """A bot URL matching BOT_URL_PATTERN (the spec's `pattern`), on which urllib3 and
    urllib.parse agree; a refusal says what is wrong."""

    def __init__(self):
        super().__init__(BOT_URL_PATTERN)

    # Only the String fields above use it: never given bytes, which Regexp also takes.
    def __call__(self, value: str) -> str:  # type: ignore[override]
        if len(value) > MAX_BOT_URL_CHARS:
            return value  # the field's Length refuses it; its syntax would cost ~1 s a MB
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


class SourceSchema(Schema):
    """A hosted bot's code: its files, or a tar.gz of them (docs/bots.md, Hosted bots).
    What the schema cannot say (a path, the entry file, the archive's content, the size)
    is checked once it is loaded: 422 saying what is wrong."""

    JSON_SCHEMA = {  # exactly one of files and archive (as if/then: clients generate plainly)
        "if": {"required": ["files"]}, "then": {"not": {"required": ["archive"]}},
        "else": {"required": ["archive"]}}

    language = fields.String(required=True, validate=validate.OneOf(sandbox.LANGUAGE_NAMES),
                             metadata={"description": "GET /languages lists what the "
                                                      "workers run"})
    files = fields.Dict(keys=fields.String(), values=fields.String(), metadata={
        "description": "path -> text: plain relative paths (parts of letters, digits and "
                       "._+-, none starting with . or -, at most 200 characters); the entry "
                       "file (main.py, main.c, main.cpp, main.js, main.pl or Main.java) at "
                       "the top; at most 200 files and 1 MiB in all"})
    archive = fields.String(metadata={
        "description": "the files as a base64 tar.gz (regular files only), instead of "
                       "`files`"})

    @validates_schema
    def one_form(self, data: dict, **_: object) -> None:
        if ("files" in data) == ("archive" in data):
            raise ValidationError("give the source as exactly one of files and archive",
                                  "_schema")


class BotCodeSchema(Schema):
    """A push bot's URL or a hosted bot's source: not both."""

    JSON_SCHEMA: dict = {"if": {"required": ["url"]},
                         "then": {"not": {"required": ["source"]}}}

    url = fields.String(validate=[validate.Length(min=1, max=MAX_BOT_URL_CHARS), BotUrl()],
                        metadata={"description": "http(s) URL of a push bot; its host must "
                                                 "be on the allowlist (REFEREE_BOT_HOSTS)"})
    source = fields.Nested(SourceSchema, metadata={
        "description": "a hosted bot's code, built and run by the referee's workers in a "
                       "sandbox, instead of a url"})

    @validates_schema
    def url_or_source(self, data: dict, partial: bool = False, **_: object) -> None:
        if "url" in data and "source" in data:
            raise ValidationError("a bot has a url (a push bot) or a source (a hosted bot), "
                                  "not both", "_schema")


class BotCreateSchema(BotSettingsSchema, BotCodeSchema):
    JSON_SCHEMA = {"if": {"required": ["url"]}, "then": {"not": {"required": ["source"]}},
                   "else": {"required": ["source"]}}

    name = fields.String(required=True, validate=DISPLAY_NAME)
    games = BoundedList(fields.String(validate=known_game), MAX_GAMES_LISTED, required=True,
                        validate=validate.Length(min=1))

    @validates_schema(skip_on_field_errors=False, pass_original=True)
    def url_or_source_given(self, data: dict, original: object, **_: object) -> None:
        """Named on `url` when neither was sent (one sent but invalid says why itself)."""
        sent = original if isinstance(original, dict) else {}
        if "url" not in sent and "source" not in sent:
            raise ValidationError("a bot needs a url (a push bot), or a source (a hosted "
                                  "bot)", "url")


class BotUpdateSchema(BotSettingsSchema, BotCodeSchema):
    """PATCH /bots/{id}: a new name, URL (a push bot's), source (a hosted bot's),
    `updates` or `public`, any of them or none (nothing changes)."""

    name = fields.String(validate=DISPLAY_NAME)


class PublicUrl(fields.String):
    """A stored bot URL, shown without credentials (`user:password@`): new URLs with them
    are refused, but a bot registered before may still carry some."""

    def _serialize(self, value, attr, obj, **kwargs):
        return super()._serialize(value and without_credentials(value), attr, obj, **kwargs)


class BotVersionSchema(Schema):
    version = required(fields.Integer, metadata={"description": "1, 2, ...: what played"})
    created_at = required(fields.String)
    url = PublicUrl(allow_none=True, metadata={
        "description": "the admin's and the owner's (private:read); null for a hosted bot"})
    language = fields.String(metadata={"description": "a hosted version's language"})
    source_sha256 = fields.String(metadata={
        "description": "a hosted version's source: the sha256 of its files packed"})


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
    url = PublicUrl(allow_none=True, metadata={
        "description": "its URL: shown to the admin and to its owner's tokens with "
                       "private:read only; null for a hosted bot"})
    language = required(fields.String, allow_none=True, metadata={
        "description": "a hosted bot's language (GET /languages); null for a push bot"})
    status = required(fields.String, validate=BUILD_STATUSES, metadata={
        "description": "whether it can be seated: a push bot is always `ready`; a hosted "
                       "bot is `building` its current version, then `ready` or "
                       "`build_failed` (GET /bots/{id}/build)"})
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


class BuildSchema(Schema):
    bot_id = required(fields.String)
    version = required(fields.Integer)
    language = required(fields.String)
    status = required(fields.String, validate=BUILD_STATUSES)
    queued_at = required(fields.String)
    started_at = fields.String(metadata={"description": "when a worker took it up"})
    finished_at = fields.String()
    seconds = fields.Float(metadata={"description": "the build's wall time"})
    worker = fields.String(metadata={"description": "the worker that built it"})
    log = required(fields.String, metadata={
        "description": "what the build wrote (capped), and its outcome; empty while it "
                       "waits"})


class BuildQuerySchema(Schema):
    version = fields.Integer(validate=validate.Range(min=1), metadata={
        "description": "default: the current version"})


class LanguageSchema(Schema):
    name = required(fields.String)
    version = required(fields.String, metadata={"description": "of its compiler or runtime"})
    build = required(fields.String, allow_none=True, metadata={
        "description": "the command run in the bot's folder to build it"})
    run = required(fields.String, metadata={"description": "the command each seat runs"})
    entry = fields.String(metadata={"description": "the entry file"})


class LanguageListSchema(Schema):
    languages = required(fields.List, fields.Nested(LanguageSchema), metadata={
        "description": "what the hosted workers run; before one has started, what this "
                       "server's machine has"})


class BotVersionListSchema(Schema):
    versions = required(fields.List, fields.Nested(BotVersionSchema))


class BotListSchema(PageSchema):
    bots = required(fields.List, fields.Nested(BotSchema), metadata={
        "description": "by registration time, oldest first"})


BOT_ID = id_parameter("bot_id")

WRITERS = ("admin", "account")
PATHS = {
    "/bots": {
        "post": operation(
            "createBot", "Register a push bot or upload a hosted one (the admin, or an account "
                         "with bots:write)",
            "bots", (201, BotCreatedSchema), (400, 401, 403, 409, 413, 422, 429),
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
                        "the admin, and to a token with private:read). With `source` instead "
                        "of `url` the bot is hosted: its code (at most 1 MiB) is built by a "
                        "hosted worker in the sandbox (`status` `building`, then `ready` or "
                        "`build_failed`: GET /bots/{id}/build), and each seat of its matches "
                        "is a sandboxed process speaking the stdin/stdout protocol. A body "
                        "may be up to 3 MiB here."),
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
            "updateBot",
            "Change a bot's name, URL or source, updates or public (its owner, the admin)",
            "bots", (200, BotSchema), (400, 401, 403, 404, 409, 413, 422), body=BotUpdateSchema,
            parameters=[BOT_ID], security=WRITERS,
            description="The URL is checked as at registration, and a new one (or new "
                        "source, for a hosted bot: built again) makes a new version (`GET "
                        "/bots/{id}/versions`); a push bot cannot take source, nor a hosted "
                        "bot a URL (422); a name another bot has is a "
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
    "/bots/{bot_id}/build": {"get": operation(
        "getBotBuild", "A hosted bot version's build: status and log (its owner, the admin)",
        "bots", (200, BuildSchema), (400, 401, 403, 404),
        parameters=[BOT_ID, {"in": "query", "schema": BuildQuerySchema}], security=WRITERS,
        description="404 for a push bot, or a version that is not hosted.")},
    "/languages": {"get": operation(
        "listLanguages", "The languages hosted bots may be written in", "bots",
        (200, LanguageListSchema), (), security=WRITERS, optional_security=True,
        description="Each with the version of its tool and the commands the sandbox runs "
                    "to build and to play (docs/bots.md, Hosted bots).")},
    "/bots/{bot_id}/secret": {"post": operation(
        "rotateBotSecret", "A new signing secret for a bot (its owner, the admin)", "bots",
        (200, BotCreatedSchema), (401, 403, 404), parameters=[BOT_ID], security=WRITERS,
        description="Needs bots:write and private:read (the answer shows the secret). "
                    "Matches that start from now on sign with the new secret; matches "
                    "already running keep the old one to their end (accept both meanwhile). "
                    "The new one is shown in this answer only.")},
}


@bp.post("/bots")
def register_bot() -> Response:
    """201 with the bot (and its secret, to whom may see it); 409 for a taken name."""
    who = require_scope(BOTS_WRITE)
    _allow_uploads()
    data = load_body(BotCreateSchema)
    if "url" in data:
        check_bot_host(data["url"])
    store = services().store
    with store.serialized(BOT_NAMES_LOCK):  # the name and the quota checked, then taken
        return _register(store, data, who)


def _register(store: Store, data: dict, who: Caller) -> Response:
    """The bot registered, its name and its owner's quota checked (under BOT_NAMES_LOCK, which
    an account's deletion holds too)."""
    if who.account_id is not None and store.get_account(who.account_id) is None:
        raise Problem(AUTH_FORBIDDEN, "this token's account was deleted")
    _check_name_free(data["name"])
    if who.account_id is not None:
        quotas.check_held("bots", quotas.bots_held(store, who.account_id),
                          services().config.quotas)
    now = utc_now()
    bot = {"id": f"bot-{secrets.token_hex(6)}", "name": data["name"], "url": data.get("url"),
           "games": sorted(set(data["games"])), "updates": data.get("updates", False),
           "public": data.get("public", True), "owner": who.account_id, "created_at": now,
           "secret": new_secret(), "version": 1,
           "versions": [{"version": 1, "created_at": now, "url": data.get("url")}]}
    packed = None
    if "source" in data:
        packed = _packed_source(data["source"])
        bot["language"] = data["source"]["language"]
        bot["versions"][0].update(_hosted_version(bot["language"], packed))
    store.save_bot(bot)
    if packed is not None:
        store.add_hosted_version(bot["id"], 1, packed, bot["language"], now)
    if who.account_id is not None:
        store.add_account_bot(who.account_id, bot["id"])
    return reply(BotCreatedSchema, _shown(bot, who, with_secret=True), 201,
                 headers={"Location": f"/bots/{bot['id']}"})


def _allow_uploads() -> None:
    """A bot's body may hold its source: up to MAX_UPLOAD_BODY_BYTES (or the server's own
    limit, when larger)."""
    request.max_content_length = max(services().config.max_body_bytes, MAX_UPLOAD_BODY_BYTES)


def _packed_source(source: dict) -> bytes:
    """The upload's files, checked and packed; 422 saying what is wrong."""
    try:
        return hosted.pack(hosted.source_files(source))
    except hosted.SourceError as error:
        raise unprocessable({"source": [str(error)]}) from None


def _hosted_version(language: str, packed: bytes) -> dict:
    return {"language": language, "source_sha256": hashlib.sha256(packed).hexdigest()}


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
    statuses = build_statuses(bots)
    return reply(BotListSchema, {"bots": [_shown(bot, who, status=status)
                                          for bot, status in zip(bots, statuses, strict=True)],
                                 "total": total, **query})


@bp.get("/bots/<id:bot_id>")
def get_bot(bot_id: str) -> Response:
    return reply(BotSchema, _shown(_find_bot(bot_id), caller()))


@bp.get("/bots/<id:bot_id>/versions")
def get_versions(bot_id: str) -> Response:
    return reply(BotVersionListSchema,
                 {"versions": _shown(_find_bot(bot_id), caller())["versions"]})


@bp.get("/bots/<id:bot_id>/build")
def get_build(bot_id: str) -> Response:
    """A hosted version's build, to its owner and the admin."""
    who = require_scope(BOTS_WRITE)
    bot = _own_bot(bot_id, who, retired_too=True)
    version = load_query(BuildQuerySchema).get("version", bot.get("version", 1))
    build = services().store.bot_build(bot_id, version)
    if build is None:
        raise not_found(f"a hosted version {version} of bot {bot_id!r}")
    return reply(BuildSchema, {"bot_id": bot_id, "version": version, "log": "", **build})


@bp.get("/languages")
def list_languages() -> Response:
    """What the hosted workers announced; before any did, what this machine has."""
    announced = services().store.hosted_languages()
    if not announced:
        announced = {name: language.public()
                     for name, language in sandbox.languages().items()}
    return reply(LanguageListSchema, {"languages": list(announced.values())})


@bp.patch("/bots/<id:bot_id>")
def change_bot(bot_id: str) -> Response:
    """New fields (checked as at registration); a new URL or source is a new version.
    Matches already recorded keep the old name and version."""
    who = require_scope(BOTS_WRITE)
    _own_bot(bot_id, who)  # 404, 403 before the body is read
    _allow_uploads()
    data = load_body(BotUpdateSchema)
    store = services().store
    names = [BOT_NAMES_LOCK] if "name" in data else []
    with store.serialized(*names, bot_lock(bot_id)):
        return _change(store, _own_bot(bot_id, who), data, who)


def _change(store: Store, bot: dict, data: dict, who: Caller) -> Response:
    """The bot changed as `data` says (under its lock, and BOT_NAMES_LOCK for a new name)."""
    bot_id = bot["id"]
    _check_same_kind(bot, data)
    if "url" in data:
        check_bot_host(data["url"])
    source = data.pop("source", None)
    packed = None if source is None else _packed_source(source)
    versioned = ("url" in data and data["url"] != bot["url"]) or (
        packed is not None and _hosted_version(source["language"], packed)
        != {key: bot["versions"][-1].get(key) for key in ("language", "source_sha256")})
    if versioned:
        bot = new_version(bot, data.get("url", bot["url"]), utc_now())
        if packed is not None:
            bot["language"] = source["language"]
            bot["versions"][-1].update(_hosted_version(bot["language"], packed))
    old_name = bot["name"]
    bot.update(data)
    if "name" in data:
        _check_name_free(data["name"], other_than=bot_id)
    store.update_bot(bot, old_name)
    if versioned and packed is not None:
        store.add_hosted_version(bot_id, bot["version"], packed, bot["language"],
                                 bot["versions"][-1]["created_at"])
    store.forget_leaderboards(bot["games"])  # its name, its interval's width
    if versioned:
        ladders.new_version(store, bot)
    return reply(BotSchema, _shown(bot, who))


def _check_same_kind(bot: dict, data: dict) -> None:
    """422 for a URL given to a hosted bot, or source to a push bot."""
    if "source" in data and not bot.get("language"):
        raise unprocessable({"source": ["this bot is a push bot (it has a url): register a "
                                        "new bot to upload code"]})
    if "url" in data and bot.get("language"):
        raise unprocessable({"url": ["this bot is hosted (its code was uploaded): it has no "
                                     "url"]})


@bp.delete("/bots/<id:bot_id>")
def retire_bot(bot_id: str) -> Response:
    """Retire the bot: no new match or tournament accepts it; its history stays."""
    who = require_scope(BOTS_WRITE)
    store = services().store
    with store.serialized(bot_lock(bot_id)):
        bot = _own_bot(bot_id, who, retired_too=True)
        retire(store, bot)
    return reply(BotSchema, _shown(bot, who))


def retire(store: Store, bot: dict) -> None:
    """Retire a bot not retired yet (its caller holds its lock): out of its ladders too."""
    if not is_retired(bot):
        bot["retired_at"] = utc_now()
        store.update_bot(bot)
        ladders.retired(store, bot["id"])


@bp.post("/bots/<id:bot_id>/secret")
def rotate_secret(bot_id: str) -> Response:
    """A new secret for the bot, shown in this answer only; matches that start from now on
    sign with it (running ones keep the old one to their end)."""
    who = require_scope(BOTS_WRITE)
    if PRIVATE_READ not in who.scopes:
        raise Problem(AUTH_SCOPE_MISSING, "rotating a secret shows it: this token needs "
                                          f"the scope {PRIVATE_READ} too",
                      members={"scope": PRIVATE_READ})
    store = services().store
    with store.serialized(bot_lock(bot_id)):
        bot = _own_bot(bot_id, who)
        bot["secret"] = new_secret()
        store.update_bot(bot)
    return reply(BotCreatedSchema, _shown(bot, who, with_secret=True))


def check_seatable(bots: list[dict], who: Caller) -> None:
    """Refuse to seat a bot of a suspended account (409 `bot/owner-suspended`), a hosted
    bot whose current version is not built (409 `bot/not-ready`), or, for an account,
    another account's bot that is not public (403 `bot/not-public`)."""
    store = services().store
    owners = {bot["owner"] for bot in bots if bot.get("owner")}
    suspended = {owner for owner in owners
                 if (store.get_account(owner) or {}).get("suspended")}
    for bot, status in zip(bots, build_statuses(bots), strict=True):
        if bot.get("owner") in suspended:
            raise Problem(BOT_OWNER_SUSPENDED, f"bot {bot['id']} ({bot['name']}) belongs to a "
                                               "suspended account: it plays no new match")
        if not who.admin and not who.owns(bot) and not bot.get("public", True):
            raise Problem(BOT_NOT_PUBLIC, f"bot {bot['id']} ({bot['name']}) is not public: "
                                          "only its owner seats it")
        if status != BuildStatus.READY:
            raise Problem(BOT_NOT_READY, f"hosted bot {bot['id']} ({bot['name']}) is "
                                         f"{status} at version {bot.get('version', 1)}: it "
                                         "plays once its build is ready (GET "
                                         f"/bots/{bot['id']}/build)")


def build_statuses(bots: list[dict]) -> list[str]:
    """Each bot's `status`: `ready` for a push bot, its current version's build status
    for a hosted bot (one round trip for all)."""
    hosted_bots = [bot for bot in bots if bot.get("language")]
    found = iter(services().store.build_statuses(
        [(bot["id"], bot.get("version", 1)) for bot in hosted_bots]))
    return [next(found) or BuildStatus.BUILDING.value if bot.get("language")
            else BuildStatus.READY.value for bot in bots]


def _shown(bot: dict, who: Caller, with_secret: bool = False, status: str | None = None
           ) -> dict:
    """The bot as `who` may see it, with its `status` (read when not given): its URLs
    (and, when asked, its secret) only when it may see the bot's private fields."""
    shown = {**public_bot(bot), "status": status or build_statuses([bot])[0]}
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
