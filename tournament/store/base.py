"""What every part of the `Store` works on: one Redis client, its scripts, the archive the
replays moved out of Redis are read from, and the limits of its connections."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

import redis
from redis.client import Pipeline
from redis.commands.core import Script

from tournament.store.scripts import Scripts

if TYPE_CHECKING:
    from tournament.archive_files import ReplayArchive

RETRIES = 3
SOCKET_TIMEOUT_S = 15.0
# Connections one client may hold at once: as many as an API process serves requests at
# once (`referee serve --worker-connections`), each of which may block in a wait for its
# move (`wait_applied`). Past it, a command waits for a free connection (up to the socket
# timeout) rather than failing.
MAX_CONNECTIONS = 1000
T = TypeVar("T")


class StoreBase:
    """The client and scripts the operations of every concept share."""

    redis: redis.Redis
    scripts: Scripts[Script]
    archive: ReplayArchive | None

    @contextmanager
    def writes(self) -> Iterator[Pipeline]:
        """A pipeline already in MULTI, executed on leaving (not after an error): writes
        of several concepts, rq's enqueues included, committed together."""
        with self.redis.pipeline() as pipe:
            pipe.multi()  # rq's enqueue on a caller's pipeline wants it in MULTI already
            yield pipe
            pipe.execute()

    def transaction(self, apply: Callable[[Pipeline], T], *watches: str) -> T:
        """`apply(pipe)` in a transaction watching `watches` (retried while they change
        under it), and what it answers: `redis.Redis.transaction(value_from_callable=True)`."""
        # redis-py types `func` as returning None and the answer as a list of replies, which
        # is what it answers without `value_from_callable`.
        return self.redis.transaction(  # type: ignore[return-value]
            apply, *watches, value_from_callable=True)  # type: ignore[arg-type]
