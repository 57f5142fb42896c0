"""The drivers' scripts on one kept connection (`tournament.store.steps.StepWriter`), against
a real Redis: calls made at once are pipelined and each gets its own answer, an error reply
fails its own call only, a call's commands go out together (a MULTI/EXEC of one call is
never split by another's commands), a lost connection fails the calls in flight and the
next call works on a new one, and a Redis that lost its scripts still records a step and
renews a lease."""

from __future__ import annotations

import asyncio

import pytest
import redis
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from tournament.store.progress import Progress
from tournament.store.steps import StepWriter, resp


def run(coroutine):
    return asyncio.run(coroutine)


def test_calls_made_at_once_share_the_connection_and_get_their_own_answers(redis_url):
    async def calls() -> tuple[list, int]:
        client = aioredis.Redis.from_url(redis_url, client_name="writer-test")
        writer = StepWriter(client)
        answers = await asyncio.gather(*(writer.call(resp(["INCRBY", "writer:n", n]))
                                         for n in range(1, 51)))
        clients = await client.client_list()
        await client.aclose()
        # this test's own (the Redis may still hold an earlier test's closing connection)
        return answers, sum(1 for entry in clients if entry["name"] == "writer-test")

    answers, connections = run(calls())
    assert answers == [n * (n + 1) // 2 for n in range(1, 51)]  # in the order sent
    assert connections == 2  # the writer's one, and the one that listed them


def test_an_error_reply_fails_its_own_call_only(redis_url):
    async def calls() -> list:
        client = aioredis.Redis.from_url(redis_url)
        writer = StepWriter(client)
        await client.set("writer:text", "not a number")
        answers = await asyncio.gather(writer.call(resp(["INCR", "writer:m"])),
                                       writer.call(resp(["INCR", "writer:text"])),
                                       writer.call(resp(["INCR", "writer:m"])),
                                       return_exceptions=True)
        await client.aclose()
        return answers

    first, error, third = run(calls())
    assert (first, third) == (1, 2) and isinstance(error, ResponseError)


def test_a_transaction_answers_its_replies_and_is_not_split_by_other_calls(redis_url):
    """Calls made at once land in one write: each MULTI/EXEC still runs whole, its
    commands not interleaved with another call's (the counter reads the same inside)."""
    async def calls() -> list:
        client = aioredis.Redis.from_url(redis_url)
        writer = StepWriter(client)
        answers = await asyncio.gather(*(
            writer.transaction([resp(["INCR", "writer:t"]), resp(["INCR", "writer:t"]),
                                resp(["GET", "writer:t"])]) for _ in range(20)),
            writer.call(resp(["INCR", "writer:t"])))
        await client.aclose()
        return answers

    *transactions, alone = run(calls())
    counts = [int(read) for _, _, read in transactions]
    assert all(second == first + 1 and int(read) == second
               for first, second, read in transactions)
    assert sorted([*counts, alone]) == sorted(set([*counts, alone])) and max(counts) >= 40


def test_a_transaction_with_an_error_reply_raises_it(redis_url):
    async def calls() -> BaseException | list:
        client = aioredis.Redis.from_url(redis_url)
        writer = StepWriter(client)
        await client.set("writer:word", "text")
        try:
            return await writer.transaction([resp(["INCR", "writer:c"]),
                                             resp(["INCR", "writer:word"])])
        except ResponseError as error:
            return error
        finally:
            await client.aclose()

    assert isinstance(run(calls()), ResponseError)


def test_call_each_answers_each_reply_an_error_as_its_value(redis_url):
    async def calls() -> list:
        client = aioredis.Redis.from_url(redis_url)
        writer = StepWriter(client)
        await client.set("writer:w", "text")
        answers = await writer.call_each([resp(["INCR", "writer:e"]), resp(["INCR", "writer:w"]),
                                          resp(["INCR", "writer:e"])])
        await client.aclose()
        return answers

    first, error, third = run(calls())
    assert (first, third) == (1, 2) and isinstance(error, ResponseError)


def test_a_lost_connection_fails_the_calls_in_flight_and_the_next_uses_a_new_one(redis_url):
    async def calls() -> tuple[BaseException, int]:
        client = aioredis.Redis.from_url(redis_url)
        writer = StepWriter(client)
        await writer.call(resp(["SET", "writer:k", "1"]))
        killer = redis.Redis.from_url(redis_url)
        blocked = asyncio.ensure_future(writer.call(resp(["BLPOP", "writer:never", 30])))
        await asyncio.sleep(0.2)
        killer.client_kill_filter(_type="normal", skipme=True)
        killer.close()
        lost = await asyncio.gather(blocked, return_exceptions=True)
        answer = await writer.call(resp(["INCR", "writer:k"]))
        await client.aclose()
        return lost[0], answer

    lost, answer = run(calls())
    assert isinstance(lost, redis.ConnectionError), lost
    assert answer == 2


def test_a_step_is_recorded_after_redis_lost_its_scripts(redis_url):
    """SCRIPT FLUSH (a restart, a new primary): the step's EVALSHA answers NOSCRIPT, and the
    script is loaded and run instead."""
    entry = {"step": 0, "seat": 0, "action": {"type": "x"}, "fault": None, "elapsed_ms": 1.0}

    async def record() -> list:
        client = aioredis.Redis.from_url(redis_url)
        progress = Progress(client)
        await client.set("referee:match:m-flush:lease", "holder")
        await client.script_flush()
        await progress.record("m-flush", "holder", entry, b"", 1, False, "aladino", "bot")
        steps = await client.lrange("referee:match:m-flush:steps", 0, -1)
        live = await client.get("referee:match:m-flush:live")
        await client.aclose()
        return [steps, live]

    steps, live = run(record())
    assert len(steps) == 1 and live is None  # b"": the live state is left as it was


@pytest.mark.parametrize("argument", [b"bytes", "text é", 42])
def test_commands_are_packed_as_the_redis_protocol(argument):
    data = argument if isinstance(argument, bytes) else str(argument).encode()
    assert resp(["SET", "k", argument]) == b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n%b\r\n" % (
        len(data), data)


