"""A stdin/stdout program (`referee.match.program`) is stopped whatever it left running: a
process of its own in a session of its own that holds its stdout neither delays the stop,
nor hangs it, nor makes its note say the program was killed when it exited, nor keeps a
descriptor open in the process that ran it (a bridge runs thousands of programs); and it
is killed after the stop (`LeftRunning`), with what it started, but nothing another
program started.

The programs are real processes; the garbage collector is held off so that only `stop` can
have closed what is closed. The stop is bounded by a generous timeout, never timed."""

import asyncio
import re
import secrets
import sys
import time

import pytest

from referee.match.program import LeftRunning, Program, ProgramDied
from tests.support.procfs import daemons, kill_all, open_descriptors, processes

SLOW_MACHINE_S = 60
STDERR_LIMIT = 1 << 20


async def daemon_started(token: str, program: Program) -> None:
    """Once a process other than the program, with `token` in its command line, leads a
    session of its own: before, a stop would kill it with the program's group, leaving
    no daemon to test the stop against."""
    deadline = time.monotonic() + SLOW_MACHINE_S
    while not any(pid != program.process.pid for pid in daemons(token)):
        assert time.monotonic() < deadline, "the daemon never started"
        await asyncio.sleep(0.02)


async def gone(token: str) -> bool:
    """Whether every process with `token` in its command line is gone (a killed one may
    take a moment to exit; a slow machine gets a minute)."""
    deadline = time.monotonic() + SLOW_MACHINE_S
    while processes("cmdline", token):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


@pytest.mark.parametrize(("script", "how_it_ended"), [
    ("exec cat", "stopped: exited with code 0"),
    # it exits at EOF; before, its stop waited out the grace for the daemon's pipe and
    # noted that it was killed
    ("setsid sleep {token} & exec cat", "stopped: exited with code 0"),
    # it ignores EOF and is killed; before, its stop then waited on the daemon for ever
    ("setsid sleep {token} & exec sleep {token}", "killed: still running 1 s after"),
])
def test_a_stopped_program_leaves_no_descriptor_open(tmp_path, no_garbage_collection,
                                                     script, how_it_ended):
    token = f"1000.{secrets.randbelow(10**9)}"
    log = tmp_path / "stderr.log"

    async def run() -> tuple[set[str], set[str]]:
        before = open_descriptors()
        left_running = LeftRunning()
        program = await Program.start(["sh", "-c", script.format(token=token)], log, 1 << 16,
                                      left_running, STDERR_LIMIT)
        await program.tell(b'{"update": 1}')
        if "{token}" in script:
            await daemon_started(token, program)
        await asyncio.wait_for(program.stop(None, 1.0), SLOW_MACHINE_S)
        await asyncio.wait_for(left_running.flush(), SLOW_MACHINE_S)
        return before, open_descriptors()

    try:
        before, after = asyncio.run(run())
        assert after <= before, f"left open: {sorted(after - before)}"
        assert how_it_ended in log.read_text()
    finally:
        kill_all(token)


@pytest.mark.parametrize("script", [
    # a daemon of the program's own: its group's kill leaves it running
    "setsid sleep {token} & exec cat",
    # a double fork: the daemon's parent exited at once, the program is not its parent
    "(setsid sleep {token} &); exec cat",
    # a daemon that starts a process of its own, and a program that ignores EOF
    "setsid sh -c 'sleep {token} & exec sleep {token}' & exec sleep {token}",
])
def test_what_a_program_left_running_in_a_session_of_its_own_is_killed_after_its_stop(
        tmp_path, script):
    """Killed at the sweep's next turn (`LeftRunning`, every half second), not waited for."""
    token = f"1000.{secrets.randbelow(10**9)}"
    log = tmp_path / "stderr.log"

    async def run() -> bool:
        program = await Program.start(["sh", "-c", script.format(token=token)], log, 1 << 16,
                                      LeftRunning(), STDERR_LIMIT)
        await daemon_started(token, program)
        await asyncio.wait_for(program.stop(None, 1.0), SLOW_MACHINE_S)
        return await gone(token)

    try:
        assert asyncio.run(run()), f"left running: {processes('cmdline', token)}"
        assert re.search(r"killed [12] process\(es\) it left running", log.read_text())
    finally:
        kill_all(token)


