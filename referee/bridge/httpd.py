"""A small HTTP/1.1 server on asyncio streams: what the bridge needs and nothing more.

Keep-alive connections (the referee reuses one per bot), `Content-Length` bodies (no chunked
uploads: 411), `Expect: 100-continue`, and every answer in one write (asyncio sets
TCP_NODELAY). Bounded everywhere a client could make it grow: the head, the body, the time
a request may take to arrive and a connection may stay idle.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus

import orjson

from referee.errors import RefereeError

log = logging.getLogger(__name__)

MAX_HEAD_BYTES = 64 * 1024
MAX_BODY_BYTES = 8 * 1024 * 1024
IDLE_TIMEOUT_S = 120.0
BODY_TIMEOUT_S = 30.0


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Request], Awaitable[Response]]


class HttpError(RefereeError):
    """The request cannot be read; answered with `status` and the connection closed."""

    def __init__(self, status: int, detail: str):
        super().__init__(detail)
        self.status = status


class HttpServer:
    """A listening server and its open connections, all closed by `close`."""

    def __init__(self, handler: Handler):
        self.handler = handler
        self.server: asyncio.Server | None = None
        self.connections: set[asyncio.Task] = set()

    async def start(self, host: str, port: int) -> int:
        """Listen on host:port (port 0: a free one); the port bound."""
        self.server = await asyncio.start_server(self._connection, host, port,
                                                 limit=MAX_HEAD_BYTES)
        return self.server.sockets[0].getsockname()[1]

    def stop_listening(self) -> None:
        if self.server:
            self.server.close()

    async def close(self) -> None:
        """Stop listening and end every connection (kept-alive ones wait for a request)."""
        self.stop_listening()
        for task in self.connections:
            task.cancel()
        await asyncio.gather(*self.connections, return_exceptions=True)

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None  # a connection is served in a task of its own
        self.connections.add(task)
        try:
            await serve_connection(reader, writer, self.handler)
        finally:
            self.connections.discard(task)


async def serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                           handler: Handler) -> None:
    """Answer the requests of one connection in order until it closes or goes idle."""
    try:
        while True:
            try:
                request = await read_request(reader, writer)
            except HttpError as error:
                writer.write(encode(Response(error.status, _error_body(str(error))), False))
                await writer.drain()
                return
            if request is None:
                return
            keep_alive = _keeps_alive(request)
            response = await _answer(handler, request)
            writer.write(encode(response, keep_alive))
            await writer.drain()
            if not keep_alive:
                return
    except (ConnectionError, TimeoutError, asyncio.IncompleteReadError):
        return
    finally:
        writer.close()


async def read_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter
                       ) -> Request | None:
    """The next request on the connection; None when the client closed it between requests."""
    try:
        async with asyncio.timeout(IDLE_TIMEOUT_S):  # no task per request, unlike wait_for
            head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as error:
        if error.partial.strip():
            raise HttpError(400, "the request ended inside its head") from None
        return None
    except asyncio.LimitOverrunError:
        raise HttpError(431, f"the request head is larger than {MAX_HEAD_BYTES} bytes") from None
    method, path, version, headers = parse_head(head)
    length = content_length(headers)
    if headers.get("expect", "").lower() == "100-continue" and version == "HTTP/1.1":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    body = b""
    if length:
        async with asyncio.timeout(BODY_TIMEOUT_S):
            body = await reader.readexactly(length)
    headers[":version"] = version
    return Request(method, path, headers, body)


def parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    """(method, path, version, headers) of a request head; HttpError when it is not HTTP/1."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or parts[2] not in ("HTTP/1.0", "HTTP/1.1"):
        raise HttpError(400, "the request line is not `METHOD PATH HTTP/1.1`")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise HttpError(400, f"malformed header line {line[:60]!r}")
        headers[name.strip().lower()] = value.strip()
    return parts[0], parts[1], parts[2], headers


def content_length(headers: dict[str, str]) -> int:
    if "transfer-encoding" in headers:
        raise HttpError(411, "send the body with a Content-Length (chunked uploads are not "
                             "supported)")
    value = headers.get("content-length", "0")
    if not (value.isascii() and value.isdigit()) or len(value) > 12:
        raise HttpError(400, f"bad Content-Length {value[:20]!r}")
    if int(value) > MAX_BODY_BYTES:
        raise HttpError(413, f"the body is larger than {MAX_BODY_BYTES} bytes")
    return int(value)


def encode(response: Response, keep_alive: bool) -> bytes:
    """Status line, headers and body as one buffer (sent in one write)."""
    try:
        reason = HTTPStatus(response.status).phrase
    except ValueError:
        reason = "Unknown"
    lines = [f"HTTP/1.1 {response.status} {reason}",
             f"Content-Type: {response.content_type}",
             f"Content-Length: {len(response.body)}"]
    lines += [f"{name}: {value}" for name, value in response.headers.items()]
    if not keep_alive:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + response.body


def _keeps_alive(request: Request) -> bool:
    connection = request.headers.get("connection", "").lower()
    if request.headers.get(":version") == "HTTP/1.0":
        return connection == "keep-alive"
    return connection != "close"


async def _answer(handler: Handler, request: Request) -> Response:
    """The handler's response; a bug in it becomes a 500, never a dead server."""
    try:
        return await handler(request)
    except Exception:
        log.exception("the bridge failed on %s %s", request.method, request.path)
        return Response(500, _error_body("the bridge failed on this request (see its log)"))


def _error_body(detail: str) -> bytes:
    return orjson.dumps({"error": detail})
