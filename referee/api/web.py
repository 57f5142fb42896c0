"""What the views share: the app's services, body loading and the one success reply."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson
from flask import Response, current_app, request
from marshmallow import Schema, fields, missing
from marshmallow.decorators import POST_DUMP, PRE_DUMP
from werkzeug.exceptions import RequestEntityTooLarge

import engines
from referee.api.common import JsonNumber, SafeInteger
from referee.api.match_rows import MatchRows
from referee.api.problems import Problem, engine_problem, invalid
from referee.config import Config
from referee.errors import REQUEST_MALFORMED
from referee.match.sealing import Sealer
from tournament import results_log
from tournament.store import Store


@dataclass
class Services:
    """The configuration, the Redis store and the keys of one app."""

    config: Config
    store: Store
    sealer: Sealer
    keys_published: bool = False
    match_rows: MatchRows = dataclasses.field(default_factory=MatchRows)  # rendered rows

    def publish_keys(self) -> None:
        """Publish the app's keys in Redis once (at the first request that needs them: the
        app may start while Redis is down)."""
        if not self.keys_published:
            results_log.publish_keys(self.store, self.sealer)
            self.keys_published = True


def services() -> Services:
    return current_app.extensions["referee"]


def path_game(name: str) -> engines.Game:
    """The engine a path names (404 for an unknown game)."""
    try:
        return engines.get(name)
    except engines.UnknownGame as error:
        raise engine_problem(error) from None


def load_json() -> object:
    """The request's body parsed as JSON (400 when empty or not JSON)."""
    raw = request.get_data(cache=True)
    _check_whole(raw)
    if not raw.strip():
        raise invalid({"_body": ["a JSON body is required"]})
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise invalid({"_body": [f"the body is not valid JSON: {error}"]}) from None


def _check_whole(raw: bytes) -> None:
    """413 for a chunked body (no Content-Length) that reached the limit: werkzeug stops
    reading there, so what was read is a truncated body, not the request; 400 for a body
    shorter than its Content-Length (the client stopped sending: gunicorn hands over what
    came, which may parse, as `{}` of `{}, "seats": ...` would)."""
    limit, length = request.max_content_length, request.content_length
    if length is None and limit is not None and len(raw) >= limit:
        raise RequestEntityTooLarge()
    if length is not None and len(raw) < length:
        raise Problem(REQUEST_MALFORMED, f"the body ended after {len(raw)} of the "
                                         f"{length} bytes its Content-Length says")


@cache
def shared(schema: type[Schema]) -> Schema:
    """One instance per schema class for every request: building one costs as much as
    loading or dumping a body with it, and marshmallow 4 instances keep no per-call state."""
    return schema()


def load_body(schema: type[Schema]) -> dict[str, Any]:
    """The request's JSON body loaded through `schema` (400 naming the fields otherwise)."""
    body = whole_options(whole_numbers(shared(schema), load_json()))
    # Any JSON value: marshmallow refuses one that is not an object itself (a 400), though
    # its typing of `load` admits mappings only.
    return shared(schema).load(body)  # type: ignore[arg-type]


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


def load_query(schema: type[Schema]) -> dict[str, Any]:
    return shared(schema).load(request.args.to_dict())


def reply(schema: type[Schema], value: object, status: int = 200,
          headers: dict[str, str] | None = None) -> Response:
    """One success response: `value` dumped through its schema, as JSON."""
    response = Response(orjson.dumps(dumper(schema)(value)), status=status,
                        mimetype="application/json")
    response.headers.update(headers or {})
    return response


@cache
def dumper(schema: type[Schema]) -> Callable[[Any], Any]:
    """`shared(schema).dump`, the same answer in a third of the time for the dicts the views
    reply with: the schema's fields are looked up once, and each value goes straight to its
    field's own serializer (marshmallow's accessors and per-call set-up skipped). Anything
    but a mapping, or a schema with dump hooks, goes through marshmallow itself."""
    instance = shared(schema)
    return _plan(instance) if not _has_dump_hooks(instance) else instance.dump


def _plan(schema: Schema) -> Callable[[Any], Any]:
    steps = [(name, field.attribute or name, field.data_key or name, field.dump_default,
              _value_of(field)) for name, field in schema.dump_fields.items()]

    def dump(obj: Any) -> Any:
        if type(obj) is not dict and not isinstance(obj, Mapping):
            return schema.dump(obj)
        out = {}
        for name, source, key, default, convert in steps:
            value = obj.get(source, missing)
            if value is missing:
                value = default() if callable(default) else default
                if value is missing:
                    continue
            out[key] = convert(value, name, obj)
        return out

    return dump


# Field classes whose serializer gives back a value of this type unchanged
_IDENTITY = {fields.String: str, fields.Integer: int, SafeInteger: int, fields.Float: float,
             fields.Boolean: bool, fields.Raw: object, JsonNumber: object}


def _value_of(field: fields.Field) -> Callable[[Any, str, Any], Any]:
    """How one field serializes a value (nested schemas and lists planned in turn; a value
    that its field's serializer would give back unchanged is taken as it is)."""
    if isinstance(field, fields.Nested) and isinstance(field.schema, Schema) \
            and not _has_dump_hooks(field.schema):
        inner = _plan(field.schema)
        if field.many or field.schema.many:
            return lambda value, _, __: None if value is None else [inner(v) for v in value]
        return lambda value, _, __: None if value is None else inner(value)
    if isinstance(field, fields.List):
        each = _value_of(field.inner)
        return lambda value, attr, obj: None if value is None else [each(v, attr, obj)
                                                                    for v in value]
    kind = _IDENTITY.get(type(field))
    if isinstance(field, fields.Dict) and type(field) is fields.Dict \
            and field.key_field is None and field.value_field is None:
        kind = dict
    if kind is object:
        return lambda value, _, __: value
    if kind is not None and not getattr(field, "as_string", False):
        serialize = field._serialize
        return lambda value, attr, obj: value if type(value) is kind else serialize(
            value, attr, obj)
    return field._serialize


def _has_dump_hooks(schema: Schema) -> bool:
    return bool(schema._hooks[PRE_DUMP] or schema._hooks[POST_DUMP])
