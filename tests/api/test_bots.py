"""Registered bots through the API: registration needs the admin token, its fields are
validated and named, URLs off the allowlist are refused; unique names (409), PATCH, DELETE
(retire) and the signing secret (issues 15.9 and 18). Every response is checked against
openapi.yaml."""

from __future__ import annotations

import re

import pytest
import redis

from tests.support.apitest import ADMIN
from tournament.store import Store

HEX64 = re.compile(r"^[0-9a-f]{64}$")


def register(api, url: str, name: str, games: list[str] | None = None):
    return api.post("/bots", token=ADMIN, json={"name": name, "url": url,
                                                "games": games or ["aladino"]})


def registered(api, url: str, name: str) -> dict:
    """A new bot as GET /bots/{id} shows it (its answer less the secret)."""
    response = register(api, url, name)
    assert response.status_code == 201, response.get_json()
    return {k: v for k, v in response.get_json().items() if k != "secret"}


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
    assert api.get(f"/bots/{bot['id']}", token=ADMIN).get_json() == bot
    assert api.get("/bots", token=ADMIN).get_json()["bots"] == [bot]
    public = api.get(f"/bots/{bot['id']}").get_json()  # anonymous: no URL (issue 27)
    assert "url" not in public and public == {
        **{k: v for k, v in bot.items() if k != "url"},
        "versions": [{k: v for k, v in version.items() if k != "url"}
                     for version in bot["versions"]]}
    assert bot["owner"] is None and bot["public"] is True and bot["version"] == 1
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


def test_a_url_over_2000_characters_is_refused_for_its_length_alone(api):
    """A 1 MB URL is refused by its length; its syntax is not looked at (that cost ~1 s of
    the API's CPU a MB, and the refusal repeated its host back)."""
    url = "http://" + "a." * 500_000 + "_"
    response = api.post("/bots", token=ADMIN, json={"name": "x", "url": url,
                                                    "games": ["aladino"]})
    assert response.status_code == 400
    assert response.get_json()["errors"] == {"url": ["Length must be between 1 and 2000."]}


def test_a_name_already_registered_is_a_409_naming_that_bot(api, bot_server):
    first = register(api, bot_server.url("/random"), "Greedy One").get_json()
    for name in ("Greedy One", "greedy one", "  GREEDY ONE "):
        taken = register(api, bot_server.url("/first"), name)
        problem = taken.get_json()
        assert taken.status_code == 409 and problem["type"].endswith("bot/name-taken")
        assert first["id"] in problem["detail"] and problem["errors"]["name"]
    assert [bot["id"] for bot in api.get("/bots").get_json()["bots"]] == [first["id"]]


def test_patch_changes_name_and_url_checked_as_at_registration(api, bot_server):
    one = registered(api, bot_server.url("/random"), "one")
    two = registered(api, bot_server.url("/random"), "two")
    path = f"/bots/{one['id']}"
    body = {"url": bot_server.url("/first")}
    assert api.request("PATCH", path, json=body).status_code == 401
    assert api.request("PATCH", path, json=body, token="nope").status_code == 403
    changed = api.request("PATCH", path, json={"name": "uno", **body}, token=ADMIN)
    assert changed.status_code == 200
    now = changed.get_json()
    assert now == {**one, "name": "uno", "url": bot_server.url("/first"), "version": 2,
                   "versions": [*one["versions"], {**now["versions"][1]}]}
    assert [(v["version"], v["url"]) for v in now["versions"]] == [
        (1, bot_server.url("/random")), (2, bot_server.url("/first"))], "a new URL: a version"
    assert api.get(path, token=ADMIN).get_json() == changed.get_json()
    outside = api.request("PATCH", path, json={"url": "http://10.0.0.5/bot"}, token=ADMIN)
    assert outside.status_code == 403 and list(outside.get_json()["errors"]) == ["url"]
    odd = api.request("PATCH", path, json={"url": "http://user:pw@127.0.0.1/bot"}, token=ADMIN)
    assert odd.status_code == 400 and list(odd.get_json()["errors"]) == ["url"]
    unchanged = api.request("PATCH", path, json={}, token=ADMIN)
    assert unchanged.status_code == 200 and unchanged.get_json() == changed.get_json()
    assert api.request("PATCH", path, json={"games": ["caravans"]}, token=ADMIN).status_code == 400
    taken = api.request("PATCH", path, json={"name": "TWO"}, token=ADMIN)
    assert taken.status_code == 409 and two["id"] in taken.get_json()["detail"]
    assert api.request("PATCH", path, json={"name": "uno"}, token=ADMIN).status_code == 200
    assert api.request("PATCH", "/bots/bot-nope", json=body, token=ADMIN).status_code == 404
    listed = [bot["id"] for bot in api.get("/bots").get_json()["bots"]]
    assert listed == [one["id"], two["id"]], "registration order is kept"


def test_a_name_is_found_in_a_few_reads_however_many_bots_and_older_bots_keep_theirs(
        api, bot_server, redis_url):
    """A name is looked up in its index, not among every bot's record (registering read
    each bot's record, under the lock every registration takes); bots registered before
    the index existed are indexed at the first lookup, and a rename frees the old name."""
    store, stored = Store(redis.Redis.from_url(redis_url)), redis.Redis.from_url(redis_url)
    first = registered(api, bot_server.url("/random"), "First")
    for n in range(300):
        store.save_bot({"id": f"bot-many{n}", "name": f"many {n}", "url": None,
                        "games": ["aladino"], "owner": None})
    for key in stored.scan_iter("referee:bot-name*"):  # a store from before the index
        stored.delete(key)
    stored.config_resetstat()
    taken = register(api, bot_server.url("/first"), " first")
    assert taken.status_code == 409 and first["id"] in taken.get_json()["detail"]
    assert register(api, bot_server.url("/first"), "MANY 299").status_code == 409
    stored.config_resetstat()
    assert register(api, bot_server.url("/first"), "another").status_code == 201
    assert stored.info("stats")["keyspace_hits"] < 30, "each bot's record was read"
    renamed = api.request("PATCH", f"/bots/{first['id']}", json={"name": "Premier"},
                          token=ADMIN)
    assert renamed.status_code == 200
    assert register(api, bot_server.url("/first"), "first").status_code == 201
    assert register(api, bot_server.url("/first"), "premier").status_code == 409


