"""GET /export/{game} (issue 30) on the real Redis: one record per decision (the seat's view
at that step, its legal actions, the action, the seat's final rank and score), pages that
resume by cursor to exactly the full export, `since`, who may read a match before its deal
is public (an anonymous caller, another account, the owner, the admin), and bad input as
problem+json. Every answer is checked against openapi.yaml, every line against the
DecisionRecord schema."""

from __future__ import annotations

from functools import cache

import jsonschema
import pytest

import engines
from tests.support.apitest import ADMIN, spec
from tests.support.decision_records import (
    bot_seat,
    create,
    finish,
    play,
    play_keeping,
    read_ndjson,
    store_played,
)
from tournament.export import Cursor

GAME = "aladino"
BOT_URL = "http://127.0.0.1:9/bot"  # never called: the matches are played in the test


@cache
def record_schema() -> jsonschema.Draft202012Validator:
    """The spec's DecisionRecord, which every line follows."""
    return jsonschema.Draft202012Validator({**spec()["components"]["schemas"]["DecisionRecord"],
                                            "components": spec()["components"]})


def records(response) -> list[dict]:
    assert response.status_code == 200, response.get_json()
    assert response.mimetype == "application/x-ndjson"
    found = read_ndjson(response.data)
    for record in found:
        record_schema().validate(record)
    return found


def export(api, token: str | None = None, **query):
    """GET /export/{game}, its answer checked against openapi.yaml unless it is an empty
    page (openapi-core takes a 200 without a body for missing data, though an NDJSON page
    with no record has none)."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    response = api.client.get(f"/export/{query.pop('game', GAME)}", headers=headers,
                              query_string=query)
    if response.status_code != 200 or response.data:
        api.check(response)
    else:
        assert response.mimetype == "application/x-ndjson"
    return response


def follow(api, token: str | None = None, **query) -> tuple[list[dict], str]:
    """Every page from the query's cursor on, as a client does: (records, last cursor)."""
    found: list[dict] = []
    while True:
        response = export(api, token, **query)
        found += records(response)
        query["cursor"] = response.headers["Referee-Next-Cursor"]
        if "Link" not in response.headers:
            return found, query["cursor"]
        assert response.headers["Link"].endswith('>; rel="next"')


def account(api, name: str, *scopes: str) -> tuple[str, str]:
    """A new account with a bot: (its bot's id, a token with `scopes`)."""
    made = api.post("/accounts", token=ADMIN, json={"name": name}).get_json()
    bot = api.post("/bots", token=made["token"], json={
        "name": f"{name}-bot", "url": BOT_URL, "games": [GAME]}).get_json()
    token = api.post("/accounts/me/tokens", token=made["token"],
                     json={"scopes": list(scopes)}).get_json()["token"]
    return bot["id"], token


def key(record: dict) -> tuple:
    return record["match_id"], record["step"]


# ----- what a record holds ----------------------------------------------------------------

def test_each_record_is_a_decision_as_its_seat_saw_it(api, redis_url):
    """Match m-1 is stored with the decisions its driver kept, m-2 without (read by playing
    it again): each record is the view either way."""
    store = api.app.extensions["referee"].store
    seats = [bot_seat("bot-a", 2), bot_seat("bot-b")]
    first, kept = play_keeping(GAME, 1, seats, "m-1")
    assert kept is not None
    played = [store_played(store, redis_url, first, kept=kept),
              store_played(store, redis_url, play(GAME, 2, seats, "m-2"))]
    store_played(store, redis_url, play("caravans", 3, [bot_seat("x"), bot_seat("y")], "m-c"))
    found = records(export(api))
    assert [key(r) for r in found] == [(r["match_id"], s["step"]) for r in played
                                       for s in r["steps"]]
    engine = engines.get(GAME)
    for record in played:
        replayed = api.get(f"/matches/{record['match_id']}/replay").get_json()
        state = engine.new_game(2, replayed["seed"], replayed["options"])
        for step in replayed["steps"]:
            line = next(r for r in found if key(r) == (record["match_id"], step["step"]))
            seat = step["seat"]
            assert line["observation"] == engine.observation(state, seat)
            assert line["legal_actions"] == engine.legal_actions(state)
            assert line["action"] == step["action"] and line["fault"] is None
            assert line["rank"] == replayed["result"]["ranks"][seat]
            assert line["score"] == replayed["result"]["scores"][seat]
            assert (line["bot_id"], line["bot_version"]) == (["bot-a", "bot-b"][seat],
                                                             [2, 1][seat])
            assert line["finished_at"] == replayed["finished_at"]
            state = engine.apply(state, step["action"])
    assert {r["game"] for r in records(export(api, game="caravans"))} == {"caravans"}


