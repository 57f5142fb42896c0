"""The running index and the leases, as the recovery reads them: which matches have lost
their driver, and the one transaction that takes such a match over; which queued or parked
matches nothing will wake any more (`undriven`), and the marks that let the recovery queue
those only once seen so for a while (`ripe_orphans`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import cast

import redis
from rq.job import Job, JobStatus
from rq.worker import Worker

from tournament.store.base import StoreBase
from tournament.store.codec import decoded, text
from tournament.store.keys import (
    MatchField,
    MatchStatus,
    lease_key,
    match_key,
    matches_key,
    orphans_key,
    recovery_cursor_key,
    running_key,
    sweep_turn_key,
    timers_key,
)
from tournament.store.timers import timer_member

DRIVABLE = (MatchStatus.QUEUED.encode(), MatchStatus.RUNNING.encode())
# What the ids of a match's wake-ups and timers are made of (`tournament.wakeups`).
WAKE_FIELDS = (MatchField.STATUS, MatchField.ATTEMPT, MatchField.STEP, MatchField.PARKED,
               MatchField.DEADLINE_TIMER, MatchField.DEFERRALS)
# An rq job queued or started is one a worker will run, or rq (or the sweep, for one stuck in
# the intermediate queue) will fail and hand to `tournament.recovery`: from its enqueue to
# its end its hash says so, wherever it is (the queue, the intermediate queue, the started
# registry). A worker skips a queued id whose hash is gone (`Queue.dequeue_any`). A started
# job counts only while the worker its hash names is alive (its `rq:worker:` key, which the
# worker's heartbeats keep): rq fails a dead worker's job only when a worker next cleans its
# registries, between two dequeues, which an idle worker may not reach for minutes.
ORPHANS_TTL_S = 3600  # the marks go once no sweep has run for this long


@dataclass(frozen=True)
class WakeState:
    """A match's status, where it is parked and the counters its wake-ups are named by."""

    status: str | None
    attempt: int
    step: int
    parked: int | None
    deadline_timer: str | None
    deferrals: int

    @classmethod
    def of(cls, fields: list[bytes | None]) -> WakeState:
        status, attempt, step, parked, deadline_timer, deferrals = fields
        return cls(text(status), int(attempt or 0), int(step or 0),
                   None if parked is None else int(parked), text(deadline_timer),
                   int(deferrals or 0))


# A match's possible wake-ups in a state: (its rq job ids, its timers' reasons).
Wakers = Callable[[str, WakeState], tuple[list[str], list[str]]]


