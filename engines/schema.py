"""JSON Schemas (draft 2020-12) of actions and observations, and the compiled action check.

Each game publishes in `describe()` the schema of its actions and of its observations, built
from the small helpers below. The action schema is the one definition of a malformed action:
`compile_action_check` turns it into closures that raise InvalidAction exactly when a draft
2020-12 validator rejects the action (tests/engines/test_action_schema.py checks that
equivalence with `jsonschema` on arbitrary JSON) and otherwise return the canonical action.
The compiler knows the subset of JSON Schema the games use and refuses any other keyword,
so the published schema and the check can not drift apart; it also insists that every
integer and every array of an action is bounded, so no action that passes can be large.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import orjson

from .errors import InvalidAction

DRAFT = "https://json-schema.org/draft/2020-12/schema"
MAX_ACTION_BYTES = 16384
"""An action whose compact JSON is larger is malformed (every schema-valid action is far
smaller: the largest, a Caravans trade offer, stays under 2 KiB)."""
MAX_AMOUNT = 2**53 - 1
"""Bound of open-ended amounts (gold, coins): the largest integer every JSON reader keeps
exact (a JavaScript number)."""
ANNOTATIONS = frozenset({"description", "title", "examples", "$comment", "$schema"})

Check = Callable[[Any], Any]
Schema = dict[str, Any]
"""A JSON Schema, or a part of one."""


# ----- building schemas ---------------------------------------------------------------
def described(schema: Schema, description: str | None) -> Schema:
    return {**schema, "description": description} if description else schema


def integer(low: int | None = None, high: int | None = None,
            description: str | None = None) -> Schema:
    schema: Schema = {"type": "integer"}
    if low is not None:
        schema["minimum"] = low
    if high is not None:
        schema["maximum"] = high
    return described(schema, description)


def amount(low: int = 0, description: str | None = None) -> Schema:
    """An open-ended amount of an action (gold, coins), bounded by MAX_AMOUNT."""
    return integer(low, MAX_AMOUNT, description)


def string(values: Iterable[str] | None = None, description: str | None = None) -> Schema:
    schema: Schema = {"type": "string"}
    if values is not None:
        schema["enum"] = list(values)
    return described(schema, description)


def boolean(description: str | None = None) -> Schema:
    return described({"type": "boolean"}, description)


def const(value: Any, description: str | None = None) -> Schema:
    return described({"const": value}, description)


def one_of_values(values: Iterable[Any], description: str | None = None) -> Schema:
    return described({"enum": list(values)}, description)


def array(items: Schema, *, min_items: int = 0, max_items: int | None = None,
          unique: bool = False, description: str | None = None) -> Schema:
    schema: Schema = {"type": "array", "items": items}
    if min_items:
        schema["minItems"] = min_items
    if max_items is not None:
        schema["maxItems"] = max_items
    if unique:
        schema["uniqueItems"] = True
    return described(schema, description)


def pair(first: Schema, second: Schema, description: str | None = None) -> Schema:
    """A two-item array such as [col, row]."""
    return described({"type": "array", "prefixItems": [first, second], "items": False,
                      "minItems": 2}, description)


def obj(properties: dict[str, Schema], optional: Iterable[str] = (),
        description: str | None = None) -> Schema:
    """An object with exactly these keys (all required but `optional`), no others."""
    skipped = set(optional)
    return described({
        "type": "object",
        "properties": properties,
        "required": [key for key in properties if key not in skipped],
        "additionalProperties": False,
    }, description)


def map_of(keys: Schema, values: Schema, description: str | None = None) -> Schema:
    """An object used as a dictionary: keys from `keys` (a string schema), any number."""
    return described({"type": "object", "propertyNames": keys,
                      "additionalProperties": values}, description)


def any_of(*schemas: Schema, description: str | None = None) -> Schema:
    return described({"anyOf": list(schemas)}, description)


def nullable(schema: Schema, description: str | None = None) -> Schema:
    return any_of(schema, {"type": "null"}, description=description)


def action(kind: str, description: str, fields: dict[str, Schema] | None = None,
           optional: Iterable[str] = ()) -> Schema:
    """One action type: `{"type": kind, **fields}`."""
    schema = obj({"type": const(kind), **(fields or {})}, optional, description)
    return {"title": kind, **schema}


def event(kind: str, fields: dict[str, Schema] | None = None,
          optional: Iterable[str] = (), description: str | None = None) -> Schema:
    """One log event, `{"event": kind, **fields}`; `optional` fields are not always there
    (e.g. private details, only in the log of the seat concerned)."""
    schema = obj({"event": const(kind), **(fields or {})}, optional, description)
    return {"title": kind, **schema}


def end_record(reasons: Iterable[str], max_seats: int) -> Schema:
    """The end record every game has (engines.base.End)."""
    return obj({
        "reason": string(reasons, "why the game ended"),
        "seat": nullable(integer(0, max_seats - 1),
                         description="the seat whose move ended the game or set its end "
                         "off; null when no seat did"),
        "text": string(description="the same as a sentence"),
    })


def action_document(title: str, actions: list[Schema]) -> Schema:
    return {"$schema": DRAFT, "title": title, "oneOf": actions}


def observation_document(title: str, game: str, max_seats: int, view: Schema, actions: Schema,
                         events: list[Schema], end_reasons: Iterable[str]) -> Schema:
    """The whole observation: the game's view plus the fields every game has, and its
    events plus the end event every game has."""
    seat = integer(0, max_seats - 1)
    end = end_record(end_reasons, max_seats)
    common = {
        "game": const(game),
        "seat": nullable(seat, "the seat this view is for; null for a spectator"),
        "to_move": nullable(seat, "the seat to decide; null once the game is over"),
        "legal_actions": array(
            {"$ref": "#/$defs/action"},
            description="your legal actions when you are to move, in a fixed order; else []"),
        "log": array({"$ref": "#/$defs/event"},
                     description="every event since the start that this viewer may know"),
        "end": nullable(end, description="how the game ended; null until it is over"),
    }
    end_event = event("end", end["properties"], description="the last event: the end record")
    return {
        "$schema": DRAFT,
        "title": title,
        **view,
        "properties": {**view["properties"], **common},
        "required": [*view["required"], *common],
        "$defs": {
            "action": {key: value for key, value in actions.items() if key != "$schema"},
            "event": {"oneOf": [*events, end_event]},
        },
    }


# ----- the compiled action check ------------------------------------------------------------
class _Refused(Exception):
    """A part of an action fails its schema: `what` is wrong with it, `path` (innermost key
    first) says where. Only the failure path pays for building the sentence."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what
        self.path: list[str | int] = []

    def reason(self, kind: str) -> str:
        where = ""
        for step in reversed(self.path):
            where += f"[{step}]" if isinstance(step, int) else f".{step}" if where else step
        subject = f'field "{where}"' if where else f'action "{kind}"'
        return f"{subject} {self.what}"


