"""Matches whose driver died continue from their last recorded step; nothing is counted twice.

A running match has a driver renewing its lease (`match:{id}:lease`) every couple of seconds
and is listed in the `running` index. Three signals find one whose driver died:
- the sweep: the workers look, one at a time, every `SWEEP_EVERY_S` (`sweep_in_turn`:
  each worker asks every `SWEEP_EVERY_S`, and the first to ask once the last sweep's turn
  lapsed sweeps, so the cluster sweeps as often with a hundred workers as with one), for
  running matches without a lease (`sweep`), so a match continues seconds after its
  worker's death, even when nobody watches it; and for jobs a worker took from the queue
  but died (or lost Redis) before starting (`rescue_dequeued`): rq keeps them in its
  intermediate queue, and fails them a minute later without calling their failure
  callback (or, registered started, only at its registry cleanup), which would leave the
  match queued with no job for good; and for queued, parked or deferred matches that
  nothing will wake (`requeue_orphans`): no lease, no live rq job, no timer. Redis killed with
  `kill -9` comes back with only what its append-only file got (under load, a second or
  two of acknowledged writes may be missing) while the workers go on from what they
  remember: a job whose id is back in the queue may be deleted by the worker that ran it
  (its driver found the lease gone), leaving the match queued with a job id rq skips. A
  process stopped between two writes (a match taken over, its job not yet queued) leaves
  the same;
- reading a match or a tournament's progress (`requeue_abandoned`), the same check;
- rq's own detection: a dead worker's job whose heartbeat lapsed is failed by the next
  maintenance of any worker, which calls `on_job_failure` (also called when a match job
  raised: the match is then already marked failed, and only counted here).

Taking a match over is one transaction (`Store.take_over`: WATCH on the match, its lease
and the index): the match leaves the index and is queued again under the next attempt
number; the new job finds the recorded steps and continues (`tournament.driver`). A
driver presumed dead that wakes up has lost its lease and writes nothing. A match found
over but not yet counted (its worker died between storing and counting the result) is
counted; `tournament.results` counts each match once.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import timedelta
from types import TracebackType

import redis
import rq
from rq.intermediate_queue import IntermediateQueue
from rq.job import Job, JobStatus
from rq.utils import now

from tournament import results, wakeups
from tournament.store import QUEUES, MatchStatus, Store
from tournament.store.running import WakeState

log = logging.getLogger(__name__)

SWEEP_EVERY_S = 2.0
# A sweep's turn, a little shorter than the period, so that a worker alone sweeps at each of
# its rounds and many workers sweep, all told, about once a period.
SWEEP_TURN_S = 0.8 * SWEEP_EVERY_S
# A live worker moves a job from the queue to rq's intermediate queue and, milliseconds
# later, to the started registry: one found between the two this long belongs to a dead one.
STUCK_DEQUEUED_S = 5.0
# A match is queued again when seen with nothing to wake it in two sweeps this far apart: a
# moment's such state (between a match's change and its job's enqueue) is no orphan.
ORPHAN_GRACE_S = 5.0
ORPHAN_BATCH = 500  # matches a sweep looks at, in a round over all of them


def sweep_in_turn(store: Store, worker: str) -> list[str] | None:
    """`sweep` when it is `worker`'s turn (`Store.take_sweep_turn`); None when another
    worker swept less than `SWEEP_TURN_S` ago."""
    return sweep(store) if store.take_sweep_turn(worker, SWEEP_TURN_S) else None


def sweep(store: Store) -> list[str]:
    """Queue again every running match whose driver died, every match whose job died with
    the worker that took it, and every match nothing will wake; the ids queued. Each of
    the three runs whatever the others do: one that fails (logged) does not keep the
    others from their rounds; Redis out of reach fails the sweep."""
    queued: list[str] = []
    for part in (lambda: requeue_abandoned(store, store.running_match_ids()),
                 lambda: rescue_dequeued(store), lambda: requeue_orphans(store)):
        try:
            queued += part()
        except (redis.ConnectionError, redis.TimeoutError):
            raise
        except Exception:
            log.exception("the recovery sweep: a part failed; the others go on")
    return queued


def rescue_dequeued(store: Store) -> list[str]:
    """Queue again the match of each job stuck in rq's intermediate queue (taken from the
    queue, never started) for `STUCK_DEQUEUED_S`; the ids queued. A job of a live but
    stalled worker queued again as well only finds its match busy or over."""
    rescued = []
    for name in QUEUES:
        rescued += _rescue_dequeued_from(store, store.queue(name))
    return rescued


def _rescue_dequeued_from(store: Store, queue: rq.Queue) -> list[str]:
    intermediate = IntermediateQueue(queue.key, connection=queue.connection)
    rescued = []
    for job_id in intermediate.get_job_ids():
        job = queue.fetch_job(job_id)
        if _started(queue, job) or intermediate.set_first_seen(job_id):
            continue
        first_seen = intermediate.get_first_seen(job_id)
        if first_seen is None or now() - first_seen < timedelta(seconds=STUCK_DEQUEUED_S):
            continue
        intermediate.remove(job_id)
        if job is None:
            continue
        match = store.get_match(wakeups.match_of_job(job))
        job.delete()
        if match is not None and _recover(store, match, from_running=False):
            log.warning("match %s: job %s was taken by a worker that died before starting "
                        "it; queued again", match["id"], job_id)
            rescued.append(match["id"])
    return rescued


def _started(queue: rq.Queue, job: Job | None) -> bool:
    """Started by a worker: its status so, and in the started registry. rq starts a job in
    two writes (its execution into the registry, then its status and its leaving the
    intermediate queue): a worker that lost Redis between them leaves it registered, its
    status queued, run by nobody until rq's registry clean-up minutes later."""
    return (job is not None and job.get_status(refresh=False) == JobStatus.STARTED
            and job.id in queue.started_job_registry)


