"""The bridge: a stdin/stdout program served as a push bot (issue 18, a public contract).

Every POST is one message of the bot protocol. A decision (`"type": "decision"`, or no
`type` from an older referee) goes to the program of its (match_id, seat), started at that
seat's first decision and kept for the whole match; the body, as one line, is the
program's stdin line and its stdout line is the HTTP answer, verbatim (the referee judges
it, so a junk line is recorded as `malformed` with the line as the raw answer). A result
notice (`"type": "result"`) is the program's last line, then EOF; it is killed if still
running a second later. An update (`"type": "update"`, issue 26) is written to the program
as a line it must not answer (started for it if need be), after the decision in progress;
the HTTP answer is a `200` at once. Fault codes come out as an HTTP bot's would:

- the program died, or closed stdin or stdout: `502` (the referee records `crash`), and
  every later decision of that match and seat at once (the program is not restarted
  within a match);
- an answer line longer than `line_limit`: a `200` whose body explains it, not JSON
  (`malformed`);
- no answer within the decision's `deadline_ms` (counted from the request's arrival,
  which is after the referee started counting): `504` just after it, so the referee has
  already given up (`timeout`). The late line, when it comes, is dropped.

Processes: one per (match, seat) in play, at most `max_programs` at once. At the cap, a
new match retires the least recently used idle program (EOF, killed a second later; a
later decision of its match starts a fresh one); when every program is mid-decision the
new match is answered 503. A program idle for `idle_timeout_s` (its match went silent:
an older referee sends no result notice) is retired the same way.

Logs: one file per match and seat in `log_dir`; those of ended sessions past `logs_limit`
bytes in all are removed, oldest first (`referee.bridge.logs`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path

import orjson

from referee.bridge import httpd
from referee.bridge.logs import DEFAULT_LOGS_MB, LogFolder
from referee.errors import RefereeError
from referee.match.botclient import DEFAULT_DEADLINE_MS, MAX_REPLY_BYTES
from referee.match.program import LeftRunning, LineTooLong, Program, ProgramDied, note
from referee.match.signing import HEADER, SignatureError, verify_signature

log = logging.getLogger(__name__)

DECISION = "decision"
RESULT = "result"
UPDATE = "update"
KINDS = (DECISION, UPDATE, RESULT)
DEFAULT_MAX_PROGRAMS = 32
DEFAULT_IDLE_TIMEOUT_S = 900.0
STOP_GRACE_S = 1.0
TIMEOUT_GRACE_S = 0.05
MAX_DEADLINE_MS = 600_000
MAX_MATCH_ID_CHARS = 200
MAX_SEAT = 1000
MAX_SESSIONS = 10_000
DEFAULT_STDERR_MB = 16  # as much as the hosted sandbox keeps (REFEREE_SANDBOX_FILE_MB)

SessionKey = tuple[str, int]


@dataclass(frozen=True)
class BridgeConfig:
    """What to run and the bridge's limits (`referee bridge --help` documents them)."""

    command: tuple[str, ...]
    log_dir: Path
    secret: str | None = None
    max_programs: int = DEFAULT_MAX_PROGRAMS
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S
    line_limit: int = MAX_REPLY_BYTES
    stderr_limit: int = DEFAULT_STDERR_MB << 20  # a program's stderr kept, in bytes
    logs_limit: int = DEFAULT_LOGS_MB << 20  # the ended sessions' logs kept, in bytes


class BadMessage(RefereeError, ValueError):
    """The body is not a message of the bot protocol the bridge can route."""


@dataclass(frozen=True)
class Message:
    kind: str
    match_id: str
    seat: int
    deadline_ms: int
    step: int | None
    line: bytes  # the body as one line, without its newline

    @property
    def key(self) -> SessionKey:
        return (self.match_id, self.seat)


class Session:
    """The program of one (match, seat), and the lock that keeps its decisions in order."""

    def __init__(self, log_path: Path):
        self.log_path = log_path
        self.program: Program | None = None
        self.starting: asyncio.Future | None = None  # the start of its program, once begun
        self.lock = asyncio.Lock()
        self.last_used = time.monotonic()

    @property
    def live(self) -> bool:
        return self.program is not None and not self.program.dead


