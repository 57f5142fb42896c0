"""Bot matches played by real `referee worker` processes against real HTTP bots."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from functools import partial

import pytest
import redis
from rq import Worker
from rq.exceptions import StopRequested
from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer
from rq.suspension import resume, suspend
from rq.worker import WorkerStatus

import engines
from referee.match import replay
from tests.support.apitest import replay_states
from tests.support.botserver import FAULTS, HEALTHY_DEADLINE_MS, deadline_for, fault_url
from tests.support.waiting import wait_for
from tournament import wakeups
from tournament.store import MATCH_QUEUE, Store, start_job
from tournament.store.connection import connect
from tournament.worker import (
    BOOKKEEPING_EVERY_S,
    MAINTENANCE_LOCK_S,
    MAINTENANCE_S,
    MatchWorker,
)


def check_replay_matches_the_engine(record: dict) -> None:
    """Every recorded step re-applies to the recorded state hash; the result follows."""
    engine = engines.get(record["game"])
    states = replay_states(record)
    assert replay.state_hash(states[0]) == record["initial_state_hash"]
    for index, step in enumerate(record["steps"]):
        assert step["step"] == index and step["seat"] == engine.current_seat(states[index])
        assert replay.state_hash(states[index + 1]) == step["state_hash"]
    if record["forfeit"] is None:
        assert engine.is_over(states[-1]) and record["result"] == engine.result(states[-1])


@pytest.mark.parametrize("worker_args", [(), ("--concurrency", "1")],
                         ids=["concurrent", "one-at-a-time"])
def test_every_game_and_variant_plays_to_the_end_on_a_worker(api, bot_server, run_worker,
                                                             worker_args):
    bot = api.register_bot(bot_server.url("/random"), name="random")
    created = []
    for game in engines.names():
        for variant in engines.get(game).variants():
            seats = [{"kind": "bot", "bot_id": bot}] * variant["num_players"]
            match = api.create_match(game, seats, seed=21, options=variant["options"])
            assert match["status"] == "queued"
            created.append((game, match))
    output = run_worker(60, *worker_args)
    assert "referee-matches" in output
    assert f"up to {worker_args[1] if worker_args else 100} matches at once" in output
    for game, match in created:
        status = api.get(f"/matches/{match['id']}").get_json()
        assert status["status"] == "finished", status
        assert status["to_move"] is None and status["seed"] == 21
        record = api.get(f"/matches/{match['id']}/replay").get_json()
        assert status["step"] == len(record["steps"]) > 0
        assert status["result"] == record["result"]
        assert record["game"] == game and record["forfeit"] is None
        assert [s["bot_id"] for s in record["seats"]] == [bot] * match["num_players"]
        check_replay_matches_the_engine(record)


def test_a_worker_keeps_its_connections_to_a_bot_from_match_to_match(api, bot_server,
                                                                     run_worker):
    """Six matches of two seats, one at a time: the worker connects to the bot far fewer
    than the twelve times a connection of each seat of each match would take."""
    bot = api.register_bot(bot_server.url("/random"), name="random")
    ids = [api.create_match("aladino", [{"kind": "bot", "bot_id": bot}] * 2, seed=seed)["id"]
           for seed in range(6)]
    start = len(bot_server.client_ports)
    run_worker(60, "--concurrency", "1")
    assert all(api.get(f"/matches/{match_id}").get_json()["status"] == "finished"
               for match_id in ids)
    assert len(set(bot_server.client_ports[start:])) < 12 // 2


def test_every_fault_under_each_policy_and_the_worker_goes_on(api, bot_server, refused_url,
                                                               run_worker):
    good = api.register_bot(bot_server.url("/random"), name="good")
    matches = []
    for path, code in FAULTS:
        bad = api.register_bot(fault_url(bot_server, refused_url, path), name=path)
        for policy in ("forfeit", "random"):
            match = api.create_match(
                "aladino", [{"kind": "bot", "bot_id": good},
                            {"kind": "bot", "bot_id": bad, "deadline_ms": deadline_for(path)}],
                seed=3, deadline_ms=HEALTHY_DEADLINE_MS,
                failure_policy={code: policy, "strike_limit": None})
            matches.append((match["id"], code, policy))
    healthy = api.create_match("aladino", [{"kind": "bot", "bot_id": good}] * 2, seed=4)
    run_worker(timeout=120)
    for match_id, code, policy in matches:
        status = api.get(f"/matches/{match_id}").get_json()
        record = api.get(f"/matches/{match_id}/replay").get_json()
        assert status["status"] == "finished", (code, policy, status)
        faults = [s["fault"] for s in record["steps"] if s["fault"]]
        assert faults and {f["code"] for f in faults} == {code}
        assert {f["policy"] for f in faults} == {policy}
        if policy == "forfeit":
            assert len(faults) == 1 and record["steps"][-1]["action"] is None
            assert status["forfeit"] == {"seat": 1, "step": len(record["steps"]) - 1,
                                         "fault": code}
            assert status["result"]["ranks"] == [1, 2]
        else:
            assert status["forfeit"] is None and record["strikes"] == [0, len(faults)]
        check_replay_matches_the_engine(record)
    assert api.get(f"/matches/{healthy['id']}").get_json()["status"] == "finished"


def test_a_seat_given_its_own_deadline_is_held_to_it(api, bot_server, run_worker):
    """Only the slow seat has the short deadline: it times out, the other seat does not."""
    good = api.register_bot(bot_server.url("/random"), name="good")
    slow = api.register_bot(bot_server.url("/slow"), name="slow")
    match = api.create_match(
        "aladino", [{"kind": "bot", "bot_id": good},
                    {"kind": "bot", "bot_id": slow, "deadline_ms": 250}],
        seed=3, deadline_ms=HEALTHY_DEADLINE_MS)
    assert [seat.get("deadline_ms") for seat in match["seats"]] == [None, 250]
    run_worker(timeout=60)
    record = api.get(f"/matches/{match['id']}/replay").get_json()
    assert [seat["deadline_ms"] for seat in record["seats"]] == [HEALTHY_DEADLINE_MS, 250]
    assert record["forfeit"] == {"seat": 1, "step": len(record["steps"]) - 1,
                                 "fault": "timeout"}
    check_replay_matches_the_engine(record)


def test_a_worker_stopped_with_sigterm_hands_its_matches_back_at_once(api, python_bot,
                                                                       workers, redis_url):
    """docs/operations.md: a stopped worker queues its running matches again itself, so
    another continues them at once (its drivers give back their leases and leave the
    running index first: the hand-back must not look for them there). Checked before any
    other worker runs: the match is queued again, under its recovery's job."""

    def thinking(observation, legal_actions):
        time.sleep(0.3)
        return legal_actions[0]

    with python_bot(thinking) as url:
        bot = api.register_bot(url, ["aladino"], name="thinker")
        match = api.create_match("aladino", [{"kind": "bot", "bot_id": bot}] * 2,
                                 deadline_ms=10_000)
        (proc,) = workers.start_ready(1)
        deadline = time.monotonic() + 120
        while api.get(f"/matches/{match['id']}").get_json()["step"] < 2:
            assert time.monotonic() < deadline, workers.logs()
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
        store = Store.from_url(redis_url)
        stopped = store.get_match(match["id"])
        assert stopped["status"] == "queued", workers.logs()
        assert store.current_attempt(match["id"]) == 1
        assert Job.fetch(wakeups.job_id(match["id"], "r1"),
                         connection=store.redis).get_status() == "queued"
        workers.start_ready(1)
        while api.get(f"/matches/{match['id']}").get_json()["status"] != "finished":
            assert time.monotonic() < deadline + 120, workers.logs()
            time.sleep(0.2)