def compile_action_check(schema: Schema) -> Callable[[Any], dict[str, Any]]:
    """A function that returns the canonical form of an action, or raises InvalidAction
    exactly when `schema` (an `action_document`) rejects it."""
    branches = {branch["properties"]["type"]["const"]: _compile_branch(branch)
                for branch in schema["oneOf"]}
    known = ", ".join(branches)

    def check(action: Any) -> dict[str, Any]:
        if type(action) is not dict:
            raise InvalidAction(f"an action must be a JSON object, got {_kind(action)}")
        kind = action.get("type")
        if type(kind) is not str or kind not in branches:
            _refuse_if_too_large(action)
            if type(kind) is not str:
                raise InvalidAction('an action needs a string field "type"')
            raise InvalidAction(f"unknown action type {_show(kind)}; this game has {known}")
        try:
            canonical: dict[str, Any] = branches[kind](action)
        except _Refused as refusal:
            _refuse_if_too_large(action)
            raise InvalidAction(refusal.reason(kind)) from None
        return canonical

    return check


def _refuse_if_too_large(action: dict[str, Any]) -> None:
    """The size limit, worded first when it is the problem. (An action the schema accepts
    is always far smaller, so only refused actions need measuring.)"""
    try:
        size = len(orjson.dumps(action))
    except orjson.JSONEncodeError:
        return  # nested too deep or an integer beyond 64 bits: the schema says what is wrong
    if size > MAX_ACTION_BYTES:
        raise InvalidAction(f"the action is {size} bytes of JSON; the limit is "
                            f"{MAX_ACTION_BYTES}")


