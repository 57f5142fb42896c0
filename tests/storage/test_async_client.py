"""The drivers' asyncio client (`connect_async`) sets no socket timeout: redis-py's default
(5 s) would wrap every write in a task with a timer and every read in a timeout."""

from __future__ import annotations

import asyncio

from tournament.store.connection import connect_async


def test_the_drivers_client_writes_and_reads_without_a_socket_timeout(redis_url):
    async def connection_timeout() -> object:
        client = connect_async(redis_url)
        try:
            assert await client.ping()
            connection = await client.connection_pool.get_connection()
            timeout = connection.socket_timeout
            await client.connection_pool.release(connection)
            return timeout
        finally:
            await client.aclose()

    assert asyncio.run(connection_timeout()) is None
