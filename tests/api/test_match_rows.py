"""The match lists' rows kept rendered per API process (`referee.api.match_rows`): a list
answers exactly what rendering every match afresh answers, however the matches change
between two reads (a match played, a deal made public, a match gone), and the kept rows
are bounded. Real Redis, the app's own test client (every answer checked against the
spec)."""

from __future__ import annotations

import orjson

from referee.api.match_rows import MatchRows
from tests.support.apitest import ADMIN
from tests.support.decision_records import bot_seat, create, finish, play, store_played
from tournament.store import match_fields, match_key


def listing(api, token: str | None = None) -> list[dict]:
    return api.get("/matches?limit=100", token=token).get_json()["matches"]


def fresh(api, token: str | None = None) -> list[dict]:
    """The same list, this process's kept rows forgotten first."""
    api.app.extensions["referee"].match_rows.rows.clear()
    return listing(api, token)


def test_a_row_follows_its_match_as_it_is_played(api):
    store = api.app.extensions["referee"].store
    record = play("aladino", 5, [bot_seat("a"), bot_seat("b")], "m-played")
    create(store, record)
    before = listing(api)
    assert before[0]["status"] == "queued" and before[0]["seed"] is None
    assert listing(api) == before == fresh(api)
    finish(api.app.extensions["referee"].config.redis_url, record)
    after = listing(api)
    assert after == fresh(api) and after != before
    assert (after[0]["status"], after[0]["seed"]) == ("finished", 5)
    assert after[0]["result"] is not None


def test_a_seed_shows_once_its_deal_is_over_and_always_to_the_admin(api, redis_url):
    """Two matches on one deal: the first one played keeps its seed hidden from anyone but
    the admin until the second is over too; its stored hash does not change meanwhile, its
    row is rendered for each visibility."""
    store = api.app.extensions["referee"].store
    seats = [bot_seat("a"), bot_seat("b")]
    store_played(store, redis_url, play("aladino", 6, seats, "m-first"), ["m-second"])
    second = play("aladino", 6, seats[::-1], "m-second")
    create(store, second, ["m-first"])
    hidden = {m["id"]: m for m in listing(api)}["m-first"]
    shown = {m["id"]: m for m in listing(api, ADMIN)}["m-first"]
    assert hidden["status"] == "finished" and hidden["seed"] is None
    assert shown["seed"] == 6 and {**shown, "seed": None} == hidden
    finish(redis_url, second)
    assert {m["id"]: m for m in listing(api)}["m-first"] == shown
    assert listing(api) == fresh(api) and listing(api, ADMIN) == fresh(api, ADMIN)


def test_a_row_is_rendered_again_only_when_its_hash_changed_and_the_rows_are_bounded(
        api, redis_url):
    store = api.app.extensions["referee"].store
    ids = [api.create_match("caravans", [{"kind": "pull"}, {"kind": "pull"}],
                            seed=seed)["id"] for seed in range(3)]
    rows = MatchRows(size=2)
    renders: list[str] = []

    def render(match: dict, secret: bool) -> bytes:
        renders.append(match["id"])
        return orjson.dumps({"id": match["id"], "status": match["status"]})

    def page(match_ids: list[str]) -> list[bytes]:
        return [row.json(False, render)
                for row in rows.rows_of(match_ids, store.get_match_hashes(match_ids))]

    assert page(ids[:2]) == page(ids[:2]) and renders == ids[:2]
    page(ids[2:])  # the least recently used (ids[0]) leaves
    assert list(rows.rows) == ids[1:] and len(rows.rows) == 2
    page(ids[:1])
    assert renders == [*ids, ids[0]]
    store.redis.hset(match_key(ids[0]), "status", "running")
    assert orjson.loads(page(ids[:1])[0])["status"] == "running"
    assert renders == [*ids, ids[0], ids[0]]
    assert rows.rows[ids[0]].match == match_fields(store.get_match_hashes(ids[:1])[0])
    store.redis.delete(match_key(ids[1]))
    assert page(ids[:2]) == [page(ids[:1])[0]] and ids[1] not in rows.rows
