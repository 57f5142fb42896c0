"""The referee's side of the push bot protocol (design.md section 4, a public contract).

One `BotClient` per seat of a match keeps one keep-alive HTTP/1.1 connection to the bot
and sends its decisions over it, on asyncio: a worker drives many matches in one process,
and a bot that thinks holds a coroutine, not a thread.

The client owns its socket (asyncio streams), writes its requests itself (one write: a
fixed head, the signature, the body) and reads the answers with httptools (the llhttp
parser of uvicorn, a C library). That is what makes its promises hold whatever the bot
does:
- the deadline covers the whole exchange (send, status line, headers, `100 Continue`s,
  body), and name lookup and connect when a connection must be made (given at least
  `CONNECT_ALLOWANCE_MS`, never charged): a decision never lasts longer than its deadline
  (or that allowance) plus the event loop's latency;
- the address actually connected to is checked against the allowlist
  (`referee.match.urls.address_allowed`) after the name is resolved, so neither a URL that
  parses differently elsewhere nor a name that later resolves to another address reaches
  a host off the list; redirects are never followed (a 3xx is a `crash`);
- the deadline holds by when each chunk arrived, not when the loop read it, and the loop
  reads one chunk a turn: a bot that never stops sending cannot hold the event loop nor
  pass a late answer off as one in time;
- headers are capped at 16 KiB (`MAX_HEAD_WIRE_BYTES` on the wire, interim answers
  included), the body at `MAX_REPLY_BYTES`, the whole answer at `MAX_ANSWER_WIRE_BYTES`.
`decide` never raises for anything the bot does: every failure becomes a `BotReply` with a
fault code the runner's failure policy understands.

A worker's clients share their idle connections between matches (`KeptConnections`): a
seat's client that closes with its plain-HTTP connection open and idle hands it over, and
the next client to the same address takes it rather than connecting again.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import struct
import sys
import time
from collections import deque
from dataclasses import dataclass

import httptools
import orjson
from urllib3.util import parse_url

from referee.errors import RefereeError
from referee.match.signing import RequestSigner
from referee.match.urls import DEFAULT_BOT_HOSTS, address_allowed

PROTOCOL = "referee/1"
RAW_LIMIT = 2000
MAX_REPLY_BYTES = 1 << 20
MAX_HEADER_BYTES = 16384
MAX_HEAD_WIRE_BYTES = 2 * MAX_HEADER_BYTES
"""The bytes an answer may take on the wire before its final headers are whole (its status
lines, header lines and any interim `1xx` answers before them)."""
MAX_ANSWER_WIRE_BYTES = 2 * MAX_REPLY_BYTES
"""The bytes an answer may take on the wire in all, its framing included."""
DEFAULT_DEADLINE_MS = 2000
"""A push bot's time per decision when its match or tournament names none."""
NOTICE_DEADLINE_MS = DEFAULT_DEADLINE_MS
UPDATE_DEADLINE_MS = 1000
"""How long a bot may take to answer an update (any answer; it is ignored) before the
connection is dropped and the updates still queued are discarded."""
UPDATE_SETTLE_MS = 200
"""How long a decision waits for an update's answer still outstanding (see
`BotClient._settle_updates`)."""
CONNECT_ALLOWANCE_MS = 1000
"""How long connecting to a bot may take when its deadline is shorter: a connection is made
before the request is written, so its time is never charged (a short clock after a timeout
drops the connection must not turn a reconnect into another timeout)."""
MAX_DEBUG_BYTES = 4096
MAX_INFO_BYTES = 1024
LOG_NEW = "new"
"""An answer's `"log": "new"`: its bot keeps the observation's log, so its next decision
request may carry only the entries added since this one (and `log_from`, where they start)."""
_CHUNK = 65536
KEPT_IDLE_S = 1.0
"""How long an idle connection is kept between matches: short beside the keep-alive time of
HTTP servers (2 s and more), so a bot's server rarely closes one just as it is taken."""
KEPT_PER_ADDRESS = 64


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
    debug: str | None = None  # what the bot says of its thinking (issue 26), cut to 4 KiB
    info: dict | None = None  # e.g. {"depth": 7, "score": 0.31}, cut to 1 KiB of JSON
    debug_truncated: bool = False
    log_new: bool = False  # "log": "new": send the log's new entries only from now on


