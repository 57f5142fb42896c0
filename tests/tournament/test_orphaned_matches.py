"""Matches nothing will wake: a queued or parked match whose rq job (or timer) is gone, as
Redis killed with `kill -9` may leave one (it keeps only the writes its append-only file
got, while a live worker goes on: its job's id back in the queue, the job's hash deleted
once the worker's driver found its lease gone), is queued again by the recovery sweep
once seen so in two sweeps `ORPHAN_GRACE_S` apart, once, and then finishes. A match with
anything left to wake it (its job queued, in flight or started, a timer, a driver's lease)
is left alone; a job started by a worker whose key is gone is nothing to wait for. Real
redis-server, real worker, no mocks."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from rq.executions import prepare_execution
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job, JobStatus
from rq.worker import Worker

from tests.support.apitest import ApiClient, drive_match
from tournament import recovery, wakeups
from tournament.store import Store, lease_key, match_key
from tournament.store.keys import timers_key
from tournament.store.timers import timer_member

GRACE_S = 0.3


@pytest.fixture(autouse=True)
def short_grace(monkeypatch) -> None:
    monkeypatch.setattr(recovery, "ORPHAN_GRACE_S", GRACE_S)


def bot_match(api: ApiClient, bot_server, seed: int = 3) -> str:
    seats = [{"kind": "bot", "bot_id": api.register_bot(bot_server.url("/random"), name=name)}
             for name in (f"a{seed}", f"b{seed}")]
    return api.create_match("aladino", seats, seed=seed)["id"]


def sweep_twice(store: Store) -> tuple[list[str], list[str]]:
    """Two sweeps the grace apart: what each queued again."""
    first = recovery.sweep(store)
    time.sleep(GRACE_S + 0.05)
    return first, recovery.sweep(store)


def lose_hash(store: Store, job_id: str) -> None:
    """The job's id stays in the queue, its hash is gone (a worker skips such an id)."""
    store.redis.delete(Job.key_for(job_id))


def lose_job(store: Store, job_id: str) -> None:
    store.queue().fetch_job(job_id).delete()


@pytest.mark.parametrize("lose", [lose_hash, lose_job], ids=["hash", "job"])
def test_a_queued_match_whose_job_was_lost_is_queued_again_once_and_finishes(
        api, bot_server, redis_url, run_worker, lose: Callable[[Store, str], None]):
    store = Store.from_url(redis_url)
    match_id = bot_match(api, bot_server)
    queue = store.queue()
    assert wakeups.job_id(match_id) in queue.get_job_ids()
    lose(store, wakeups.job_id(match_id))
    first, second = sweep_twice(store)
    assert first == [] and second == [match_id]
    assert store.get_match(match_id)["status"] == "queued"
    assert store.current_attempt(match_id) == 1
    assert wakeups.job_id(match_id, "r1") in queue.get_job_ids()
    assert sweep_twice(store) == ([], [])  # it has a job now: queued again once only
    assert store.current_attempt(match_id) == 1 and store.orphan_suspects() == []
    run_worker(60)
    assert store.get_match(match_id)["status"] == "finished"


def in_the_queue(store: Store, match_id: str) -> None:
    """As created: the job waits in the queue."""


def in_flight(store: Store, match_id: str) -> None:
    """Taken by a worker: moved to rq's intermediate queue, not yet registered started."""
    queue = store.queue()
    moved = store.redis.lmove(queue.key, IntermediateQueue.get_intermediate_queue_key(queue.key),
                              "LEFT", "RIGHT")
    assert moved.decode() == wakeups.job_id(match_id)


def test_a_job_whose_worker_lost_redis_while_starting_it_is_queued_again(
        api, bot_server, redis_url, run_worker, monkeypatch):
    """rq starts a job in two writes: its execution into the started registry, then the
    job's status and its leaving the intermediate queue. Redis gone between the two (seen
    under load in tests/hardening/test_hardening_faults.py: a shutdown), the job stays
    taken and listed started, its status queued, and no worker runs it: the sweep queues
    the match again once seen so `STUCK_DEQUEUED_S`, not rq's registry cleanup minutes
    later."""
    monkeypatch.setattr(recovery, "STUCK_DEQUEUED_S", GRACE_S)
    store = Store.from_url(redis_url)
    match_id = bot_match(api, bot_server)
    in_flight(store, match_id)
    queue = store.queue()
    job = queue.fetch_job(wakeups.job_id(match_id))
    prepare_execution(Worker([queue], connection=store.redis, name="worker-cut-off"), job)
    assert job.id in queue.started_job_registry and job.get_status() == JobStatus.QUEUED
    assert sweep_twice(store) == ([], [match_id])
    assert store.current_attempt(match_id) == 1
    assert wakeups.job_id(match_id, "r1") in queue.get_job_ids()
    assert queue.intermediate_queue.get_job_ids() == []
    run_worker(60)
    assert store.get_match(match_id)["status"] == "finished"


