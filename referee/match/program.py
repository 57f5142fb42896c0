"""One stdin/stdout program serving one seat of one match: started, asked, stopped.

The program is a process in a session of its own (stopping it stops its children too).
The bridge appends its stderr to the match's log file, where it also notes what happened
(start, late or oversized answers, exit); a hosted program's notes go where its sandbox
keeps them (`referee.match.stderr`). It reads one line per message on stdin and
writes one answer line per decision on stdout. The answers it owes are counted: when the
bridge gave up waiting for one (a timeout), that late line is read and dropped before the
next decision's answer, so question and answer never get out of step.

What a bridge's program leaves running in a session of its own (a daemon) is killed at its
stop too, where the kernel shows each process's environment (Linux's /proc): every process
the program starts inherits `MARK`, set to a value of the program's own, and the stop
kills every process that still holds it. One that clears its environment, or writes over
it, is not found. (A hosted program's sandbox is a PID namespace: nothing outlives it.)
"""

from __future__ import annotations

import asyncio
import functools
import os
import secrets
import shlex
import signal
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from referee.errors import RefereeError

READ_CHUNK = 64 * 1024
PREVIEW_BYTES = 300
UPDATE_BACKLOG_BYTES = 1 << 16
"""Updates a program has left unread (beyond its pipe's own buffer) past which the next ones
are dropped rather than waited for: a program that reads nothing delays neither its own
decisions nor its match."""
REAP_WAIT_S = 0.5
MARK = "REFEREE_PROGRAM"
"""The environment variable each program of a bridge and its processes carry, its value the
program's own (`Program.mark`): what the program leaves running is found by it."""
MARKED_LOOKS = 100  # a stop looks for marked processes at most this often (each fork seen)


class ProgramDied(RefereeError):
    """The program exited or closed its pipes; the message says how."""


class LineTooLong(RefereeError):
    """The program wrote a line longer than the limit; `prefix` is how it began."""

    def __init__(self, prefix: bytes, limit: int):
        super().__init__(f"the program's answer line is longer than {limit} bytes")
        self.prefix = prefix


class LineReader:
    """Lines of a stream, each at most `limit` bytes; an overlong line raises LineTooLong
    once and the rest of it is skipped, so the next call returns the line after it."""

    def __init__(self, stream: asyncio.StreamReader, limit: int):
        self.stream = stream
        self.limit = limit
        self.buffer = bytearray()
        self.scanned = 0  # bytes of the buffer known to hold no newline
        self.skipping = False  # inside the tail of an overlong line

    async def next_line(self) -> bytes:
        """The next line without its newline; EOFError when the stream ends first."""
        while True:
            end = self.buffer.find(b"\n", self.scanned)
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[:end + 1]
                self.scanned = 0
                if self.skipping:
                    self.skipping = False
                    continue
                if len(line) > self.limit:
                    raise LineTooLong(line[:PREVIEW_BYTES], self.limit)
                return line
            self.scanned = len(self.buffer)
            if self.skipping:
                self.buffer.clear()
                self.scanned = 0
            elif len(self.buffer) > self.limit:
                prefix = bytes(self.buffer[:PREVIEW_BYTES])
                self.buffer.clear()
                self.scanned = 0
                self.skipping = True
                raise LineTooLong(prefix, self.limit)
            chunk = await self.stream.read(READ_CHUNK)
            if not chunk:
                raise EOFError
            self.buffer += chunk


class _ChildProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's protocol for a process with streams, which also tells when the process
    itself exited."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop):
        super().__init__(limit, loop)
        self.exit: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exit.done():
            self.exit.set_result(None)


class Child(asyncio.subprocess.Process):
    """asyncio's process, which can also wait for its exit alone and close its pipes.

    asyncio's `wait()` waits too for each of its pipes to close (before Python 3.15,
    CPython gh-119710), which a process it left behind in a session of its own may put
    off for ever; and asyncio closes the pipes only then."""

    def __init__(self, transport: asyncio.SubprocessTransport, protocol: _ChildProtocol,
                 loop: asyncio.AbstractEventLoop):
        super().__init__(transport, protocol, loop)
        self.pipes = transport
        self.exit = protocol.exit

    async def exited(self) -> None:
        """Once it has exited, whatever holds its pipes (`returncode` is then set)."""
        await asyncio.shield(self.exit)

    async def close(self) -> None:
        """Close its pipes (their descriptors are closed at the loop's next turn, awaited
        here)."""
        self.pipes.close()
        await asyncio.sleep(0)


async def spawn(*argv: str, **options: Any) -> Child:
    """`asyncio.create_subprocess_exec`, as a `Child`."""
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        lambda: _ChildProtocol(READ_CHUNK, loop), *argv, **options)
    return Child(transport, protocol, loop)


