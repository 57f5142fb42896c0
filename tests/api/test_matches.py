"""Matches through the API: creation needs the admin token, every field is validated and
named, a new match is queued and hides its seed, and the list is per game, newest first.
Every response is checked against openapi.yaml by the `api` fixture."""

from __future__ import annotations

import pytest

from tests.support.apitest import ADMIN


def test_match_creation_needs_the_admin_token(api, bot_server):
    bot = api.register_bot(bot_server.url("/random"))
    body = {"game": "aladino", "seats": [{"kind": "bot", "bot_id": bot}] * 2}
    assert api.post("/matches", json=body).status_code == 401
    assert api.post("/matches", json=body, token="nope").status_code == 403


@pytest.mark.parametrize("change, field", [
    ({"game": "chess"}, "game"),
    ({"seats": []}, "seats"),
    ({"seats": [{"kind": "robot"}]}, "seats"),
    ({"seats": [{"kind": "bot"}, {"kind": "pull"}]}, "seats"),
    ({"seats": [{"kind": "pull"}] * 9}, "seats"),
    ({"options": {"turbo": True}}, "options"),
    ({"seed": -1}, "seed"),
    ({"seed": "7"}, "seed"),
    ({"failure_policy": {"timeout": "ignore"}}, "failure_policy"),
    ({"deadline_ms": 5}, "deadline_ms"),
    ({"seats": [{"kind": "pull", "deadline_ms": 50}, {"kind": "pull"}]}, "seats"),
    ({"seats": [{"kind": "pull", "deadline_ms": "1000"}, {"kind": "pull"}]}, "seats"),
])
def test_match_fields_are_validated_and_named(api, change, field):
    body = {"game": "aladino", "seats": [{"kind": "pull"}, {"kind": "pull"}], **change}
    response = api.post("/matches", token=ADMIN, json=body)
    assert response.status_code == 400
    assert field in response.get_json()["errors"]


def test_a_bot_seat_deadline_keeps_to_the_push_range(api, bot_server):
    bot = api.register_bot(bot_server.url("/random"))
    response = api.post("/matches", token=ADMIN, json={
        "game": "aladino", "seats": [{"kind": "bot", "bot_id": bot, "deadline_ms": 70000},
                                     {"kind": "pull"}]})
    assert response.status_code == 400
    assert response.get_json()["errors"]["seats"]["0"]["deadline_ms"] == [
        "a bot seat's deadline_ms must be from 10 to 60000"]


def test_a_bot_that_does_not_play_the_game_is_refused(api, bot_server):
    """Well formed, refused on meaning (the spec cannot know the registered bots): 422."""
    bot = api.register_bot(bot_server.url("/random"), games=["caravans"])
    response = api.post("/matches", token=ADMIN, json={
        "game": "aladino", "seats": [{"kind": "pull"}, {"kind": "bot", "bot_id": bot}]})
    assert response.status_code == 422
    assert "does not play aladino" in response.get_json()["errors"]["seats"]["1"]["bot_id"][0]
    unknown = api.post("/matches", token=ADMIN, json={
        "game": "aladino", "seats": [{"kind": "bot", "bot_id": "bot-nope"}, {"kind": "pull"}]})
    assert unknown.status_code == 422
    assert "no registered bot" in unknown.get_json()["errors"]["seats"]["0"]["bot_id"][0]


def test_a_new_match_is_queued_and_hides_its_seed(api, bot_server):
    bot = api.register_bot(bot_server.url("/random"))
    created = api.create_match("aladino", [{"kind": "pull", "name": "ann"},
                                           {"kind": "bot", "bot_id": bot}], seed=99)
    assert created["status"] == "queued" and created["step"] == 0
    assert [t["seat"] for t in created["tokens"]] == [0]
    assert created["seats"][0] == {"seat": 0, "kind": "pull", "bot_id": None, "name": "ann"}
    assert created["seed"] == 99, "the admin who created it may see it"
    match_id = created["id"]
    public = api.get(f"/matches/{match_id}").get_json()
    assert public["seed"] is None and "tokens" not in public
    assert api.get(f"/matches/{match_id}", token=ADMIN).get_json()["seed"] == 99
    listing = api.get("/matches").get_json()
    assert listing["total"] == 1 and listing["matches"][0]["id"] == match_id
    assert api.get("/matches?limit=0").status_code == 400
    assert api.get("/matches/m-nope").status_code == 404


def test_matches_are_listed_per_game_newest_first(api):
    first = api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}], seed=1)["id"]
    other = api.create_match("caravans", [{"kind": "pull"}, {"kind": "pull"}], seed=2)["id"]
    second = api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}], seed=3)["id"]
    aladino = api.get("/matches?game=aladino").get_json()
    assert [m["id"] for m in aladino["matches"]] == [second, first] and aladino["total"] == 2
    assert [m["id"] for m in api.get("/matches?game=caravans").get_json()["matches"]] == [other]
    assert api.get("/matches").get_json()["total"] == 3
    unknown = api.get("/matches?game=chess")
    assert unknown.status_code == 400 and "game" in unknown.get_json()["errors"]