def start_job(store: Store, match_id: str, worker: str) -> None:
    """Its job out of the queue lists, its hash saying `worker` runs it."""
    job = store.queue().fetch_job(wakeups.job_id(match_id))
    store.queue().remove(job)
    job.set_status(JobStatus.STARTED)
    store.redis.hset(Job.key_for(job.id), "worker_name", worker)


def started(store: Store, match_id: str) -> None:
    """Run by a live worker: its job started, the worker's key there (its heartbeats)."""
    start_job(store, match_id, "worker-alive")
    store.redis.hset(Worker.redis_worker_namespace_prefix + "worker-alive", "birth", "now")


def test_a_match_whose_job_was_started_by_a_worker_since_dead_is_queued_again(
        api, bot_server, redis_url, run_worker):
    """The job's hash says started, its worker's key expired (it died, or Redis lost what
    it wrote after the start): rq would fail the job only at a worker's next registry
    cleanup, between two dequeues; the sweep queues the match again."""
    store = Store.from_url(redis_url)
    match_id = bot_match(api, bot_server)
    start_job(store, match_id, "worker-dead")
    assert sweep_twice(store) == ([], [match_id])
    assert store.current_attempt(match_id) == 1
    assert wakeups.job_id(match_id, "r1") in store.queue().get_job_ids()
    run_worker(60)
    assert store.get_match(match_id)["status"] == "finished"


def deferred(store: Store, match_id: str) -> None:
    """Its job done, the match put back for later (a bot at its cap): a timer."""
    lose_job(store, wakeups.job_id(match_id))
    wakeups.defer_match(store, store.get_match(match_id), 60)


def leased(store: Store, match_id: str) -> None:
    """Its job done, a driver holds it (about to start it)."""
    lose_job(store, wakeups.job_id(match_id))
    store.redis.set(lease_key(match_id), "driver-a", px=60000)


@pytest.mark.parametrize("wake", [in_the_queue, in_flight, started, deferred, leased],
                         ids=lambda wake: wake.__name__)
def test_a_queued_match_with_something_to_wake_it_is_left_alone(
        api, bot_server, redis_url, wake: Callable[[Store, str], None]):
    store = Store.from_url(redis_url)
    match_id = bot_match(api, bot_server)
    wake(store, match_id)
    assert sweep_twice(store) == ([], [])
    assert sweep_twice(store) == ([], [])
    assert store.current_attempt(match_id) == 0
    assert store.get_match(match_id)["status"] == "queued"
    assert wakeups.job_id(match_id, "r1") not in store.queue().get_job_ids()
    assert store.orphan_suspects() == []


def test_a_parked_match_whose_deadline_timer_was_lost_is_queued_again(api, redis_url):
    """A pull match parks at its seat's decision with a timer at the deadline: left alone
    while the timer is set; queued again once it is lost, and parks again when driven."""
    store = Store.from_url(redis_url)
    match_id = api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}], seed=2,
                                pull_deadline_ms=60000)["id"]
    assert drive_match(redis_url, match_id, "test-secret")["status"] == "parked"
    lose_job(store, wakeups.job_id(match_id))  # the job that drove it, done
    assert sweep_twice(store) == ([], [])
    reason = store.redis.hget(match_key(match_id), "deadline_timer").decode()
    assert store.redis.zrem(timers_key(), timer_member(match_id, reason)) == 1
    assert store.get_match(match_id)["status"] == "running"
    assert sweep_twice(store) == ([], [match_id])
    assert wakeups.job_id(match_id, "r1") in store.queue().get_job_ids()
    assert drive_match(redis_url, match_id, "test-secret")["status"] == "parked"
    assert store.timers_set() == 1
    assert sweep_twice(store) == ([], []) and store.current_attempt(match_id) == 1


def test_the_round_over_all_matches_reaches_every_match(api, bot_server, redis_url):
    """A sweep looks at a batch of matches only; successive sweeps cover them all."""
    store = Store.from_url(redis_url)
    lost = []
    for seed in range(5):
        match_id = bot_match(api, bot_server, seed)
        lose_job(store, wakeups.job_id(match_id))
        lost.append(match_id)
    seen = [recovery.requeue_orphans(store, batch=2) for _ in range(3)]
    assert seen == [[], [], []] and sorted(store.orphan_suspects()) == sorted(lost)
    time.sleep(GRACE_S + 0.05)
    assert sorted(recovery.requeue_orphans(store, batch=2)) == sorted(lost)
    assert all(store.current_attempt(match_id) == 1 for match_id in lost)


def test_a_failing_part_of_the_sweep_does_not_keep_the_others_from_running(
        api, bot_server, redis_url, monkeypatch):
    """Whatever fails in looking for abandoned running matches (here: every time), the
    sweep still rescues what nothing will wake."""
    store = Store.from_url(redis_url)
    match_id = bot_match(api, bot_server)
    lose_job(store, wakeups.job_id(match_id))

    def broken(*_: object) -> list[str]:
        raise RuntimeError("a part of the sweep that fails")

    monkeypatch.setattr(recovery, "requeue_abandoned", broken)
    assert sweep_twice(store) == ([], [match_id])
    assert wakeups.job_id(match_id, "r1") in store.queue().get_job_ids()
