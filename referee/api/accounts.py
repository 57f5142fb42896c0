"""Accounts (issue 27, a public contract): sign-up under REFEREE_SIGNUP, the account's own
tokens with their scopes, invites and the admin's account management.

- `POST /accounts {"name", "invite"?}`: 201 `{"id", "name", "token"}`, the token (all four
  scopes, no expiry) shown once. `closed`: the admin only; `invite`: with a one-time code
  from `POST /invites`; `open`: anyone, REFEREE_SIGNUP_RATE per client address.
- `GET /accounts/me`; `POST/GET /accounts/me/tokens`; `DELETE /accounts/me/tokens/{id}`.
- The admin: `POST /invites`, `GET /accounts`, `GET/PATCH/DELETE /accounts/{id}`.
A deleted account's bots are retired (their matches and ratings stay); a suspended one's
tokens grant nothing and its bots play no new match until it is restored.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from flask import Blueprint, Response, request
from flask.blueprints import BlueprintSetupState
from marshmallow import Schema, fields, validate
from werkzeug.routing import BaseConverter

from referee.api.auth import (
    SCOPES,
    new_token,
    require_account,
    require_admin,
    require_token,
)
from referee.api.auth import caller as current_caller
from referee.api.bots import retire
from referee.api.common import (
    BoundedList,
    FullMatch,
    ListQuerySchema,
    PageSchema,
    StrictBoolean,
    required,
)
from referee.api.operations import PAGE, id_parameter, link, operation, path_parameter
from referee.api.problems import Problem, not_found, refuse_over_rate
from referee.api.web import load_body, load_query, reply, services
from referee.errors import (
    ACCOUNT_NAME_TAKEN,
    AUTH_FORBIDDEN,
    AUTH_SCOPE_MISSING,
    SIGNUP_RATE_LIMITED,
    SIGNUP_REFUSED,
)
from referee.match.replay import utc_now
from tournament import quotas
from tournament.store.keys import BOT_NAMES_LOCK, account_lock, bot_lock

bp = Blueprint("accounts", __name__)
ACCOUNT_ID_PATTERN = r"acct-[0-9a-f]{12}"


class AccountIdConverter(BaseConverter):
    """An account id in a path: `acct-` and 12 hex digits, so `/accounts/me` is never one."""

    regex = ACCOUNT_ID_PATTERN


@bp.record_once  # recorded before the routes that use it
def _add_converter(state: BlueprintSetupState) -> None:
    state.app.url_map.converters["account_id"] = AccountIdConverter

NAME = FullMatch(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", error=(
    "1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit"))
MAX_TOKEN_LIFE_S = 366 * 86400
INVITE_LIFE_S = 7 * 86400


class AccountCreateSchema(Schema):
    name = fields.String(required=True, validate=NAME)
    invite = fields.String(validate=validate.Length(min=1, max=200), metadata={
        "description": "a one-time code from `POST /invites` (REFEREE_SIGNUP=invite)"})


class QuotaUseSchema(Schema):
    limit = required(fields.Integer)
    used = required(fields.Integer)
    remaining = required(fields.Integer)


class AccountSchema(Schema):
    id = required(fields.String)
    name = required(fields.String)
    created_at = required(fields.String)
    suspended = required(fields.Boolean, metadata={
        "description": "a suspended account's tokens grant nothing; its bots play no new "
                       "match"})


class AccountViewSchema(AccountSchema):
    """`GET /accounts/me` and the admin's `GET /accounts/{id}`: the account with its bots
    and what it used of each quota."""

    bots = required(fields.List, fields.String(), metadata={"description": "its bots' ids"})
    quotas = required(fields.Dict, keys=fields.String(), values=fields.Nested(QuotaUseSchema),
                      metadata={"description": "per quota (bots, tokens, concurrent_matches, "
                                               "matches_per_day, tournaments_per_day)"})


class AccountCreatedSchema(AccountSchema):
    token = required(fields.String, metadata={
        "description": "the account's first token (every scope, no expiry): shown once"})


class AccountListSchema(PageSchema):
    accounts = required(fields.List, fields.Nested(AccountSchema))


class AccountChangeSchema(Schema):
    suspended = StrictBoolean(required=True)


class TokenCreateSchema(Schema):
    scopes = BoundedList(fields.String(validate=validate.OneOf(SCOPES)), len(SCOPES),
                         required=True, validate=validate.Length(min=1))
    expires_in_s = fields.Integer(validate=validate.Range(min=1, max=MAX_TOKEN_LIFE_S),
                                  metadata={"description": "none: it never expires"})


class TokenSchema(Schema):
    id = required(fields.String)
    scopes = required(fields.List, fields.String(validate=validate.OneOf(SCOPES)))
    created_at = required(fields.String)
    expires_at = required(fields.String, allow_none=True, metadata={
        "description": "null: it never expires"})


class TokenCreatedSchema(TokenSchema):
    token = required(fields.String, metadata={"description": "shown in this answer only"})


class TokenListSchema(Schema):
    tokens = required(fields.List, fields.Nested(TokenSchema), metadata={
        "description": "the account's live tokens, oldest first (never the tokens)"})


class InviteSchema(Schema):
    code = required(fields.String, metadata={"description": "one use; shown once"})
    expires_at = required(fields.String)


ACCOUNT_ID = path_parameter("account_id", {"type": "string",
                                           "pattern": f"^{ACCOUNT_ID_PATTERN}$"})
TOKEN_ID = id_parameter("token_id")

PATHS = {
    "/accounts": {
        "post": operation(
            "createAccount", "Create an account (REFEREE_SIGNUP says who may)", "accounts",
            (201, AccountCreatedSchema), (400, 401, 403, 409, 413, 429),
            body=AccountCreateSchema, security="admin", optional_security=True,
            links={"GetAccount": link("getAccount", account_id="$response.body#/id")},
            description="`closed` (the default): the admin only (401/403 otherwise); "
                        "`invite`: anyone with a code from `POST /invites` (403 "
                        "`account/signup-refused` without one, or with one used or "
                        "unknown); `open`: anyone, REFEREE_SIGNUP_RATE accounts per client "
                        "address (429). A name taken without regard to case is a 409."),
        "get": operation(
            "listAccounts", "The accounts (admin; a page)", "accounts",
            (200, AccountListSchema), (400, 401, 403), parameters=[PAGE], security="admin"),
    },
    "/accounts/me": {"get": operation(
        "getMyAccount", "The caller's account, its bots and quotas", "accounts",
        (200, AccountViewSchema), (401, 403), security="account")},
    "/accounts/me/tokens": {
        "post": operation(
            "createToken", "A new token for the caller's account", "accounts",
            (201, TokenCreatedSchema), (400, 401, 403, 413, 429), body=TokenCreateSchema,
            security="account",
            description="Its scopes must be among the calling token's (403 "
                        "`auth/scope-missing` naming one that is not). REFEREE_QUOTA_TOKENS "
                        "live tokens at most (429)."),
        "get": operation(
            "listTokens", "The caller's account's live tokens (never the tokens)", "accounts",
            (200, TokenListSchema), (401, 403), security="account"),
    },
    "/accounts/me/tokens/{token_id}": {"delete": operation(
        "revokeToken", "Revoke one of the caller's account's tokens at once", "accounts",
        (200, TokenSchema), (401, 403, 404), parameters=[TOKEN_ID], security="account",
        description="It fails from the next request on, in every API process.")},
    "/accounts/{account_id}": {
        "get": operation("getAccount", "An account, its bots and quotas (admin)", "accounts",
                         (200, AccountViewSchema), (401, 403, 404), parameters=[ACCOUNT_ID],
                         security="admin"),
        "patch": operation(
            "changeAccount", "Suspend or restore an account (admin)", "accounts",
            (200, AccountSchema), (400, 401, 403, 404, 413), body=AccountChangeSchema,
            parameters=[ACCOUNT_ID], security="admin"),
        "delete": operation(
            "deleteAccount", "Delete an account (admin)", "accounts", (200, AccountSchema),
            (401, 403, 404), parameters=[ACCOUNT_ID], security="admin",
            description="Every token fails at once; its bots are retired (their matches, "
                        "replays and ratings stay)."),
    },
    "/invites": {"post": operation(
        "createInvite", "A one-time sign-up code (admin)", "accounts", (201, InviteSchema),
        (401, 403), security="admin",
        description=f"For REFEREE_SIGNUP=invite; it expires after {INVITE_LIFE_S} s.")},
}


@bp.post("/accounts")
def create_account() -> Response:
    admin = _signup_allowed_so_far()
    data = load_body(AccountCreateSchema)
    store = services().store
    invite_left_ms = None
    if not admin and services().config.signup == "invite":
        invite_left_ms = store.use_invite(data["invite"]) if "invite" in data else None
        if invite_left_ms is None:
            raise Problem(SIGNUP_REFUSED, "sign-up here needs an unused invite code (`invite`)")
    account = {"id": f"acct-{secrets.token_hex(6)}", "name": data["name"],
               "created_at": utc_now(), "suspended": False}
    if not store.create_account(account):
        if invite_left_ms is not None:
            store.give_back_invite(data["invite"], invite_left_ms)  # try another name
        raise Problem(ACCOUNT_NAME_TAKEN, f"the account name {data['name']!r} is taken")
    token, _ = _new_token(account["id"], list(SCOPES), None)
    return reply(AccountCreatedSchema, {**account, "token": token}, 201,
                 headers={"Location": f"/accounts/{account['id']}"})


def _signup_allowed_so_far() -> bool:
    """Whether the admin asks (any mode); 401/403 in closed mode for anyone else, 429 past
    the per-address rate in open mode (counted before the body is read)."""
    config = services().config
    if current_caller().admin:
        return True
    if config.signup == "closed":
        require_token()
        raise Problem(SIGNUP_REFUSED, "sign-up is closed here: the admin creates accounts")
    if config.signup == "open":
        limit, window_s = config.signup_rate
        retry_s = services().store.count_signup(request.remote_addr or "unknown", limit,
                                                window_s)
        refuse_over_rate(SIGNUP_RATE_LIMITED, retry_s,
                         f"at most {limit} accounts per {window_s} s from one address")
    return False


@bp.get("/accounts")
def list_accounts() -> Response:
    require_admin()
    query = load_query(ListQuerySchema)
    accounts, total = services().store.account_page(query["offset"], query["limit"])
    return reply(AccountListSchema, {"accounts": accounts, "total": total, **query})


@bp.get("/accounts/me")
def my_account() -> Response:
    return reply(AccountViewSchema, _view(require_account().account or {}))


@bp.post("/accounts/me/tokens")
def create_token() -> Response:
    who = require_account()
    data = load_body(TokenCreateSchema)
    for scope in data["scopes"]:
        if scope not in who.scopes:
            raise Problem(AUTH_SCOPE_MISSING, f"a token can only make tokens with its own "
                                              f"scopes, and this one lacks {scope}",
                          members={"scope": scope})
    account_id = who.account_id or ""
    store = services().store
    with store.serialized(account_lock(account_id, "tokens")):  # the quota checked, then taken
        if store.get_account(account_id) is None:
            raise Problem(AUTH_FORBIDDEN, "this token's account was deleted")
        quotas.check_held("tokens", len(store.account_tokens(account_id)),
                          services().config.quotas)
        token, record = _new_token(account_id, sorted(set(data["scopes"])),
                                   data.get("expires_in_s"))
    return reply(TokenCreatedSchema, {**record, "token": token}, 201)


@bp.get("/accounts/me/tokens")
def list_tokens() -> Response:
    who = require_account()
    return reply(TokenListSchema, {"tokens": services().store.account_tokens(
        who.account_id or "")})


@bp.delete("/accounts/me/tokens/<id:token_id>")
def revoke_token(token_id: str) -> Response:
    record = services().store.revoke_token(require_account().account_id or "", token_id)
    if record is None:
        raise not_found(f"token {token_id!r} of this account")
    return reply(TokenSchema, record)


@bp.get("/accounts/<account_id:account_id>")
def get_account(account_id: str) -> Response:
    require_admin()
    return reply(AccountViewSchema, _view(_find(account_id)))


@bp.patch("/accounts/<account_id:account_id>")
def change_account(account_id: str) -> Response:
    require_admin()
    _find(account_id)
    suspended = load_body(AccountChangeSchema)["suspended"]
    store = services().store
    with store.serialized(BOT_NAMES_LOCK), store.serialized(  # no bot of it seated meanwhile
            *map(bot_lock, store.account_bots(account_id))):
        account = _find(account_id)
        account["suspended"] = suspended
        store.update_account(account)
    return reply(AccountSchema, account)


@bp.delete("/accounts/<account_id:account_id>")
def delete_account(account_id: str) -> Response:
    require_admin()
    account = _find(account_id)
    store = services().store
    with store.serialized(BOT_NAMES_LOCK):  # no bot of the account registered meanwhile
        for bot_id in store.account_bots(account_id):
            with store.serialized(bot_lock(bot_id)):
                if (bot := store.get_bot(bot_id)) is not None:
                    retire(store, bot)
        with store.serialized(account_lock(account_id, "tokens")):  # nor a token made
            store.delete_account(account_id)
    return reply(AccountSchema, account)


@bp.post("/invites")
def create_invite() -> Response:
    require_admin()
    code = new_token()
    services().store.save_invite(code, INVITE_LIFE_S)
    return reply(InviteSchema, {"code": code, "expires_at": _in(INVITE_LIFE_S)}, 201)


def _new_token(account_id: str, scopes: list[str], life_s: int | None
               ) -> tuple[str, dict[str, Any]]:
    """A new token of the account (256 random bits) and its record, saved."""
    record = {"id": f"tok-{secrets.token_hex(6)}", "account": account_id, "scopes": scopes,
              "created_at": utc_now(),
              "expires_at": None if life_s is None else _in(life_s),
              "expires_at_s": None if life_s is None else time.time() + life_s}
    token = new_token()
    services().store.save_token(token, record, life_s)
    return token, record


def _view(account: dict[str, Any]) -> dict[str, Any]:
    store = services().store
    return {**account, "bots": store.account_bots(account["id"]),
            "quotas": quotas.usage(store, account["id"], services().config.quotas,
                                   time.time())}


def _find(account_id: str) -> dict[str, Any]:
    account = services().store.get_account(account_id)
    if account is None:
        raise not_found(f"account {account_id!r}")
    return account


def _in(seconds: int) -> str:
    """The ISO 8601 UTC time `seconds` from now."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + seconds))

