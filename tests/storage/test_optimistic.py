"""`Store.optimistic`, the transaction that counts a match (`Store.count_match`), against a
real Redis: WATCH and reads in one round trip, then MULTI/EXEC of what they decide; started
over on fresh reads when the watched key changes in between; nothing written when there
is nothing to write, and the connection left clean for the next command whatever
happened."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from tournament.store import Store


@pytest.fixture
def plain(redis_url: str) -> Iterator[Store]:
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield Store(client)
    client.close()


def test_reads_decide_the_writes_and_a_change_in_between_starts_them_over(plain, redis_url):
    other = redis.Redis.from_url(redis_url)
    plain.redis.set("opt:n", 1)
    seen = []

    def writes(replies: list) -> list:
        seen.append(int(replies[0]))
        if len(seen) == 1:  # another client writes the watched key before this EXEC
            other.incrby("opt:n", 10)
        return [("SET", "opt:n", int(replies[0]) + 1), ("RPUSH", "opt:log", replies[0])]

    assert plain.optimistic("opt:n", [("GET", "opt:n")], writes)
    assert seen == [1, 11]  # the first round's EXEC failed: read again, decided again
    assert plain.redis.get("opt:n") == b"12" and plain.redis.lrange("opt:log", 0, -1) == [b"11"]
    other.close()


def test_nothing_to_write_writes_nothing_and_unwatches(plain):
    plain.redis.sadd("opt:counted", "m1")
    assert not plain.optimistic("opt:counted", [("SISMEMBER", "opt:counted", "m1")],
                                lambda replies: None if replies[0] else [("SET", "opt:x", 1)])
    assert not plain.redis.exists("opt:x")
    # the connection went back to the pool unwatched: a transaction on it is not spoilt by
    # a later change of the key it watched
    with plain.redis.pipeline() as pipe:
        pipe.multi()
        pipe.set("opt:y", 1)
        plain.redis.srem("opt:counted", "m1")
        assert pipe.execute() == [True]


@pytest.mark.parametrize("stage", ["read", "write"])
def test_an_error_reply_raises_and_leaves_no_reply_behind(plain, stage):
    plain.redis.set("opt:string", "not a hash")
    reads = [("HGET", "opt:string", "f")] if stage == "read" else [("GET", "opt:string")]
    writes = [("SET", "opt:before", 1), ("HSET", "opt:string", "f", 1)]
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        plain.optimistic("opt:string", [*reads, ("GET", "opt:string")], lambda _: writes)
    # the next commands on the client's connections get their own replies
    assert plain.redis.get("opt:string") == b"not a hash"
    assert plain.redis.ping() is True
    # a MULTI/EXEC runs every command it queued, the one that failed aside
    assert plain.redis.exists("opt:before") == (stage == "write")



def test_writes_that_fail_leave_no_watch_on_the_pools_connection(plain):
    def writes(_: list) -> list:
        raise ValueError("a bug in the caller")

    with pytest.raises(ValueError):
        plain.optimistic("opt:w", [("GET", "opt:w")], writes)
    with plain.redis.pipeline() as pipe:
        pipe.multi()
        pipe.set("opt:z", 1)
        plain.redis.set("opt:w", 2)  # the key the failed transaction watched
        assert pipe.execute() == [True]
