"""Schemathesis against the committed openapi.yaml and a real server (`referee serve`,
gunicorn, with real Redis): for generated requests, valid and invalid, no answer is a 5xx
and every answer (status, content type, headers, body) is one the spec describes.

Schemathesis' "schema-valid request accepted" check is left out: a schema-valid bot URL
may still point outside the allowlist, and a schema-valid bot id may not be registered,
which the spec cannot express (both are 400s naming the field). The examples are the same
on every run (derandomized), so CI is stable; for a longer exploration raise
`max_examples` and drop `derandomize` (runs of 150 examples per operation, random, found
the 500 on a huge list offset and gunicorn's undocumented 414 for an over-long request
line, both fixed).
"""

from __future__ import annotations

import schemathesis
from apitest import ADMIN, SPEC_PATH
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

SCHEMA = schemathesis.openapi.from_path(SPEC_PATH)


@SCHEMA.parametrize()
@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_the_api_answers_within_its_spec(case, live_server):
    case.call_and_validate(base_url=live_server.url, timeout=10,
                           headers={"Authorization": f"Bearer {ADMIN}"},
                           excluded_checks=[positive_data_acceptance])
