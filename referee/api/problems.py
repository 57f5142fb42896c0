"""Every failure of the API as `application/problem+json` (RFC 9457).

Views raise `Problem`, of a type of the catalogue (`referee.errors`), or let marshmallow's
ValidationError, werkzeug's HTTP errors and the errors of Redis and stored replays escape;
one handler turns each into `{"type", "title", "status", "detail"}` plus `errors` (field ->
messages) for validation failures. Unexpected exceptions become a 500 that says nothing
about internals.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from itertools import islice
from typing import Any

import orjson
import redis
from flask import Flask, Response
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException, MethodNotAllowed

import engines
from referee import errors as catalogue
from referee.errors import ProblemType, RefereeError
from referee.match.compact import StoredReplayError
from referee.match.rerun import RecordError
from tournament.quotas import QuotaExceeded

log = logging.getLogger(__name__)

MEDIA_TYPE = "application/problem+json"
INTERNAL_DETAIL = "the server failed to answer; the error is logged"


class Problem(RefereeError):
    """An API error: its type (`kind`, from the catalogue), what happened (`detail`), the
    offending fields for validation errors, and headers to send with it."""

    def __init__(self, kind: ProblemType, detail: str, errors: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None, members: dict[str, Any] | None = None):
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.errors = errors
        self.headers = headers or {}
        self.members = members or {}  # the type's own members (RFC 9457 extensions)

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": self.kind.uri, "title": self.kind.title,
                                "status": self.kind.status, "detail": self.detail,
                                **self.members}
        if self.errors is not None:
            body["errors"] = self.errors
        return body


def invalid(errors: dict[Any, Any], detail: str | None = None) -> Problem:
    """400 naming the offending fields (and saying why, when one field has one message)."""
    errors = _bounded(_string_keys(errors))
    names = ", ".join(sorted(errors))
    only = next(iter(errors.values())) if len(errors) == 1 else None
    why = f" ({only[0]})" if isinstance(only, list) and len(only) == 1 else ""
    return Problem(catalogue.REQUEST_INVALID,
                   detail or f"the request has invalid fields: {names}{why}", errors=errors)


def unprocessable(errors: dict[Any, Any]) -> Problem:
    """422: the request is well formed (the spec admits it) but refused on what it means,
    e.g. a seat naming a bot that is not registered; `errors` names the fields."""
    problem = invalid(errors)
    return Problem(catalogue.REQUEST_UNPROCESSABLE, problem.detail, errors=problem.errors)


def not_found(what: str) -> Problem:
    return Problem(catalogue.NOT_FOUND, f"{what} does not exist")


def refuse_over_rate(kind: ProblemType, retry_s: int | None, rule: str) -> None:
    """429 `kind` with Retry-After when a rate limit refused the request (`retry_s`, the
    seconds to wait, is not None); `rule` says the limit."""
    if retry_s is not None:
        raise Problem(kind, f"{rule}; retry in {retry_s} s",
                      headers={"Retry-After": str(retry_s)})


def engine_problem(error: engines.EngineError, field: str | None = None) -> Problem:
    """An engine's refusal of what the request gave (in `field`, named in `errors` when
    given): the type the catalogue answers its code with, the engine's reason as detail."""
    return Problem(catalogue.engine_problem_type(error), error.reason,
                   errors={field: [error.reason]} if field else None)


def from_http_exception(error: HTTPException) -> Problem:
    status = error.code or 500
    kind = catalogue.HTTP_PROBLEMS.get(status) or replace(
        catalogue.HTTP_ERROR, status=status, title=error.name)
    headers = {}
    if status == 405 and isinstance(error, MethodNotAllowed) and error.valid_methods:
        headers["Allow"] = ", ".join(error.valid_methods)
    return Problem(kind, error.description or error.name, headers=headers)


def problem_response(problem: Problem) -> Response:
    response = Response(orjson.dumps(problem.body()), status=problem.kind.status,
                        mimetype=MEDIA_TYPE)
    response.headers.update(problem.headers)
    return response


MAX_ERRORS = 20
"""The fields (or items) with errors a problem names at each level of `errors`; more are
counted under `_more`."""


def _bounded(messages: Any) -> Any:
    """marshmallow's messages, at most MAX_ERRORS at each level: a body of 100,000 bad
    items had an error each, and the answer grew to 100 MB."""
    if isinstance(messages, dict):
        kept = {key: _bounded(value) for key, value in islice(messages.items(), MAX_ERRORS)}
        if len(messages) > MAX_ERRORS:
            kept["_more"] = [f"{len(messages) - MAX_ERRORS} more with errors, not listed"]
        return kept
    if isinstance(messages, list):
        return [_bounded(message) for message in messages[:MAX_ERRORS]]
    return messages


def _string_keys(messages: dict[Any, Any]) -> dict[str, Any]:
    """marshmallow keys list items by index; JSON objects need string keys."""
    return {str(key): _string_keys(value) if isinstance(value, dict) else value
            for key, value in messages.items()}


def register(app: Flask) -> None:
    """Install the one error handler for every failure."""

    @app.errorhandler(Problem)
    def handle_problem(problem: Problem) -> Response:
        return problem_response(problem)

    @app.errorhandler(ValidationError)
    def handle_validation(error: ValidationError) -> Response:
        messages = error.messages if isinstance(error.messages, dict) else {
            "_body": error.messages}
        return problem_response(invalid(messages))

    @app.errorhandler(HTTPException)
    def handle_http(error: HTTPException) -> Response:
        return problem_response(from_http_exception(error))

    @app.errorhandler(redis.ConnectionError)
    def handle_redis_down(error: redis.ConnectionError) -> Response:
        log.error("Redis unreachable: %s", error)
        return problem_response(Problem(catalogue.REDIS_UNREACHABLE,
                                        "the referee's Redis does not answer"))

    @app.errorhandler(QuotaExceeded)
    def handle_quota(error: QuotaExceeded) -> Response:
        return problem_response(Problem(
            catalogue.QUOTA_EXCEEDED, str(error), headers={"Retry-After": str(error.retry_s)},
            members={"quota": error.quota, "limit": error.limit, "remaining": 0}))

    @app.errorhandler(StoredReplayError)
    @app.errorhandler(RecordError)  # e.g. an archived replay of a version not played here
    def handle_unreadable_replay(error: StoredReplayError | RecordError) -> Response:
        log.error("stored replay unreadable: %s", error)
        return problem_response(Problem(
            catalogue.REPLAY_UNAVAILABLE,
            "the stored replay cannot be read by this server now (an archived replay out of "
            "reach, or one stored under another engine version); the error is logged"))

    @app.errorhandler(Exception)
    def handle_unexpected(error: Exception) -> Response:
        log.exception("unexpected error")
        return problem_response(Problem(catalogue.INTERNAL, INTERNAL_DETAIL))