def _compile(schema: Schema) -> Check:
    keywords = set(schema) - ANNOTATIONS
    if "const" in schema or "enum" in schema:
        _only(keywords, {"const"} if "const" in schema else {"enum", "type"})
        return _compile_values(schema)
    kind = schema.get("type")
    compilers = {"integer": _compile_integer, "boolean": _compile_boolean,
                 "array": _compile_array, "object": _compile_object}
    if kind not in compilers:
        raise ValueError(f"the action check can not compile {schema} (a string field lists "
                         "its values with enum)")
    return compilers[kind](schema, keywords)


def _only(keywords: set[str], allowed: set[str]) -> None:
    if not keywords <= allowed:
        raise ValueError(f"the action check does not know {sorted(keywords - allowed)}")


def _compile_values(schema: Schema) -> Check:
    """`const` or `enum` of strings or of flat arrays, compared as JSON values (1.0 equals
    1, true never equals 1)."""
    values = [schema["const"]] if "const" in schema else schema["enum"]
    if schema.get("type") not in (None, "string") or not all(_flat(v) for v in values):
        raise ValueError("an enum lists strings, numbers or flat arrays of them")
    literals = {_freeze(value): value for value in values}
    strings = {value: value for value in values if type(value) is str}  # the common case
    what = f"must be {_choices(values, schema.get('description'))}"

    def check(value: Any) -> Any:
        if type(value) is str:
            literal = strings.get(value, _MISSING)
        else:
            literal = literals.get(_freeze(value), _MISSING) if _flat(value) else _MISSING
        if literal is _MISSING:
            raise _Refused(f"{what}, got {_show(value)}")
        return list(literal) if type(literal) is list else literal

    return check


def _compile_integer(schema: Schema, keywords: set[str]) -> Check:
    _only(keywords, {"type", "minimum", "maximum"})
    if "minimum" not in schema or "maximum" not in schema:
        raise ValueError("every integer of an action needs a minimum and a maximum")
    low, high = schema["minimum"], schema["maximum"]

    def check(value: Any) -> int:
        if type(value) is float and value.is_integer():
            value = int(value)  # JSON Schema: 1.0 is the integer 1
        if type(value) is not int or not low <= value <= high:
            raise _Refused(f"must be an integer from {low} to {high}, got {_show(value)}")
        return value

    return check


def _compile_boolean(schema: Schema, keywords: set[str]) -> Check:
    _only(keywords, {"type"})

    def check(value: Any) -> bool:
        if type(value) is not bool:
            raise _Refused(f"must be true or false, got {_show(value)}")
        return value

    return check


def _compile_array(schema: Schema, keywords: set[str]) -> Check:
    _only(keywords, {"type", "items", "prefixItems", "minItems", "maxItems", "uniqueItems"})
    if "prefixItems" in schema:
        if schema.get("items") is not False or len(schema["prefixItems"]) != schema["minItems"]:
            raise ValueError("prefixItems go with items: false and minItems of their length")
        return _compile_tuple([_compile(item) for item in schema["prefixItems"]])
    if "maxItems" not in schema:
        raise ValueError("every array of an action needs maxItems")
    item_check = _compile(schema["items"])
    low, high = schema.get("minItems", 0), schema["maxItems"]
    unique = schema.get("uniqueItems", False)

    def check(value: Any) -> list[Any]:
        if type(value) is not list or not low <= len(value) <= high:
            raise _Refused(f"must be an array of {low} to {high} items, got {_show(value)}")
        items = [_at(i, item_check, item) for i, item in enumerate(value)]
        if unique and len({_freeze(item) for item in items}) != len(items):
            raise _Refused("lists a value twice")
        return items

    return check