# ----- pages and cursors ------------------------------------------------------------------

def test_pages_resume_by_cursor_to_exactly_the_full_export(api, redis_url):
    store = api.app.extensions["referee"].store
    for seed in range(3):
        store_played(store, redis_url, play(GAME, seed, [bot_seat("a"), bot_seat("b")],
                                            f"m-{seed}"))
        store_played(store, redis_url, play("caravans", seed, [bot_seat("a"), bot_seat("b")],
                                            f"m-other-{seed}"))
    whole = export(api)
    assert "Link" not in whole.headers
    paged, cursor = follow(api, limit=17)  # pages end within matches and between them
    assert paged == records(whole) and len(paged) > 17 * 4

    first = export(api, limit=5)
    assert first.headers["Link"].startswith("</export/aladino?limit=5&cursor=")
    assert records(first) == paged[:5]
    assert records(export(api, cursor=first.headers["Referee-Next-Cursor"])) == paged[5:]

    # new matches finish: the last cursor reads exactly them, and nothing before
    assert records(export(api, cursor=cursor)) == []
    late = store_played(store, redis_url, play(GAME, 9, [bot_seat("a"), bot_seat("b")], "m-9"))
    assert [key(r) for r in records(export(api, cursor=cursor))] == [
        ("m-9", step["step"]) for step in late["steps"]]


def test_since_keeps_the_matches_finished_then_or_later(api, redis_url):
    store = api.app.extensions["referee"].store
    for match_id, at in (("m-jan", "2026-01-10T00:00:00.000Z"),
                         ("m-mar", "2026-03-10T00:00:00.000Z")):
        store_played(store, redis_url, play(GAME, 4, [bot_seat("a"), bot_seat("b")], match_id,
                                            finished_at=at))
    for since in ("2026-02-01", "2026-02-01T00:00:00Z", "2026-02-01T01:00:00+01:00",
                  "1769904000"):  # 2026-02-01T00:00:00Z
        assert {r["match_id"] for r in records(export(api, since=since))} == {"m-mar"}, since
    assert {r["match_id"] for r in records(export(api, since="2026-03-10T00:00:00Z"))} == {
        "m-mar"}
    assert {r["match_id"] for r in records(export(api, since="0"))} == {"m-jan", "m-mar"}


# ----- who reads what before a deal is public ----------------------------------------------

@pytest.fixture
def deals(api, redis_url):
    """Alice's and Bob's bots in two matches: `m-public` (its deal over) logged first,
    then `m-secret`, whose deal is shared with `m-sibling`, still queued."""
    store = api.app.extensions["referee"].store
    alice_bot, alice = account(api, "alice", "private:read")
    bob_bot, bob = account(api, "bob", "bots:write")  # no private:read
    seats = [bot_seat(alice_bot), bot_seat(bob_bot)]
    public = store_played(store, redis_url, play(GAME, 5, seats, "m-public"))
    secret = store_played(store, redis_url, play(GAME, 6, seats, "m-secret"), ["m-sibling"])
    sibling = play(GAME, 6, seats[::-1], "m-sibling")
    create(store, sibling, ["m-secret"])
    return {"alice": alice, "bob": bob, "public": public, "secret": secret,
            "sibling": sibling}


