"""The referee's side of the push bot protocol (design.md section 4, a public contract).

One `BotClient` per seat of a match keeps one keep-alive HTTP/1.1 connection to the bot
and sends its decisions over it, on asyncio: a worker drives many matches in one process,
and a bot that thinks holds a coroutine, not a thread.

The client owns its socket (asyncio streams), writes its requests itself (one write: a
fixed head, the signature, the body) and reads the answers with httptools (the llhttp
parser of uvicorn, a C library). That is what makes its promises hold whatever the bot
does:
- the deadline covers the whole exchange (name lookup, connect, send, status line,
  headers, `100 Continue`s, body): a decision never lasts longer than its deadline plus
  the event loop's latency;
- the address actually connected to is checked against the allowlist
  (`referee.match.urls.address_allowed`) after the name is resolved, so neither a URL that
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

import httptools
import orjson
from urllib3.util import parse_url

from referee.errors import RefereeError
from referee.match.signing import signature_header
from referee.match.urls import DEFAULT_BOT_HOSTS, address_allowed

PROTOCOL = "referee/1"
RAW_LIMIT = 2000
MAX_REPLY_BYTES = 1 << 20
MAX_HEADER_BYTES = 16384
DEFAULT_DEADLINE_MS = 2000
"""A push bot's time per decision when its match or tournament names none."""
NOTICE_DEADLINE_MS = DEFAULT_DEADLINE_MS
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


class _Refused(RefereeError):
    """The exchange failed for a reason the bot is answerable for (a `crash`)."""


class _TooLarge(RefereeError):
    """The reply body exceeded MAX_REPLY_BYTES."""


class _Answer:
    """httptools' callbacks for one answer: its status, its size-capped body, whether the
    connection may be kept; `100 Continue` and other 1xx answers are passed over."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.chunks: list[bytes] = []
        self.size = 0
        self.head_bytes = 0
        self.headers_done = False
        self.done = False
        self.keep_alive = False

    def on_header(self, name: bytes, value: bytes) -> None:
        self.head_bytes += len(name) + len(value)
        if self.head_bytes > MAX_HEADER_BYTES:
            raise _Refused(f"the answer's headers exceed {MAX_HEADER_BYTES} bytes")

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.headers_done = not 100 <= self.status < 200

    def on_body(self, body: bytes) -> None:
        self.size += len(body)
        if self.size > MAX_REPLY_BYTES:
            raise _TooLarge
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        if 100 <= self.status < 200:
            self.head_bytes = 0  # an interim answer: the final one follows
            return
        self.done = True
        self.keep_alive = self.parser.should_keep_alive()

    def feed(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserCallbackError as error:
            raise error.__context__ or _Refused(str(error)) from None
        except httptools.HttpParserError as error:
            raise _Refused(f"not an HTTP answer: {error}") from None

    def end_of_stream(self) -> None:
        """The bot closed the connection: the end of a body it delimits by closing."""
        if not self.headers_done:
            raise _Refused("the bot closed the connection without a whole answer")
        if not self.done:
            self.done = True  # no length given: the body ran to the end of the connection


@dataclass
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    def usable(self) -> bool:
        """Still open (the bot may have closed it since the last answer)."""
        return not self.writer.is_closing() and not self.reader.at_eof()

    def close(self) -> None:
        self.writer.close()


class BotClient:
    """Sends one seat's decisions to a bot's URL; one kept-alive connection at a time."""

    def __init__(self, url: str, deadline_ms: int = DEFAULT_DEADLINE_MS, secret: str = "",
                 allowlist: tuple[str, ...] = tuple(DEFAULT_BOT_HOSTS.split(","))):
        self.url = url
        self.deadline_ms = deadline_ms
        self.secret = secret
        self.allowlist = allowlist
        parts = parse_url(url)
        self.scheme = parts.scheme or "http"
        self.host = (parts.host or "").strip("[]")
        self.port = parts.port or (443 if self.scheme == "https" else 80)
        target, host = parts.request_uri, parts.netloc or self.host
        if any(not 0x20 < ord(char) < 0x7f for char in target + host):
            raise ValueError(f"not a bot URL the referee can write in a request: {url!r}")
        self.head = (f"POST {target} HTTP/1.1\r\nHost: {host}\r\nContent-Type: "
                     "application/json\r\nAccept: application/json\r\n").encode()
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
        except (_Refused, OSError, ssl.SSLError, ValueError) as error:
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
        except (TimeoutError, _TooLarge, _Refused, OSError, ssl.SSLError, ValueError):
            self._drop()

    async def aclose(self) -> None:
        self._drop()

    async def _exchange(self, body: bytes) -> tuple[int, bytes]:
        """One request and its whole answer; a kept connection that turns out closed by
        the bot before answering anything is replaced once by a new one."""
        connection = self.connection
        reused = connection is not None and connection.usable()
        if connection is None or not reused:
            self._drop()
            connection = self.connection = await self._connect()
        try:
            return await self._roundtrip(connection, body)
        except _Refused:
            if not reused:
                raise
            self._drop()
            self.connection = await self._connect()
            return await self._roundtrip(self.connection, body)

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        addresses = await loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        refused: list[str] = []
        for family, kind, proto, _, address in addresses:
            if not address_allowed(str(address[0]), self.allowlist):
                refused.append(str(address[0]))
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
            return _Connection(reader, writer)
        if refused:
            raise _Refused(f"{self.host} resolves to {', '.join(refused)}, not in the bot "
                           "host allowlist (REFEREE_BOT_HOSTS)")
        raise _Refused(f"could not connect to {self.host} port {self.port}")

    async def _roundtrip(self, connection: _Connection, body: bytes) -> tuple[int, bytes]:
        head = self.head + b"Content-Length: %d\r\n" % len(body)
        if self.secret:
            head += (f"Referee-Signature: "
                     f"{signature_header(self.secret, body, int(time.time()))}\r\n").encode()
        connection.writer.write(head + b"\r\n" + body)
        answer = _Answer()
        while not answer.done:
            data = await connection.reader.read(_CHUNK)
            if not data:
                answer.end_of_stream()
                break
            answer.feed(data)
        if not answer.keep_alive:
            self._drop()
        return answer.status, b"".join(answer.chunks)

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
