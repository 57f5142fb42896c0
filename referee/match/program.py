"""One stdin/stdout program serving one seat of one match: started, asked, stopped.

The program is a process in a session of its own (stopping it stops its children too).
The bridge appends its stderr to the match's log file, where it also notes what happened
(start, late or oversized answers, exit); a hosted program's notes go where its sandbox
keeps them (`referee.match.stderr`). It reads one line per message on stdin and
writes one answer line per decision on stdout. The answers it owes are counted: when the
bridge gave up waiting for one (a timeout), that late line is read and dropped before the
next decision's answer, so question and answer never get out of step.

What a bridge's program leaves running in a session of its own (a daemon) is killed after
its stop too, where the kernel shows each process's environment (Linux's /proc): every
process the program starts inherits `MARK`, set to a value of the program's own, and the
stop hands that value to the bridge's `LeftRunning`, which kills every process that still
holds it. One that clears its environment, or writes over it, is not found. (A hosted
program's sandbox is a PID namespace: nothing outlives it.)
"""

from __future__ import annotations

import asyncio
import functools
import os
import secrets
import shlex
import signal
import time
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any, BinaryIO

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
program's own: what the program leaves running is found by it (`LeftRunning`)."""
_MARK_PREFIX = f"{MARK}=".encode()
MARKED_LOOKS = 100  # a sweep looks for marked processes at most this often (each fork seen)
SWEEP_EVERY_S = 0.5


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
                 line_limit: int, left_running: tuple[LeftRunning, str] | None = None,
                 stderr: StderrPipe | None = None):
        """`note` records a line saying what happened to the program; `left_running`: where
        its stop hands over its mark (the value of `MARK` in its environment), when it has
        one; `stderr`: the read end of its stderr, read up to its exit and closed at its
        stop."""
        if process.stdin is None or process.stdout is None:
            raise ValueError("a program is started with pipes for its stdin and stdout")
        self.process = process
        self.stdin, self.stdout = process.stdin, process.stdout
        self.note = note
        self.lines = LineReader(process.stdout, line_limit)
        self.owed = 0  # answer lines expected and not read yet
        self.dead: str | None = None  # how it died, once it did
        self.left_running = left_running
        self.stderr = stderr

    @classmethod
    async def start(cls, argv: list[str], log_path: Path, line_limit: int,
                    left_running: LeftRunning, stderr_limit: int) -> Program:
        """Start `argv` with its stderr appended to `log_path` (`stderr_limit` bytes at
        most: `StderrPipe`), marked (`MARK`): what it leaves running is killed by
        `left_running` after its stop. OSError when it cannot run."""
        mark = secrets.token_hex(16)
        log_file = open(log_path, "ab", buffering=0)  # noqa: SIM115 (closed with its pipe)
        reading, writing = os.pipe()
        try:
            process = await spawn(*argv, stdin=asyncio.subprocess.PIPE,
                                  stdout=asyncio.subprocess.PIPE, stderr=writing,
                                  start_new_session=True, env={**os.environ, MARK: mark})
        except BaseException:
            os.close(reading)
            log_file.close()
            raise
        finally:
            os.close(writing)  # the program holds its own
        noting = functools.partial(note, log_path)
        noting(f"started pid {process.pid}: {shlex.join(argv)}")
        return cls(process, noting, line_limit, (left_running, mark),
                   StderrPipe(reading, stderr_limit, _appending_to(log_file), noting,
                              "referee bridge --stderr-mb", log_file.close))

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
        its mark is handed over (the processes it left running are killed soon after)."""
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
            await self._stderr_done()
            if self.left_running:
                left_running, mark = self.left_running
                left_running.hand_over(mark, self.note)

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
        read: its stderr file is written up to its exit, whoever else holds the pipe)."""
        await self.process.exited()
        if self.stderr:
            self.stderr.read_now()

    async def _stderr_done(self) -> None:
        """At the stop, its stderr read as far as it is written now, then closed (a
        process it left running may hold the pipe for ever)."""
        if self.stderr:
            self.stderr.close()

    async def _discard_output(self) -> None:
        with suppress(ConnectionError):
            while await self.stdout.read(READ_CHUNK):
                pass


