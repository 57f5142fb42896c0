"""The running index and the leases, as the recovery reads them: which matches have lost
their driver, and the one transaction that takes such a match over."""

from __future__ import annotations

from typing import cast

import redis

from tournament.store.base import StoreBase
from tournament.store.codec import decoded
from tournament.store.keys import MatchField, MatchStatus, lease_key, match_key, running_key

DRIVABLE = (MatchStatus.QUEUED.encode(), MatchStatus.RUNNING.encode())


class Running(StoreBase):
    """The matches a driver holds, seen from outside the drivers."""

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
