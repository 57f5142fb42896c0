"""Workers that die: a match whose worker is killed (kill -9) continues from its recorded
steps and every match is counted exactly once, whether the death is noticed by the
match's lease (the workers' sweep) or by rq's own clean-up of abandoned jobs; concurrent
counting never counts a match twice."""

from __future__ import annotations

import asyncio
import random
import threading
import time

import redis
import redis.asyncio as aioredis
from rq import Worker
from rq.intermediate_queue import IntermediateQueue
from rq.registry import FailedJobRegistry

from tests.support.apitest import wait_finished
from tests.support.tournament_checks import (
    check_live_elo,
    check_logged_once,
    check_round_robin,
    finished_matches,
    histories,
    start,
)
from tournament import recovery, results, wakeups
from tournament.store import (
    Store,
    lease_key,
    match_key,
    ratings_key,
    running_key,
    tournament_key,
)
from tournament.store.keys import sweep_turn_key
from tournament.store.progress import Progress

SLOW_S = 0.02  # per decision: an Aladino match lasts about a second


def match_in_progress(store: Store, timeout: float = 30) -> tuple[str, int]:
    """A match some worker drives, once a few of its steps are recorded, and the pid of
    that worker."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = {worker.name: worker.pid for worker in Worker.all(connection=store.redis)}
        for raw in store.redis.zrange(running_key(), 0, -1):
            match_id = raw.decode()
            holder = (store.redis.get(lease_key(match_id)) or b"").decode()
            name = holder.rpartition("/")[0]
            if name in pids and store.get_match(match_id)["step"] >= 4:
                return match_id, pids[name]
        time.sleep(0.02)
    raise AssertionError(f"no match in progress within {timeout}s")


def check_counted_once(store: Store, view: dict) -> None:
    tournament_id = view["id"]
    assert store.redis.scard(tournament_key(tournament_id, "done")) == len(view["matches"])
    assert store.redis.hlen(tournament_key(tournament_id, "results")) == len(view["matches"])
    assert store.redis.scard(ratings_key("aladino", "counted")) == len(view["matches"])


def test_a_worker_killed_mid_match_is_replaced_and_nothing_is_counted_twice(
        api, register_bots, workers, redis_url):
    """kill -9 of a worker (a lost machine): its matches' leases lapse, the other worker's
    sweep queues them again, and they continue from their recorded steps."""
    store = Store.from_url(redis_url)
    bots = register_bots(4, delay_s=SLOW_S)
    view = start(api, "aladino", bots, 2, seed=3)
    started = workers.start(2)
    killed_match, pid = match_in_progress(store)
    doomed = next(proc for proc in started if proc.pid == pid)
    survivor = next(proc for proc in started if proc is not doomed)
    recorded = store.steps(killed_match)
    workers.kill(doomed)
    assert store.get_match(killed_match)["status"] == "running"
    final = wait_finished(api, view["id"], timeout=180)
    assert survivor.poll() is None
    assert store.current_attempt(killed_match) == 1
    record = api.get(f"/matches/{killed_match}/replay").get_json()
    assert [step["step"] for step in record["steps"]] == list(range(len(record["steps"])))
    assert record["steps"][:len(recorded)] == recorded  # kept as recorded, not played again
    check_round_robin(api, final, bots, 2, rounds=1)
    check_live_elo(api, redis_url, "aladino", finished_matches(api, final))
    check_counted_once(store, final)
    check_logged_once(api, final["matches"])


def test_rq_cleaning_up_a_dead_workers_job_queues_the_match_again(
        api, register_bots, workers, redis_url):
    """rq notices a dead worker once its heartbeat lapses (a minute or more): any live
    worker's maintenance then cleans the started-job registry. The clean-up is run here
    with a clock moved past that point; the match's failure callback queues it again."""
    store = Store.from_url(redis_url)
    bots = register_bots(4, delay_s=SLOW_S)
    view = start(api, "aladino", bots, 2, seed=4)
    (only,) = workers.start(1)
    killed_match, _ = match_in_progress(store)
    workers.kill(only)
    store.redis.delete(lease_key(killed_match))  # its lease lapsed
    queue = store.queue()
    queue.started_job_registry.cleanup(timestamp=time.time() + 3600)
    dead_job = wakeups.job_id(killed_match)
    assert dead_job in FailedJobRegistry(queue=queue).get_job_ids()
    assert store.get_match(killed_match)["status"] == "queued"
    assert store.current_attempt(killed_match) == 1
    assert wakeups.job_id(killed_match, "r1") in queue.get_job_ids()
    FailedJobRegistry(queue=queue).requeue(dead_job)  # as `rq requeue` would: harmless
    workers.start(1)
    final = wait_finished(api, view["id"], timeout=60)
    check_round_robin(api, final, bots, 2, rounds=1)
    check_counted_once(store, final)
    assert not store.redis.exists(lease_key(killed_match))


