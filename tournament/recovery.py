"""Matches whose worker died are played again from the start; nothing is counted twice.

Two signals find an abandoned match:
- its lease (`tournament.lease`) expired while the match is running: `requeue_abandoned`
  checks the unfinished matches of a tournament whenever its progress is read
  (`GET /tournaments/{id}`, which `referee tournament` polls), seconds after the death;
- rq's own detection: when a dead worker's heartbeat has lapsed (a minute at least), the
  next maintenance of any live worker cleans the started-job registry, calling the job's
  failure callback, `on_job_failure`, with an `AbandonedJobError`. rq calls the same
  callback when a match job raised; the match is then already marked failed.

Either way one transaction (WATCH on the match) moves the match back to `queued` with the
next attempt number, checking that the dead attempt is still the current one, and a new
rq job `match-{id}-{attempt}` plays it from the start (the store discards the partial
steps). The dead attempt's job is never run again: without a `Retry`, rq moves it to its
failed registry. A match found over but not yet counted (its worker died between storing
and counting the result) is counted; `tournament.results` counts each match once.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from types import TracebackType

import redis
from rq.job import Job

from . import jobs, results
from .store import MatchStatus, Store, lease_key, match_key

log = logging.getLogger(__name__)


def requeue_abandoned(store: Store, match_ids: Iterable[str]) -> list[str]:
    """Queue again every running match of `match_ids` that lost its lease; count the ones
    found over. Returns the ids queued again."""
    return [match["id"] for match in store.get_matches(list(match_ids))
            if match is not None and match["status"] != MatchStatus.QUEUED
            and _recover(store, match)]


def on_job_failure(job: Job, connection: redis.Redis, kind: type[BaseException] | None,
                   error: BaseException | None, trace: TracebackType | None) -> None:
    """rq's failure callback of every match job (see the module docstring)."""
    store = Store(connection)
    match = store.get_match(job.args[0]["match_id"])
    if match is not None and _recover(store, match, dead_job_id=job.id):
        log.warning("match %s: job %s is dead (%s); queued again", match["id"], job.id,
                    kind.__name__ if kind else "unknown")


def _recover(store: Store, match: dict, dead_job_id: str | None = None) -> bool:
    """Count the match if it is over, else queue it again if its attempt is dead (`requeue`);
    True if it was queued again."""
    if match["status"] in (MatchStatus.FINISHED, MatchStatus.FAILED):
        results.count_outcome(store, match)
        return False
    return requeue(store, match, dead_job_id)


def requeue(store: Store, match: dict, dead_job_id: str | None = None) -> bool:
    """Queue the next attempt at `match` if its current one is dead: its lease expired
    (`dead_job_id` None), or rq reported the current attempt's job dead."""
    attempt = take_over(store, match["id"], dead_job_id)
    if attempt is None:
        return False
    jobs.enqueue_match(store, match, attempt)
    log.info("match %s queued again (attempt %d)", match["id"], attempt)
    return True


def take_over(store: Store, match_id: str, dead_job_id: str | None = None) -> int | None:
    """Atomically mark the match queued for its next attempt; None when it is not dead."""
    key, lease = match_key(match_id), lease_key(match_id)

    def apply(pipe: redis.client.Pipeline) -> int | None:
        status, attempt = pipe.hmget(key, "status", "attempt")
        current = int(attempt or 0)
        if dead_job_id is None:
            dead = status == MatchStatus.RUNNING.encode() and not pipe.exists(lease)
        else:
            dead = (status in (MatchStatus.QUEUED.encode(), MatchStatus.RUNNING.encode())
                    and jobs.job_id(match_id, current) == dead_job_id)
        if not dead:
            return None
        pipe.multi()
        pipe.hset(key, mapping={"status": MatchStatus.QUEUED.value, "attempt": current + 1})
        return current + 1

    return store.redis.transaction(apply, key, lease, value_from_callable=True)