class Bridge:
    """Routes the messages of the bot protocol to one program per (match, seat)."""

    def __init__(self, config: BridgeConfig):
        self.config = config
        self.sessions: OrderedDict[SessionKey, Session] = OrderedDict()  # least recent first
        self.background: set[asyncio.Task] = set()  # programs stopping, updates being told
        self.http = httpd.HttpServer(self.handle)
        self.reaper: asyncio.Task | None = None
        self.left_running = LeftRunning()  # kills what stopped programs left running
        self.logs = LogFolder(config.log_dir, config.logs_limit)
        self.closing = False

    async def start(self, host: str, port: int) -> int:
        """Listen on host:port (0: a free port); the port bound."""
        self.logs.open()
        port = await self.http.start(host, port)
        self.reaper = asyncio.create_task(self._reap_idle_forever())
        return port

    async def close(self) -> None:
        """Stop listening and stop every program (EOF, killed a second later), then what
        they left running."""
        self.closing = True
        self.http.stop_listening()
        if self.reaper:
            self.reaper.cancel()
        sessions, self.sessions = list(self.sessions.values()), OrderedDict()
        await asyncio.gather(*(session.starting for session in sessions if session.starting),
                             return_exceptions=True)
        await asyncio.gather(*(session.program.stop(None, STOP_GRACE_S)
                               for session in sessions if session.program),
                             *self.background, return_exceptions=True)
        await self.left_running.flush()
        await self.http.close()

    async def handle(self, request: httpd.Request) -> httpd.Response:
        """One HTTP request: a status page on GET, a message of the bot protocol on POST."""
        received = asyncio.get_running_loop().time()
        if request.method == "GET":
            return _json(200, {"bridge": "referee/1", "programs": self.live_programs(),
                               "matches": len(self.sessions)})
        if request.method != "POST":
            return _json(405, {"error": "POST a referee/1 message"}, {"Allow": "GET, POST"})
        if self.closing:
            return _json(503, {"error": "the bridge is stopping"})
        if self.config.secret:
            try:
                verify_signature(self.config.secret, request.headers.get(HEADER.lower()),
                                 request.body, time.time())
            except SignatureError as error:
                return _json(401, {"error": str(error)})
        try:
            message = parse_message(request.body)
        except BadMessage as error:
            return _json(400, {"error": str(error)})
        if message.kind == RESULT:
            return self._result(message)
        if message.kind == UPDATE:
            return self._update(message)
        return await self._decide(message, received)

    def live_programs(self) -> int:
        return sum(session.live for session in self.sessions.values())

    # ----- decisions -----------------------------------------------------------------------
    async def _decide(self, message: Message, received: float) -> httpd.Response:
        session = self._session(message)
        deadline = received + message.deadline_ms / 1000 + TIMEOUT_GRACE_S
        try:
            async with asyncio.timeout_at(deadline):
                return await self._ask(session, message)
        except TimeoutError:
            if session.program:
                note(session.log_path, f"timeout: no answer within {message.deadline_ms} ms "
                                       f"(step {message.step}); a late answer is dropped")
            return _json(504, {"error": f"the program gave no answer within deadline_ms="
                                        f"{message.deadline_ms}"})
        finally:
            session.last_used = time.monotonic()

    async def _ask(self, session: Session, message: Message) -> httpd.Response:
        async with session.lock:
            if session.program is None:
                if session.starting is None or session.starting.done():
                    session.starting = asyncio.ensure_future(self._start(session))
                # shielded: a start cut short by the deadline still ends with its program
                # recorded in the session (to be asked next time, or stopped)
                failure = await asyncio.shield(session.starting)
                if failure:
                    return failure
            program = session.program
            assert program is not None  # a start without failure records its program
            try:
                line = await program.ask(message.line)
            except ProgramDied as error:
                return _json(502, {"error": f"{error} (its stderr: {session.log_path.name})"})
            except LineTooLong as error:
                note(session.log_path, f"malformed: {error}")
                return httpd.Response(200, f"{error}; it began {error.prefix!r}".encode(),
                                      content_type="text/plain; charset=utf-8")
            return httpd.Response(200, line.rstrip(b"\r"))

    async def _start(self, session: Session) -> httpd.Response | None:
        """Start the session's program, retiring an idle one at the cap; the error response
        when it cannot start."""
        if self.live_programs() >= self.config.max_programs and not self._retire_one_idle():
            return _json(503, {"error": f"all {self.config.max_programs} programs of this "
                                        "bridge are busy deciding (see --max-programs)"})
        try:
            session.program = await Program.start(list(self.config.command), session.log_path,
                                                   self.config.line_limit, self.left_running,
                                                   self.config.stderr_limit)
        except OSError as error:
            note(session.log_path, f"cannot start the program: {error}")
            return _json(502, {"error": f"the bridge cannot start the program: {error}"})
        return None

    def _session(self, message: Message) -> Session:
        """The session of the message's (match, seat), created at its first decision and
        moved to the most recently used end."""
        session = self.sessions.get(message.key)
        if session is None:
            self._forget_dead_sessions()
            session = Session(self.logs.take(message.match_id, message.seat))
            self.sessions[message.key] = session
        self.sessions.move_to_end(message.key)
        return session

    def _forget_dead_sessions(self) -> None:
        """Keep at most MAX_SESSIONS: the oldest sessions with no live program go first."""
        excess = len(self.sessions) + 1 - MAX_SESSIONS
        for key, session in list(self.sessions.items()):
            if excess <= 0:
                return
            if not session.live and not session.lock.locked():
                self._retire(key)
                excess -= 1

    # ----- updates ------------------------------------------------------------------------
    def _update(self, message: Message) -> httpd.Response:
        """The program gets the update line, in the background (after the decision in
        progress, if any); the answer does not wait for it."""
        session = self._session(message)
        self._in_background(self._tell(session, message))
        return _json(200, {})

    async def _tell(self, session: Session, message: Message) -> None:
        async with session.lock:
            if session.program is None:
                if session.starting is None or session.starting.done():
                    session.starting = asyncio.ensure_future(self._start(session))
                if await asyncio.shield(session.starting) or session.program is None:
                    return
            try:
                await session.program.tell(message.line)
            except ProgramDied:
                pass  # the next decision answers 502
            finally:
                session.last_used = time.monotonic()

    # ----- ends of matches -----------------------------------------------------------------
    def _result(self, message: Message) -> httpd.Response:
        """The program gets the result line then EOF; the answer does not wait for it."""
        session = self.sessions.pop(message.key, None)
        if session:
            self._stop_later(session, message.line)
        return _json(200, {})

    def _retire_one_idle(self) -> bool:
        """Retire the least recently used live program that is not deciding; False if none."""
        for key, session in self.sessions.items():
            if session.live and not session.lock.locked():
                note(session.log_path, "retired: the bridge needed its place for a new match")
                self._retire(key)
                return True
        return False

    def _retire(self, key: SessionKey) -> None:
        self._stop_later(self.sessions.pop(key), None)

    def _stop_later(self, session: Session, last_line: bytes | None) -> None:
        """Stop a session's program (once it has started, if it is starting) in the
        background, after the decision in progress if any."""
        async def stop() -> None:
            try:
                if session.starting:
                    await asyncio.gather(session.starting, return_exceptions=True)
                async with session.lock:
                    if session.program:
                        await session.program.stop(last_line, STOP_GRACE_S)
            finally:
                self.logs.release(session.log_path)

        self._in_background(stop())

    def _in_background(self, work: Coroutine[object, object, None]) -> None:
        task = asyncio.create_task(work)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def _reap_idle_forever(self) -> None:
        period = min(30.0, self.config.idle_timeout_s / 4)
        while True:
            await asyncio.sleep(period)
            self.reap_idle()

    def reap_idle(self) -> None:
        """Retire the programs of matches silent for longer than idle_timeout_s."""
        oldest = time.monotonic() - self.config.idle_timeout_s
        for key, session in list(self.sessions.items()):
            if session.last_used < oldest and not session.lock.locked():
                if session.program:
                    note(session.log_path, f"retired: no message for "
                                           f"{self.config.idle_timeout_s:g} s")
                self._retire(key)


