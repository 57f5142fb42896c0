"""The shared redis-server fixture is a real server that keeps data."""

import redis


def test_redis_server_is_real_and_flushed_per_test(redis_url):
    client = redis.Redis.from_url(redis_url)
    assert client.dbsize() == 0
    client.set("probe", "1")
    assert client.get("probe") == b"1"
    assert client.info("server")["redis_version"]