class _Refused(RefereeError):
    """The exchange failed for a reason the bot is answerable for (a `crash`)."""


class _TooLarge(RefereeError):
    """The reply exceeded MAX_REPLY_BYTES of body or MAX_ANSWER_WIRE_BYTES on the wire."""


class _TimedOut(RefereeError):
    """No whole answer within the deadline; `elapsed_ms` is what the seat is charged."""

    def __init__(self, elapsed_ms: float):
        super().__init__(f"{elapsed_ms:.3f} ms")
        self.elapsed_ms = round(elapsed_ms, 3)


class _Answer:
    """httptools' callbacks for one answer: its status, its size-capped body, whether the
    connection may be kept; `100 Continue` and other 1xx answers are passed over."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.chunks: list[bytes] = []
        self.size = 0
        self.head_bytes = 0
        self.wire_bytes = 0
        self.headers_done = False
        self.done = False
        self.keep_alive = False
        self.arrived_ns = 0

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
            raise _TooLarge(f"the answer is larger than {MAX_REPLY_BYTES} bytes")
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        if 100 <= self.status < 200:
            self.head_bytes = 0  # an interim answer: the final one follows
            return
        self.done = True
        self.keep_alive = self.parser.should_keep_alive()

    def feed(self, data: bytes) -> None:
        """Parse a chunk, within the wire's bounds: the parser keeps an unfinished header
        line by appending each chunk to it, so a line that never ends must be cut short by
        its bytes, not by its length once whole."""
        self.wire_bytes += len(data)
        if self.wire_bytes > MAX_ANSWER_WIRE_BYTES:
            raise _TooLarge(f"the answer is larger than {MAX_ANSWER_WIRE_BYTES} bytes on the "
                            "wire, its framing included")
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserCallbackError as error:
            raise error.__context__ or _Refused(str(error)) from None
        except httptools.HttpParserError as error:
            raise _Refused(f"not an HTTP answer: {error}") from None
        if not self.headers_done and self.wire_bytes > MAX_HEAD_WIRE_BYTES:
            raise _Refused(f"no final headers within the answer's first {MAX_HEAD_WIRE_BYTES} "
                           "bytes")

    def release(self) -> None:
        """Drop the parser: it holds this answer's callbacks, so the two would stay a
        reference cycle for the garbage collector to find (one per decision)."""
        del self.parser

    def take(self, data: bytes, arrived_ns: int) -> None:
        """One chunk read (b"": the bot closed the connection) and when it arrived."""
        self.arrived_ns = arrived_ns
        if data:
            self.feed(data)
        else:
            self.end_of_stream()

    def end_of_stream(self) -> None:
        """The bot closed the connection: the end of a body it delimits by closing."""
        if not self.headers_done:
            raise _Refused("the bot closed the connection without a whole answer")
        if not self.done:
            self.done = True  # no length given: the body ran to the end of the connection


class _Connection:
    """One connection to a bot: requests written, answers read with the time each chunk
    arrived. On plain TCP (Linux) that time is the kernel's receive timestamp
    (`SO_TIMESTAMPNS`): a chunk that arrived while the event loop was busy elsewhere is
    dated when it arrived, not when it was read, and a last drain after the deadline finds
    an answer that came in time. Under TLS (asyncio streams) it is when the chunk was read.

    The socket stays registered with the event loop while the connection lives (no epoll
    change per decision); what it reads is kept for the answer awaited, and anything it
    reads between an answer and the next request (a bot speaking out of turn, or closing)
    drops the connection, so the next request makes a new one."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.closed = False
        self.stamped = _enable_timestamps(sock)
        self.loop = asyncio.get_running_loop()  # asked once: Python 3.11 asks getpid() each time
        self.chunks: deque[tuple[bytes, int] | OSError] = deque()  # read, not taken yet
        self.waiter: asyncio.Future[None] | None = None
        self.expecting = False  # a request was written: what arrives is its answer
        self.sent_offset_ns = 0  # the clocks' offset at the last write (none yet: now's)
        self.loop.add_reader(sock.fileno(), self._on_readable)  # for the connection's life

    def usable(self) -> bool:
        """Still open (the bot may have closed it since the last answer)."""
        return not self.closed

    def idle(self) -> bool:
        """Open, its last answer whole and nothing read since: another client may use it."""
        return not self.closed and not self.expecting and not self.chunks

    async def send(self, data: bytes, deadline_ms: float) -> None:
        """Write a request: at once when the socket takes it whole (nearly always), else
        the rest within the deadline."""
        self.expecting = True
        self.sent_offset_ns = realtime_offset_ns()[1]
        try:
            sent = self.sock.send(data)
        except (BlockingIOError, InterruptedError):
            sent = 0
        if sent < len(data):
            async with asyncio.timeout(deadline_ms / 1000):
                await self.loop.sock_sendall(self.sock, memoryview(data)[sent:])

    async def recv(self, until: float) -> tuple[bytes, int]:
        """The next chunk (b"" once the bot closed) and when it arrived (monotonic ns);
        TimeoutError at `until` (the loop's time)."""
        while not self.chunks:
            if self.closed:
                return b"", time.monotonic_ns()
            self.waiter = self.loop.create_future()
            timer = self.loop.call_at(until, _time_out, self.waiter)
            try:
                await self.waiter
            finally:
                timer.cancel()
                self.waiter = None
        return self._take()

    def recv_nowait(self) -> tuple[bytes, int] | None:
        """A chunk already received, or None when there is none yet."""
        if not self.chunks:
            self._on_readable()
        return self._take() if self.chunks else None

    def answered(self) -> None:
        """The answer is whole: anything the bot sends before the next request is out of
        turn, and drops the connection."""
        self.expecting = False

    def _take(self) -> tuple[bytes, int]:
        chunk = self.chunks.popleft()
        if isinstance(chunk, OSError):
            raise chunk
        return chunk

    def _on_readable(self) -> None:
        """The event loop's callback: read one chunk of what arrived, for the answer
        awaited. One a turn of the loop: a bot that keeps sending holds neither the loop
        (the other matches, the deadline's timer) nor more memory than the chunks its
        answer is waiting to take."""
        if self.closed:
            return
        try:
            data, ancillary, _, _ = self.sock.recvmsg(_CHUNK, _ANCILLARY_BYTES)
        except (BlockingIOError, InterruptedError):
            pass
        except OSError as error:
            self.chunks.append(error)
            self._stop_reading()
        else:
            self.chunks.append((data, _arrival_ns(ancillary, self.sent_offset_ns)))
            if not data:
                self._stop_reading()
        if self.chunks and not self.expecting:
            self.close()  # out of turn, or closed between answers: a new connection next
        elif self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def _stop_reading(self) -> None:
        self.closed = True
        self.loop.remove_reader(self.sock.fileno())

    def close(self) -> None:
        if not self.closed:
            self._stop_reading()
        self.sock.close()


