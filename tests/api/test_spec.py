"""openapi.yaml is valid, generated from the schemas and served, and it describes every
endpoint the app serves, and nothing it does not serve.

The web pages under /ui (and the root, which redirects to them) are HTML for people, documented
in docs/web.md, not API endpoints."""

from __future__ import annotations

import re

import yaml
from flask import Flask
from openapi_spec_validator import validate as validate_spec

from referee.api.openapi import spec_yaml
from tests.support.apitest import SPEC_PATH

PAGES = ("/ui", "/static")
IMPLICIT = {"HEAD", "OPTIONS"}


def test_the_committed_spec_is_valid_and_generated_from_the_schemas():
    spec = yaml.safe_load(SPEC_PATH.read_text())
    validate_spec(spec)
    assert spec["openapi"].startswith("3.1")
    assert SPEC_PATH.read_text() == spec_yaml(), "run: python -m referee.api.openapi > openapi.yaml"


def test_the_spec_is_served(api):
    response = api.get("/openapi.yaml")
    assert response.status_code == 200 and response.data == SPEC_PATH.read_bytes()


def served_operations(app: Flask) -> set[tuple[str, str]]:
    """(path, method) of every API route, path parameters written `{}`."""
    operations = set()
    for rule in app.url_map.iter_rules():
        if rule.rule == "/" or rule.rule.startswith(PAGES):
            continue
        path = re.sub(r"<[^<>]+>", "{}", rule.rule)
        operations |= {(path, method.lower()) for method in rule.methods - IMPLICIT}
    return operations


def test_the_spec_describes_exactly_the_served_endpoints(app):
    spec = yaml.safe_load(SPEC_PATH.read_text())
    described = {(re.sub(r"\{[^{}]+\}", "{}", path), method)
                 for path, item in spec["paths"].items()
                 for method in item if method in ("get", "post", "put", "patch", "delete")}
    assert served_operations(app) == described
