"""The REST API against a real Redis: games, bots, matches, errors, and the spec itself.
Every response is validated against openapi.yaml by the `api` fixture."""

from __future__ import annotations

import pytest
import yaml
from apitest import ADMIN, SPEC_PATH
from openapi_spec_validator import validate as validate_spec

import engines
from referee.api.openapi import spec_yaml


def test_the_committed_spec_is_valid_and_generated_from_the_schemas():
    spec = yaml.safe_load(SPEC_PATH.read_text())
    validate_spec(spec)
    assert spec["openapi"].startswith("3.1")
    assert SPEC_PATH.read_text() == spec_yaml(), "run: python -m referee.api.openapi > openapi.yaml"


def test_the_spec_is_served(api):
    response = api.get("/openapi.yaml")
    assert response.status_code == 200 and response.data == SPEC_PATH.read_bytes()


def test_health_reports_redis(api):
    response = api.get("/health")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "redis": "ok", "games": engines.names()}


def test_health_without_redis_is_a_503_problem(openapi):
    from apitest import ApiClient

    from referee.api.app import create_app
    from referee.config import Config
    from referee.redis_server import free_port

    down = ApiClient(create_app(Config(redis_url=f"redis://127.0.0.1:{free_port()}/0",
                                       admin_token=ADMIN)), openapi)
    response = down.get("/health")
    assert response.status_code == 503 and response.get_json()["title"] == "Service Unavailable"


def test_games_list_every_engine(api):
    games = api.get("/games").get_json()["games"]
    assert [g["name"] for g in games] == engines.names()


@pytest.mark.parametrize("name", engines.names())
def test_a_game_describes_itself(api, name):
    engine = engines.get(name)
    body = api.get(f"/games/{name}").get_json()
    assert body["description"] == engine.describe()
    assert body["variants"] == engine.variants()
    assert (body["min_players"], body["max_players"]) == (engine.min_players, engine.max_players)


def test_unknown_paths_and_methods_are_problems(api):
    assert api.get("/games/chess").status_code == 404
    assert api.get("/nowhere").status_code == 404
    response = api.request("DELETE", "/bots")
    assert response.status_code == 405 and "GET" in response.headers["Allow"]


def test_registering_a_bot_needs_the_admin_token(api, bot_server):
    body = {"name": "r", "url": bot_server.url("/random"), "games": ["aladino"]}
    missing = api.post("/bots", json=body)
    assert missing.status_code == 401 and missing.headers["WWW-Authenticate"] == "Bearer"
    assert api.post("/bots", json=body, token="wrong").status_code == 403
    assert api.post("/bots", json=body, headers={"Authorization": "Basic abc"}).status_code == 401
    created = api.post("/bots", json=body, token=ADMIN)
    assert created.status_code == 201
    bot = created.get_json()
    assert len(bot.pop("secret")) == 64, "shown in this answer only"
    assert created.headers["Location"] == f"/bots/{bot['id']}"
    assert api.get(f"/bots/{bot['id']}").get_json() == bot
    assert api.get("/bots").get_json()["bots"] == [bot]
    assert api.get("/bots/bot-nope").status_code == 404


def test_bot_fields_are_validated_and_named(api):
    response = api.post("/bots", token=ADMIN, json={"name": "", "games": ["chess"], "x": 1})
    assert response.status_code == 400
    errors = response.get_json()["errors"]
    assert set(errors) == {"name", "url", "games", "x"}


@pytest.mark.parametrize("url, status", [
    ("http://10.0.0.5/bot", 403), ("http://example.com/bot", 403),
    ("ftp://127.0.0.1/bot", 400), ("http:///bot", 400)])
def test_bot_urls_outside_the_allowlist_are_refused(api, url, status):
    """A malformed URL is a 400; a well-formed one whose host is off the allowlist a 403
    (the server's policy refuses to call it)."""
    response = api.post("/bots", token=ADMIN, json={"name": "x", "url": url,
                                                    "games": ["aladino"]})
    assert response.status_code == status and list(response.get_json()["errors"]) == ["url"]


def test_malformed_json_and_oversized_bodies(api):
    bad = api.post("/bots", token=ADMIN, data=b"{not json", content_type="application/json")
    assert bad.status_code == 400 and "not valid JSON" in bad.get_json()["errors"]["_body"][0]
    empty = api.post("/bots", token=ADMIN, data=b"", content_type="application/json")
    assert empty.status_code == 400
    huge = api.post("/bots", token=ADMIN, data=b"x" * (65 * 1024),
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


def test_a_live_replay_is_for_the_admin_only(api):
    match = api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}], seed=5)
    url = f"/matches/{match['id']}/replay"
    assert api.get(url).status_code == 401
    assert api.get(url, token=match["tokens"][0]["token"]).status_code == 403
    record = api.get(url, token=ADMIN).get_json()
    assert record["steps"] == [] and record["result"] is None and record["seed"] == 5


@pytest.fixture
def sealed_record(bot_server) -> dict:
    from referee.match import replay
    from referee.match.runner import FailurePolicy, PushSeat, run_match

    seats = [PushSeat(bot_server.url("/first")) for _ in range(2)]
    record = run_match("aladino", 3, {}, seats, FailurePolicy(), "m-api")
    return replay.seal(record, "test-secret")


@pytest.mark.parametrize("change, path", [
    (lambda r: r.update(initial_state_hash="zz"), ["initial_state_hash"]),
    (lambda r: r["steps"][0].update(elapsed_ms="slow"), ["steps", "0", "elapsed_ms"]),
    (lambda r: r["signature"].update(value="é"), ["signature", "value"]),
    (lambda r: r["chain"].update(head="é" * 64), ["chain", "head"]),
    (lambda r: r.update(seed="5"), ["seed"]),
])
def test_a_malformed_replay_is_a_400_naming_the_field(api, sealed_record, change, path):
    change(sealed_record)
    response = api.post("/replays/verify", json=sealed_record)
    assert response.status_code == 400
    errors = response.get_json()["errors"]
    for key in path:
        errors = errors[key]
    assert errors
