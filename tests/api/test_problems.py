"""Errors are problems (application/problem+json): unknown paths and methods, malformed
JSON, bodies over the limit (64 KiB here), and an unexpected error without its internals."""

from __future__ import annotations

import pytest

from tests.support.apitest import ADMIN


@pytest.fixture
def config_overrides() -> dict:
    """The common settings with a body limit of 64 KiB."""
    return {"max_body_bytes": 64 * 1024}


def test_unknown_paths_and_methods_are_problems(api):
    assert api.get("/games/chess").status_code == 404
    assert api.get("/nowhere").status_code == 404
    response = api.request("DELETE", "/bots")
    assert response.status_code == 405 and "GET" in response.headers["Allow"]


def test_malformed_json_and_oversized_bodies(api):
    bad = api.post("/bots", token=ADMIN, data=b"{not json", content_type="application/json")
    assert bad.status_code == 400 and "not valid JSON" in bad.get_json()["errors"]["_body"][0]
    empty = api.post("/bots", token=ADMIN, data=b"", content_type="application/json")
    assert empty.status_code == 400
    huge = api.post("/matches", token=ADMIN, data=b"x" * (65 * 1024),
                    content_type="application/json")
    assert huge.status_code == 413


def test_an_unexpected_error_is_a_500_without_internals(api):
    def boom():
        raise RuntimeError("secret internals: /etc/passwd")

    api.app.add_url_rule("/boom", view_func=boom)
    response = api.client.get("/boom")
    assert response.status_code == 500
    assert response.mimetype == "application/problem+json"
    assert b"secret" not in response.data and b"RuntimeError" not in response.data