def test_a_stop_kills_what_its_own_program_left_running_and_nothing_of_another(tmp_path):
    """Each program has a mark of its own: two programs of one bridge, each with a daemon;
    stopping the first leaves the second's daemon running. A flush sweeps at once."""
    tokens = [f"1000.{secrets.randbelow(10**9)}" for _ in range(2)]

    async def run() -> tuple[bool, list[int], bool]:
        left_running = LeftRunning(every_s=SLOW_MACHINE_S)  # only the flushes sweep
        programs = [await Program.start(["sh", "-c", f"setsid sleep {token} & exec cat"],
                                        tmp_path / f"{token}.log", 1 << 16, left_running,
                                        STDERR_LIMIT)
                    for token in tokens]
        for token, program in zip(tokens, programs, strict=True):
            await daemon_started(token, program)
        await asyncio.wait_for(programs[0].stop(None, 1.0), SLOW_MACHINE_S)
        await asyncio.wait_for(left_running.flush(), SLOW_MACHINE_S)
        first_gone, second_left = await gone(tokens[0]), daemons(tokens[1])
        await asyncio.wait_for(programs[1].stop(None, 1.0), SLOW_MACHINE_S)
        await asyncio.wait_for(left_running.flush(), SLOW_MACHINE_S)
        return first_gone, second_left, await gone(tokens[1])

    try:
        first_gone, second_left, second_gone = asyncio.run(run())
        assert first_gone and second_left and second_gone
    finally:
        for token in tokens:
            kill_all(token)


def test_a_program_that_left_nothing_running_says_nothing_of_it(tmp_path):
    log = tmp_path / "stderr.log"

    async def run() -> None:
        left_running = LeftRunning()
        program = await Program.start(["cat"], log, 1 << 16, left_running, STDERR_LIMIT)
        await asyncio.wait_for(program.stop(None, 1.0), SLOW_MACHINE_S)
        await asyncio.wait_for(left_running.flush(), SLOW_MACHINE_S)

    asyncio.run(run())
    assert "stopped: exited with code 0" in log.read_text()
    assert "left running" not in log.read_text()


def test_stderr_is_kept_up_to_its_limit_then_closed_and_the_program_told_so(tmp_path):
    """The program writes 1 MiB on stderr, 64 KiB are kept; its writes past them fail (it
    says how on stdout), its answers go on, and its log says where stderr was cut."""
    log = tmp_path / "stderr.log"
    script = ("import sys\n"
              "try:\n"
              "    for _ in range(1024): sys.stderr.buffer.write(b'e' * 1023 + b'\\n');"
              " sys.stderr.flush()\n"
              "    print('wrote all', flush=True)\n"
              "except BrokenPipeError:\n"
              "    print('broken pipe', flush=True)\n"
              "for line in sys.stdin: print('answer', flush=True)\n")

    async def run() -> tuple[bytes, bytes]:
        left_running = LeftRunning()
        program = await Program.start([sys.executable, "-c", script], log, 1 << 16,
                                      left_running, 64 << 10)
        first = await asyncio.wait_for(program.lines.next_line(), SLOW_MACHINE_S)
        answer = await asyncio.wait_for(program.ask(b"{}"), SLOW_MACHINE_S)
        await asyncio.wait_for(program.stop(None, 1.0), SLOW_MACHINE_S)
        await asyncio.wait_for(left_running.flush(), SLOW_MACHINE_S)
        return first, answer

    first, answer = asyncio.run(run())
    assert (first, answer) == (b"broken pipe", b"answer")
    text = log.read_bytes()
    kept = [line for line in text.split(b"\n") if line and set(line) == {ord("e")}]
    assert len(kept) * 1024 == 64 << 10 and all(len(line) == 1023 for line in kept)
    assert (b"stderr closed: it reached its limit of 65536 bytes (referee bridge --stderr-mb)"
            in text)


def test_what_the_program_wrote_on_stderr_before_it_exited_comes_before_the_note_of_it(
        tmp_path):
    log = tmp_path / "stderr.log"

    async def run() -> None:
        left_running = LeftRunning()
        program = await Program.start(["sh", "-c", "read line; echo last words >&2; exit 3"],
                                      log, 1 << 16, left_running, STDERR_LIMIT)
        with pytest.raises(ProgramDied):
            await asyncio.wait_for(program.ask(b"{}"), SLOW_MACHINE_S)
        await asyncio.wait_for(program.stop(None, 1.0), SLOW_MACHINE_S)
        await asyncio.wait_for(left_running.flush(), SLOW_MACHINE_S)

    asyncio.run(run())
    text = log.read_text()
    assert "last words" in text and "crash: the program exited with code 3" in text, text
    assert text.index("last words") < text.index("crash:"), text