def test_a_bootstrap_cut_short_by_redis_starts_over(config, redis_url):
    """Redis went away after rq's bootstrap registered the worker but before it was done
    (CI saw a worker exit so): the bootstrap tried again undoes that registration first,
    where rq's own refuses the worker's name as another live worker's."""
    connection = redis.Redis.from_url(redis_url)
    worker = MatchWorker([MATCH_QUEUE], connection, config, config.sealer())
    worker.register_birth()  # how far the first try got
    worker.subscribe()
    worker.start_over_bootstrap("WARNING")
    assert [w.name for w in Worker.all(connection=connection)] == [worker.name]
    worker.unsubscribe()
    worker.register_death()
    connection.close()


def test_unsubscribing_does_not_wait_for_the_command_threads_long_poll(config, redis_url):
    """CI saw `referee worker --burst` held a minute at its end: rq's command thread, back
    to waiting (rq polls every 60 s) after the unsubscription's reply, was joined by
    redis-py 8.2. The worker's thread polls every `PUBSUB_POLL_S`: unsubscribing from that
    state ends within a few polls, far from rq's minute."""
    connection = redis.Redis.from_url(redis_url)
    worker = MatchWorker([MATCH_QUEUE], connection, config, config.sealer())
    worker.subscribe()
    worker.pubsub.unsubscribe()  # the reply read by the thread, which then waits again
    deadline = time.monotonic() + 30
    while not waiting_for_a_subscription(worker.pubsub_thread):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    done = threading.Thread(target=worker.unsubscribe)
    done.start()
    done.join(timeout=30)
    assert not done.is_alive()
    connection.close()


