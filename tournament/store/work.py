"""Work lists: items a worker claims, runs and marks done, queued again when the worker that
claimed one died (the ladders' entry checks, the hosted bots' builds).

A list is two keys: the queue (a list of JSON items, oldest first) and its claims (a sorted
set of the items taken, by the Redis time they were taken at, `TAKE_WORK`).
"""

from __future__ import annotations

from typing import NamedTuple, cast

from tournament.store.base import StoreBase
from tournament.store.codec import dumps, loads


class WorkList(NamedTuple):
    queued: str
    claimed: str


class WorkLists(StoreBase):
    """Claiming, finishing and returning the items of a work list."""

    def take_work(self, work: WorkList) -> dict | None:
        """The next item, claimed by this caller (kept until `work_done`)."""
        return loads(self.scripts.take_work(keys=[work.queued, work.claimed]))

    def work_done(self, work: WorkList, item: dict) -> None:
        self.redis.zrem(work.claimed, dumps(item))

    def return_work(self, work: WorkList, item: dict) -> None:
        """Queue a claimed item again, first (its worker stops before running it)."""
        raw = dumps(item)
        with self.redis.pipeline() as pipe:
            pipe.zrem(work.claimed, raw)
            pipe.lpush(work.queued, raw)
            pipe.execute()

    def requeue_stale_work(self, work: WorkList, older_than_s: float) -> int:
        """Queue again the items claimed longer ago than `older_than_s` (their worker died);
        how many."""
        now = int(self.redis.time()[0])
        stale = cast(list[bytes], self.redis.zrangebyscore(work.claimed, 0, now - older_than_s))
        for raw in stale:
            with self.redis.pipeline() as pipe:
                pipe.zrem(work.claimed, raw)
                pipe.rpush(work.queued, raw)
                pipe.execute()
        return len(stale)
