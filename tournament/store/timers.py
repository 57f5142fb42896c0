"""Timers: a match's job to queue later (a pull seat's deadline, a retry for a bot's slot),
a member `"{match id} {reason}"` of the `timers` sorted set scored by when it is due, in
Redis time. Any worker fires the due ones (`fire_due_timers`); none holds a lock."""

from __future__ import annotations

from collections.abc import Callable

import redis

from tournament.store.base import StoreBase
from tournament.store.codec import decoded
from tournament.store.keys import MatchField, match_key, timers_key

# Queues the job `reason` of a match on a pipeline in MULTI (`tournament.wakeups.wake`).
Wake = Callable[[str, str, redis.client.Pipeline], object]


def timer_member(match_id: str, reason: str) -> str:
    return f"{match_id} {reason}"


class Timers(StoreBase):
    """Setting, cancelling and firing the timers."""

    def set_timer(self, match_id: str, reason: str, delay_s: float) -> None:
        """Queue the match's job `reason` in `delay_s` seconds."""
        self.scripts.set_timer(keys=[timers_key()],
                               args=[timer_member(match_id, reason),
                                     max(round(delay_s * 1000), 0)])

    def next_wake(self, match_id: str) -> int:
        """A new number for a deadline's job id (each gets its own)."""
        return self.redis.hincrby(match_key(match_id), MatchField.WAKES, 1)

    def next_deferral(self, match_id: str) -> int:
        """A new number for a retry's job id (each gets its own)."""
        return self.redis.hincrby(match_key(match_id), MatchField.DEFERRALS, 1)

    def set_deadline_timer(self, match_id: str, reason: str, delay_s: float) -> None:
        """`set_timer`, the match keeping the timer to cancel it (`cancel_deadline_timer`)."""
        self.redis.hset(match_key(match_id), MatchField.DEADLINE_TIMER, reason)
        self.set_timer(match_id, reason, delay_s)

    def cancel_deadline_timer(self, match_id: str) -> None:
        """Drop the match's deadline timer, if any."""
        reason = self.redis.hget(match_key(match_id), MatchField.DEADLINE_TIMER)
        if reason is not None:
            with self.redis.pipeline() as pipe:
                pipe.zrem(timers_key(), timer_member(match_id, decoded(reason)))
                pipe.hdel(match_key(match_id), MatchField.DEADLINE_TIMER)
                pipe.execute()

    def fire_due_timers(self, wake: Wake, batch: int = 200) -> int:
        """`wake` the job of each timer due now and drop the timers, in one transaction (a
        timer fired twice by two workers at once queues a job twice: harmless); how many
        fired."""
        due = self.scripts.due_timers(keys=[timers_key()], args=[batch])
        if not due:
            return 0
        with self.writes() as pipe:
            for member in due:
                match_id, _, reason = member.decode().partition(" ")
                wake(match_id, reason, pipe)
            pipe.zrem(timers_key(), *due)
        return len(due)

    def timers_set(self) -> int:
        """How many timers are set."""
        return self.redis.zcard(timers_key())
