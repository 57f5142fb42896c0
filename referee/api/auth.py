"""Bearer tokens: the admin token from the app's config, account tokens with their scopes
(issue 27), and one token per pull seat.

Tokens travel as `Authorization: Bearer <token>`, never appear in replays, logs or error
bodies, and carry 256 bits of randomness. The admin token is compared with
`hmac.compare_digest`; account and seat tokens are stored only as sha256 digests and looked
up by digest, so no comparison depends on a secret's bytes. Every request reads its account
token from Redis: a token revoked, expired, or of an account suspended or deleted fails at
its next request in every API process.

Scopes (a public contract): `bots:write`, `matches:write`, `tournaments:write`,
`private:read` (the private fields of one's own bots: URL, secret, build log, debug while
they play). The admin token has every power; an account token only its scopes.
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from flask import g, request

from referee.api.problems import Problem
from referee.api.web import services
from referee.errors import AUTH_FORBIDDEN, AUTH_MISSING_TOKEN, AUTH_SCOPE_MISSING

BOTS_WRITE, MATCHES_WRITE, TOURNAMENTS_WRITE, PRIVATE_READ = (
    "bots:write", "matches:write", "tournaments:write", "private:read")
SCOPES = (BOTS_WRITE, MATCHES_WRITE, TOURNAMENTS_WRITE, PRIVATE_READ)


@dataclass(frozen=True)
class Caller:
    """Who sent the request: the admin, an account (with its token's scopes), or neither
    (anonymous, or a token that is no account's: a seat token, or nothing valid)."""

    admin: bool = False
    account: dict[str, Any] | None = None
    token: dict[str, Any] = field(default_factory=dict)  # the account token's record

    @property
    def account_id(self) -> str | None:
        return None if self.account is None else self.account["id"]

    @property
    def scopes(self) -> frozenset[str]:
        return frozenset(SCOPES) if self.admin else frozenset(self.token.get("scopes", ()))

    def owns(self, bot: dict[str, Any]) -> bool:
        """Whether the bot is this account's (the admin owns nothing, and may everything)."""
        return self.account is not None and bot.get("owner") == self.account["id"]

    def may_change(self, bot: dict[str, Any]) -> bool:
        return self.admin or self.owns(bot)

    def sees_private(self, bot: dict[str, Any]) -> bool:
        """The bot's URL, secret and live debug: the admin's, and its owner's with
        `private:read`."""
        return self.admin or (self.owns(bot) and PRIVATE_READ in self.scopes)


def new_token() -> str:
    return secrets.token_urlsafe(32)


def bearer_token() -> str | None:
    """The request's bearer token, or None. Another scheme (`Basic …`, as a proxy with
    basic auth sends) or an empty token is simply not a token: public requests answer
    as without one, and those that need a token answer 401."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def require_token() -> str:
    token = bearer_token()
    if token is None:
        raise Problem(AUTH_MISSING_TOKEN, "this request needs a bearer token",
                      headers={"WWW-Authenticate": "Bearer"})
    return token


def is_admin(token: str | None, admin_token: str) -> bool:
    return bool(token and admin_token
                and hmac.compare_digest(token.encode(), admin_token.encode()))


def asked_by_admin() -> bool:
    """Whether the request carries the app's admin token (no token: False)."""
    return is_admin(bearer_token(), services().config.admin_token)


def require_admin() -> None:
    """401 without a token, 403 with a token that is not the app's admin token."""
    if not is_admin(require_token(), services().config.admin_token):
        raise Problem(AUTH_FORBIDDEN, "this request needs the admin token")


def caller() -> Caller:
    """Who sent this request (read once per request)."""
    if "referee_caller" not in g:
        g.referee_caller = _identify(bearer_token())
    return g.referee_caller


def _identify(token: str | None) -> Caller:
    if token is None:
        return Caller()
    if is_admin(token, services().config.admin_token):
        return Caller(admin=True)
    holder = services().store.token_holder(token)
    if holder is None:
        return Caller()
    record, account = holder
    if account.get("suspended"):
        raise Problem(AUTH_FORBIDDEN, f"the account {account['id']} is suspended: its tokens "
                                      "grant nothing")
    expires_at = record.get("expires_at_s")
    if expires_at is not None and expires_at <= time.time():
        return Caller()
    return Caller(account=account, token=record)


def require_scope(scope: str) -> Caller:
    """The caller, when it may make a call that needs `scope`: the admin, or an account
    token with that scope. 401 without a token; 403 with a token that is neither; 403
    `auth/scope-missing` naming the scope for an account token without it."""
    require_token()
    who = caller()
    if who.admin:
        return who
    if who.account is None:
        raise Problem(AUTH_FORBIDDEN, f"this request needs the admin token or an account "
                                      f"token with the scope {scope}")
    if scope not in who.scopes:
        raise Problem(AUTH_SCOPE_MISSING, f"this token does not have the scope {scope}",
                      members={"scope": scope})
    return who


def require_account() -> Caller:
    """An account token's caller (any scope): 401 without a token, 403 with another one."""
    require_token()
    who = caller()
    if who.account is None:
        raise Problem(AUTH_FORBIDDEN, "this request needs an account token")
    return who
