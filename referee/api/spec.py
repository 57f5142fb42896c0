"""GET /openapi.yaml: the API's OpenAPI 3.1 description, as committed.

The file is package data, read with importlib.resources, so an installed wheel serves it
too: `referee/api/openapi.yaml` is a symbolic link to the repository's `openapi.yaml`
(the one copy, at the root where the layout puts it), which the builds follow."""

from importlib import resources

from flask import Blueprint, Response

from referee.api.operations import operation

bp = Blueprint("spec", __name__)

SPEC = resources.files("referee.api").joinpath("openapi.yaml")

PATHS = {
    "/openapi.yaml": {"get": operation(
        "getOpenApi", "This description", "health", (200, {
            "description": "the OpenAPI description of this API",
            "content": {"application/yaml": {}}}), ())},
}


@bp.get("/openapi.yaml")
def openapi_yaml() -> Response:
    return Response(SPEC.read_bytes(), mimetype="application/yaml")