def test_updates_are_off_unless_asked_for_at_registration_or_by_patch(api, bot_server):
    """Issue 26: `updates` (default false) says whether the bot hears the other steps."""
    quiet = registered(api, bot_server.url("/random"), "quiet")
    assert quiet["updates"] is False
    listening = api.post("/bots", token=ADMIN, json={
        "name": "listening", "url": bot_server.url("/random"), "games": ["aladino"],
        "updates": True}).get_json()
    assert listening["updates"] is True
    path = f"/bots/{quiet['id']}"
    turned = api.request("PATCH", path, json={"updates": True}, token=ADMIN)
    assert turned.status_code == 200 and turned.get_json()["updates"] is True
    assert api.get(path).get_json()["updates"] is True
    odd = api.request("PATCH", path, json={"updates": "sometimes"}, token=ADMIN)
    assert odd.status_code == 400 and list(odd.get_json()["errors"]) == ["updates"]


def test_a_retired_bot_plays_nothing_new_and_keeps_its_history(api, bot_server, run_worker):
    bot = registered(api, bot_server.url("/random"), "veteran")
    other = registered(api, bot_server.url("/random"), "rookie")
    seats = [{"kind": "bot", "bot_id": bot["id"]}, {"kind": "bot", "bot_id": other["id"]}]
    played = api.create_match("aladino", seats, seed=4)
    run_worker()
    path = f"/bots/{bot['id']}"
    assert api.request("DELETE", path).status_code == 401
    assert api.request("DELETE", path, token="nope").status_code == 403
    retired = api.request("DELETE", path, token=ADMIN).get_json()
    assert retired["retired_at"] and {**retired, "retired_at": None} == bot
    assert api.request("DELETE", path, token=ADMIN).get_json() == retired, "idempotent"
    assert api.request("DELETE", "/bots/bot-nope", token=ADMIN).status_code == 404
    gone = api.get(path)
    assert gone.status_code == 404 and gone.get_json()["type"].endswith("bot/retired")
    assert api.request("PATCH", path, json={"name": "x"}, token=ADMIN).status_code == 404
    assert api.post(f"{path}/secret", token=ADMIN).status_code == 404

    refused = api.post("/matches", token=ADMIN, json={"game": "aladino", "seats": seats})
    assert refused.status_code == 409 and refused.get_json()["type"].endswith("bot/retired")
    assert bot["id"] in refused.get_json()["detail"]
    entered = api.post("/tournaments", token=ADMIN, json={
        "game": "aladino", "bots": [bot["id"], other["id"]]})
    assert entered.status_code == 409 and bot["id"] in entered.get_json()["detail"]

    assert api.get("/bots", token=ADMIN).get_json()["bots"][0] == retired
    assert api.get(f"/matches/{played['id']}").get_json()["status"] == "finished"
    assert api.get(f"/matches/{played['id']}/replay").status_code == 200
    leaderboard = api.get("/ratings/aladino").get_json()["leaderboard"]
    assert bot["id"] in {row["bot_id"] for row in leaderboard}
    assert register(api, bot_server.url("/random"), "Veteran").status_code == 409


def test_the_secret_is_shown_once_rotated_by_the_admin_and_never_leaks(
        api, bot_server, run_worker, redis_url):
    created = register(api, bot_server.url("/random"), "signed")
    bot = created.get_json()
    secret = bot.pop("secret")
    assert created.status_code == 201 and HEX64.match(secret)
    store = Store(redis.Redis.from_url(redis_url))
    assert store.get_bot(bot["id"])["secret"] == secret, "kept for the referee to sign with"

    path = f"/bots/{bot['id']}/secret"
    assert api.post(path).status_code == 401
    assert api.post(path, token="nope").status_code == 403
    assert api.post("/bots/bot-nope/secret", token=ADMIN).status_code == 404
    rotated = api.post(path, token=ADMIN).get_json()
    new_secret = rotated.pop("secret")
    assert rotated == bot and HEX64.match(new_secret) and new_secret != secret
    assert store.get_bot(bot["id"])["secret"] == new_secret

    match = api.create_match("aladino", [{"kind": "bot", "bot_id": bot["id"]}] * 2, seed=6)
    worker_output = run_worker()
    answers = [api.get("/bots"), api.get(f"/bots/{bot['id']}"),
               api.request("PATCH", f"/bots/{bot['id']}", json={"name": "signed2"}, token=ADMIN),
               api.get(f"/matches/{match['id']}", token=ADMIN), api.get("/matches"),
               api.get(f"/matches/{match['id']}/replay"),
               api.get(f"/matches/{match['id']}/replay/1?seat=0"), api.get("/ratings/aladino"),
               api.request("DELETE", f"/bots/{bot['id']}", token=ADMIN)]
    assert all(answer.status_code == 200 for answer in answers)
    for text in [answer.get_data(as_text=True) for answer in answers] + [worker_output]:
        assert secret not in text and new_secret not in text
    stored = redis.Redis.from_url(redis_url)
    for key in stored.scan_iter():
        if stored.type(key) == b"string" and not key.startswith(b"referee:bot:"):
            assert new_secret.encode() not in stored.get(key), key
