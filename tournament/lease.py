"""A match's lease: proof, renewed every second or so, that a live worker is playing it.

While a match job runs, a thread of the job's process keeps `match:{id}:lease` alive with a
short expiry. When the process dies (kill -9, a lost machine), nobody renews the key and it
expires within `TTL_S`: a running match without a lease is abandoned and can be queued
again (`tournament.recovery`). rq's own detection of a dead worker waits for the worker's
heartbeat to lapse (a minute at least) and for some worker's periodic maintenance.
"""

from __future__ import annotations

import logging
import threading
from types import TracebackType

import redis

from .store import Store, lease_key

log = logging.getLogger(__name__)

TTL_S = 6.0
RENEW_EVERY_S = 1.5


class MatchLease:
    """Hold the lease of one match for the duration of a `with` block."""

    def __init__(self, store: Store, match_id: str, holder: str):
        self.store = store
        self.key = lease_key(match_id)
        self.holder = holder
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._renew, name=f"lease {match_id}", daemon=True)

    def __enter__(self) -> MatchLease:
        self._write()
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stopped.set()
        self.thread.join()
        self.store.redis.transaction(self._release, self.key)

    def _release(self, pipe: redis.client.Pipeline) -> None:
        """Delete the lease unless a later attempt holds it by now."""
        if pipe.get(self.key) == self.holder.encode():
            pipe.multi()
            pipe.delete(self.key)

    def _write(self) -> None:
        self.store.redis.set(self.key, self.holder, px=int(TTL_S * 1000))

    def _renew(self) -> None:
        while not self.stopped.wait(RENEW_EVERY_S):
            try:
                self._write()
            except redis.RedisError:
                log.warning("could not renew %s; retrying", self.key, exc_info=True)
