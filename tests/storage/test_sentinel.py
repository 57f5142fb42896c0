"""Redis Sentinel (issue 31): REDIS_URL naming a Sentinel set (or REDIS_SENTINELS with
REDIS_MASTER), and what the store does with one (a real primary, a replica and three
redis-sentinel processes): a write that must not be lost waits for the replica and is
written again when the primary changed under it; a new primary gets every Lua script from
the first connection made to it; the drivers' pipelined connection takes a demoted
primary's READONLY for a lost connection. The failovers during a tournament are
tests/tournament/test_failover.py's."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Iterator

import pytest
import redis

from referee.config import Config, ConfigError, RedisTarget, redis_target
from referee.redis_server import SentinelSet
from tests.support.failover import sentinel_set, wait_new_primary
from tournament.store import Store
from tournament.store.connection import connect, connect_async, script_sources
from tournament.store.steps import StepWriter, resp


@pytest.fixture(scope="module")
def sentinels(tmp_path_factory) -> Iterator[SentinelSet]:
    with sentinel_set(tmp_path_factory.mktemp("sentinel")) as made:
        yield made


# ----- the settings ----------------------------------------------------------------------
def test_a_sentinel_url_names_the_sentinels_the_master_and_the_database():
    assert redis_target("redis+sentinel://:pw@h1:26380,[::1],h3:1/mymaster/2") == RedisTarget(
        sentinels=(("h1", 26380), ("::1", 26379), ("h3", 1)), master="mymaster", db=2,
        password="pw", wait_replicas=1)
    assert redis_target("redis://127.0.0.1:6379/0") == RedisTarget(
        url="redis://127.0.0.1:6379/0", wait_replicas=0)


def test_the_writes_wait_for_as_many_replicas_as_asked():
    target = redis_target("redis://h:1/0?socket_timeout=3&wait_replicas=2&wait_timeout_ms=50")
    assert (target.url, target.wait_replicas, target.wait_timeout_ms) == (
        "redis://h:1/0?socket_timeout=3", 2, 50)
    assert redis_target("redis+sentinel://h/m?wait_replicas=0").wait_replicas == 0
    url = Config.from_env({"REDIS_SENTINELS": "a:1,b:2", "REDIS_MASTER": "m",
                           "REDIS_WAIT_REPLICAS": "2", "REDIS_WAIT_TIMEOUT_MS": "80"}).redis_url
    assert redis_target(url) == RedisTarget(sentinels=(("a", 1), ("b", 2)), master="m",
                                            wait_replicas=2, wait_timeout_ms=80)


@pytest.mark.parametrize(("env", "says"), [
    ({"REDIS_URL": "redis+sentinel://h1:1/"}, "MASTER"),
    ({"REDIS_URL": "redis+sentinel://:secret@h1:x/m"}, "'x' is not a positive integer"),
    ({"REDIS_URL": "redis+sentinel://h1:26379,h2:99999/m"}, "port over 65535"),
    ({"REDIS_SENTINELS": "[::1]:70000", "REDIS_MASTER": "m"}, "port over 65535"),
    ({"REDIS_URL": "redis+sentinel://h1/m?socket_timeout=1"}, "no option 'socket_timeout'"),
    ({"REDIS_SENTINELS": "h1:1"}, "REDIS_SENTINELS and REDIS_MASTER go together"),
    ({"REDIS_SENTINELS": "h1:1", "REDIS_MASTER": "m", "REDIS_URL": "redis://h/0"},
     "both set"),
    ({"REDIS_WAIT_REPLICAS": "-1"}, "REDIS_WAIT_REPLICAS"),
])
def test_a_wrong_redis_setting_is_one_line_naming_it_without_the_password(env, says):
    with pytest.raises(ConfigError) as raised:
        Config.from_env(env)
    assert says in str(raised.value) and "secret" not in str(raised.value)


# ----- a real Sentinel set -----------------------------------------------------------------
def test_settings_of_the_environment_reach_the_sentinel_sets_primary(sentinels):
    sentinel_list = sentinels.url.split("//")[1].split("/")[0]
    config = Config.from_env({"REDIS_SENTINELS": sentinel_list, "REDIS_MASTER": "referee"})
    store = Store.from_url(config.redis_url)
    assert store.ping()
    assert store.redis.info("replication")["role"] == "master"
    store.redis.close()


def test_a_write_that_must_not_be_lost_is_on_the_replica_when_it_returns(sentinels, caplog):
    store = Store.from_url(sentinels.url)
    (replica,) = [node for node in sentinels.nodes if node.address != sentinels.primary()]
    with caplog.at_level(logging.WARNING, "tournament.store.base"):
        assert store.durably(lambda: store.redis.set("durable", "1")) is True
    assert redis.Redis(port=replica.port).get("durable") == b"1"
    assert caplog.records == []
    store.redis.close()


def test_a_write_whose_primary_changed_under_it_is_written_again_on_the_new_one(sentinels):
    store = Store.from_url(sentinels.url)
    old = sentinels.primary()
    writes: list[tuple[str, int]] = []

    def write_then_fail_over() -> int:
        writes.append(sentinels.primary())
        answer = store.redis.incr("written")
        if len(writes) == 1:  # the Sentinels hand the primary role to the replica now
            sentinels.sentinels[0].client().sentinel_failover("referee")
            wait_new_primary(sentinels, old)
        return int(answer)

    assert store.durably(write_then_fail_over) == 2  # counted on the new one too
    assert writes[0] == old and writes[1] != old
    sentinels.wait_ready()
    store.redis.close()


def test_a_write_no_replica_acknowledges_stands_with_a_warning(sentinels, caplog):
    store = Store.from_url(sentinels.url)
    primary = sentinels.primary()
    (replica,) = [node for node in sentinels.nodes if node.address != primary]
    replica.stop()
    try:
        with caplog.at_level(logging.WARNING, "tournament.store.base"):
            assert store.durably(lambda: store.redis.set("alone", "1")) is True
        assert "0 of 1 replicas acknowledged it within 500 ms" in caplog.text
        assert store.redis.get("alone") == b"1"
    finally:
        replica.replica_of = primary
        replica.start()
        sentinels.wait_ready()
        store.redis.close()


def test_a_new_primary_has_every_script_from_the_first_connection_to_it(sentinels):
    primary = redis.Redis(*sentinels.primary())
    primary.script_flush()
    shas = [hashlib.sha1(source.encode()).hexdigest() for source in script_sources()]
    assert not any(primary.script_exists(*shas))
    client = connect(sentinels.url)
    assert client.ping()
    assert all(primary.script_exists(*shas))
    client.close()


def test_the_drivers_writer_takes_a_demoted_primarys_readonly_for_a_lost_connection(sentinels):
    """The drivers' pipelined connection (`StepWriter`) to a primary since demoted, which
    kept its clients: READONLY is no answer of the command's own (that would fail the
    match) but a lost connection, as redis-py's own Sentinel connection has it; the call
    made again (`driver.Context.persist`) goes to the primary the Sentinels name."""
    primary = sentinels.primary()
    (replica,) = [node.address for node in sentinels.nodes if node.address != primary]

    async def write_on_the_replica_then_again() -> tuple[BaseException | None, int, tuple]:
        client = connect_async(sentinels.url)
        pool = client.connection_pool
        stale = await pool.get_connection()  # the pool's next connection, on the replica
        await stale.disconnect()
        await stale.connect_to(replica)
        await pool.release(stale)
        writer = StepWriter(client)
        lost = None
        try:
            await writer.call(resp(["INCR", "writer:demoted"]))
        except redis.ConnectionError as error:
            lost = error
        answer = await writer.call(resp(["INCR", "writer:demoted"]))
        again = writer.link.connection if writer.link else None
        await client.aclose()
        return lost, answer, (again.host, again.port) if again else ()

    lost, answer, again = asyncio.run(write_on_the_replica_then_again())
    assert isinstance(lost, redis.ConnectionError) and "now a slave" in str(lost)
    assert again == primary and answer == int(redis.Redis(*primary).get("writer:demoted"))
