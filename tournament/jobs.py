"""The rq jobs of a match: each one drives the stored match forward (`tournament.driver`).

A job's only argument is a JSON payload `{"match_id": "..."}` (rq's JSON serializer, no
Python-only format); everything else is read from the store. Whatever wakes a match queues
the same job under an id that says why, so each reason queues it once:

| job id | queued by |
| --- | --- |
| `match-{id}` | the match's creation |
| `match-{id}-s{step}` | a pull seat's move accepted for `step` |
| `match-{id}-d{step}-{n}` | the pull seat's deadline at `step` (scheduled at park time) |
| `match-{id}-w{n}` | the n-th wait for a bot's concurrent-match slot (scheduled) |
| `match-{id}-r{n}` | the n-th recovery after a dead worker (`tournament.recovery`) |

A job that finds the match held by another driver, or already over, does nothing, so a job
queued twice or too early is harmless. Jobs leave nothing in Redis once done
(`result_ttl=0`); scheduled ones wait in rq's scheduled registry, which every
`referee worker` serves.
"""

from __future__ import annotations

import asyncio
import math
import time
from datetime import UTC, datetime, timedelta

import redis
import redis.asyncio as aioredis
import rq
from rq import Callback
from rq.serializers import JSONSerializer

from referee import metrics
from referee.config import Config

from .progress import Progress
from .store import MATCH_QUEUE, MatchStatus, Store, match_key

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


def _job_options(match: dict, reason: str) -> dict:
    return {"job_id": job_id(match["id"], reason), "on_failure": Callback(FAILURE_CALLBACK),
            "job_timeout": -1, "result_ttl": 0, "failure_ttl": FAILURE_TTL_S,
            "description": f"{match['game']} match {match['id']} {reason}".rstrip()}


def enqueue_match(store: Store, match: dict, reason: str = "",
                  pipeline: redis.client.Pipeline | None = None) -> rq.job.Job:
    """Queue the match's job now (on `pipeline`, which the caller executes, when given);
    its creation and each recovery count as the match entering `queued`."""
    job = match_queue(store).enqueue(JOB_FUNCTION, {"match_id": match["id"]},
                                     pipeline=pipeline, **_job_options(match, reason))
    if not reason or reason.startswith("r"):
        metrics.record_match_status(pipeline or store.redis, match["game"],
                                    MatchStatus.QUEUED.value)
    return job


def schedule_deadline(store: Store, match: dict, step: int, delay_s: float) -> None:
    """Resume the parked match once its pull seat's deadline at `step` has passed: at the
    next whole second after it (rq's scheduler counts in whole seconds; never early). Each
    scheduling gets an id of its own (`n`), so a job never reschedules itself under its
    own id; the match keeps the id to cancel it (`cancel_deadline`)."""
    wakes = store.redis.hincrby(match_key(match["id"]), "wakes", 1)
    options = _job_options(match, f"d{step}-{wakes}")
    store.redis.hset(match_key(match["id"]), "deadline_job", options["job_id"])
    when = datetime.fromtimestamp(math.ceil(time.time() + max(delay_s, 0.0)), UTC)
    match_queue(store).enqueue_at(when, JOB_FUNCTION, {"match_id": match["id"]}, **options)


def cancel_deadline(store: Store, match_id: str) -> None:
    """Drop the match's scheduled deadline job (its pull seat moved in time), if any."""
    scheduled = store.redis.hget(match_key(match_id), "deadline_job")
    if scheduled is None:
        return
    scheduled_id = scheduled.decode()
    with store.redis.pipeline() as pipe:
        match_queue(store).scheduled_job_registry.remove(scheduled_id, pipeline=pipe)
        pipe.delete(rq.job.Job.key_for(scheduled_id))
        pipe.hdel(match_key(match_id), "deadline_job")
        pipe.execute()


def defer_match(store: Store, match: dict, delay_s: float) -> None:
    """Try the match again in `delay_s` (a bot it needs plays as many matches as allowed)."""
    waits = store.redis.hincrby(match_key(match["id"]), "deferrals", 1)
    match_queue(store).enqueue_in(timedelta(seconds=delay_s), JOB_FUNCTION,
                                  {"match_id": match["id"]}, **_job_options(match, f"w{waits}"))


def play_match(payload: dict) -> dict:
    """The job's function for any rq worker: drive the match in a private event loop.
    `referee worker` does not call it; it drives many matches on one loop instead
    (`tournament.worker`)."""
    from . import driver  # the driver queues jobs itself

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