def waiting_for_a_subscription(thread: threading.Thread) -> bool:
    """Is `thread` inside redis-py's wait for a subscription (`PubSub.get_message` on an
    unsubscribed connection waits on `subscribed_event` for its whole timeout)?"""
    frame = sys._current_frames().get(thread.ident or 0)
    names = []
    while frame is not None:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return names[:3] == ["wait", "wait", "get_message"]  # Condition's, Event's, its own


def redis_contents(connection: redis.Redis) -> dict:
    """Every key with its type and members (hashes: their fields; no scores, times or
    values that differ between two runs: rq stamps them)."""
    contents = {}
    for key in sorted(connection.keys("*")):
        kind = connection.type(key).decode()
        members = {"hash": lambda k: sorted(connection.hkeys(k)),
                   "set": lambda k: sorted(connection.smembers(k)),
                   "zset": lambda k: connection.zrange(k, 0, -1),
                   "list": lambda k: connection.lrange(k, 0, -1)}.get(kind, lambda k: None)(key)
        contents[key.decode()] = (kind, members)
    return contents


def a_dequeued_match_job(config, redis_url: str) -> tuple:
    """(a connection to an emptied Redis, a worker "w1", the job of match m1 it dequeued,
    its queue)."""
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    worker = MatchWorker([MATCH_QUEUE], connection, config, config.sealer(), name="w1")
    worker.register_birth()
    wakeups.wake(Store(connection), "m1", "")
    job, queue = worker.dequeue_job_and_maintain_ttl(1)
    return connection, worker, job, queue


def contents_after_a_match_job(config, redis_url: str, lean: bool) -> dict:
    """Redis after a worker ran a match job and ended it (its match is not there: the
    job's end is all that is compared) with its own `_finalize_success` or rq's."""
    connection, worker, job, queue = a_dequeued_match_job(config, redis_url)
    execution = worker.prepare_execution(job)
    worker.prepare_job_execution(job, remove_from_intermediate_queue=True)
    job.started_at = job.last_heartbeat
    finish = worker._finalize_success if lean else partial(Worker._finalize_success, worker)
    finish(job, queue, execution, {"match_id": "m1", "status": "finished"})
    left = redis_contents(connection)
    assert not connection.exists(job.key) and not connection.exists(execution.key)
    assert connection.hget(worker.key, "successful_job_count") == b"1"
    assert queue.started_job_registry.get_job_ids() == [] and worker.executions == {}
    connection.flushdb()
    connection.close()
    return left