class _TlsConnection:
    """A connection to an https bot (asyncio streams): chunks dated when they are read."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self.loop = asyncio.get_running_loop()

    def usable(self) -> bool:
        return not self.writer.is_closing() and not self.reader.at_eof()

    async def send(self, data: bytes, deadline_ms: float) -> None:
        async with asyncio.timeout(deadline_ms / 1000):
            self.writer.write(data)
            await self.writer.drain()

    async def recv(self, until: float) -> tuple[bytes, int]:
        async with asyncio.timeout_at(until):
            data = await self.reader.read(_CHUNK)
        return data, time.monotonic_ns()

    def recv_nowait(self) -> tuple[bytes, int] | None:
        return None

    def answered(self) -> None:
        """Nothing to do: the next read is the next answer's."""

    def close(self) -> None:
        self.writer.close()


Address = tuple[str, str, int, tuple[str, ...]]
"""Where a connection goes: scheme, host, port, and the allowlist it was checked against."""


class KeptConnections:
    """The idle connections to bots that one event loop's matches hand over to each other:
    a worker playing many matches against a bot connects to it once, not at every seat of
    every match. A connection is kept only when idle (its last answer whole, nothing read
    since) and plain HTTP; one the bot closes while kept is dropped at once (its socket
    stays watched by the loop), and each is closed `idle_s` after it was handed over. The
    most recently kept is taken first."""

    def __init__(self, idle_s: float = KEPT_IDLE_S, per_address: int = KEPT_PER_ADDRESS):
        self.idle_s = idle_s
        self.per_address = per_address
        self.kept: dict[Address, list[tuple[_Connection, asyncio.TimerHandle]]] = {}

    def take(self, address: Address) -> _Connection | None:
        """A kept connection to `address` still open, or None."""
        kept = self.kept.pop(address, [])
        while kept:
            connection, expiry = kept.pop()
            expiry.cancel()
            if connection.usable():
                if kept:
                    self.kept[address] = kept
                return connection
            connection.close()
        return None

    def keep(self, address: Address, connection: _Connection | _TlsConnection) -> None:
        """Keep `connection` for the next client to `address` (closed when it is not idle,
        not plain HTTP, or `address` has `per_address` kept already)."""
        if (not isinstance(connection, _Connection) or not connection.idle()
                or len(self.kept.get(address, ())) >= self.per_address):
            connection.close()
            return
        expiry = connection.loop.call_later(self.idle_s, self._expire, address, connection)
        self.kept.setdefault(address, []).append((connection, expiry))

    def close(self) -> None:
        """Close every connection kept."""
        for kept in self.kept.values():
            for connection, expiry in kept:
                expiry.cancel()
                connection.close()
        self.kept.clear()

    def _expire(self, address: Address, connection: _Connection) -> None:
        kept = self.kept.get(address, [])
        for index, (candidate, _) in enumerate(kept):
            if candidate is connection:
                del kept[index]
                break
        if not kept:
            self.kept.pop(address, None)
        connection.close()


