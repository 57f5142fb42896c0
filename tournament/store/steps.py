"""The drivers' script calls, pipelined on one connection (`StepWriter`).

A step is one script call (`Progress.record`), the only Redis command of a decision, and a
match's load, lease, start, bot slots and end are a few more. Sent through redis-py's
client, each costs the worker ~0.2 ms of CPU (a connection taken from the pool and
checked, the command encoded in Python, retries and metrics hooks around it), several times
the round trip itself. The writer keeps one connection of the client's pool for every match
the process drives, writes each call packed by hiredis (`resp`), and sends the calls of
every match made in the same turn of the event loop in one write, reading their answers in
order; a call's commands (a MULTI/EXEC, a lease renewed per match) go out together.

What the client's connections promise holds for this one: it is one of the pool's (with
Sentinel, connected to the primary the Sentinels name; READONLY from a demoted primary is
a ConnectionError), and any error of the connection drops it (closed and handed back to
the pool) and fails every call in flight with that error, which the caller retries
(`driver.Context.persist`) on a new one; a script Redis does not have answers
`NoScriptError` to its caller alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import hiredis
import redis.asyncio as aioredis
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

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
        self.connection: AbstractConnection | None = None
        # each call: its packed commands, how many replies it answers as a list (None: it
        # answers its one reply), its answer
        self.waiting: list[tuple[bytes, int | None, asyncio.Future[Any]]] = []
        self.sending = False  # a batch is being written or its replies read

    async def call(self, command: bytes) -> Any:
        """Send a packed command (`resp`) and answer its reply; an error reply raises. The
        caller that finds the connection idle sends what waits itself (no task for a match
        alone); calls made meanwhile are sent next, by a task."""
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
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting.append((commands, replies, answer))
        if not self.sending:
            try:
                await self._send_waiting()
            except BaseException:  # cancelled: the call fails with the others in the batch
                answer.exception()
                raise
            finally:
                if self.waiting:
                    self.sending = True
                    asyncio.ensure_future(self._pump())
        return await answer

    async def _pump(self) -> None:
        """Send what waits until nothing does (a failed batch has failed its own calls)."""
        while self.waiting:
            await self._send_waiting()

    async def _send_waiting(self) -> None:
        """Send what waits, in one write, and hand out the replies (or the error that broke
        the connection to every call of the batch)."""
        batch, self.waiting, self.sending = self.waiting, [], True
        try:
            connection = await self._connection()
            await connection.send_packed_command(b"".join(c for c, _, _ in batch),
                                                 check_health=False)
            for _, count, answer in batch:
                if count is None:
                    reply = await self._reply(connection)
                    if not answer.done():
                        _settle(answer, reply)
                else:
                    replies = [await self._reply(connection) for _ in range(count)]
                    if not answer.done():
                        answer.set_result(replies)
        except BaseException as error:
            failure = error if isinstance(error, Exception) else RedisConnectionError(
                "the step writer was stopped")
            for _, _, answer in batch:
                if not answer.done():
                    answer.set_exception(failure)
            await self._drop()
            if not isinstance(error, Exception):
                raise
        finally:
            self.sending = False

    @staticmethod
    async def _reply(connection: AbstractConnection) -> Any:
        try:
            return await connection.read_response()
        except ResponseError as error:  # this command's error reply; the others follow
            return error

    async def _connection(self) -> AbstractConnection:
        if self.connection is None:
            self.connection = await self.pool.get_connection()
        return self.connection

    async def _drop(self) -> None:
        connection, self.connection = self.connection, None
        if connection is not None:
            await connection.disconnect()
            await self.pool.release(connection)


def _settle(answer: asyncio.Future[Any], reply: Any) -> None:
    if isinstance(reply, ResponseError):
        answer.set_exception(reply)
    else:
        answer.set_result(reply)
