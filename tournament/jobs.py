"""The rq jobs of a match: each one drives the stored match forward (`tournament.driver`).

A job's only argument is a JSON payload `{"match_id": "..."}` (rq's JSON serializer, no
Python-only format); everything else is read from the store. Whatever wakes a match queues
the same job under an id that says why, so each reason queues it once:

| job id | queued by |
| --- | --- |
| `match-{id}` | the match's creation |
| `match-{id}-s{step}` | a pull seat's move accepted for `step` |
| `match-{id}-d{step}-{n}` | the pull seat's deadline at `step` (a timer set at park time) |
| `match-{id}-w{n}` | the n-th wait for a bot's concurrent-match slot (a timer) |
| `match-{id}-r{n}` | the n-th recovery after a dead worker (`tournament.recovery`) |

A job that finds the match held by another driver, or already over, does nothing, so a job
queued twice or too early is harmless. Jobs leave nothing in Redis once done
(`result_ttl=0`).

Wake-ups for later (a deadline, a retry) are timers: members of the `timers` sorted set
scored by when they are due, in Redis time. Every `referee worker` looks for due timers
several times a second (`fire_due_timers`) and queues their jobs: any worker can, none
holds a lock, so a dead worker delays nothing. (rq's own scheduler would do, but it lets
one worker at a time serve it, under a lock that outlives a dead worker by a minute.)
"""

from __future__ import annotations

import asyncio

import redis
import redis.asyncio as aioredis
import rq
from rq import Callback
from rq.serializers import JSONSerializer

from referee.config import Config
from tournament import metrics
from tournament.progress import Progress
from tournament.store import MATCH_QUEUE, MatchStatus, Store, match_key, timers_key

JOB_FUNCTION = "tournament.jobs.play_match"
FAILURE_CALLBACK = "tournament.recovery.on_job_failure"
FAILURE_TTL_S = 7 * 86400


def match_queue(store: Store) -> rq.Queue:
    return rq.Queue(MATCH_QUEUE, connection=store.redis, serializer=JSONSerializer)


def job_id(match_id: str, reason: str = "") -> str:
    """The rq job id of a match's wake-up for `reason` (see the table above)."""
    return f"match-{match_id}" if not reason else f"match-{match_id}-{reason}"


def match_of_job(job: rq.job.Job) -> str:
    return job.args[0]["match_id"]


def _job_options(match_id: str, reason: str) -> dict:
    return {"job_id": job_id(match_id, reason), "on_failure": Callback(FAILURE_CALLBACK),
            "job_timeout": -1, "result_ttl": 0, "failure_ttl": FAILURE_TTL_S,
            "description": f"match {match_id} {reason}".rstrip()}


def enqueue_match(store: Store, match: dict, reason: str = "",
                  pipeline: redis.client.Pipeline | None = None) -> rq.job.Job:
    """Queue the match's job now (on `pipeline`, which the caller executes, when given);
    its creation and each recovery count as the match entering `queued`."""
    job = wake(store, match["id"], reason, pipeline)
    if not reason or reason.startswith("r"):
        metrics.record_match_status(pipeline or store.redis, match["game"],
                                    MatchStatus.QUEUED.value)
    return job


def wake(store: Store, match_id: str, reason: str,
         pipeline: redis.client.Pipeline | None = None) -> rq.job.Job:
    return match_queue(store).enqueue(JOB_FUNCTION, {"match_id": match_id},
                                      pipeline=pipeline, **_job_options(match_id, reason))


# KEYS: timers; ARGV: member, delay ms. Due at Redis time + delay.
SET_TIMER = """
local t = redis.call('TIME')
redis.call('ZADD', KEYS[1], t[1] * 1000 + math.floor(t[2] / 1000) + tonumber(ARGV[2]), ARGV[1])
"""

# KEYS: timers; ARGV: how many. The members due now, oldest first.
DUE_TIMERS = """
local t = redis.call('TIME')
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', t[1] * 1000 + math.floor(t[2] / 1000),
                  'LIMIT', 0, tonumber(ARGV[1]))
"""


def set_timer(store: Store, match_id: str, reason: str, delay_s: float) -> None:
    """Queue the match's job `reason` in `delay_s` seconds (see the module docstring)."""
    store.redis.eval(SET_TIMER, 1, timers_key(), f"{match_id} {reason}",
                     max(round(delay_s * 1000), 0))


def fire_due_timers(store: Store, batch: int = 200) -> int:
    """Queue the jobs of the timers due now, then drop the timers (a timer fired twice by
    two workers at once queues a job twice: harmless); how many fired."""
    due = store.redis.eval(DUE_TIMERS, 1, timers_key(), batch)
    if not due:
        return 0
    with store.redis.pipeline() as pipe:
        pipe.multi()  # rq's enqueue on a caller's pipeline wants it in MULTI already
        for member in due:
            match_id, _, reason = member.decode().partition(" ")
            wake(store, match_id, reason, pipe)
        pipe.zrem(timers_key(), *due)
        pipe.execute()
    return len(due)


def schedule_deadline(store: Store, match: dict, step: int, delay_s: float) -> None:
    """Resume the parked match once its pull seat's deadline at `step` has passed. Each
    scheduling gets a job id of its own (`n`), so a job never queues itself again under
    its own id; the match keeps the timer to cancel it (`cancel_deadline`)."""
    wakes = store.redis.hincrby(match_key(match["id"]), "wakes", 1)
    reason = f"d{step}-{wakes}"
    store.redis.hset(match_key(match["id"]), "deadline_timer", reason)
    set_timer(store, match["id"], reason, delay_s)


def cancel_deadline(store: Store, match_id: str) -> None:
    """Drop the match's deadline timer (its pull seat moved in time), if any."""
    reason = store.redis.hget(match_key(match_id), "deadline_timer")
    if reason is not None:
        with store.redis.pipeline() as pipe:
            pipe.zrem(timers_key(), f"{match_id} {reason.decode()}")
            pipe.hdel(match_key(match_id), "deadline_timer")
            pipe.execute()


def defer_match(store: Store, match: dict, delay_s: float) -> None:
    """Try the match again in `delay_s` (a bot it needs plays as many matches as allowed)."""
    waits = store.redis.hincrby(match_key(match["id"]), "deferrals", 1)
    set_timer(store, match["id"], f"w{waits}", delay_s)


def play_match(payload: dict) -> dict:
    """The job's function for any rq worker: drive the match in a private event loop.
    `referee worker` does not call it; it drives many matches on one loop instead
    (`tournament.worker`)."""
    from tournament import driver  # the driver queues jobs itself

    job = rq.get_current_job()

    config = Config.from_env()

    async def run() -> dict:
        client = aioredis.Redis.from_url(config.redis_url)
        try:
            context = driver.Context(Progress(client), Store(job.connection), config,
                                     name=job.worker_name or "rq")
            return await driver.drive(context, payload["match_id"])
        finally:
            await client.aclose()

    return asyncio.run(run())
