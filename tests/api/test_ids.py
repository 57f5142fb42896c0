"""Ids in paths, queries and bodies are ids: text that would name another Redis key of the
same record (`{id}:replay`, the key of the match's replay) is no record. Before, such an id
reached Redis and every caller, anonymous ones too, got a 500. Every answer is checked
against openapi.yaml."""

from __future__ import annotations

import pytest

from tests.support.apitest import ADMIN

SUFFIXES = (":replay", ":tokens", ":live", ":steps", ":ladders", ":matches", ":entries",
            ":done", ":source:1", ":build:1", ":claim:1")


@pytest.fixture
def records(api, bot_server) -> dict[str, str]:
    bots = [api.register_bot(bot_server.url("/random"), name=f"b{i}") for i in range(2)]
    match = api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}])["id"]
    tournament = api.post("/tournaments", token=ADMIN, json={
        "game": "aladino", "bots": bots, "players": 2}).get_json()["id"]
    ladder = api.post("/ladders", token=ADMIN, json={
        "name": "l", "game": "aladino", "players": 2, "seed": 1}).get_json()["id"]
    return {"bot": bots[0], "other": bots[1], "match": match, "tournament": tournament,
            "ladder": ladder}


PATHS = ("/matches/{match}", "/matches/{match}/replay", "/matches/{match}/replay/0",
         "/matches/{match}/events", "/matches/{match}/observation?seat=0",
         "/matches/{match}/stderr?seat=0", "/log/proof/{match}", "/bots/{bot}",
         "/bots/{bot}/versions", "/bots/{bot}/build", "/tournaments/{tournament}",
         "/tournaments/{tournament}/matches", "/tournaments/{tournament}/events",
         "/ladders/{ladder}", "/ladders/{ladder}/entries", "/ladders/{ladder}/matches",
         "/ladders/{ladder}/history", "/ladders/{ladder}/events")


@pytest.mark.parametrize("suffix", [*SUFFIXES, "%0A", "%3Areplay"])
def test_an_id_naming_another_key_of_its_record_is_no_record(api, records, suffix):
    for path in PATHS:
        for token in (None, ADMIN):
            url = path.format(**{kind: record + suffix for kind, record in records.items()})
            response = api.get(url, token=token)
            assert response.status_code == 404, (url, response.status_code, response.data)


@pytest.mark.parametrize("suffix", [*SUFFIXES, "\n"])
def test_an_id_naming_another_key_in_a_query_or_a_body_is_a_400(api, records, suffix):
    bot, other = records["bot"] + suffix, records["other"]
    refused = [
        api.get("/ratings/aladino/history", query_string={"bot": bot}),
        api.post("/matches", token=ADMIN, json={
            "game": "aladino", "seats": [{"kind": "bot", "bot_id": bot},
                                         {"kind": "bot", "bot_id": other}]}),
        api.post("/tournaments", token=ADMIN, json={
            "game": "aladino", "bots": [bot, other], "players": 2}),
        api.post(f"/ladders/{records['ladder']}/entries", token=ADMIN, json={"bot": bot}),
    ]
    for response in refused:
        assert response.status_code == 400, (response.request.path, response.data)
        assert "not an id" in str(response.get_json()["errors"]), response.get_json()


def test_the_same_requests_with_the_ids_themselves_are_answered(api, records):
    answered = {"/matches/{match}", "/bots/{bot}", "/bots/{bot}/versions",
                "/tournaments/{tournament}", "/tournaments/{tournament}/matches",
                "/ladders/{ladder}", "/ladders/{ladder}/entries", "/ladders/{ladder}/matches"}
    for path in PATHS:
        if "/events" in path:
            continue  # a stream: it would wait for the record's next event
        status = api.get(path.format(**records), token=ADMIN).status_code
        assert status == 200 if path in answered else status < 500, (path, status)
