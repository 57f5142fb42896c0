"""Every answer says how a browser may use it: no type sniffing, no frame, no Referer; the
pages allow their own scripts, styles and API only, and never name another origin as the
API (an audit of the pages found none of these headers, and a SCRIPT_NAME of `//host` made
the play page send its seat token there)."""

from __future__ import annotations

import re

from referee.api.app import SECURITY_HEADERS
from referee.ui import PAGE_POLICY


def test_an_api_answer_is_never_sniffed_framed_or_named_in_a_referer(api):
    for path in ("/health", "/nowhere", "/openapi.yaml", "/games"):
        headers = api.get(path).headers
        assert {name: headers.get(name) for name in SECURITY_HEADERS} == SECURITY_HEADERS


def test_a_page_runs_its_own_scripts_and_styles_only(api):
    page = api.client.get("/ui/")  # a page, not in the spec
    assert page.status_code == 200 and page.headers["Content-Security-Policy"] == PAGE_POLICY
    assert page.headers["X-Content-Type-Options"] == "nosniff"
    assert page.headers["X-Frame-Options"] == "DENY"
    html = page.get_data(as_text=True)
    assert "<script>" not in html and " style=" not in html, "the policy would block it"
    assert re.search(r'<html lang="en" data-api="" data-ui="/ui/">', html)


def test_a_page_takes_its_api_from_this_site_only(api):
    mounted = api.client.get("/ui/", environ_overrides={"SCRIPT_NAME": "/referee"})
    assert 'data-api="/referee"' in mounted.get_data(as_text=True)
    elsewhere = api.client.get("/ui/", environ_overrides={"SCRIPT_NAME": "//evil.example"})
    assert 'data-api=""' in elsewhere.get_data(as_text=True)
