"""The referee's side of the push bot protocol (design.md section 4, a public contract).

One `BotClient` per seat of a match keeps one keep-alive HTTP/1.1 connection to the bot
and sends its decisions over it, on asyncio: a worker drives many matches in one process,
and a bot that thinks holds a coroutine, not a thread.

The client owns its socket (asyncio streams) and uses h11, the well-kept sans-I/O HTTP/1.1
parser, for the bytes. That is what makes its promises hold whatever the bot does:
- the deadline covers the whole exchange (name lookup, connect, send, status line,
  headers, `100 Continue`s, body): a decision never lasts longer than its deadline plus
  the event loop's latency;
- the address actually connected to is checked against the allowlist
  (`referee.config.address_allowed`) after the name is resolved, so neither a URL that
  parses differently elsewhere nor a name that later resolves to another address reaches
  a host off the list; redirects are never followed (a 3xx is a `crash`);
- headers are capped at 16 KiB and the body at `MAX_REPLY_BYTES`.
`decide` never raises for anything the bot does: every failure becomes a `BotReply` with a
fault code the runner's failure policy understands.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from dataclasses import dataclass

import h11
import orjson
from urllib3.util import parse_url

from .config import DEFAULT_BOT_HOSTS, address_allowed
from .signing import signature_header

PROTOCOL = "referee/1"
RAW_LIMIT = 2000
MAX_REPLY_BYTES = 1 << 20
MAX_HEADER_BYTES = 16384
NOTICE_DEADLINE_MS = 2000
_CHUNK = 65536


class Fault:
    """The fault codes of the bot protocol, as recorded in replays."""

    TIMEOUT = "timeout"
    CRASH = "crash"
    MALFORMED = "malformed"
    ILLEGAL = "illegal"
    ALL = (TIMEOUT, CRASH, MALFORMED, ILLEGAL)


@dataclass
class BotReply:
    """What a bot answered to one decision, or why it gave no usable answer."""

    action: dict | None
    fault: str | None
    raw: str
    elapsed_ms: float
    detail: str = ""


class _Refused(Exception):
    """The exchange failed for a reason the bot is answerable for (a `crash`)."""


class _TooLarge(Exception):
    """The reply body exceeded MAX_REPLY_BYTES."""


@dataclass
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    http: h11.Connection

    def usable(self) -> bool:
        """Still open, and idle between two exchanges (the bot may have closed it meanwhile)."""
        return (not self.writer.is_closing() and not self.reader.at_eof()
                and self.http.our_state is h11.IDLE)

    def close(self) -> None:
        self.writer.close()


class BotClient:
    """Sends one seat's decisions to a bot's URL; one kept-alive connection at a time."""

    def __init__(self, url: str, deadline_ms: int = 2000, secret: str = "",
                 allowlist: tuple[str, ...] = tuple(DEFAULT_BOT_HOSTS.split(","))):
        self.url = url
        self.deadline_ms = deadline_ms
        self.secret = secret
        self.allowlist = allowlist
        parts = parse_url(url)
        self.scheme = parts.scheme or "http"
        self.host = (parts.host or "").strip("[]")
        self.port = parts.port or (443 if self.scheme == "https" else 80)
        self.target = parts.request_uri
        self.host_header = parts.netloc or self.host
        self.connection: _Connection | None = None

    async def decide(self, payload: dict) -> BotReply:
        """POST one decision request; the reply is judged but the action is not checked
        against the rules (that is the runner's job, with the engine)."""
        body = orjson.dumps(payload)
        started = time.monotonic()
        try:
            async with asyncio.timeout(self.deadline_ms / 1000):
                status, raw = await self._exchange(body)
        except TimeoutError:
            self._drop()
            return _fault(Fault.TIMEOUT, "", started,
                          f"no complete answer within the deadline of {self.deadline_ms} ms")
        except _TooLarge:
            self._drop()
            return _fault(Fault.MALFORMED, "", started,
                          f"the answer is larger than {MAX_REPLY_BYTES} bytes")
        except (_Refused, OSError, h11.ProtocolError, ssl.SSLError, ValueError) as error:
            self._drop()
            return _fault(Fault.CRASH, "", started, f"connection error: {_short(error)}")
        text = raw.decode("utf-8", errors="replace")
        if status != 200:
            return _fault(Fault.CRASH, text, started, f"the bot answered HTTP {status}, not 200")
        return _judge_body(raw, text, started)

    async def notify(self, payload: dict, deadline_ms: int = NOTICE_DEADLINE_MS) -> None:
        """POST a message whose answer does not matter (the result notice): one try within
        a short deadline, every failure ignored."""
        try:
            async with asyncio.timeout(deadline_ms / 1000):
                await self._exchange(orjson.dumps(payload))
        except (TimeoutError, _TooLarge, _Refused, OSError, h11.ProtocolError, ssl.SSLError,
                ValueError):
            self._drop()

    async def aclose(self) -> None:
        self._drop()

    async def _exchange(self, body: bytes) -> tuple[int, bytes]:
        """One request and its whole answer; a kept connection that turns out closed by
        the bot before answering anything is replaced once by a new one."""
        reused = self.connection is not None and self.connection.usable()
        if not reused:
            self._drop()
            self.connection = await self._connect()
        try:
            return await self._roundtrip(self.connection, body)
        except _Refused:
            if not reused:
                raise
            self._drop()
            self.connection = await self._connect()
            return await self._roundtrip(self.connection, body)

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        addresses = await loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        refused = []
        for family, kind, proto, _, address in addresses:
            if not address_allowed(address[0], self.allowlist):
                refused.append(address[0])
                continue
            sock = socket.socket(family, kind, proto)
            sock.setblocking(False)
            try:
                await loop.sock_connect(sock, address)
            except OSError:
                sock.close()
                continue
            reader, writer = await asyncio.open_connection(
                sock=sock, limit=_CHUNK,
                ssl=ssl.create_default_context() if self.scheme == "https" else None,
                server_hostname=self.host if self.scheme == "https" else None)
            http = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEADER_BYTES)
            return _Connection(reader, writer, http)
        if refused:
            raise _Refused(f"{self.host} resolves to {', '.join(refused)}, not in the bot "
                           "host allowlist (REFEREE_BOT_HOSTS)")
        raise _Refused(f"could not connect to {self.host} port {self.port}")

    async def _roundtrip(self, connection: _Connection, body: bytes) -> tuple[int, bytes]:
        http = connection.http
        headers = [("Host", self.host_header), ("Content-Type", "application/json"),
                   ("Accept", "application/json"), ("Content-Length", str(len(body)))]
        if self.secret:
            headers.append(("Referee-Signature",
                            signature_header(self.secret, body, int(time.time()))))
        connection.writer.write(
            http.send(h11.Request(method="POST", target=self.target, headers=headers))
            + http.send(h11.Data(data=body)) + http.send(h11.EndOfMessage()))
        status, chunks, size, answered = 0, [], 0, False
        while True:
            event = http.next_event()
            if event is h11.NEED_DATA:
                data = await connection.reader.read(_CHUNK)
                if not data and not answered:
                    raise _Refused("the bot closed the connection without answering")
                http.receive_data(data)
            elif isinstance(event, h11.InformationalResponse):
                answered = True
            elif isinstance(event, h11.Response):
                status, answered = event.status_code, True
            elif isinstance(event, h11.Data):
                size += len(event.data)
                if size > MAX_REPLY_BYTES:
                    raise _TooLarge
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                self._recycle(connection)
                return status, b"".join(chunks)
            else:  # ConnectionClosed before the end of the answer
                raise _Refused("the bot closed the connection in the middle of its answer")

    def _recycle(self, connection: _Connection) -> None:
        """Keep the connection for the next decision when both sides allow it."""
        http = connection.http
        if http.our_state is h11.DONE and http.their_state is h11.DONE:
            http.start_next_cycle()
        else:
            self._drop()

    def _drop(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def _judge_body(raw: bytes, text: str, started: float) -> BotReply:
    """A well-formed answer is a JSON object whose "action" is a JSON object."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        return _fault(Fault.MALFORMED, text, started, f"the answer is not JSON: {error}")
    if not isinstance(data, dict) or not isinstance(data.get("action"), dict):
        return _fault(Fault.MALFORMED, text, started,
                      'the answer must be a JSON object with an "action" object')
    return BotReply(action=data["action"], fault=None, raw=text[:RAW_LIMIT],
                    elapsed_ms=elapsed_ms(started), detail="")


def _fault(code: str, text: str, started: float, detail: str) -> BotReply:
    return BotReply(action=None, fault=code, raw=text[:RAW_LIMIT],
                    elapsed_ms=elapsed_ms(started), detail=detail)


def elapsed_ms(started: float) -> float:
    """Milliseconds since `started` (a `time.monotonic()` reading), to the microsecond."""
    return round((time.monotonic() - started) * 1000, 3)


def _short(error: Exception) -> str:
    """The exception's class and first line."""
    message = str(error).split("\n")[0]
    return f"{type(error).__name__}: {message[:300]}"
