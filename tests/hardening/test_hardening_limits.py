"""Limits: the request body size (413), a rate limit per seat token on move submission
(429 with Retry-After, counted in Redis so every API process shares it), and a cap on the
matches one bot plays at once (a match over the cap waits for a slot before it starts)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

import pytest
import redis
import redis.asyncio as aioredis
import requests

from referee.api.app import create_app
from referee.api.bots import MAX_UPLOAD_BODY_BYTES
from referee.config import MAX_BODY_BYTES, Config
from tests.support.apitest import ADMIN, ApiClient
from tests.support.live_server import wait_status
from tournament.store import Store, lease_key, playing_key
from tournament.store.progress import Progress


@pytest.mark.parametrize("path", ["/bots", "/matches", "/tournaments", "/replays/verify",
                                  "/matches/{match}/actions"])
def test_an_oversized_body_is_a_413_problem_on_a_real_server(live_server, redis_url, path):
    headers = {"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"}
    if "{match}" in path:
        created = requests.post(f"{live_server.url}/matches", headers=headers, timeout=10,
                                json={"game": "aladino", "seats": [{"kind": "pull"}] * 2}).json()
        path = path.format(match=created["id"])
        headers["Authorization"] = f"Bearer {created['tokens'][0]['token']}"
    limit = MAX_UPLOAD_BODY_BYTES if path == "/bots" else MAX_BODY_BYTES  # a bot's source
    response = requests.post(live_server.url + path, data=b" " * (limit + 1),
                             headers=headers, timeout=10)
    assert response.status_code == 413
    assert response.headers["Content-Type"] == "application/problem+json"
    assert response.json()["status"] == 413


def test_an_oversized_chunked_body_is_refused_too(live_server):
    """No Content-Length: the limit applies while the body is read."""
    chunks = (b" " * 65536 for _ in range(MAX_BODY_BYTES // 65536 + 2))
    response = requests.post(f"{live_server.url}/replays/verify", data=chunks, timeout=10,
                             headers={"Content-Type": "application/json"})
    assert response.status_code == 413


def rate_limited_api(config: Config, openapi, rate: tuple[int, int]) -> ApiClient:
    """An app of its own (an API process) with the move rate `rate` and short move waits."""
    return ApiClient(create_app(replace(config, move_rate=rate, move_wait_s=0.1)), openapi)


def test_moves_are_rate_limited_per_token_across_api_processes(config, openapi):
    """Two apps (two API processes) share the count; each token has its own."""
    first, second = (rate_limited_api(config, openapi, (3, 60)) for _ in range(2))
    match = first.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}], seed=2)
    url = f"/matches/{match['id']}/actions"
    token0, token1 = (t["token"] for t in match["tokens"])
    for api in (first, second, first):
        assert api.post(url, token=token0, json={"step": 0}).status_code == 400
    for api in (second, first):
        refused = api.post(url, token=token0, json={"step": 0})
        assert refused.status_code == 429
        assert refused.get_json()["type"] == "/problems/action/rate-limited"
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        assert token0 not in refused.get_data(as_text=True)
    assert second.post(url, token=token1, json={"step": 0}).status_code == 400


def test_the_rate_limit_window_passes(config, openapi):
    api = rate_limited_api(config, openapi, (2, 1))
    match = api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}], seed=2)
    url, token = f"/matches/{match['id']}/actions", match["tokens"][0]["token"]
    statuses = [api.post(url, token=token, json={}).status_code for _ in range(3)]
    while statuses[-1] != 429:  # a window boundary fell between the posts
        statuses = [api.post(url, token=token, json={}).status_code for _ in range(3)]
    refused = api.post(url, token=token, json={})
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "1"
    time.sleep(1.05)
    assert api.post(url, token=token, json={}).status_code == 400


def test_no_burst_of_twice_the_limit_fits_around_a_windows_edge(config, openapi, redis_url):
    """Fixed windows let N moves through at the end of one window and N more at the start
    of the next; a moving window lets N through in any S seconds, and its Retry-After is
    when the oldest leaves the window."""
    window_s = 4
    api = rate_limited_api(config, openapi, (2, window_s))
    match = api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}], seed=2)
    url, token = f"/matches/{match['id']}/actions", match["tokens"][0]["token"]
    seconds, micros = redis.Redis.from_url(redis_url).time()
    now = seconds + micros / 1e6
    edge = (now // window_s + 1) * window_s  # where a fixed window would start again
    if edge - now < 1:
        edge += window_s
    time.sleep(edge - now - 0.5)
    assert [api.post(url, token=token, json={}).status_code for _ in range(2)] == [400, 400]
    time.sleep(max(0.0, edge + 0.1 - time.time()))
    refused = api.post(url, token=token, json={})
    assert refused.status_code == 429, "a new fixed window let the third move through"
    assert 1 <= int(refused.headers["Retry-After"]) <= window_s


def test_the_limits_come_from_the_environment():
    config = Config.from_env({"REFEREE_MOVE_RATE": "5/30", "REFEREE_BOT_MAX_MATCHES": "2"})
    assert config.move_rate == (5, 30) and config.bot_max_matches == 2
    assert Config.from_env({}).move_rate == (60, 10)
    assert Config.from_env({}).bot_max_matches == 8
    assert Config.from_env({}).keep_decisions_s == 0
    assert Config.from_env({"REFEREE_KEEP_DECISIONS_S": "86400"}).keep_decisions_s == 86400
    for bad in ({"REFEREE_MOVE_RATE": "fast"}, {"REFEREE_MOVE_RATE": "0/10"},
                {"REFEREE_MOVE_RATE": "/10"}, {"REFEREE_MOVE_RATE": "5/x"},
                {"REFEREE_BOT_MAX_MATCHES": "-1"}, {"REFEREE_KEEP_DECISIONS_S": "-5"},
                {"REFEREE_KEEP_DECISIONS_S": "a day"}):
        with pytest.raises(ValueError):
            Config.from_env(bad)


def test_a_bot_over_its_cap_of_concurrent_matches_waits_for_a_slot(api, bad_bots, workers,
                                                                    redis_url):
    """Cap 1, three workers: the two matches of bot A are played one after the other (every
    request of the second comes after the last of the first), while a match of two bots in
    no other match is played beside them. (The cap holds for every bot, and a match waiting
    for a slot holds its worker: so the other match has bots and a worker of its own.)"""
    capped, other, third, free_1, free_2 = (api.register_bot(bad_bots.url("/steady"), name=n)
                                            for n in ("a", "b", "c", "d", "e"))
    workers.start_ready(3, REFEREE_BOT_MAX_MATCHES="1")
    first = api.create_match("aladino", [{"kind": "bot", "bot_id": capped},
                                         {"kind": "bot", "bot_id": other}], seed=1)["id"]
    second = api.create_match("aladino", [{"kind": "bot", "bot_id": third},
                                          {"kind": "bot", "bot_id": capped}], seed=2)["id"]
    free = api.create_match("aladino", [{"kind": "bot", "bot_id": free_1},
                                        {"kind": "bot", "bot_id": free_2}], seed=3)["id"]
    for match_id in (first, second, free):
        wait_status(api, match_id, "finished")
    asked = {m: [r["at"] for r in bad_bots.by_match[m]] for m in (first, second, free)}
    earlier, later = sorted((first, second), key=lambda m: asked[m][0])
    assert max(asked[earlier]) < min(asked[later]), "bot a played two matches at once"
    assert min(asked[free]) < max(asked[earlier]) or min(asked[free]) < max(asked[later])
    store = Store.from_url(redis_url)
    assert not store.redis.exists(playing_key(capped)), "every slot was given back"


def test_a_slot_held_by_a_dead_worker_is_free_again(redis_url):
    async def run() -> None:
        client = aioredis.Redis.from_url(redis_url)
        progress = Progress(client)
        await client.set(lease_key("m-1"), "driver")
        assert await progress.take_bot_slots("m-1", ["bot-a", "bot-b"], cap=1)
        assert not await progress.take_bot_slots("m-2", ["bot-c", "bot-a"], cap=1)
        assert not await client.exists(playing_key("bot-c")), "all slots or none"
        assert await progress.take_bot_slots("m-2", ["bot-c"], cap=1)
        await client.delete(lease_key("m-1"))  # its worker died: the lease lapsed
        assert await progress.take_bot_slots("m-3", ["bot-a"], cap=1)
        assert await client.smembers(playing_key("bot-a")) == {b"m-3"}
        await progress.release_bot_slots("m-3", ["bot-a"])
        assert not await client.exists(playing_key("bot-a"))
        await client.aclose()

    asyncio.run(run())