def steps_of(record: dict, seats: set[int] = frozenset({0, 1})) -> list[tuple]:
    return [(record["match_id"], step["step"]) for step in record["steps"]
            if step["seat"] in seats]


@pytest.mark.parametrize("who", ["anonymous", "bob"])
def test_others_read_a_match_once_its_deal_is_public_and_wait_for_it(api, redis_url, deals,
                                                                      who):
    token = deals.get(who)
    found, cursor = follow(api, token)
    assert [key(r) for r in found] == steps_of(deals["public"])  # and it waits at m-secret
    assert records(export(api, token, cursor=cursor)) == []
    finish(redis_url, deals["sibling"])
    rest, _ = follow(api, token, cursor=cursor)
    assert [key(r) for r in rest] == steps_of(deals["secret"]) + steps_of(deals["sibling"])


def test_the_owner_reads_its_own_seats_first_and_the_rest_once_public(api, redis_url, deals):
    found, cursor = follow(api, deals["alice"])
    assert [key(r) for r in found] == steps_of(deals["public"]) + steps_of(deals["secret"], {0})
    assert records(export(api, deals["alice"], cursor=cursor)) == []
    finish(redis_url, deals["sibling"])
    rest, _ = follow(api, deals["alice"], cursor=cursor)
    assert [key(r) for r in rest] == (steps_of(deals["secret"], {1})
                                      + steps_of(deals["sibling"]))
    everything = records(export(api, ADMIN))
    assert sorted(found + rest, key=key) == sorted(everything, key=key)  # each exactly once


def test_the_admin_reads_every_finished_match_at_once(api, deals):
    found, _ = follow(api, ADMIN, limit=10)
    assert [key(r) for r in found] == steps_of(deals["public"]) + steps_of(deals["secret"])


# ----- bad input ----------------------------------------------------------------------------

def problem(response, status: int, slug: str, field: str | None = None) -> None:
    assert response.status_code == status, response.data
    body = response.get_json()
    assert body["type"] == f"/problems/{slug}", body
    if field:
        assert field in body["errors"], body


def test_bad_input_is_a_problem(api):
    problem(export(api, game="chess"), 404, "not-found")
    problem(export(api, cursor="not a cursor!"), 400, "request/invalid", "cursor")
    problem(export(api, cursor="bm90LWEtY3Vyc29y"), 422, "request/unprocessable", "cursor")
    other = export(api, game="caravans").headers["Referee-Next-Cursor"]
    problem(export(api, cursor=other), 422, "request/unprocessable", "cursor")
    problem(export(api, since="yesterday"), 400, "request/invalid", "since")
    problem(export(api, since="2026-13-45"), 422, "request/unprocessable", "since")
    problem(export(api, limit=0), 400, "request/invalid", "limit")
    problem(export(api, limit=10_001), 400, "request/invalid", "limit")
    problem(export(api, offset=3), 400, "request/invalid", "offset")


@pytest.mark.parametrize("who", ["anonymous", "bob", "alice"])
def test_a_forged_cursor_reads_no_seat_of_a_secret_deal(api, deals, who):
    """A cursor is opaque, not secret: one written by hand that claims a pass over every
    seat of `m-secret` (or over a seat the caller may not read) yields only what the
    caller may read there: nothing, or the owner's own seat."""
    _, held = follow(api, deals.get(who))
    index = Cursor.decode(held, GAME).index  # where the cursor holds: m-secret
    readable = steps_of(deals["secret"], {0}) if who == "alice" else []
    for doing, done in ((0b11, 0), (0b10, 0), (0b10, 0b01)):
        forged = Cursor(index, 0, done, doing).encode(GAME)
        found, _ = follow(api, deals.get(who), cursor=forged)
        leaked = [key(r) for r in found if key(r) not in readable]
        assert leaked == [], (doing, done)
