"""Matches hold no process: one worker process drives a hundred matches at once against bots
that think 100 ms, and pull matches whose players do not move hold nothing (they park), so
they never delay a tournament (issue "Matches that hold no process"; hardening item 7)."""

from __future__ import annotations

import time

from tests.support.apitest import ADMIN, wait_finished
from tests.support.live_server import wait_status
from tournament.store import Store, lease_key, match_key, running_key

MATCHES = 100


def test_one_worker_process_drives_a_hundred_matches_at_once(api, bad_bots, workers,
                                                             redis_url):
    store = Store.from_url(redis_url)
    thinkers = [api.register_bot(bad_bots.url("/think"), name=f"thinker {n}") for n in (1, 2)]
    ids = [api.create_match("aladino", [{"kind": "bot", "bot_id": bot} for bot in thinkers],
                            seed=seed, deadline_ms=10000)["id"] for seed in range(MATCHES)]
    (worker,) = workers.start(1, REFEREE_BOT_MAX_MATCHES=str(MATCHES))
    most = 0
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        statuses = [match["status"] for match in store.get_matches(ids)]
        most = max(most, store.redis.zcard(running_key()))
        if all(status == "finished" for status in statuses):
            break
        time.sleep(0.05)
    assert most == MATCHES, f"at most {most} matches ran at once"
    assert worker.poll() is None
    for match in store.get_matches(ids):
        assert match["status"] == "finished" and match["forfeit"] is None, match


def test_idle_pull_matches_hold_nothing_and_do_not_delay_a_tournament(api, bad_bots, workers,
                                                                      redis_url):
    store = Store.from_url(redis_url)
    idle = [api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}], seed=seed)["id"]
            for seed in range(4)]
    workers.start(2, REFEREE_WORKER_CONCURRENCY="2")  # as few slots as matches that idle
    for match_id in idle:
        wait_status(api, match_id, "running")
    bots = [api.register_bot(bad_bots.url("/good"), name=f"b{n}") for n in range(3)]
    created = api.post("/tournaments", token=ADMIN, json={
        "game": "aladino", "bots": bots, "players": 2, "seed": 5, "deadline_ms": 5000})
    assert created.status_code == 201, created.get_json()
    wait_finished(api, created.get_json()["id"], timeout=120)
    for match_id in idle:  # still waiting for their players, holding no worker
        assert api.get(f"/matches/{match_id}").get_json()["status"] == "running"
        assert store.redis.hget(match_key(match_id), "parked") == b"0"
        assert not store.redis.exists(lease_key(match_id))
        assert store.redis.zscore(running_key(), match_id) is None