def parse_message(body: bytes) -> Message:
    """The routing fields of a message, and its body as one line of JSON."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise BadMessage(f"the body is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise BadMessage("the body must be a JSON object")
    kind = data.get("type", DECISION)
    if kind not in KINDS:
        raise BadMessage(f'unknown "type" {str(kind)[:40]!r}: expected "decision", "update" '
                         'or "result"')
    match_id, seat = data.get("match_id"), data.get("seat")
    if not isinstance(match_id, str) or not 0 < len(match_id) <= MAX_MATCH_ID_CHARS:
        raise BadMessage(f'"match_id" must be a string of 1 to {MAX_MATCH_ID_CHARS} characters')
    if type(seat) is not int or not 0 <= seat <= MAX_SEAT:
        raise BadMessage(f'"seat" must be an integer from 0 to {MAX_SEAT}')
    deadline_ms = data.get("deadline_ms", DEFAULT_DEADLINE_MS)
    if kind == DECISION and (type(deadline_ms) is not int
                             or not 1 <= deadline_ms <= MAX_DEADLINE_MS):
        raise BadMessage(f'"deadline_ms" must be an integer from 1 to {MAX_DEADLINE_MS}')
    step = data.get("step")
    return Message(kind, match_id, seat, deadline_ms if kind == DECISION else 0,
                   step if type(step) is int else None, one_line(body))


def one_line(body: bytes) -> bytes:
    """The JSON body on one line. Line breaks in valid JSON are whitespace between tokens
    (inside strings they are escaped), so replacing them by spaces keeps the same value."""
    if b"\n" in body or b"\r" in body:
        return body.replace(b"\r", b" ").replace(b"\n", b" ")
    return body


def _json(status: int, body: dict, headers: dict[str, str] | None = None) -> httpd.Response:
    return httpd.Response(status, orjson.dumps(body), headers=headers or {})
