"""Faults of the machinery around a match: Redis restarted under append-only persistence,
and a superseded attempt that finishes after the attempt that replaced it.

kill -9 of a worker mid-match: here for a single match (reading it queues it again once its
lease lapses); for tournaments (a worker with its work horse, or the work horse alone; the
lease path and rq's own clean-up) in tests/tournament/test_tournament_recovery.py. The
match is played again and every match is counted exactly once.
"""

from __future__ import annotations

import threading
import time

import orjson
import pytest
import redis
from apitest import ADMIN, ApiClient, wait_finished
from hardening_procs import wait_status
from worker_procs import Workers

from referee.app import create_app
from referee.config import Config
from referee.redis_server import RedisServer
from tournament import jobs, ratings, recovery, results
from tournament.store import Store, match_key, ratings_key, tournament_key


def snapshot(api: ApiClient, client: redis.Redis, tournament_id: str) -> dict:
    """Everything a restart could lose or double: the tournament, the leaderboard, the
    counted sets and results, and every stored replay byte for byte."""
    view = api.get(f"/tournaments/{tournament_id}", token=ADMIN).get_json()
    return {
        "view": view,
        "ratings": api.get("/ratings/aladino").get_json(),
        "counted": client.smembers(ratings_key("aladino", "counted")),
        "results": client.lrange(ratings_key("aladino", "results"), 0, -1),
        "done": client.smembers(tournament_key(tournament_id, "done")),
        "replays": {m: client.get(match_key(m, "replay")) for m in view["matches"]},
        "matches": {m: api.get(f"/matches/{m}").get_json() for m in view["matches"]},
    }


def stop_redis(server: RedisServer, how: str) -> None:
    """A clean shutdown (SIGTERM: Redis flushes the append-only file), or kill -9 once the
    file had its fsync (`appendfsync everysec`: at most the last second is at risk)."""
    if how == "shutdown":
        server.stop()
        return
    time.sleep(1.2)
    server.process.kill()
    server.process.wait()


@pytest.mark.parametrize("how", ["shutdown", "kill -9"])
def test_a_redis_restart_with_append_only_persistence_loses_and_doubles_nothing(
        bad_bots, openapi, tmp_path, how):
    server = RedisServer(tmp_path / "redis", persistent=True).start()
    try:
        api = ApiClient(create_app(Config(redis_url=server.url, admin_token=ADMIN,
                                          secret="test-secret")), openapi)
        bots = [api.register_bot(bad_bots.url("/good"), name=f"b{n}") for n in range(3)]
        created = api.post("/tournaments", token=ADMIN, json={
            "game": "aladino", "bots": bots, "players": 2, "seed": 5, "deadline_ms": 5000})
        assert created.status_code == 201, created.get_json()
        tournament_id = created.get_json()["id"]
        pool = Workers(server.url, tmp_path)
        assert pool.start(burst=True)[0].wait(timeout=60) == 0
        wait_finished(api, tournament_id)
        client = redis.Redis.from_url(server.url)
        before = snapshot(api, client, tournament_id)
        assert len(before["counted"]) == len(before["results"]) == 6

        stop_redis(server, how)
        assert api.get("/health").status_code == 503
        server.start()
        after = snapshot(api, client, tournament_id)
        assert after == before

        store = Store(client)
        for match_id in before["view"]["matches"]:  # every job and sweep run once more
            assert not results.count_finished(store, match_id)
            jobs.enqueue_match(store, store.get_match(match_id), attempt=0)
        assert pool.start(burst=True)[0].wait(timeout=60) == 0
        assert snapshot(api, client, tournament_id) == before
        counted = [orjson.loads(raw) for raw in before["results"]]
        board = {row["bot_id"]: row["rating"] for row in before["ratings"]["leaderboard"]}
        assert board == {bot: round(rating, ratings.DECIMALS)
                         for bot, rating in ratings.elo_replay(counted).items()}
        assert all(row["games"] == 4 for row in before["ratings"]["leaderboard"])
        assert "Traceback" not in pool.logs()
        client.close()
    finally:
        server.stop()


def test_a_superseded_attempt_finishing_last_cannot_overwrite_the_replay(
        api, bad_bots, redis_url):
    """Attempt 0 stalls on a bot (as a worker cut off from Redis would), is presumed dead
    and replaced; attempt 1 finishes; then attempt 0 finishes too. The store refuses its
    write: the replay and the counted outcome are attempt 1's."""
    store = Store.from_url(redis_url)
    seats = [{"kind": "bot", "bot_id": api.register_bot(bad_bots.url("/gate"), name=name)}
             for name in ("a", "b")]
    match_id = api.create_match("aladino", seats, seed=8, deadline_ms=20000)["id"]
    outcome: dict = {}
    first = threading.Thread(target=lambda: outcome.update(
        jobs.play_stored_match(store, match_id, "test-secret", attempt=0)))
    first.start()
    assert bad_bots.gate_reached.wait(20)
    assert recovery.take_over(store, match_id) == 1
    second = jobs.play_stored_match(store, match_id, "test-secret", attempt=1)
    assert second["status"] == "finished"
    stored = store.redis.get(match_key(match_id, "replay"))
    bad_bots.gate.set()
    first.join(timeout=30)
    assert outcome == {"match_id": match_id, "status": "superseded"}
    assert store.redis.get(match_key(match_id, "replay")) == stored
    assert store.get_match(match_id)["status"] == "finished"
    assert store.redis.lrange(ratings_key("aladino", "results"), 0, -1) == [
        orjson.dumps(results.match_outcome(store, store.get_match(match_id)))]
    record = api.get(f"/matches/{match_id}/replay").get_json()
    assert api.post("/replays/verify", json=record).get_json()["valid"]


def test_a_match_whose_worker_is_killed_is_played_again_when_read(api, bad_bots, workers,
                                                                  redis_url):
    store = Store.from_url(redis_url)
    seats = [{"kind": "bot", "bot_id": api.register_bot(bad_bots.url("/steady"), name=n)}
             for n in ("a", "b")]
    match_id = api.create_match("aladino", seats, seed=6, deadline_ms=5000)["id"]
    (doomed,) = workers.start()
    deadline = time.monotonic() + 30
    while store.get_match(match_id)["step"] < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    workers.kill(doomed)
    assert api.get(f"/matches/{match_id}").get_json()["status"] == "running"  # lease alive
    workers.start()
    wait_status(api, match_id, "finished")
    assert store.current_attempt(match_id) == 1
    record = api.get(f"/matches/{match_id}/replay").get_json()
    assert record["forfeit"] is None
    assert api.post("/replays/verify", json=record).get_json()["valid"]
    assert store.redis.lrange(ratings_key("aladino", "results"), 0, -1) == [
        orjson.dumps(results.match_outcome(store, store.get_match(match_id)))]