def test_a_match_jobs_success_leaves_redis_as_rqs_own_handling_does(config, redis_url):
    """`MatchWorker._finalize_success` ends a match job in one round trip, without rq's
    reads: what it leaves in Redis (keys, their members) is what rq's own leaves."""
    lean = contents_after_a_match_job(config, redis_url, lean=True)
    assert lean == contents_after_a_match_job(config, redis_url, lean=False)
    assert "rq:worker:w1" in lean and not any(key.startswith("rq:job:") for key in lean), lean


def contents_after_a_job_start(config, redis_url: str, lean: bool) -> str:
    """Redis after a worker dequeued a match job and registered it as started, with
    `start_job` or rq's own two steps: every key, its members and whether it expires
    (the execution's random id written as EXECUTION)."""
    connection, worker, job, queue = a_dequeued_match_job(config, redis_url)
    if lean:
        execution = start_job(worker, job, remove_from_intermediate_queue=True)
    else:
        execution = worker.prepare_execution(job)
        worker.prepare_job_execution(job, remove_from_intermediate_queue=True)
    assert worker.executions == {execution.id: execution}
    assert job.get_status(refresh=True) == JobStatus.STARTED
    assert queue.started_job_registry.get_job_ids() == [job.id]
    assert connection.hget(worker.key, "state") == b"busy"
    assert abs(connection.ttl(worker.key) - worker.get_heartbeat_ttl(job)) <= 2  # beat
    contents = {key: (kind, members, connection.ttl(key) > 0)
                for key, (kind, members) in redis_contents(connection).items()}
    connection.flushdb()
    connection.close()
    return repr(contents).replace(execution.id, "EXECUTION")


def test_a_match_jobs_start_leaves_redis_as_rqs_own_does(config, redis_url):
    """`start_job` registers a match job as started in one round trip where rq takes two
    (`prepare_execution`, `prepare_job_execution`): what it leaves in Redis (keys, their
    members, which expire) is what rq's own leaves."""
    lean = contents_after_a_job_start(config, redis_url, lean=True)
    assert lean == contents_after_a_job_start(config, redis_url, lean=False)
    assert "rq:execution:match-m1:EXECUTION" in lean, lean

def test_the_registry_clean_up_lock_of_a_worker_that_died_holding_it_lapses_soon(
        config, redis_url):
    """rq's registry clean-up (which finds dead workers' jobs) runs under a lock: one its
    holder never released (killed mid-clean-up, or Redis killed before it kept the
    release) stops every worker's clean-up until it lapses, after 2 minutes rather than
    rq's 15."""
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    dead, alive = (MatchWorker([MATCH_QUEUE], connection, config, config.sealer(), name=name)
                   for name in ("dead", "alive"))
    (held,) = dead.queues
    assert held.acquire_maintenance_lock()  # and the worker is killed before the release
    assert 0 < connection.ttl(held.registry_cleaning_key) <= MAINTENANCE_LOCK_S <= 120
    alive.clean_registries()  # skipped: the lock is held
    assert connection.exists(held.registry_cleaning_key)
    connection.expire(held.registry_cleaning_key, 1)  # two minutes on
    wait_for(lambda: not connection.exists(held.registry_cleaning_key), timeout=10)
    alive.clean_registries()
    assert not connection.exists(held.registry_cleaning_key)  # cleaned, released
    connection.close()


