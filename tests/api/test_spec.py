"""openapi.yaml describes every endpoint the app serves, and nothing it does not serve.

The web pages under /ui (and the root, which redirects to them) are HTML for people, documented
in docs/web.md, not API endpoints."""

from __future__ import annotations

import re

import yaml
from apitest import SPEC_PATH

from referee.api.app import create_app
from referee.config import Config

PAGES = ("/ui", "/static")
IMPLICIT = {"HEAD", "OPTIONS"}


def served_operations() -> set[tuple[str, str]]:
    """(path, method) of every API route, path parameters written `{}`."""
    app = create_app(Config(redis_url="redis://127.0.0.1:1/0"))
    operations = set()
    for rule in app.url_map.iter_rules():
        if rule.rule == "/" or rule.rule.startswith(PAGES):
            continue
        path = re.sub(r"<[^<>]+>", "{}", rule.rule)
        operations |= {(path, method.lower()) for method in rule.methods - IMPLICIT}
    return operations


def test_the_spec_describes_exactly_the_served_endpoints():
    spec = yaml.safe_load(SPEC_PATH.read_text())
    described = {(re.sub(r"\{[^{}]+\}", "{}", path), method)
                 for path, item in spec["paths"].items()
                 for method in item if method in ("get", "post", "put", "patch", "delete")}
    assert served_operations() == described
