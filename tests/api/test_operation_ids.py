"""Every operation of openapi.yaml has a stable, readable operationId (what generated clients
name their methods: createMatch, getReplayStep...), unique, and every link names one."""

from __future__ import annotations

import re

from tests.support.apitest import spec

METHODS = ("get", "post", "put", "patch", "delete")


def operations() -> dict[tuple[str, str], dict]:
    return {(method, path): item[method] for path, item in spec()["paths"].items()
            for method in METHODS if method in item}


def test_every_operation_has_a_unique_camel_case_id():
    ids = [operation.get("operationId") for operation in operations().values()]
    assert all(re.fullmatch(r"[a-z]+(?:[A-Z][a-z]+)+", str(id_)) for id_ in ids), ids
    assert len(set(ids)) == len(ids)


def test_the_ids_read_as_what_the_operations_do():
    ids = {key: operation["operationId"] for key, operation in operations().items()}
    assert ids[("post", "/matches")] == "createMatch"
    assert ids[("get", "/matches/{match_id}/replay/{step}")] == "getReplayStep"
    assert ids[("post", "/replays/verify")] == "verifyReplay"
    assert ids[("post", "/tournaments")] == "createTournament"


def test_links_name_operations():
    ids = {operation["operationId"] for operation in operations().values()}
    linked = {link["operationId"] for operation in operations().values()
              for response in operation["responses"].values()
              for link in response.get("links", {}).values()}
    assert linked and linked <= ids
