"""Connecting to the configured Redis, the one place every process does it: the Redis a
`redis://` URL names, or the primary a Sentinel set names (`redis+sentinel://...`, read by
`referee.config.redis_target`), with a synchronous client (`connect`: the API's store, rq,
the streams) or an asyncio one (`connect_async`: the drivers' `Progress`).

What a failover needs of a client, every client gets:
- with Sentinel, every new connection asks the Sentinels for the primary first (redis-py's
  `SentinelConnectionPool`); a connection still open to a primary that was demoted answers
  READONLY, which redis-py turns into a ConnectionError and a new connection; a command
  retried on a connection made again asks them too (`_SentinelConnection`);
- `retrying(...)`: a client that retries retries ConnectionError, TimeoutError and
  ReadOnlyError (`FAILOVER_ERRORS`), with backoff, on a new connection;
- a dead or cut-off primary is noticed within seconds however a connection waits
  (`KEEPALIVE`: TCP keepalive probes and a user timeout; a connect gives up after
  `CONNECT_TIMEOUT_S`), not after the socket timeout of a blocking command;
- every connection loads the referee's Lua scripts as it connects (`_load_scripts`): a new
  primary has none of them cached, and redis-py reloads a script that Redis lacks only when
  it is called on its own, not in a pipeline that redis-py retried on a new connection.

The client also carries what its URL says of the writes that must not be lost
(`RedisTarget.wait_replicas`): `Store.durably` reads it (`target_of`).
"""

from __future__ import annotations

import functools
import socket
from typing import Any, cast
from urllib.parse import urlsplit

import redis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry as AsyncRetry
from redis.asyncio.sentinel import Sentinel as AsyncSentinel
from redis.asyncio.sentinel import SentinelConnectionPool as AsyncSentinelPool
from redis.asyncio.sentinel import SentinelManagedConnection as AsyncSentinelConnection
from redis.backoff import ExponentialBackoff
from redis.retry import Retry
from redis.sentinel import Sentinel, SentinelConnectionPool, SentinelManagedConnection

from referee.config import RedisTarget, redis_target
from tournament.store.scripts import Scripts

FAILOVER_ERRORS: tuple[type[redis.RedisError], ...] = (
    redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError)
CONNECT_TIMEOUT_S = 1.0
SENTINEL_TIMEOUT_S = 1.0
# A peer that stops answering is given up after about 5 s: 2 s idle, then 3 probes 1 s
# apart; data sent and not acknowledged for 5 s gives the connection up too.
KEEPALIVE = {option: value for name, value in (("TCP_KEEPIDLE", 2), ("TCP_KEEPINTVL", 1),
                                               ("TCP_KEEPCNT", 3), ("TCP_USER_TIMEOUT", 5000))
             if (option := getattr(socket, name, None)) is not None}


class Client(redis.Redis):
    """A synchronous client of the configured Redis (`connect`)."""

    target: RedisTarget = RedisTarget()
    sentinels: Sentinel | None = None  # the Sentinels' clients, closed with it

    def close(self) -> None:
        super().close()
        if self.sentinels is not None:
            self.sentinels.close()


class AsyncClient(aioredis.Redis):
    """An asyncio client of the configured Redis (`connect_async`)."""

    sentinels: AsyncSentinel | None = None  # the Sentinels' clients, closed with it

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        await super().aclose(close_connection_pool)
        if self.sentinels is not None:
            await self.sentinels.aclose()


class _SentinelConnection(SentinelManagedConnection):
    """redis-py's connection to the primary the Sentinels name, asking them again also when
    it reconnects to send a command (redis-py 8 reconnects there to the address it had: a
    command retried after the primary was cut off went on trying the old one)."""

    def connect_check_health(self, check_health: bool = True,
                             retry_socket_connect: bool = True) -> None:
        if self._sock is None and retry_socket_connect:  # not from `connect_to`
            self.host, self.port = self.connection_pool.get_master_address()
        super().connect_check_health(check_health, retry_socket_connect)


class _AsyncSentinelConnection(AsyncSentinelConnection):
    """`_SentinelConnection` for asyncio."""

    async def connect_check_health(self, check_health: bool = True,
                                   retry_socket_connect: bool = True) -> None:
        if not self.is_connected and retry_socket_connect:
            self.host, self.port = await self.connection_pool.get_master_address()
        await super().connect_check_health(check_health, retry_socket_connect)


class _BlockingSentinelPool(SentinelConnectionPool, redis.BlockingConnectionPool):
    """The primary's connections through the Sentinels, at most `max_connections`: past
    them a command waits for a free one (up to `timeout`), as `redis.BlockingConnectionPool`
    does."""


def retrying(retries: int, cap_s: float, base_s: float = 0.05) -> Retry:
    """`retries` more tries on a failover error, exponential backoff up to `cap_s`."""
    return Retry(ExponentialBackoff(cap=cap_s, base=base_s), retries,
                 supported_errors=FAILOVER_ERRORS)


def retrying_async(retries: int, cap_s: float, base_s: float = 0.05) -> AsyncRetry:
    """`retrying` for an asyncio client."""
    return AsyncRetry(ExponentialBackoff(cap=cap_s, base=base_s), retries,
                      supported_errors=FAILOVER_ERRORS)


