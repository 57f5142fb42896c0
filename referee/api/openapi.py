"""Builds the OpenAPI 3.1 description of the API from what each resource module declares.

Each module of `referee.api.app.RESOURCES` holds its routes, its marshmallow schemas and
`PATHS`, its operations (`referee.api.operations`). The component schemas are the schema
classes of those modules and of `referee.api.common` (apispec's marshmallow plugin), so the
spec cannot drift from the bodies the views load and dump; a schema class's `JSON_SCHEMA`
(a dict, or a function making one from the engines) adds what its fields cannot say alone.
`python -m referee.api.openapi > openapi.yaml` writes the committed file, and a test fails
when the committed file differs from what this module builds.
"""

from __future__ import annotations

import copy
import sys

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from marshmallow import Schema

from referee.api import common
from referee.api.app import RESOURCES
from referee.api.operations import component_name

TITLE = "game-referee API"
VERSION = "1.0.0"
DESCRIPTION = """A referee for tabletop games played by bots over HTTP.

Every error is `application/problem+json` with `type` (one of the catalogue the Problem
schema lists), `title`, `status`, `detail`, and for validation errors `errors` (field ->
messages). So are the refusals of the HTTP server (gunicorn), on any path, of requests the
API never sees: malformed (400), or past its limits (414, 431), with an `Expect` it does
not meet (417) or a transfer coding it does not know (501). Writes need the admin token
or an account token with the scope they name (`auth/scope-missing` otherwise), pull-seat
requests the seat's token, all as `Authorization: Bearer <token>`.
"""


def build_spec() -> APISpec:
    plugin = MarshmallowPlugin()
    spec = APISpec(TITLE, VERSION, "3.1.0", plugins=[plugin], info={"description": DESCRIPTION})
    plugin.map_to_openapi_type(common.JsonNumber, "number", None)
    schemas = schema_classes()
    for schema in schemas:
        if component_name(schema) not in spec.components.schemas:  # else added as nested
            spec.components.schema(component_name(schema), schema=schema)
    for kind in ("admin", "account", "seat", "metrics"):
        spec.components.security_scheme(kind, {
            "type": "http", "scheme": "bearer",
            "description": f"the {kind} token as `Authorization: Bearer <token>`"})
    for resource in RESOURCES:
        for path, operations in resource.PATHS.items():
            spec.path(path=path, operations=copy.deepcopy(operations))
    for schema in schemas:
        _merge(spec.components.schemas[component_name(schema)], _json_schema(schema))
    return spec


def schema_classes() -> list[type[Schema]]:
    """Every marshmallow schema class the resource modules and `common` define, by name."""
    found = {value for module in (common, *RESOURCES) for value in vars(module).values()
             if isinstance(value, type) and issubclass(value, Schema)
             and value.__module__ == module.__name__}
    return sorted(found, key=lambda schema: schema.__name__)


def _json_schema(schema: type[Schema]) -> dict:
    """What the schema class adds to its component (`JSON_SCHEMA`), if anything."""
    extra = getattr(schema, "JSON_SCHEMA", {})
    return copy.deepcopy(extra() if callable(extra) else extra)


def _merge(target: dict, extra: dict) -> None:
    """`extra` added to `target`, objects merged member by member."""
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value


def spec_yaml() -> str:
    return build_spec().to_yaml()


if __name__ == "__main__":
    sys.stdout.write(spec_yaml())
