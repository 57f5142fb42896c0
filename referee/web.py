"""What the views share: the app's services, body loading and the one success reply."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import orjson
from flask import Response, current_app, request
from marshmallow import Schema, fields
from werkzeug.exceptions import RequestEntityTooLarge

import engines
from tournament.store import Store

from .config import Config
from .problems import invalid


@dataclass
class Services:
    """The configuration and the Redis store of one app."""

    config: Config
    store: Store


def services() -> Services:
    return current_app.extensions["referee"]


def load_json() -> object:
    """The request's body parsed as JSON (400 when empty or not JSON)."""
    raw = request.get_data(cache=True)
    _check_streamed_size(raw)
    if not raw.strip():
        raise invalid({"_body": ["a JSON body is required"]})
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise invalid({"_body": [f"the body is not valid JSON: {error}"]}) from None


def _check_streamed_size(raw: bytes) -> None:
    """413 for a chunked body (no Content-Length) that reached the limit: werkzeug stops
    reading there, so what was read is a truncated body, not the request."""
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    if request.content_length is None and limit is not None and len(raw) >= limit:
        raise RequestEntityTooLarge()


@cache
def shared(schema: type[Schema]) -> Schema:
    """One instance per schema class for every request: building one costs as much as
    loading or dumping a body with it, and marshmallow 4 instances keep no per-call state."""
    return schema()


def load_body(schema: type[Schema]) -> dict:
    """The request's JSON body loaded through `schema` (400 naming the fields otherwise)."""
    return shared(schema).load(whole_options(whole_numbers(shared(schema), load_json())))


def whole_numbers(schema: Schema, data: object) -> object:
    """`data` with each whole float given to an integer field of `schema` (1302.0) made an
    int: JSON, and so the spec, does not tell 1302.0 from 1302. Strings, fractions and
    booleans stay refused; other fields are left exactly as sent."""
    if not isinstance(data, dict):
        return data
    fixed = dict(data)
    for field in schema.fields.values():
        key = field.data_key or field.name
        if key in fixed:
            fixed[key] = _whole(field, fixed[key])
    return fixed


def whole_options(data: object) -> object:
    """A body naming a `game` and its `options`, with each whole float given to an option
    the game describes as an integer made an int, as `whole_numbers` does for fields."""
    if not (isinstance(data, dict) and isinstance(data.get("options"), dict)
            and data.get("game") in engines.names()):
        return data
    described = engines.get(data["game"]).describe().get("options", {})
    options = {name: int(value) if described.get(name, {}).get("type") == "integer"
               and isinstance(value, float) and value.is_integer() else value
               for name, value in data["options"].items()}
    return {**data, "options": options}


def _whole(field: fields.Field, value: object) -> object:
    if isinstance(field, fields.Integer) and isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(field, fields.Nested) and isinstance(field.schema, Schema):
        return whole_numbers(field.schema, value)
    if isinstance(field, fields.List) and isinstance(value, list):
        return [_whole(field.inner, item) for item in value]
    return value


def load_query(schema: type[Schema]) -> dict:
    return shared(schema).load(request.args.to_dict())


def reply(schema: type[Schema], value: object, status: int = 200,
          headers: dict | None = None) -> Response:
    """One success response: `value` dumped through its schema, as JSON."""
    response = Response(orjson.dumps(shared(schema).dump(value)), status=status,
                        mimetype="application/json")
    response.headers.update(headers or {})
    return response