def _in_time(chunk: tuple[bytes, int], late_ns: int) -> tuple[bytes, int]:
    """A chunk read and when it arrived; TimeoutError when that was after `late_ns`: the
    deadline holds by the chunks' arrival, so a bot that keeps its socket readable (the
    deadline's timer then never finds the wait pending) is still cut off at its deadline."""
    if chunk[1] > late_ns:
        raise TimeoutError
    return chunk


def _time_out(waiter: asyncio.Future[None]) -> None:
    """The deadline's callback: a wait over meanwhile is left as it is."""
    if not waiter.done():
        waiter.set_exception(TimeoutError())


# Linux's SO_TIMESTAMPNS (the socket module does not name it) and its control message: a
# struct timespec of CLOCK_REALTIME.
_SO_TIMESTAMPNS = 35
_TIMESPEC = struct.Struct("@qq")
_ANCILLARY_BYTES = socket.CMSG_SPACE(_TIMESPEC.size)


def _enable_timestamps(sock: socket.socket) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
    except OSError:
        return False
    return True


def _arrival_ns(ancillary: list[tuple[int, int, bytes]], sent_offset_ns: int) -> int:
    """When a chunk arrived, on the monotonic clock: its kernel receive timestamp when
    there is one, else now. The timestamp is CLOCK_REALTIME's, which a clock step (NTP, a
    virtual machine resumed) moves against the monotonic clock: converted with the larger
    of the offsets at the request's write and now, a step between them makes the answer
    early by the step, never late (the seat is not charged for the machine's clock)."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(data) >= 16:
            seconds, nanos = _TIMESPEC.unpack_from(data)
            now_mono, offset = realtime_offset_ns()
            return min(seconds * 1_000_000_000 + nanos - max(offset, sent_offset_ns),
                       now_mono)
    return time.monotonic_ns()


def realtime_offset_ns() -> tuple[int, int]:
    """(monotonic now, CLOCK_REALTIME - CLOCK_MONOTONIC), read between two monotonic reads
    close together: a process preempted between two clock reads (a busy machine) would
    otherwise shift a converted timestamp by the time it was away."""
    for _ in range(_CLOCK_TRIES):
        before, real, after = time.monotonic_ns(), time.time_ns(), time.monotonic_ns()
        if after - before < _CLOCK_PAIR_NS:
            break
    return after, real - (before + after) // 2


_CLOCK_TRIES = 5
_CLOCK_PAIR_NS = 50_000


class BotClient:
    """Sends one seat's decisions to a bot's URL; one kept-alive connection at a time."""

    def __init__(self, url: str, deadline_ms: int = DEFAULT_DEADLINE_MS, secret: str = "",
                 allowlist: tuple[str, ...] = tuple(DEFAULT_BOT_HOSTS.split(",")),
                 kept: KeptConnections | None = None):
        """`kept`: where its idle connection goes at `aclose`, and where it looks for one
        before connecting (none: its connection is its own)."""
        self.url = url
        self.deadline_ms = deadline_ms
        self.signer = RequestSigner(secret) if secret else None
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
        self.address: Address = (self.scheme, self.host, self.port, allowlist)
        self.kept = kept
        self.connection: _Connection | _TlsConnection | None = None
        self.unsent: deque[bytes] = deque()  # updates not sent yet, oldest first
        self.sender: asyncio.Task[None] | None = None

    async def decide(self, payload: dict) -> BotReply:
        """POST one decision request, within its `deadline_ms` (the client's own when the
        payload names none); the reply is judged but the action is not checked against the
        rules (that is the runner's job, with the engine). The time charged runs from the
        last byte of the request written to the whole answer arrived."""
        body = orjson.dumps(payload)
        deadline_ms = int(payload.get("deadline_ms", self.deadline_ms))
        await self._settle_updates()
        started = time.monotonic_ns()
        try:
            status, raw, elapsed = await self._exchange(body, deadline_ms)
        except _TimedOut as out:
            self._drop()
            return BotReply(None, Fault.TIMEOUT, "", out.elapsed_ms,
                            f"no complete answer within the deadline of {deadline_ms} ms")
        except _TooLarge as error:
            self._drop()
            return _fault(Fault.MALFORMED, "", started, str(error))
        except (_Refused, OSError, ssl.SSLError, ValueError) as error:
            self._drop()
            return _fault(Fault.CRASH, "", started, f"connection error: {_short(error)}")
        text = raw.decode("utf-8", errors="replace")
        if status != 200:
            return BotReply(None, Fault.CRASH, text[:RAW_LIMIT], elapsed,
                            f"the bot answered HTTP {status}, not 200")
        return judge_answer(raw, text, elapsed)

    async def notify(self, payload: dict, deadline_ms: int = NOTICE_DEADLINE_MS) -> None:
        """POST a message whose answer does not matter (the result notice): one try within
        a short deadline, every failure ignored."""
        await self._settle_updates()
        try:
            await self._exchange(orjson.dumps(payload), deadline_ms)
        except (_TimedOut, _TooLarge, _Refused, OSError, ssl.SSLError, ValueError):
            self._drop()

    def update(self, payload: dict) -> None:
        """Send an update (issue 26) in the background, after those queued before it; its
        answer is read and ignored, a failure drops the connection, never a fault."""
        self.unsent.append(orjson.dumps(payload))
        if self.sender is None or self.sender.done():
            self.sender = asyncio.ensure_future(self._send_updates())

    async def _send_updates(self) -> None:
        while self.unsent:
            try:
                await self._exchange(self.unsent.popleft(), UPDATE_DEADLINE_MS)
            except (_TimedOut, _TooLarge, _Refused, OSError, ssl.SSLError, ValueError):
                self._drop()

    async def _settle_updates(self) -> None:
        """Before a decision or notice: the updates queued get UPDATE_SETTLE_MS to be sent
        and answered (never charged: a seat's time starts when its decision is written),
        then what is left is dropped, one waiting for its answer with its connection. A bot
        slow to answer updates holds up little, and the decision says all they would."""
        sender, self.sender = self.sender, None
        if sender is None or sender.done():
            return
        await asyncio.wait([sender], timeout=UPDATE_SETTLE_MS / 1000)
        self.unsent.clear()
        if not sender.done():
            sender.cancel()
            await asyncio.wait([sender])
            self._drop()

    async def aclose(self) -> None:
        """Close its connection, or hand it over to `kept` when idle."""
        await self._settle_updates()
        connection, self.connection = self.connection, None
        if connection is not None and self.kept is not None:
            self.kept.keep(self.address, connection)
        elif connection is not None:
            connection.close()

    async def aclose_after_updates(self) -> None:
        """Close once the updates queued are sent, within UPDATE_DEADLINE_MS in all (what
        is left then is dropped): a match that parks to wait for another seat still tells
        this one, and a bot that answers no update holds its connection a second at most."""
        if self.sender is not None:
            await asyncio.wait([self.sender], timeout=UPDATE_DEADLINE_MS / 1000)
        await self.aclose()

    async def _exchange(self, body: bytes, deadline_ms: int) -> tuple[int, bytes, float]:
        """One request and its whole answer: (status, body, ms from the request written to
        the answer arrived). A kept connection that turns out closed by the bot before
        answering anything is replaced once by a new one, within what is left of the
        deadline: the time the closed one took is charged (a bot that closes its connection
        after thinking gains no second deadline)."""
        if self.connection is None and self.kept is not None:
            self.connection = self.kept.take(self.address)
        connection = self.connection
        reused = connection is not None and connection.usable()
        connect_ms = max(deadline_ms, CONNECT_ALLOWANCE_MS)
        if connection is None or not reused:
            self._drop()
            connection = self.connection = await self._connect(connect_ms)
        started = time.monotonic_ns()
        try:
            return await self._roundtrip(connection, body, deadline_ms)
        except (_Refused, ConnectionError):
            if not reused:
                raise
        spent_ms = (time.monotonic_ns() - started) / 1e6
        self._drop()
        if spent_ms >= deadline_ms:
            raise _TimedOut(spent_ms)
        connection = self.connection = await self._connect(connect_ms)  # never charged
        try:
            status, raw, elapsed = await self._roundtrip(connection, body,
                                                         deadline_ms - spent_ms)
        except _TimedOut as out:
            raise _TimedOut(out.elapsed_ms + spent_ms) from None
        return status, raw, round(elapsed + spent_ms, 3)

    async def _connect(self, deadline_ms: int) -> _Connection | _TlsConnection:
        """A connection to an allowed address of the bot, within the deadline."""
        try:
            async with asyncio.timeout(deadline_ms / 1000):
                return await self._open()
        except TimeoutError:
            raise _TimedOut(float(deadline_ms)) from None

    async def _open(self) -> _Connection | _TlsConnection:
        loop = asyncio.get_running_loop()
        addresses = (_numeric_addresses(self.host, self.port)
                     or await loop.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM))
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
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.scheme != "https":
                return _Connection(sock)
            reader, writer = await asyncio.open_connection(
                sock=sock, limit=_CHUNK, ssl=ssl.create_default_context(),
                server_hostname=self.host)
            return _TlsConnection(reader, writer)
        if refused:
            raise _Refused(f"{self.host} resolves to {', '.join(refused)}, not in the bot "
                           "host allowlist (REFEREE_BOT_HOSTS)")
        raise _Refused(f"could not connect to {self.host} port {self.port}")

    async def _roundtrip(self, connection: _Connection | _TlsConnection, body: bytes,
                         deadline_ms: float) -> tuple[int, bytes, float]:
        head = self.head + b"Content-Length: %d\r\n" % len(body)
        if self.signer is not None:
            head += (f"Referee-Signature: "
                     f"{self.signer.header(body, int(time.time()))}\r\n").encode()
        writing = time.monotonic_ns()
        try:
            await connection.send(head + b"\r\n" + body, deadline_ms)
        except TimeoutError:
            raise _TimedOut(float(deadline_ms)) from None
        sent = time.monotonic_ns()
        until = connection.loop.time() + deadline_ms / 1000
        late_ns = sent + round(deadline_ms * 1_000_000)
        answer = _Answer()
        try:
            try:
                while not answer.done:
                    answer.take(*_in_time(await connection.recv(until), late_ns))
            except TimeoutError:
                # a last look at what arrived in time but was not read yet (a busy loop)
                while not answer.done and (chunk := connection.recv_nowait()) is not None:
                    answer.take(*_in_time(chunk, late_ns))
                if not answer.done:
                    raise
        except TimeoutError:
            raise _TimedOut(max((time.monotonic_ns() - sent) / 1e6, deadline_ms)) from None
        finally:
            answer.release()
        connection.answered()
        if not answer.keep_alive:
            self._drop()
        # On loopback the write can return after the bot has answered (the kernel delivers
        # in the writer's call): such an answer is timed from when the write began.
        start = sent if answer.arrived_ns >= sent else writing
        elapsed = round(max(answer.arrived_ns - start, 0) / 1e6, 3)
        return answer.status, b"".join(answer.chunks), elapsed

    def _drop(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def _numeric_addresses(host: str, port: int) -> list[tuple[int, int, int, str, tuple]]:
    """What `getaddrinfo` answers for an IP address written as such, without it (the loop
    asks it in a thread); empty for a name (or a scoped IPv6 address: it decides)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return []
    if address.version == 4:
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (host, port))]
    if "%" in host:
        return []
    return [(socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (host, port, 0, 0))]