def test_leases_are_renewed_after_redis_lost_its_scripts(redis_url):
    """Renewing several leases sends one EVALSHA each in one round trip; NOSCRIPT (a
    restart, a new primary) loads the script and runs it instead."""
    async def renew() -> tuple[list, list]:
        client = aioredis.Redis.from_url(redis_url)
        progress = Progress(client)
        for match_id in ("m-r1", "m-r2"):
            assert await progress.take_lease(match_id, "holder")
        await client.set("referee:match:m-r2:lease", "another")
        await client.script_flush()
        lost = await progress.renew_leases({"m-r1": "holder", "m-r2": "holder"})
        ttls = [await client.pttl(f"referee:match:{m}:lease") for m in ("m-r1", "m-r2")]
        await client.aclose()
        return lost, ttls

    lost, (kept, taken) = run(renew())
    assert lost == ["m-r2"] and kept > 0 and taken == -1


def test_a_timer_is_seen_due_on_the_loop_once_its_time_has_come_by_redis_clock(redis_url):
    """`Progress.timer_due`, the worker's look before it fires timers in a thread: false
    with none set or none due, true once one is due, also after Redis lost its scripts."""
    from tournament.store import Store
    from tournament.store.keys import timers_key

    store = Store.from_url(redis_url)
    store.redis.delete(timers_key())

    async def looks() -> list[bool]:
        client = aioredis.Redis.from_url(redis_url)
        progress = Progress(client)
        seen = [await progress.timer_due()]
        store.set_timer("m-t1", "later", 3600)
        seen.append(await progress.timer_due())
        store.set_timer("m-t2", "now", 0)
        await client.script_flush()
        seen.append(await progress.timer_due())
        await client.aclose()
        return seen

    try:
        assert run(looks()) == [False, False, True]
    finally:
        store.redis.delete(timers_key())


def test_the_ladders_upkeep_is_looked_for_on_the_loop_wherever_its_work_waits(redis_url):
    """`Progress.ladder_work`, the worker's look before its ladders' upkeep takes threads:
    false on a Redis without ladders, true while a ladder, a notice, a queued entry check or
    a claimed one (its worker may have died: the upkeep queues it again) is there."""
    from tournament.store import Store
    from tournament.store.keys import ladders_key

    store = Store.from_url(redis_url)
    store.redis.flushdb()

    async def look() -> bool:
        client = aioredis.Redis.from_url(redis_url)
        answer = await Progress(client).ladder_work()
        await client.aclose()
        return answer

    def each_alone() -> list[bool]:
        seen = []
        for write in (lambda pipe: pipe.zadd(ladders_key(), {"l-1": 1}),
                      lambda pipe: store.queue_notice(pipe, {"bot_id": "b-1"}),
                      lambda pipe: store.queue_check(pipe, {"bot": "b-1"})):
            with store.writes() as pipe:
                write(pipe)
            seen.append(run(look()))
            store.redis.flushdb()
        with store.writes() as pipe:
            store.queue_check(pipe, {"bot": "b-1"})
        assert store.take_check() == {"bot": "b-1"}  # claimed, no longer queued
        seen.append(run(look()))
        return seen

    try:
        assert run(look()) is False
        assert each_alone() == [True, True, True, True]
    finally:
        store.redis.flushdb()


def test_the_drivers_read_of_bots_is_the_stores(redis_url):
    """`Progress.get_bots` (on the loop, a match's start) reads what `Store.get_bots` reads:
    each record in the order asked, None for an id not registered."""
    import orjson

    from tournament.store import Store
    from tournament.store.keys import bot_key

    store = Store.from_url(redis_url)
    for bot_id, name in (("b-read-1", "first"), ("b-read-2", "second")):
        store.redis.set(bot_key(bot_id), orjson.dumps({"id": bot_id, "name": name}))
    ids = ["b-read-2", "b-missing", "b-read-1"]

    async def read() -> list:
        client = aioredis.Redis.from_url(redis_url)
        try:
            return [await Progress(client).get_bots(ids), await Progress(client).get_bots([])]
        finally:
            await client.aclose()

    bots, none = run(read())
    assert bots == store.get_bots(ids) and none == []
    assert [bot and bot["name"] for bot in bots] == ["second", None, "first"]