def connect(url: str, *, max_connections: int | None = None, pool_wait_s: float | None = None,
            socket_timeout: float | None = None, retry: Retry | None = None) -> Client:
    """A synchronous client of what `url` names. `max_connections`: at most that many
    connections, a command waiting up to `pool_wait_s` for a free one; `socket_timeout`:
    how long a reply may take (None: as long as it takes, e.g. rq sets its own);
    `retry`: how a failover error is retried (`retrying`; None: not at all)."""
    target = redis_target(url)
    options: dict[str, Any] = {
        "socket_timeout": socket_timeout, "socket_connect_timeout": CONNECT_TIMEOUT_S,
        **_keepalive(target), "redis_connect_func": _load_scripts,
        "retry": retry or Retry(ExponentialBackoff(), 0)}
    if max_connections is not None:
        options |= {"max_connections": max_connections, "timeout": pool_wait_s}
    if not target.sentinels:
        pool_class = redis.ConnectionPool if max_connections is None else \
            redis.BlockingConnectionPool
        client = cast(Client, Client.from_pool(pool_class.from_url(target.url, **options)))
    else:
        sentinel = Sentinel(target.sentinels, sentinel_kwargs=_sentinel_options())
        client = cast(Client, sentinel.master_for(
            target.master, redis_class=Client,
            connection_pool_class=SentinelConnectionPool if max_connections is None
            else _BlockingSentinelPool, connection_class=_SentinelConnection,
            db=target.db, username=target.username, password=target.password, **options))
        client.sentinels = sentinel
    client.target = target
    return client


def connect_async(url: str, *, retry: AsyncRetry | None = None) -> AsyncClient:
    """An asyncio client of what `url` names (no socket timeout: a reply takes as long as
    it takes; a dead peer is noticed by `KEEPALIVE`); `retry` as `connect`'s."""
    target = redis_target(url)
    options: dict[str, Any] = {
        "socket_timeout": None,  # redis-py's default is 5 s: a task and a timer per write
        "socket_connect_timeout": CONNECT_TIMEOUT_S, **_keepalive(target),
        "redis_connect_func": _load_scripts_async,
        "retry": retry or AsyncRetry(ExponentialBackoff(), 0)}
    if not target.sentinels:
        return cast(AsyncClient, AsyncClient.from_pool(
            aioredis.ConnectionPool.from_url(target.url, **options)))
    sentinel = AsyncSentinel(target.sentinels, sentinel_kwargs=_sentinel_options())
    client = cast(AsyncClient, sentinel.master_for(
        target.master, redis_class=AsyncClient, connection_pool_class=AsyncSentinelPool,
        connection_class=_AsyncSentinelConnection, db=target.db, username=target.username,
        password=target.password, **options))
    client.sentinels = sentinel
    return client


def target_of(client: redis.Redis) -> RedisTarget:
    """What the URL of a client made here says (a client made otherwise: a plain Redis,
    no write waits for a replica)."""
    return client.target if isinstance(client, Client) else RedisTarget()


def ask_sentinels(client: redis.Redis) -> bool:
    """Have a client of a Sentinel set ask the Sentinels for the primary now, so that its
    next command goes there (its idle connections to another are closed); False, doing
    nothing, for a client of one Redis."""
    pool = client.connection_pool
    if not isinstance(pool, SentinelConnectionPool):
        return False
    pool.get_master_address()
    return True


def _keepalive(target: RedisTarget) -> dict[str, Any]:
    """TCP keepalive for a connection over TCP; none for a unix socket (`unix://`), whose
    peer is on this machine: a Redis that dies closes it at once."""
    if not target.sentinels and urlsplit(target.url).scheme == "unix":
        return {}
    return {"socket_keepalive": True, "socket_keepalive_options": KEEPALIVE}


def _sentinel_options() -> dict[str, Any]:
    """How the Sentinels themselves are asked (quickly: they are a few, on a near network)."""
    return {"socket_timeout": SENTINEL_TIMEOUT_S, "socket_connect_timeout": SENTINEL_TIMEOUT_S}


@functools.cache
def script_sources() -> tuple[str, ...]:
    """Every script `Scripts` registers (a client that never connects computes the SHA1s)."""
    return tuple(script.script for script in vars(Scripts(redis.Redis().register_script)
                                                   ).values())


def _load_scripts(connection: redis.connection.Connection) -> None:
    """What a new connection does (redis-py's `on_connect`), then load every script, in
    one round trip."""
    connection.on_connect()
    sources = script_sources()
    connection.send_packed_command(connection.pack_commands(
        [("SCRIPT", "LOAD", source) for source in sources]))
    for _ in sources:
        connection.read_response()


async def _load_scripts_async(connection: aioredis.connection.Connection) -> None:
    """`_load_scripts` for an asyncio connection."""
    await connection.on_connect()
    sources = script_sources()
    await connection.send_packed_command(connection.pack_commands(
        [("SCRIPT", "LOAD", source) for source in sources]))
    for _ in sources:
        await connection.read_response()