def judge_answer(raw: bytes, text: str, elapsed: float) -> BotReply:
    """The reply an answer body makes (a push bot's, or a hosted program's line): well
    formed, it is a JSON object whose "action" is a JSON object."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        return BotReply(None, Fault.MALFORMED, text[:RAW_LIMIT], elapsed,
                        f"the answer is not JSON: {error}")
    if not isinstance(data, dict) or not isinstance(data.get("action"), dict):
        return BotReply(None, Fault.MALFORMED, text[:RAW_LIMIT], elapsed,
                        'the answer must be a JSON object with an "action" object')
    debug, info, truncated = debug_channel(data)
    return BotReply(action=data["action"], fault=None, raw=text[:RAW_LIMIT],
                    elapsed_ms=elapsed, detail="", debug=debug, info=info,
                    debug_truncated=truncated, log_new=data.get("log") == LOG_NEW)


def debug_channel(answer: dict) -> tuple[str | None, dict | None, bool]:
    """(debug, info, whether either was cut) of an answer: `debug` a string of at most
    MAX_DEBUG_BYTES (UTF-8), `info` an object of at most MAX_INFO_BYTES of JSON (its
    members kept in order while they fit; one nested too deep to write is left out).
    Anything else there is left out; never a fault."""
    debug, info, truncated = answer.get("debug"), answer.get("info"), False
    if not isinstance(debug, str):
        debug = None
    elif len(encoded := debug.encode()) > MAX_DEBUG_BYTES:
        debug, truncated = encoded[:MAX_DEBUG_BYTES].decode(errors="ignore"), True
    if isinstance(info, dict):
        info, cut = _fitting_members(info)
        truncated = truncated or cut
    else:
        info = None
    return debug, info, truncated


def _fitting_members(info: dict) -> tuple[dict, bool]:
    """The members of `info` that fit in MAX_INFO_BYTES of JSON, in order (each written
    once: a huge object costs one pass), and whether any was left out."""
    kept: dict = {}
    size = 2  # {}
    for key, value in info.items():
        try:
            member = len(orjson.dumps({key: value})) - 2 + (1 if kept else 0)
        except TypeError:  # nested deeper than orjson writes, or not JSON
            return kept, True
        if size + member > MAX_INFO_BYTES:
            return kept, True
        kept[key], size = value, size + member
    return kept, False


def _fault(code: str, text: str, started_ns: int, detail: str) -> BotReply:
    return BotReply(action=None, fault=code, raw=text[:RAW_LIMIT],
                    elapsed_ms=round((time.monotonic_ns() - started_ns) / 1e6, 3),
                    detail=detail)


def _short(error: Exception) -> str:
    """The exception's class and first line."""
    message = str(error).split("\n")[0]
    return f"{type(error).__name__}: {message[:300]}"
