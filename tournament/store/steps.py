"""The drivers' script calls, pipelined on one connection (`StepWriter`).

A step is one script call (`Progress.record`), the only Redis command of a decision, and a
match's load, lease, start, bot slots and end are a few more. Sent through redis-py's
client, each costs the worker ~0.2 ms of CPU (a connection taken from the pool and
checked, the command encoded in Python, retries and metrics hooks around it), several times
the round trip itself. The writer keeps one connection of the client's pool for every match
the process drives, writes each call at once, packed by hiredis (`resp`), while the calls
before it still wait for their replies, and hands out the replies in order from the event
loop's read callback (`_Link`); a call's commands (a MULTI/EXEC, a lease renewed per match)
go out together.

What the client's connections promise holds for this one: it is one of the pool's (with
Sentinel, connected to the primary the Sentinels name; READONLY from a demoted primary is
a ConnectionError), and any error of the connection drops it (closed at once, handed back
to the pool by the next call) and fails every call in flight with that error, which the
caller retries (`driver.Context.persist`) on a new one; a script Redis does not have answers
`NoScriptError` to its caller alone.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from typing import Any

import hiredis
import redis.asyncio as aioredis
from redis._parsers import BaseParser
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.sentinel import SentinelManagedConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse, ReadOnlyError, ResponseError
from redis.sentinel import DEMOTED_MASTER_UNBLOCKED_ERROR

Argument = bytes | str | int


def resp(arguments: Sequence[Argument]) -> bytes:
    """A command in the Redis protocol (hiredis writes it: bytes as they are, str as UTF-8,
    int in decimal)."""
    # hiredis' stub types the tuple as one of a single argument
    return hiredis.pack_command(tuple(arguments))  # type: ignore[arg-type]


MULTI = resp(["MULTI"])
EXEC = resp(["EXEC"])


class StepWriter:
    """Commands of many coroutines on one kept connection, pipelined."""

    def __init__(self, client: aioredis.Redis):
        self.pool = client.connection_pool
        self.link: _Link | None = None
        self.connecting = asyncio.Lock()

    async def call(self, command: bytes) -> Any:
        """Send a packed command (`resp`) and answer its reply; an error reply raises."""
        return await self._call(command, None)

    async def call_each(self, commands: Sequence[bytes]) -> list[Any]:
        """Send packed commands one after the other, nothing of another call between them,
        and answer their replies in order, an error reply as its `ResponseError`."""
        return await self._call(b"".join(commands), len(commands))

    async def transaction(self, commands: Sequence[bytes]) -> list[Any]:
        """Run packed commands in one MULTI/EXEC and answer their replies (EXEC's); an
        error reply raises."""
        *_, replies = await self.call_each([MULTI, *commands, EXEC])
        if isinstance(replies, ResponseError):
            raise replies
        if errors := [reply for reply in replies if isinstance(reply, ResponseError)]:
            raise errors[0]
        return list(replies)

    async def _call(self, commands: bytes, replies: int | None) -> Any:
        link = self.link
        if link is None or link.broken is not None:
            link = await self._connect()
        return await link.send(commands, replies)

    async def _connect(self) -> _Link:
        """The live link, made on a connection of the pool (a broken one handed back)."""
        async with self.connecting:
            if self.link is not None and self.link.broken is not None:
                connection, self.link = self.link.connection, None
                try:
                    await connection.disconnect()
                finally:  # a close timed out or cancelled still leaves the pool's count right
                    await self.pool.release(connection)
            if self.link is None:
                self.link = _Link(await self.pool.get_connection())
            return self.link


class _Link(asyncio.Protocol):
    """A connection of the pool, its replies read by this protocol while the writer holds
    it: each chunk the event loop reads is parsed by hiredis at once and its replies handed
    to the calls waiting, in the order sent (no task, no stream reader, no redis-py parser
    in between: ~20 µs of CPU a call, docs/performance.md §10). The connection's own
    protocol still learns when the connection is lost, so redis-py closes it as its own.

    Any error of the connection breaks the link: every call in flight fails with it (the
    caller retries, `driver.Context.persist`) and the next call is sent on a new
    connection. As redis-py's Sentinel connection does, a primary demoted to a replica
    (READONLY, or the unblocking error of a failover) is a ConnectionError."""

    def __init__(self, connection: AbstractConnection):
        self.connection = connection
        self.transport = _transport_of(connection)
        self.stream_protocol = self.transport.get_protocol()
        self.reader = hiredis.Reader(**_reader_options(connection))
        self.demotion_fails = (isinstance(connection, SentinelManagedConnection)
                               and connection.connection_pool.is_master)
        self.calls: deque[_Call] = deque()
        self.broken: Exception | None = None
        self.loop = asyncio.get_running_loop()  # asked once: Python 3.11 asks getpid() each time
        self.transport.set_protocol(self)

    def send(self, commands: bytes, replies: int | None) -> asyncio.Future[Any]:
        """Write the commands at once; the future of their reply (or list of replies)."""
        answer: asyncio.Future[Any] = self.loop.create_future()
        if self.broken is not None:
            answer.set_exception(self.broken)
            return answer
        self.calls.append(_Call(answer, replies))
        self.transport.write(commands)
        return answer

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        try:
            while self.broken is None and (reply := self.reader.gets()) is not _MORE:
                self._hand_out(reply)
        except InvalidResponse as error:
            self._break(RedisConnectionError(f"not the Redis protocol: {error}"))

    def eof_received(self) -> None:
        self._break(RedisConnectionError("Connection closed by server."))

    def connection_lost(self, exc: Exception | None) -> None:
        self._break(RedisConnectionError(f"the connection to Redis was lost: {exc}"
                                         if exc else "Connection closed by server."))
        self.stream_protocol.connection_lost(exc)

    def _hand_out(self, reply: Any) -> None:
        if not self.calls:
            self._break(RedisConnectionError("a reply to no command"))
        elif self.demotion_fails and _demoted(reply):
            self._break(RedisConnectionError("The previous master is now a slave"))
        else:
            call = self.calls[0]
            if call.take(reply):
                self.calls.popleft()

    def _break(self, error: Exception) -> None:
        """Fail every call in flight, once; the transport closed."""
        if self.broken is None:
            self.broken = error
            while self.calls:
                self.calls.popleft().fail(error)
        self.transport.close()


class _Call:
    """A call in flight: its answer, and its replies so far when it answers a list."""

    __slots__ = ("answer", "count", "replies")

    def __init__(self, answer: asyncio.Future[Any], count: int | None):
        self.answer, self.count = answer, count
        self.replies: list[Any] = []

    def take(self, reply: Any) -> bool:
        """Take the next reply; True once the call is answered (a cancelled caller's
        replies are read and dropped)."""
        if self.count is None:
            if not self.answer.done():
                _settle(self.answer, reply)
            return True
        self.replies.append(reply)
        if len(self.replies) < self.count:
            return False
        if not self.answer.done():
            self.answer.set_result(self.replies)
        return True

    def fail(self, error: Exception) -> None:
        if not self.answer.done():
            self.answer.set_exception(error)


_MORE = object()  # hiredis' answer while a reply is not whole yet


def _transport_of(connection: AbstractConnection) -> asyncio.WriteTransport:
    """The connection's transport (redis-py keeps its streams private)."""
    writer = connection._writer
    assert writer is not None, "the pool hands out connected connections"
    return writer.transport


def _reader_options(connection: AbstractConnection) -> dict[str, Any]:
    """hiredis' reader as redis-py sets it up for the connection (`_AsyncHiredisParser`)."""
    options: dict[str, Any] = {"protocolError": InvalidResponse,
                               "replyError": BaseParser.parse_error, "notEnoughData": _MORE}
    if connection.encoder.decode_responses:
        options |= {"encoding": connection.encoder.encoding,
                    "errors": connection.encoder.encoding_errors}
    return options


def _demoted(reply: Any) -> bool:
    return isinstance(reply, ReadOnlyError) or (
        isinstance(reply, ResponseError)
        and str(reply).startswith(DEMOTED_MASTER_UNBLOCKED_ERROR))


def _settle(answer: asyncio.Future[Any], reply: Any) -> None:
    if isinstance(reply, ResponseError):
        answer.set_exception(reply)
    else:
        answer.set_result(reply)