class Running(StoreBase):
    """The matches a driver holds, seen from outside the drivers."""

    def take_sweep_turn(self, worker: str, seconds: float) -> bool:
        """Whether `worker` sweeps now: one sweep of the cluster's workers per `seconds`,
        taken by the first to ask once the last turn lapsed (a worker that dies holding it
        delays the next sweep by no more)."""
        return bool(self.redis.set(sweep_turn_key(), worker, nx=True,
                                   px=max(int(seconds * 1000), 1)))

    def running_match_ids(self) -> list[str]:
        # Members only (no `withscores`), which redis-py's typing of ZRANGE does not tell.
        members = cast(list[bytes], self.redis.zrange(running_key(), 0, -1))
        return [decoded(raw) for raw in members]

    def running_count(self) -> int:
        """Matches a driver holds now (parked ones are not in the index)."""
        return self.redis.zcard(running_key())

    def unleased(self, match_ids: list[str]) -> list[str]:
        """Those of `match_ids` no driver holds a lease on, in one round trip."""
        with self.redis.pipeline(transaction=False) as pipe:
            for match_id in match_ids:
                pipe.exists(lease_key(match_id))
            leased = pipe.execute()
        return [match_id for match_id, held in zip(match_ids, leased, strict=True) if not held]

    def leave_running(self, match_id: str) -> None:
        """Drop a match that is over from the index (a lease renewal racing with its end may
        have put it back)."""
        self.redis.zrem(running_key(), match_id)

    def take_over(self, match_id: str, from_running: bool = True) -> int | None:
        """Atomically mark an undriven match queued for its next attempt; None when a driver
        holds it, it is over, or (`from_running`) it is not in the running index any more."""
        key, lease, running = match_key(match_id), lease_key(match_id), running_key()

        def apply(pipe: redis.client.Pipeline) -> int | None:
            status, attempt = pipe.hmget(key, MatchField.STATUS, MatchField.ATTEMPT)
            if status not in DRIVABLE:
                return None
            if pipe.exists(lease) or (from_running and pipe.zscore(running, match_id) is None):
                return None
            pipe.multi()
            pipe.hset(key, mapping={MatchField.STATUS: MatchStatus.QUEUED.value,
                                    MatchField.ATTEMPT: int(attempt or 0) + 1})
            pipe.zrem(running, match_id)
            return int(attempt or 0) + 1

        return self.transaction(apply, key, lease, running)

    def next_match_ids(self, count: int) -> list[str]:
        """The next `count` match ids in creation order, from a cursor every sweep shares,
        from the first again once past the last: a round over all matches takes
        matches / `count` sweeps (two sweeps racing at the end reset it twice: harmless)."""
        end = self.redis.incrby(recovery_cursor_key(), count)
        members = cast(list[bytes], self.redis.zrange(matches_key(), end - count, end - 1))
        if len(members) < count:
            self.redis.set(recovery_cursor_key(), 0)
        return [decoded(raw) for raw in members]

    def orphan_suspects(self) -> list[str]:
        """The matches marked as seen with nothing to wake them (`ripe_orphans`)."""
        return [decoded(raw) for raw in cast(list[bytes],
                                             self.redis.zrange(orphans_key(), 0, -1))]

    def undriven(self, match_ids: list[str], wakers: Wakers) -> list[str]:
        """Those of `match_ids` queued, parked or deferred that nothing will wake: no lease,
        not in the running index (`requeue_abandoned`'s), no live rq job among `wakers`'
        ids (a started one whose worker died is not), no timer among its reasons. Checked
        in one transaction on the state first read (one that changed meanwhile is not
        answered): a job moving between rq's structures, or a wake-up queued with the
        match's change, is never missed; the workers of started jobs are looked up after."""
        states = self._wake_states(match_ids)
        drivable = {match_id: state for match_id, state in states.items()
                    if state.status is not None and state.status.encode() in DRIVABLE}
        if not drivable:
            return []
        checks = {match_id: wakers(match_id, state) for match_id, state in drivable.items()}
        with self.redis.pipeline(transaction=True) as pipe:
            for match_id, (job_ids, reasons) in checks.items():
                _queue_check(pipe, match_id, job_ids, reasons)
            replies = iter(pipe.execute())
        hanging = {match_id: _hanging_on(replies, drivable[match_id], job_ids, reasons)
                   for match_id, (job_ids, reasons) in checks.items()}
        alive = self._live_workers({name for names in hanging.values() if names
                                    for name in names})
        return [match_id for match_id, names in hanging.items()
                if names is not None and alive.isdisjoint(names)]

    def _live_workers(self, names: set[str]) -> set[str]:
        """Those of the rq workers `names` whose key is still there."""
        ordered = sorted(names)
        with self.redis.pipeline(transaction=False) as pipe:
            for name in ordered:
                pipe.exists(Worker.redis_worker_namespace_prefix + name)
            found = pipe.execute()
        return {name for name, there in zip(ordered, found, strict=True) if there}

    def ripe_orphans(self, orphans: list[str], cleared: list[str], grace_s: float) -> list[str]:
        """Mark each of `orphans` (when first seen so, in Redis time) and drop the marks of
        `cleared`; answers the orphans marked `grace_s` ago or more, their marks dropped:
        each to one caller only."""
        if not orphans and not cleared:
            return []
        seconds, micros = self.redis.time()
        now_ms = seconds * 1000 + micros // 1000
        with self.redis.pipeline() as pipe:
            if cleared:
                pipe.zrem(orphans_key(), *cleared)
            if orphans:
                pipe.zadd(orphans_key(), dict.fromkeys(orphans, now_ms), nx=True)
                pipe.expire(orphans_key(), ORPHANS_TTL_S)
                pipe.zmscore(orphans_key(), orphans)
            first_seen = pipe.execute()[-1] if orphans else []
        ripe = [match_id for match_id, seen in zip(orphans, first_seen, strict=True)
                if seen is not None and now_ms - seen >= grace_s * 1000]
        if not ripe:
            return []
        with self.redis.pipeline(transaction=False) as pipe:
            for match_id in ripe:
                pipe.zrem(orphans_key(), match_id)
            dropped = pipe.execute()
        return [match_id for match_id, gone in zip(ripe, dropped, strict=True) if gone]

    def _wake_states(self, match_ids: list[str]) -> dict[str, WakeState]:
        with self.redis.pipeline(transaction=False) as pipe:
            for match_id in match_ids:
                pipe.hmget(match_key(match_id), WAKE_FIELDS)
            found = pipe.execute()
        return {match_id: WakeState.of(fields)
                for match_id, fields in zip(match_ids, found, strict=True)}


def _queue_check(pipe: redis.client.Pipeline, match_id: str, job_ids: list[str],
                 reasons: list[str]) -> None:
    """Queue on `pipe` what `_hanging_on` reads of one match, in this order."""
    pipe.hmget(match_key(match_id), WAKE_FIELDS)
    pipe.exists(lease_key(match_id))
    pipe.zscore(running_key(), match_id)
    for job_id in job_ids:
        pipe.hmget(Job.key_for(job_id), ["status", "worker_name"])  # rq's job hash
    if reasons:
        pipe.zmscore(timers_key(), [timer_member(match_id, reason) for reason in reasons])


def _hanging_on(replies: Iterator, expected: WakeState, job_ids: list[str],
                reasons: list[str]) -> list[str] | None:
    """Read one match's replies (`_queue_check`): None when it changed from `expected` or
    something drives or wakes it; else the workers whose started jobs are all that may
    still drive it (none: undriven)."""
    state, leased, indexed = WakeState.of(next(replies)), next(replies), next(replies)
    jobs = [(text(status), text(worker)) for status, worker in
            (next(replies) for _ in job_ids)]
    timers = next(replies) if reasons else []
    if (state != expected or leased or indexed is not None
            or any(due is not None for due in timers)):
        return None
    workers = []
    for status, worker in jobs:
        if status == JobStatus.QUEUED.value or status == JobStatus.STARTED.value and not worker:
            return None
        if status == JobStatus.STARTED.value:
            workers.append(cast(str, worker))
    return workers