def requeue_orphans(store: Store, batch: int = ORPHAN_BATCH) -> list[str]:
    """Queue again each match nothing will wake (`Store.undriven`) that was seen so
    `ORPHAN_GRACE_S` before; the ids queued. Looks at the matches seen so, and at the
    next `batch` of a round over all matches. Queued again, a match has a live job, so it is
    queued once per loss of its wake-ups."""
    suspects = store.orphan_suspects()
    looked_at = list(dict.fromkeys([*suspects, *store.next_match_ids(batch)]))
    orphans = store.undriven(looked_at, _wakers)
    cleared = list(set(suspects) - set(orphans))
    queued = []
    for match in store.get_matches(store.ripe_orphans(orphans, cleared, ORPHAN_GRACE_S)):
        if match is not None and _recover(store, match, from_running=False):
            log.warning("match %s: %s with nothing to wake it (its job lost); queued again",
                        match["id"], match["status"])
            queued.append(match["id"])
    return queued


def _wakers(match_id: str, state: WakeState) -> tuple[list[str], list[str]]:
    """What may wake the match now (`tournament.wakeups`): the ids of its creation's job,
    its last recovery's, its last deferral's, a move's at its current step and its
    deadline's; the reasons of its deferral's and its deadline's timers."""
    timers = [f"w{state.deferrals}"] if state.deferrals else []
    timers += [state.deadline_timer] if state.deadline_timer else []
    reasons = ["", f"s{state.step}", *timers]
    reasons += [f"r{state.attempt}"] if state.attempt else []
    return [wakeups.job_id(match_id, reason) for reason in reasons], timers


def requeue_abandoned(store: Store, match_ids: Iterable[str]) -> list[str]:
    """Queue again each of `match_ids` that is running without a lease; count the ones
    found over. Returns the ids queued again."""
    ids = list(match_ids)
    if not ids:
        return []
    return [match["id"] for match in store.get_matches(store.unleased(ids))
            if match is not None and _recover(store, match, from_running=True)]


def hand_back(store: Store, match_ids: Iterable[str]) -> list[str]:
    """Queue again the matches a stopping worker drove (SIGTERM): their drivers, cancelled,
    gave back their leases and left the running index, so unlike `requeue_abandoned` this
    does not ask for them there. Returns the ids queued again."""
    ids = list(match_ids)
    if not ids:
        return []
    return [match["id"] for match in store.get_matches(store.unleased(ids))
            if match is not None and _recover(store, match, from_running=False)]


def on_job_failure(job: Job, connection: redis.Redis, kind: type[BaseException] | None,
                   error: BaseException | None, trace: TracebackType | None) -> None:
    """rq's failure callback of every match job (see the module docstring)."""
    store = Store(connection)
    match = store.get_match(wakeups.match_of_job(job))
    if match is not None and _recover(store, match, from_running=False):
        log.warning("match %s: job %s is dead (%s); queued again", match["id"], job.id,
                    kind.__name__ if kind else "unknown")


def _recover(store: Store, match: dict, from_running: bool) -> bool:
    """Count the match if it is over (and drop it from the running index, where a lease
    renewal racing with its end may have put it back), else queue it again if nobody
    drives it (`Store.take_over`)."""
    if match["status"] in (MatchStatus.FINISHED, MatchStatus.FAILED):
        results.count_outcome(store, match)
        store.leave_running(match["id"])
        return False
    attempt = store.take_over(match["id"], from_running)
    if attempt is None:
        return False
    wakeups.enqueue_match(store, match, reason=f"r{attempt}")
    log.info("match %s queued again (attempt %d)", match["id"], attempt)
    return True