class StderrPipe:
    """The read end of a program's stderr, read as it comes into `sink`, `limit` bytes at
    most: there the pipe is closed, with a note, and the program's later writes fail
    (`EPIPE`; `SIGPIPE` kills a program that does not ignore it). A bot that writes without
    end fills neither a disk nor the referee's memory. A bridge's program writes into its
    match's log file, a hosted one into its `StderrRecord` (`referee.match.stderr`)."""

    def __init__(self, fd: int, limit: int, sink: Callable[[bytes], object],
                 note: Callable[[str], None], setting: str,
                 on_stop: Callable[[], None] | None = None):
        """Read `fd` (closed at the stop, when `on_stop` is called); `setting` names what
        sets `limit`, for the note."""
        os.set_blocking(fd, False)
        self.fd: int | None = fd
        self.limit = limit
        self.written = 0
        self.sink, self.note, self.setting, self.on_stop = sink, note, setting, on_stop
        loop = asyncio.get_running_loop()
        self.ended = loop.create_future()  # done once the pipe is closed, whoever closed it
        loop.add_reader(fd, self.read_now)

    def read_now(self) -> None:
        """Pass on what the pipe holds now; close it at its end or at the limit."""
        while self.fd is not None:
            try:
                data = os.read(self.fd, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._stop()
                return
            kept = data[:self.limit - self.written]
            self.written += len(kept)
            self.sink(kept)
            if self.written >= self.limit:
                self.note(f"stderr closed: it reached its limit of {self.limit} bytes "
                          f"({self.setting}); later writes to it fail")
                self._stop()

    def close(self) -> None:
        """Read what the pipe holds now, then stop reading; again is harmless."""
        self.read_now()
        self._stop()

    async def read_to_end(self, wait_s: float) -> None:
        """Once the pipe ends (every process holding it is gone), or `wait_s` later, when
        it is closed."""
        with suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.ended), wait_s)
        self.close()

    def _stop(self) -> None:
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        asyncio.get_running_loop().remove_reader(fd)
        os.close(fd)
        if self.on_stop:
            self.on_stop()
        if not self.ended.done():
            self.ended.set_result(None)


def _appending_to(file: BinaryIO) -> Callable[[bytes], None]:
    """Appends to `file`, dropping what it cannot write (a full disk): the match plays on."""
    def append(data: bytes) -> None:
        with suppress(OSError):
            file.write(data)
    return append


class LeftRunning:
    """Kills what stopped programs left running, for many programs at once: each stop hands
    over its program's mark, and one look at /proc, at most every `SWEEP_EVERY_S`, kills
    the processes of every mark handed over since (a look costs a few microseconds a
    process on the machine: too much to take at each stop of a busy bridge)."""

    def __init__(self, every_s: float = SWEEP_EVERY_S):
        self.every_s = every_s
        self.pending: dict[str, Callable[[str], None]] = {}  # mark -> its program's `note`
        self.sweeping: asyncio.Task[None] | None = None
        self.now = asyncio.Event()

    def hand_over(self, mark: str, note: Callable[[str], None]) -> None:
        """Kill what the program of `mark` left running, soon; `note` says how many."""
        self.pending[mark] = note
        if self.sweeping is None or self.sweeping.done():
            self.sweeping = asyncio.ensure_future(self._sweep_while_pending())

    async def flush(self) -> None:
        """Once every mark handed over so far is swept, without waiting for the next turn
        (a bridge closing)."""
        self.now.set()
        try:
            if self.sweeping is not None:
                await self.sweeping
        finally:
            self.now.clear()

    async def _sweep_while_pending(self) -> None:
        while self.pending:
            with suppress(TimeoutError):
                await asyncio.wait_for(self.now.wait(), self.every_s)
            marks, self.pending = self.pending, {}
            killed = await asyncio.to_thread(kill_marked, set(marks))
            for mark, count in killed.items():
                marks[mark](f"killed {count} process(es) it left running in a session of "
                            "their own")


def kill_marked(marks: set[str]) -> Counter[str]:
    """SIGKILL every process whose environment holds `MARK` with one of `marks`, looking
    again until a look finds none not killed yet (one may fork meanwhile); how many were
    killed, by mark."""
    killed: dict[int, str] = {}
    for _ in range(MARKED_LOOKS):
        found = {pid: mark for pid in _pids() if pid not in killed
                 and (mark := _mark(pid)) in marks}
        if not found:
            break
        killed |= {pid: mark for pid, mark in found.items() if _kill_if_marked(pid, mark)}
    return Counter(killed.values())


def _kill_if_marked(pid: int, mark: str) -> bool:
    """SIGKILL the process `pid` names if it still holds `mark`, through a pidfd: a pid the
    process left and another took meanwhile is never signalled."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:  # gone
        return False
    except OSError:  # a kernel without pidfds (before Linux 5.3): a plain kill
        with suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        return True
    try:
        if _mark(pid) != mark:  # the pidfd's process is the one read now
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


def _mark(pid: int) -> str | None:
    """The value of `MARK` in the environment of `pid` (None without, or when it cannot be
    read: gone, exited, or another user's)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            entries = environ.read().split(b"\0")
    except OSError:
        return None
    for entry in entries:
        if entry.startswith(_MARK_PREFIX):
            return entry[len(_MARK_PREFIX):].decode(errors="replace")
    return None


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
