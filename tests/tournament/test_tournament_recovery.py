"""Workers that die: a match whose worker is killed (kill -9) is played again and every
match is counted exactly once, whether the death is noticed by the match's lease or by
rq's own clean-up of abandoned jobs; concurrent counting never counts a match twice."""

from __future__ import annotations

import random
import threading
import time

import pytest
import redis
from apitest import wait_finished
from rq import Worker
from rq.job import Job
from rq.registry import FailedJobRegistry
from rq.serializers import JSONSerializer
from tournament_checks import (
    check_live_elo,
    check_round_robin,
    finished_matches,
    start,
)

from tournament import jobs, lease, recovery, results
from tournament.store import Store, lease_key, match_key, ratings_key, tournament_key

SLOW_S = 0.02  # per decision: an Aladino match lasts about a second


def match_in_progress(store: Store, pid: int, timeout: float = 30) -> str:
    """The match the worker with this pid is playing, once a few steps are played."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for worker in Worker.all(connection=store.redis):
            job_id = worker.get_current_job_id() if worker.pid == pid else None
            if job_id:
                job = Job.fetch(job_id, connection=store.redis, serializer=JSONSerializer)
                match_id = job.args[0]["match_id"]
                if store.get_match(match_id)["step"] >= 4:
                    return match_id
        time.sleep(0.02)
    raise AssertionError(f"worker {pid} played no match within {timeout}s")


def check_counted_once(store: Store, view: dict) -> None:
    tournament_id = view["id"]
    assert store.redis.scard(tournament_key(tournament_id, "done")) == len(view["matches"])
    assert store.redis.hlen(tournament_key(tournament_id, "results")) == len(view["matches"])
    assert store.redis.scard(ratings_key("aladino", "counted")) == len(view["matches"])


@pytest.mark.parametrize("victim", ["worker", "horse"])
def test_a_worker_killed_mid_match_is_replaced_and_nothing_is_counted_twice(
        victim, api, register_bots, workers, redis_url):
    """kill -9 of a worker with its work horse (a lost machine), or of the work horse alone:
    the match's lease lapses and reading the tournament's progress queues it again."""
    store = Store.from_url(redis_url)
    bots = register_bots(4, delay_s=SLOW_S)
    view = start(api, "aladino", bots, 2, seed=3)
    doomed, survivor = workers.start(2)
    killed_match = match_in_progress(store, doomed.pid)
    if victim == "worker":
        workers.kill(doomed)
    else:
        workers.kill_horse(doomed)
    assert store.get_match(killed_match)["status"] == "running"
    final = wait_finished(api, view["id"], timeout=60)
    assert survivor.poll() is None
    assert store.current_attempt(killed_match) == 1
    record = api.get(f"/matches/{killed_match}/replay").get_json()
    assert [step["step"] for step in record["steps"]] == list(range(len(record["steps"])))
    check_round_robin(api, final, bots, 2, rounds=1)
    check_live_elo(api, redis_url, "aladino", finished_matches(api, final))
    check_counted_once(store, final)


def test_rq_cleaning_up_a_dead_workers_job_queues_the_match_again(
        api, register_bots, workers, redis_url):
    """rq notices a dead worker once its heartbeat lapses (a minute or more): any live
    worker's maintenance then cleans the started-job registry. The clean-up is run here
    with a clock moved past that point; the match's failure callback queues it again."""
    store = Store.from_url(redis_url)
    bots = register_bots(4, delay_s=SLOW_S)
    view = start(api, "aladino", bots, 2, seed=4)
    (only,) = workers.start(1)
    killed_match = match_in_progress(store, only.pid)
    workers.kill(only)
    queue = jobs.match_queue(store)
    queue.started_job_registry.cleanup(timestamp=time.time() + 3600)
    dead_job = jobs.job_id(killed_match)
    assert dead_job in FailedJobRegistry(queue=queue).get_job_ids()
    assert store.get_match(killed_match)["status"] == "queued"
    assert store.current_attempt(killed_match) == 1
    assert jobs.job_id(killed_match, 1) in queue.get_job_ids()
    FailedJobRegistry(queue=queue).requeue(dead_job)  # as `rq requeue` would: it plays nothing
    workers.start(1)
    final = wait_finished(api, view["id"], timeout=60)
    check_round_robin(api, final, bots, 2, rounds=1)
    check_counted_once(store, final)
    assert not store.redis.exists(lease_key(killed_match))
    stale = Job.fetch(dead_job, connection=store.redis, serializer=JSONSerializer)
    deadline = time.monotonic() + 10
    while stale.get_status() != "finished" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stale.return_value() == {"match_id": killed_match, "status": "superseded"}


def test_counting_the_same_matches_from_many_threads_counts_each_once(
        api, register_bots, workers, redis_url):
    store = Store.from_url(redis_url)
    view = start(api, "aladino", register_bots(4), 2, seed=3)
    workers.start(2)
    final = wait_finished(api, view["id"])
    matches = finished_matches(api, final)
    board = api.get("/ratings/aladino").get_json()
    assert not any(results.count_finished(store, match["id"]) for match in matches)
    assert api.get("/ratings/aladino").get_json() == board

    client = redis.Redis.from_url(redis_url)
    client.delete(*client.keys(ratings_key("aladino", "*")),
                  *(tournament_key(view["id"], part) for part in ("done", "results")))
    counted: list[bool] = []

    def count_all(seed: int) -> None:
        order = [match["id"] for match in matches]
        random.Random(seed).shuffle(order)
        counted.extend(results.count_finished(Store.from_url(redis_url), match_id)
                       for match_id in order)

    threads = [threading.Thread(target=count_all, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counted.count(True) == len(matches) and len(counted) == 4 * len(matches)
    check_counted_once(store, final)
    check_live_elo(api, redis_url, "aladino", matches)
    again = api.get(f"/tournaments/{view['id']}").get_json()
    assert again["standings"] == final["standings"] and again["ratings"] == final["ratings"]
    assert sum(len(points) for points in api.get("/ratings/aladino").get_json()["history"]
               .values()) == 2 * len(matches)


def test_a_lease_is_renewed_while_held_and_released_only_by_its_holder(redis_url):
    store = Store.from_url(redis_url)
    with lease.MatchLease(store, "m-1", holder="job-a"):
        time.sleep(lease.RENEW_EVERY_S + 0.3)
        assert store.redis.pttl(lease_key("m-1")) > (lease.TTL_S - 1) * 1000
    assert not store.redis.exists(lease_key("m-1"))
    with lease.MatchLease(store, "m-2", holder="job-a"):
        store.redis.set(lease_key("m-2"), "job-b")  # a later attempt took over
    assert store.redis.get(lease_key("m-2")) == b"job-b"


def test_only_a_dead_current_attempt_is_taken_over(redis_url):
    store = Store.from_url(redis_url)
    store.redis.hset(match_key("m-3"), mapping={"status": "running"})
    store.redis.set(lease_key("m-3"), "job-a")
    assert recovery.take_over(store, "m-3") is None  # its lease is alive
    assert recovery.take_over(store, "m-3", dead_job_id="match-m-3-4") is None  # stale job
    store.redis.delete(lease_key("m-3"))
    assert recovery.take_over(store, "m-3") == 1
    assert recovery.take_over(store, "m-3") is None  # queued now: nothing to take over
    assert recovery.take_over(store, "m-3", dead_job_id=jobs.job_id("m-3", 0)) is None
    assert recovery.take_over(store, "m-3", dead_job_id=jobs.job_id("m-3", 1)) == 2
    assert store.redis.hmget(match_key("m-3"), "status", "attempt") == [b"queued", b"2"]
