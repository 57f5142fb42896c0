"""What the resources' marshmallow schemas share: number limits, field kinds, the problem
body and pages.

Request schemas refuse unknown fields; response schemas declare every field they send, so
the generated `openapi.yaml` (components) is exactly what the views produce.
"""

from __future__ import annotations

import secrets

from marshmallow import Schema, ValidationError, fields, validate

import engines
from referee.errors import CATALOGUE
from tournament.store.keys import ID_PATTERN

MAX_SAFE_INTEGER = (1 << 53) - 1  # the largest integer a JavaScript number holds exactly
MAX_SEED = MAX_SAFE_INTEGER
SEED_RANGE = validate.Range(min=0, max=MAX_SEED, error=(
    "a seed is an integer from 0 to 2**53 - 1 = 9007199254740991, the largest integer "
    "every JSON client (JavaScript's JSON.parse) reads exactly"))




class FullMatch(validate.Regexp):
    """A `Regexp` the whole string must match: Python's `$` also matches before a final
    newline (`"bob\\n"` passed `^[a-z]+$`), ECMAScript's, the spec's `pattern`, does not."""

    def __call__(self, value: str) -> str:  # type: ignore[override]
        if self.regex.fullmatch(value) is None:  # type: ignore[call-overload] # str patterns
            raise ValidationError(self._format_error(value))
        return value


SHA256_HEX = FullMatch(r"^[0-9a-f]{64}$", error="not a sha256 hex digest")
DISPLAY_NAME = [validate.Length(min=1, max=100), FullMatch(
    "^[^\\x00-\\x1f\\x7f-\\x9f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]*$",
    error="no control or text-direction characters")]
"""A name the pages show (a bot's, a pull seat's, a tournament's, a ladder's): no control
characters, nor text-direction marks and overrides (a bot named with U+202E turned the rest
of a table cell around: one name shown as another)."""
RECORD_ID = FullMatch(f"^{ID_PATTERN}$", error=(
    "not an id: 1 to 100 letters, digits, '_', '.' or '-', starting with a letter or digit"))
MAX_PAGE = 200
MAX_OFFSET = 1 << 40
MAX_SEATS = 16
MAX_STEPS = (1 << 31) - 1
MAX_RECORD_STEPS = 5000
"""The steps a submitted replay record may hold: over 20 times the longest random playout
of any game here (221, Aldabas with 4 players); `referee verify FILE` has no such bound."""
SEAT = validate.Range(min=0, max=MAX_SEATS - 1)
STEP = validate.Range(min=0, max=MAX_STEPS)


def random_seed() -> int:
    """A seed drawn by the server for a match or tournament created without one."""
    return secrets.randbelow(MAX_SEED + 1)


# a validator (an enum in the spec)
known_game = validate.OneOf(engines.names(), error="unknown game; known games: {choices}")


class JsonNumber(fields.Field):
    """A JSON number passed through as it is (an int stays an int), so records dumped
    through a schema keep their canonical form."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValidationError("not a number")
        return value


def _validators(kwargs: dict) -> list:
    """A field's `validate` argument as a list."""
    given = kwargs.get("validate")
    return [] if given is None else (
        list(given) if isinstance(given, list | tuple) else [given])


class SafeInteger(fields.Integer):
    """An integer at most 2**53 - 1 (documented as the `maximum`), so that it survives a
    JavaScript `JSON.parse`: every integer the API emits is one."""

    def __init__(self, *args, **kwargs):
        validators = _validators(kwargs)
        if not any(isinstance(v, validate.Range) and v.max is not None for v in validators):
            validators.append(validate.Range(max=MAX_SAFE_INTEGER))
        super().__init__(*args, **{**kwargs, "validate": validators})


class BoundedList(fields.List):
    """A list of at most `max_items` (documented as `maxItems`), refused on its length
    before any item is read: marshmallow checks a Length only after every item, and a
    submitted replay of 350,000 empty steps cost 14 s of CPU and an error each."""

    def __init__(self, inner, max_items: int, **kwargs):
        self.max_items = max_items
        validators = [*_validators(kwargs), validate.Length(max=max_items)]
        super().__init__(inner, **{**kwargs, "validate": validators})

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, list | tuple) and len(value) > self.max_items:
            raise ValidationError(f"at most {self.max_items} items")
        return super()._deserialize(value, attr, data, **kwargs)


class StrictBoolean(fields.Boolean):
    """A boolean given as `true` or `false` only (not 0, 1, "yes"...: 0 == False in a set)."""

    def _deserialize(self, value, attr, data, **kwargs):
        if value is True or value is False:
            return value
        raise self.make_error("invalid", input=value)


def required(field_class: type[fields.Field], *args, **kwargs) -> fields.Field:
    """A response field that is always present (it may still be null when allowed);
    integers are strict, so a submitted replay with "5" for 5 is refused, and safe."""
    if field_class is fields.Integer:
        field_class = SafeInteger
        kwargs.setdefault("strict", True)
    return field_class(*args, required=True, **kwargs)


def _catalogue_text() -> str:
    lines = [f"- `{kind.uri}` ({kind.status or 'its HTTP status'} {kind.title}): "
             f"{kind.meaning}" for kind in CATALOGUE]
    return "the problem's type, one of the catalogue (`referee.errors`):\n" + "\n".join(lines)


class ProblemSchema(Schema):
    type = required(fields.String, validate=validate.OneOf(sorted({
        kind.uri for kind in CATALOGUE})), metadata={"description": _catalogue_text()})
    title = required(fields.String)
    status = required(fields.Integer)
    detail = required(fields.String)
    errors = fields.Dict(keys=fields.String(), values=fields.Raw(),
                         metadata={"description": "field -> messages, for validation errors"})
    scope = fields.String(metadata={"description": "auth/scope-missing: the scope needed"})
    quota = fields.String(metadata={"description": "quota/exceeded: the quota's name"})
    limit = SafeInteger(metadata={"description": "quota/exceeded: the quota's limit"})
    remaining = SafeInteger(metadata={"description": "quota/exceeded: always 0"})


class ListQuerySchema(Schema):
    offset = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_OFFSET),
                            metadata={"description": "items to skip"})
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=MAX_PAGE))


class PageSchema(Schema):
    """What every list answers besides its items: the total and the page asked for."""

    total = required(fields.Integer)
    offset = required(fields.Integer)
    limit = required(fields.Integer)