class Program:
    """A running program; `ask` it decisions, `stop` it at the end of its match."""

    def __init__(self, process: Child, note: Callable[[str], None],
                 line_limit: int, mark: str | None = None):
        """`note` records a line saying what happened to the program; `mark`: the value of
        `MARK` in its environment, if it was given one (its processes left running are then
        killed at its stop)."""
        if process.stdin is None or process.stdout is None:
            raise ValueError("a program is started with pipes for its stdin and stdout")
        self.process = process
        self.stdin, self.stdout = process.stdin, process.stdout
        self.note = note
        self.lines = LineReader(process.stdout, line_limit)
        self.owed = 0  # answer lines expected and not read yet
        self.dead: str | None = None  # how it died, once it did
        self.mark = mark

    @classmethod
    async def start(cls, argv: list[str], log_path: Path, line_limit: int) -> Program:
        """Start `argv` with its stderr appended to `log_path`, marked (`MARK`); OSError
        when it cannot run."""
        mark = secrets.token_hex(16)
        with open(log_path, "ab") as log_file:
            process = await spawn(*argv, stdin=asyncio.subprocess.PIPE,
                                  stdout=asyncio.subprocess.PIPE, stderr=log_file,
                                  start_new_session=True, env={**os.environ, MARK: mark})
        note(log_path, f"started pid {process.pid}: {shlex.join(argv)}")
        return cls(process, functools.partial(note, log_path), line_limit, mark)

    async def ask(self, line: bytes) -> bytes:
        """Send one message line and return the answer line; the caller bounds the time.

        Raises ProgramDied (every later call too) or LineTooLong."""
        if self.dead:
            raise ProgramDied(self.dead)
        stdin = self.stdin
        try:
            stdin.write(line + b"\n")
            self.owed += 1
            await stdin.drain()
        except ConnectionError:
            raise await self._died("the program closed its stdin") from None
        while True:
            try:
                answer = await self.lines.next_line()
            except LineTooLong:
                self.owed -= 1
                if self.owed == 0:
                    raise
                continue
            except EOFError:
                raise await self._died("the program closed its stdout") from None
            self.owed -= 1
            if self.owed == 0:
                return answer

    async def tell(self, line: bytes) -> None:
        """Send one message line that is not answered (an update), never waiting for the
        program to read it: dropped when it has left `UPDATE_BACKLOG_BYTES` of earlier
        ones unread. Raises ProgramDied."""
        if self.dead:
            raise ProgramDied(self.dead)
        if self.stdin.transport.get_write_buffer_size() < UPDATE_BACKLOG_BYTES:
            self.stdin.write(line + b"\n")  # a closed pipe shows at the next `ask`

    async def stop(self, last_line: bytes | None, grace_s: float) -> None:
        """Send `last_line` (if any) then EOF; kill the program if it still runs `grace_s`
        later. Its output is read and dropped until it is gone, so it can neither block on
        writing; then its pipes are closed, even those a process it left behind holds, and
        the processes it left running are killed (when it is marked)."""
        drain = asyncio.ensure_future(self._discard_output())
        try:
            if self.process.returncode is None and not self.dead:
                with suppress(ConnectionError, RuntimeError):
                    if last_line is not None:
                        self.stdin.write(last_line + b"\n")
                    self.stdin.close()
                try:
                    await asyncio.wait_for(self._ended(), grace_s)
                    self.note(f"stopped: {describe_exit(self.process.returncode)}")
                except TimeoutError:
                    self.note(f"killed: still running {grace_s:g} s after its last line")
            self.kill()
            await self.process.exited()
        finally:
            drain.cancel()
            await self.process.close()
            if self.mark:
                await self._kill_left_running(self.mark)

    async def _kill_left_running(self, mark: str) -> None:
        if killed := await asyncio.to_thread(kill_marked, mark):
            self.note(f"killed {killed} process(es) it left running in a session of their "
                      "own")

    def kill(self) -> None:
        """SIGKILL the program's whole process group (its children too)."""
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    async def _died(self, how: str) -> ProgramDied:
        """Record the death (with the exit status when there is one) and make sure the
        process is gone; the ProgramDied to raise."""
        self.dead = how
        try:
            await asyncio.wait_for(self._ended(), REAP_WAIT_S)
            self.dead = f"the program {describe_exit(self.process.returncode)}"
        except TimeoutError:
            pass
        finally:
            self.kill()
        self.note(f"crash: {self.dead}")
        return ProgramDied(self.dead)

    async def _ended(self) -> None:
        """Once the program has exited (and what it wrote before is read, where that is
        read)."""
        await self.process.exited()

    async def _discard_output(self) -> None:
        with suppress(ConnectionError):
            while await self.stdout.read(READ_CHUNK):
                pass


def kill_marked(mark: str) -> int:
    """SIGKILL every process whose environment holds `MARK` = `mark`, looking again until a
    look finds none not killed yet (one may fork meanwhile); how many were killed."""
    entry = f"{MARK}={mark}".encode()
    killed: set[int] = set()
    for _ in range(MARKED_LOOKS):
        found = {pid for pid in _pids() if _marked(pid, entry)} - killed
        if not found:
            break
        killed |= {pid for pid in found if _kill_if_marked(pid, entry)}
    return len(killed)


def _kill_if_marked(pid: int, entry: bytes) -> bool:
    """SIGKILL the process `pid` names if it is still marked with `entry`, through a pidfd:
    a pid the process left and another took meanwhile is never signalled."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:  # gone
        return False
    except OSError:  # a kernel without pidfds (before Linux 5.3): a plain kill
        with suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        return True
    try:
        if not _marked(pid, entry):  # the pidfd's process is the one read now
            return False
        with suppress(ProcessLookupError, PermissionError):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        return True
    finally:
        os.close(pidfd)


def _pids() -> list[int]:
    """Every process's pid (none without /proc)."""
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _marked(pid: int, entry: bytes) -> bool:
    """Whether the environment of `pid` holds `entry` (False when it cannot be read: gone,
    exited, or another user's)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return entry in environ.read().split(b"\0")
    except OSError:
        return False


def describe_exit(code: int | None) -> str:
    if code is None:
        return "is still running"
    if code < 0:
        with suppress(ValueError):
            return f"was killed by signal {-code} ({signal.Signals(-code).name})"
        return f"was killed by signal {-code}"
    return f"exited with code {code}"


def note(log_path: Path, text: str) -> None:
    """Append one `[bridge]` line to the match's log, next to the program's stderr."""
    stamp = time.strftime("%H:%M:%S")
    with suppress(OSError), open(log_path, "a", encoding="utf-8") as log_file:
        log_file.write(f"[bridge {stamp}] {text}\n")
