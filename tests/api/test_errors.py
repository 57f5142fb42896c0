"""The error catalogue (`referee.errors`): every problem type the API answers is in it and
in openapi.yaml, no slug is written anywhere else, every engine error code has its type,
and every exception the referee defines has the common base `RefereeError`."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import engines
import referee
import tournament
from referee import errors
from referee.errors import CATALOGUE, ProblemType, RefereeError, engine_problem_type
from tests.support.apitest import ADMIN, ROOT, spec

URIS = {kind.uri for kind in CATALOGUE}


def engine_error_classes() -> list[type[engines.EngineError]]:
    found, todo = [], [engines.EngineError]
    while todo:
        found.append(todo.pop())
        todo.extend(found[-1].__subclasses__())
    return found


def test_every_type_defined_is_in_the_catalogue_once():
    defined = [value for value in vars(errors).values() if isinstance(value, ProblemType)]
    assert set(defined) == set(CATALOGUE)
    assert len({(kind.slug, kind.status) for kind in CATALOGUE}) == len(CATALOGUE)


def test_the_spec_lists_the_catalogue():
    problem_type = spec()["components"]["schemas"]["Problem"]["properties"]["type"]
    assert set(problem_type["enum"]) == URIS
    for kind in CATALOGUE:
        assert f"`{kind.uri}` ({kind.status or 'its HTTP status'} {kind.title})" in (
            problem_type["description"])


@pytest.mark.parametrize("error", engine_error_classes(), ids=lambda error: error.code)
def test_every_engine_error_code_has_a_problem_type(error):
    assert engine_problem_type(error("reason")) in CATALOGUE


def test_the_engines_codes_are_the_types_of_refused_moves():
    assert engine_problem_type(engines.InvalidAction("x")).slug == engines.InvalidAction.code
    assert engine_problem_type(engines.IllegalAction("x")).slug == engines.IllegalAction.code


def test_no_problem_slug_is_written_outside_the_catalogue():
    slugs = "|".join(re.escape(kind.slug) for kind in CATALOGUE)
    literal = re.compile(rf"""["'](/problems/)?({slugs})["']""")
    sources = [path for package in ("referee", "tournament")
               for path in sorted((ROOT / package).rglob("*.py"))
               if path != Path(errors.__file__)]
    found = [f"{path.relative_to(ROOT)}:{number}" for path in sources
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if literal.search(line)]
    assert not found


@pytest.mark.parametrize("method, path, kwargs", [
    ("get", "/nowhere", {}),
    ("delete", "/games", {}),
    ("get", "/games/chess", {}),
    ("get", "/bots/bot-none", {}),
    ("post", "/bots", {}),
    ("post", "/bots", {"token": "not-the-admin"}),
    ("post", "/bots", {"token": ADMIN, "data": b"{"}),
    ("post", "/bots", {"token": ADMIN, "json": {"name": "x", "url": "http://example.com/",
                                                "games": ["aladino"]}}),
    ("post", "/matches", {"token": ADMIN, "json": {
        "game": "aladino", "seats": [{"kind": "bot", "bot_id": "bot-none"}] * 2}}),
    ("get", "/matches/m-none/observation", {"token": "no-seat"}),
    ("post", "/replays/verify", {"json": {"format": "nope"}}),
])
def test_answered_problems_are_types_of_the_catalogue(api, method, path, kwargs):
    body = api.request(method.upper(), path, **kwargs)
    problem = body.get_json()
    assert body.status_code >= 400 and problem["type"] in URIS
    kind = next(kind for kind in CATALOGUE if kind.uri == problem["type"]
                and kind.status == body.status_code)
    assert problem["title"] == kind.title and problem["status"] == kind.status


def test_every_exception_of_the_referee_has_the_common_base():
    modules = [importlib.import_module(info.name) for package in (referee, tournament)
               for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
               if not info.name.endswith("__main__")]
    defined = {value for module in modules for value in vars(module).values()
               if isinstance(value, type) and issubclass(value, BaseException)
               and value.__module__ == module.__name__}
    assert defined and not {error for error in defined if not issubclass(error, RefereeError)}