def test_a_job_taken_by_a_worker_that_died_before_starting_it_is_queued_again(
        api, register_bots, workers, redis_url):
    """A worker moves a job from the queue to rq's intermediate queue, then registers it as
    started: killed in between, it leaves the job there, and rq fails it a minute later
    without its failure callback. The sweep queues its match again."""
    store = Store.from_url(redis_url)
    view = start(api, "aladino", register_bots(4, delay_s=SLOW_S), 2, seed=5)
    queue = store.queue()
    taken = store.redis.lmove(queue.key, IntermediateQueue.get_intermediate_queue_key(queue.key),
                              "LEFT", "RIGHT").decode()  # as a dequeuing worker does
    rescued = queue.fetch_job(taken).args[0]["match_id"]
    workers.start(1)
    final = wait_finished(api, view["id"], timeout=60)
    check_counted_once(store, final)
    assert queue.fetch_job(taken) is None
    assert store.get_match(rescued)["status"] == "finished"
    assert store.current_attempt(rescued) == 1
    assert store.redis.llen(IntermediateQueue.get_intermediate_queue_key(queue.key)) == 0


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
    board = api.get("/ratings/aladino").get_json()
    assert sum(len(points) for points in histories(api, "aladino", board).values()) == \
        2 * len(matches)


def test_a_lease_is_renewed_by_its_holder_and_released_only_by_it(redis_url):
    """Leases fence a match's writes to one driver (tournament/store/progress.py)."""
    async def run() -> None:
        client = aioredis.Redis.from_url(redis_url)
        progress = Progress(client)
        assert await progress.take_lease("m-1", "driver-a")
        assert not await progress.take_lease("m-1", "driver-b")
        await client.pexpire(lease_key("m-1"), 100)
        assert await progress.renew_leases({"m-1": "driver-a"}) == []
        assert await client.pttl(lease_key("m-1")) > 1000
        await client.set(lease_key("m-1"), "driver-b")  # taken over meanwhile
        assert await progress.renew_leases({"m-1": "driver-a"}) == ["m-1"]
        await progress.release_lease("m-1", "driver-a")
        assert await client.get(lease_key("m-1")) == b"driver-b"
        await progress.release_lease("m-1", "driver-b")
        assert not await client.exists(lease_key("m-1"))

        # A renewal sent before its lease was given up (released, parked, ended) and run
        # after: it must not take the lease again, or the match's next job finds it busy.
        assert await progress.take_lease("m-2", "driver-a")
        await progress.release_lease("m-2", "driver-a")
        assert await progress.renew_leases({"m-2": "driver-a"}) == []
        assert not await client.exists(lease_key("m-2"))
        assert await client.zscore(running_key(), "m-2") is None
        # A lease that lapsed while its driver stalled, the match still running: taken again.
        assert await progress.take_lease("m-3", "driver-a")
        await client.delete(lease_key("m-3"))
        assert await progress.renew_leases({"m-3": "driver-a"}) == []
        assert await client.get(lease_key("m-3")) == b"driver-a"
        await client.aclose()

    asyncio.run(run())


def test_only_an_undriven_match_is_taken_over(redis_url):
    store = Store.from_url(redis_url)
    store.redis.hset(match_key("m-3"), mapping={"status": "running"})
    store.redis.zadd(running_key(), {"m-3": 1})
    store.redis.set(lease_key("m-3"), "driver-a")
    assert store.take_over("m-3") is None  # its lease is alive
    store.redis.delete(lease_key("m-3"))
    assert store.take_over("m-3") == 1
    assert store.take_over("m-3") is None  # out of the running index now
    assert store.redis.hmget(match_key("m-3"), "status", "attempt") == [b"queued", b"1"]
    assert store.take_over("m-3", from_running=False) == 2  # rq found its job dead
    store.redis.hset(match_key("m-3"), "status", "finished")
    assert store.take_over("m-3", from_running=False) is None


def test_the_workers_sweep_one_at_a_time(api, bot_server, redis_url):
    """A hundred workers sweep the cluster as often as one: a worker sweeps when the last
    sweep's turn has lapsed, and a worker dead with the turn holds up no more than it."""
    store = Store.from_url(redis_url)
    bot = api.register_bot(bot_server.url("/first"))
    lost = api.create_match("aladino", [{"kind": "bot", "bot_id": bot}] * 2)["id"]
    store.redis.hset(match_key(lost), "status", "running")  # its driver died, no lease
    store.redis.zadd(running_key(), {lost: 1})
    assert store.take_sweep_turn("worker-a", 60)
    assert recovery.sweep_in_turn(store, "worker-b") is None  # worker-a's turn
    assert store.redis.zscore(running_key(), lost) is not None  # nothing swept
    assert not store.take_sweep_turn("worker-b", 60)
    store.redis.delete(sweep_turn_key())  # worker-a's turn lapsed
    assert recovery.sweep_in_turn(store, "worker-b") == [lost]
    assert not store.take_sweep_turn("worker-a", 60)  # worker-b's turn now
    assert store.redis.get(sweep_turn_key()) == b"worker-b"
    assert 0 < store.redis.pttl(sweep_turn_key()) <= recovery.SWEEP_TURN_S * 1000
