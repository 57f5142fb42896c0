"""What every part of the `Store` works on: one Redis client, its scripts, the archive the
replays moved out of Redis are read from, the limits of its connections, and the writes
that wait for a replica (`durably`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from typing import TYPE_CHECKING, Any, TypeVar

import redis
from redis.client import Pipeline
from redis.commands.core import Script
from redis.exceptions import LockError

from tournament.store.connection import ask_sentinels, target_of
from tournament.store.keys import lock_key, replication_fence_key
from tournament.store.scripts import Scripts
from tournament.store.steps import EXEC, MULTI, Argument, resp

if TYPE_CHECKING:
    from tournament.archive_files import ReplayArchive

RETRIES = 3
RETRY_CAP_S = 0.4
SOCKET_TIMEOUT_S = 15.0
# Connections one client may hold at once: as many as an API process serves requests at
# once (`referee serve --worker-connections`), each of which may block in a wait for its
# move (`wait_applied`). Past it, a command waits for a free connection (up to the socket
# timeout) rather than failing.
MAX_CONNECTIONS = 1000
LOCK_TTL_S = 10
T = TypeVar("T")
Command = Sequence[Argument]
UNWATCH = resp(["UNWATCH"])
log = logging.getLogger(__name__)


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

    @contextmanager
    def serialized(self, *names: str) -> Iterator[None]:
        """The block, while no other process of the cluster runs a block holding one of
        `names`: for a check and the write it allows (a quota held, a unique name, a bot not
        retired) that another request's must not fall between. Redis locks, each lapsing
        `LOCK_TTL_S` after a holder that died, taken once each and in name order (so two
        blocks holding several never wait on each other); redis.ConnectionError (a 503)
        when one is not free by then."""
        with ExitStack() as held:
            for name in sorted(set(names)):
                held.enter_context(self._locked(name))
            yield

    @contextmanager
    def _locked(self, name: str) -> Iterator[None]:
        lock = self.redis.lock(lock_key(name), timeout=LOCK_TTL_S, blocking_timeout=LOCK_TTL_S)
        if not lock.acquire():
            raise redis.ConnectionError(f"the lock {name!r} stayed taken {LOCK_TTL_S} s")
        try:
            yield
        finally:
            with suppress(LockError):  # lapsed meanwhile: another may hold it now
                lock.release()

    def transaction(self, apply: Callable[[Pipeline], T], *watches: str) -> T:
        """`apply(pipe)` in a transaction watching `watches` (retried while they change
        under it), and what it answers: `redis.Redis.transaction(value_from_callable=True)`."""
        # redis-py types `func` as returning None and the answer as a list of replies, which
        # is what it answers without `value_from_callable`.
        return self.redis.transaction(  # type: ignore[return-value]
            apply, *watches, value_from_callable=True)  # type: ignore[arg-type]

    def optimistic(self, watch: str, reads: Sequence[Command],
                   writes: Callable[[list[Any]], Sequence[Command] | None]) -> bool:
        """A transaction in two round trips on one connection, its commands packed by
        hiredis: WATCH `watch` with the `reads`, then MULTI, the commands
        `writes(their replies)` answers, EXEC; again from the WATCH while `watch` changes
        in between. True once written; False when `writes` answers None (nothing to
        write). What `redis.Redis.transaction` does in three round trips, each argument
        encoded by redis-py in Python (~40% of a match's count: docs/performance.md
        §10). An error reply raises; a lost connection is tried again as the client's
        retries say (a round that was written finds what it wrote)."""
        pool = self.redis.connection_pool
        connection = pool.get_connection()
        try:
            while True:
                written = connection.retry.call_with_retry(
                    lambda: _optimistic_round(connection, watch, reads, writes),
                    lambda _: connection.disconnect())
                if written is not None:
                    return written
        except BaseException:
            connection.disconnect()  # a WATCH, or replies unread, may be left on it
            raise
        finally:
            pool.release(connection)

    def waits_for_replicas(self) -> bool:
        """Whether `durably` waits for replicas (the client's URL asks for some)."""
        return target_of(self.redis).wait_replicas > 0

    def durably(self, write: Callable[[], T]) -> T:
        """`write()` (idempotent: run again, it changes nothing it already did), held by as
        many replicas as the client's URL asks (`RedisTarget.wait_replicas`; 0: just
        `write()`) before this returns: writes that must not be lost at a failover.

        The primary's replication id is read before, and after a WAIT sent behind one more
        write of this client's (the fence): the WAIT covers everything the primary took
        before the fence, `write()`'s writes among them, when the id is the same. When it
        is not, a failover came in between, and the writes may have stayed on the old
        primary: `write()` runs again, on the new one. A WAIT that times out with fewer
        replicas (none is connected, or it lags) leaves the writes on the primary alone,
        with a warning, unless the Sentinels name another primary by then (the one written
        to was cut off and lived on for a while): then `write()` runs again on theirs."""
        target = target_of(self.redis)
        if not self.waits_for_replicas():
            return write()
        while True:
            before = self.redis.info("replication")["master_replid"]
            answer = write()
            with self.redis.pipeline(transaction=False) as pipe:
                pipe.incr(replication_fence_key())
                pipe.wait(target.wait_replicas, target.wait_timeout_ms)
                pipe.info("replication")
                _, acknowledged, after = pipe.execute()
            if after["master_replid"] == before and (
                    acknowledged >= target.wait_replicas or not self._deposed(before)):
                if acknowledged < target.wait_replicas:
                    log.warning("a write that must not be lost is on the primary only: %d "
                                "of %d replicas acknowledged it within %d ms", acknowledged,
                                target.wait_replicas, target.wait_timeout_ms)
                return answer
            log.warning("the Redis primary changed during a write that must not be lost: "
                        "written again on the new one")

    def _deposed(self, replication_id: str) -> bool:
        """Whether the Sentinels name a primary other than the one of `replication_id`."""
        return (ask_sentinels(self.redis)
                and self.redis.info("replication")["master_replid"] != replication_id)


def _optimistic_round(connection: redis.connection.AbstractConnection, watch: str,
                      reads: Sequence[Command],
                      writes: Callable[[list[Any]], Sequence[Command] | None]) -> bool | None:
    """One round of `StoreBase.optimistic`: True or False as it answers, None when the
    watched key changed before EXEC."""
    _, *replies = _exchange(connection, b"".join(resp(command) for command in
                                                 [("WATCH", watch), *reads]), len(reads) + 1)
    commands = writes(replies)
    if commands is None:
        _exchange(connection, UNWATCH, 1)
        return False
    *_, done = _exchange(connection, b"".join([MULTI, *map(resp, commands), EXEC]),
                         len(commands) + 2)
    if done is None:
        return None
    if errors := [reply for reply in done if isinstance(reply, redis.ResponseError)]:
        raise errors[0]
    return True


def _exchange(connection: redis.connection.AbstractConnection, packed: bytes, replies: int
              ) -> list[Any]:
    """Send packed commands and read their `replies`, every one (an error reply raises
    once all are read: none is left on the connection for the next command)."""
    connection.send_packed_command([packed])
    answers: list[Any] = []
    for _ in range(replies):
        try:
            answers.append(connection.read_response())
        except redis.ResponseError as error:
            answers.append(error)
    if errors := [answer for answer in answers if isinstance(answer, redis.ResponseError)]:
        raise errors[0]
    return answers