def _compile_tuple(item_checks: list[Check]) -> Check:
    size = len(item_checks)

    def check(value: Any) -> list[Any]:
        if type(value) is not list or len(value) != size:
            raise _Refused(f"must be an array of {size} items, got {_show(value)}")
        items = []
        for i, (item_check, item) in enumerate(zip(item_checks, value, strict=True)):
            try:  # `_at`, written out: every [col, row] of an action comes here
                items.append(item_check(item))
            except _Refused as refusal:
                refusal.path.append(i)
                raise
        return items

    return check


def _at(step: str | int, check: Check, value: Any) -> Any:
    """`check(value)` for the part `step` of its parent (a key or an index)."""
    try:
        return check(value)
    except _Refused as refusal:
        refusal.path.append(step)
        raise


def _compile_branch(schema: Schema) -> Check:
    """One action type: an object whose `type` the dispatch has already matched."""
    preset = {"type": schema["properties"]["type"]["const"]}
    return _compile_object(schema, set(schema) - ANNOTATIONS, preset)


def _compile_object(schema: Schema, keywords: set[str], preset: dict[str, Any] | None = None
                    ) -> Check:
    """An object with listed keys only; `preset` keys are known to be right already."""
    _only(keywords, {"type", "properties", "required", "additionalProperties"})
    if schema.get("additionalProperties") is not False:
        raise ValueError("every object of an action lists its keys (additionalProperties: false)")
    preset = preset or {}
    required = set(schema.get("required", ()))
    fields = [(key, _compile(sub), key in required)
              for key, sub in schema["properties"].items() if key not in preset]
    names = ", ".join(key for key, _, _ in fields) or "none"

    def check(value: Any) -> dict[str, Any]:
        if type(value) is not dict:
            raise _Refused(f"must be an object, got {_show(value)}")
        out = dict(preset)
        for key, sub, needed in fields:
            if key in value:
                try:  # `_at`, written out: every field of every action comes here
                    out[key] = sub(value[key])
                except _Refused as refusal:
                    refusal.path.append(key)
                    raise
            elif needed:
                raise _Refused(f'needs the field "{key}"')
        if len(out) != len(value):
            unknown = next(key for key in value if key not in out)
            raise _Refused(f"has no field {_show(unknown)}; its fields: {names}")
        return out

    return check


# ----- messages and JSON equality -------------------------------------------------------------
_MISSING = object()


def _kind(value: Any) -> str:
    names = {list: "an array", dict: "an object", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    """A short, safe rendering of a bad value for a reason sentence."""
    kind = type(value)
    if kind is int and abs(value) >= 10**18:
        return "an integer out of range"
    if kind is float:
        return repr(value)
    if kind in (list, dict) and len(value) > 8:
        return _kind(value)
    try:
        text = orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return _kind(value)
    return text if len(text) <= 40 else _kind(value) if kind in (list, dict) else text[:37] + "..."


def _choices(values: list[Any], description: str | None) -> str:
    if len(values) == 1:
        return orjson.dumps(values[0]).decode()
    if len(values) <= 8:
        return "one of " + ", ".join(orjson.dumps(v).decode() for v in values)
    return description or f"one of the {len(values)} values the action schema lists"


def _flat(value: Any) -> bool:
    """A scalar, or an array of scalars (so comparing it never recurses deeply)."""
    if type(value) is list:
        return not any(type(item) in (list, dict) for item in value)
    return type(value) is not dict


def _freeze(value: Any) -> Any:
    """A hashable key with JSON equality: numbers by value, booleans apart from numbers."""
    kind = type(value)
    if kind is bool:
        return ("bool", value)
    if kind is float and value.is_integer():
        return ("number", int(value))
    if kind in (int, float):
        return ("number", value)
    if kind is list:
        return ("array", tuple(_freeze(item) for item in value))
    return (kind.__name__, value)
