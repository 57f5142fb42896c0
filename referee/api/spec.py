"""GET /openapi.yaml: the API's OpenAPI 3.1 description, as committed."""

from pathlib import Path

from flask import Blueprint, Response

bp = Blueprint("spec", __name__)

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi.yaml"


@bp.get("/openapi.yaml")
def openapi_yaml() -> Response:
    return Response(SPEC_PATH.read_bytes(), mimetype="application/yaml")
