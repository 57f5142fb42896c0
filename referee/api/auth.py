"""Bearer tokens: the admin token from the app's config, and one token per pull seat.

Tokens travel as `Authorization: Bearer <token>`, are compared with
`hmac.compare_digest`, and never appear in replays, logs or error bodies.
"""

from __future__ import annotations

import hmac
import secrets

from flask import request

from referee.api.problems import Problem
from referee.api.web import services
from referee.errors import AUTH_FORBIDDEN, AUTH_MISSING_TOKEN


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