def test_an_idle_worker_fails_a_dead_workers_abandoned_job_within_its_maintenance_interval(
        workers, redis_url):
    """rq's own finding of dead workers' jobs (a started job whose registry entry lapsed
    goes to the failed registry, its failure callback called) runs every `MAINTENANCE_S`
    even on a worker with nothing to do: it waits that long for a job at most, not rq's
    405 s."""
    connection = redis.Redis.from_url(redis_url)
    workers.start_ready(1)
    wait_for(lambda: "cleaning registries" in workers.logs(), timeout=60)  # its first
    queue = Store(connection).queue()
    job = Job.create(func="builtins.print", connection=connection, origin=queue.name,
                     serializer=JSONSerializer)
    job.save()
    job.set_status(JobStatus.STARTED)
    connection.zadd(queue.started_job_registry.key, {f"{job.id}:exec-of-a-dead-worker": 1})
    wait_for(lambda: job.id in queue.failed_job_registry, timeout=4 * MAINTENANCE_S)
    assert job.get_status() == JobStatus.FAILED
    connection.close()


def test_a_worker_counts_its_matches_one_at_a_time_unless_each_waits_for_replicas(
        config, redis_url):
    """The counts of one game watch the same key: made at once in one worker they start over
    for each other, so a worker counts one match at a time, a second count waiting for the
    first to end; a count that waits for a replica (up to REDIS_WAIT_TIMEOUT_MS when one is
    missing) runs beside the others (asyncio's threads)."""
    worker = MatchWorker([MATCH_QUEUE], redis.Redis.from_url(redis_url), config,
                         config.sealer())
    assert worker.counting is not None
    started, release, order = threading.Event(), threading.Event(), []

    def first() -> None:
        started.set()
        release.wait(30)
        order.append("first")

    held = worker.counting.submit(first)
    assert started.wait(30)
    second = worker.counting.submit(order.append, "second")
    with pytest.raises(TimeoutError):  # on another thread it would be over at once
        second.result(timeout=0.5)
    release.set()
    held.result(30), second.result(30)
    assert order == ["first", "second"]
    worker.counting.shutdown()

    waiting = connect(f"{redis_url}?wait_replicas=1&wait_timeout_ms=50")
    assert MatchWorker([MATCH_QUEUE], waiting, config, config.sealer()).counting is None
    waiting.close()

def test_rqs_bookkeeping_between_dequeues_is_sent_at_most_once_a_second(config, redis_url):
    """rq writes the worker's heartbeat twice a dequeue and asks whether workers are
    suspended once: each at most every `BOOKKEEPING_EVERY_S` here (one asked with its own
    expiry always); "idle", set before every dequeue, is not written while the worker
    drives a match (time is moved by moving the worker's stamps back, not by waiting)."""
    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()
    worker = MatchWorker([MATCH_QUEUE], connection, config, config.sealer(), name="w1")
    worker.register_birth()

    def last_heartbeat() -> bytes | None:
        return connection.hget(worker.key, "last_heartbeat")

    worker.heartbeat()
    sent = last_heartbeat()
    worker.heartbeat()
    assert last_heartbeat() == sent  # within the second: not sent
    worker.heartbeat(timeout=90)
    assert last_heartbeat() != sent and 60 < connection.ttl(worker.key) <= 90
    sent = last_heartbeat()
    worker.heartbeat_sent_at -= BOOKKEEPING_EVERY_S
    worker.heartbeat()
    assert last_heartbeat() != sent

    suspend(connection)
    worker.suspension_checked_at = time.monotonic()
    worker.check_for_suspension(burst=True)  # asked a moment ago: not asked again
    worker.suspension_checked_at -= BOOKKEEPING_EVERY_S
    with pytest.raises(StopRequested):  # suspended in burst mode: rq's exit
        worker.check_for_suspension(burst=True)
    resume(connection)

    worker.set_state(WorkerStatus.BUSY)
    worker.running["j1"] = ()  # type: ignore[assignment]  # a match being driven
    worker.set_state(WorkerStatus.IDLE)
    assert connection.hget(worker.key, "state") == b"busy"
    worker.running.clear()
    worker.set_state(WorkerStatus.IDLE)
    assert connection.hget(worker.key, "state") == b"idle"
    worker.register_death()
    connection.close()
