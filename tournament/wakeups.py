"""Waking a match: every wake-up is the match's rq job (`tournament.jobs.play_match`), queued
now or at a timer, under a job id that says why, so each reason queues it once:

| job id | queued by |
| --- | --- |
| `match-{id}` | the match's creation |
| `match-{id}-s{step}` | a pull seat's move accepted for `step` |
| `match-{id}-d{step}-{n}` | the pull seat's deadline at `step` (a timer set at park time) |
| `match-{id}-w{n}` | the n-th wait for a bot's concurrent-match slot (a timer) |
| `match-{id}-r{n}` | the n-th recovery after a dead worker (`tournament.recovery`) |

A match that seats a hosted bot (issue 29) is queued on `HOSTED_QUEUE`, which only hosted
workers take (the match's `queue` field, set at its creation). A job's only argument is a
JSON payload `{"match_id": "..."}` (rq's JSON serializer, no
Python-only format); everything else is read from the store. rq finds the job's function
and its failure callback by their dotted names, kept in the job's data. A job that finds
the match held by another driver, or already over, does nothing, so a job queued twice or
too early is harmless. Jobs leave nothing in Redis once done (`result_ttl=0`).

Wake-ups for later (a deadline, a retry) are timers (`tournament.store.timers`): every
`referee worker` looks for due timers several times a second (`fire_due_timers`) and
queues their jobs: any worker can, none holds a lock, so a dead worker delays nothing.
(rq's own scheduler would do, but it lets one worker at a time serve it, under a lock that
outlives a dead worker by a minute.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import redis
import rq
from rq import Callback

from tournament.store import MatchStatus, Store

JOB_FUNCTION = "tournament.jobs.play_match"
FAILURE_CALLBACK = "tournament.recovery.on_job_failure"
FAILURE_TTL_S = 7 * 86400


def job_id(match_id: str, reason: str = "") -> str:
    """The rq job id of a match's wake-up for `reason` (see the table above)."""
    return f"match-{match_id}" if not reason else f"match-{match_id}-{reason}"


def match_of_job(job: rq.job.Job) -> str:
    return job.args[0]["match_id"]


def _job_options(match_id: str, reason: str) -> dict[str, Any]:
    return {"job_id": job_id(match_id, reason), "on_failure": Callback(FAILURE_CALLBACK),
            "job_timeout": -1, "result_ttl": 0, "failure_ttl": FAILURE_TTL_S,
            "description": f"match {match_id} {reason}".rstrip()}


def enqueue_match(store: Store, match: Mapping[str, Any], reason: str = "",
                  pipeline: redis.client.Pipeline | None = None) -> rq.job.Job:
    """Queue the match's job now (on `pipeline`, which the caller executes, when given);
    its creation and each recovery count as the match entering `queued`."""
    job = wake(store, match["id"], reason, pipeline)
    if not reason or reason.startswith("r"):
        store.count_match_status(match["game"], MatchStatus.QUEUED.value, pipeline)
    return job


def wake(store: Store, match_id: str, reason: str,
         pipeline: redis.client.Pipeline | None = None) -> rq.job.Job:
    return store.match_queue(match_id).enqueue(
        JOB_FUNCTION, {"match_id": match_id}, pipeline=pipeline,
        **_job_options(match_id, reason))


def fire_due_timers(store: Store, batch: int = 200) -> int:
    """Queue the jobs of the timers due now; how many fired."""
    return store.fire_due_timers(
        lambda match_id, reason, pipe: wake(store, match_id, reason, pipe), batch)


def schedule_deadline(store: Store, match: dict[str, Any], step: int, delay_s: float) -> None:
    """Resume the parked match once its pull seat's deadline at `step` has passed. Each
    scheduling gets a job id of its own (`n`), so a job never queues itself again under
    its own id; the match keeps the timer to cancel it (`Store.cancel_deadline_timer`)."""
    reason = f"d{step}-{store.next_wake(match['id'])}"
    store.set_deadline_timer(match["id"], reason, delay_s)


def defer_match(store: Store, match: dict[str, Any], delay_s: float) -> None:
    """Try the match again in `delay_s` (a bot it needs plays as many matches as allowed,
    or this worker's disk could not hold a hosted build it runs)."""
    store.set_timer(match["id"], f"w{store.next_deferral(match['id'])}", delay_s)
