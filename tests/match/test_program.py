"""A stdin/stdout program (`referee.match.program`) is stopped whatever it left running: a
process of its own in a session of its own that holds its stdout neither delays the stop,
nor hangs it, nor makes its note say the program was killed when it exited, nor keeps a
descriptor open in the process that ran it (a bridge runs thousands of programs).

The programs are real processes; the garbage collector is held off so that only `stop` can
have closed what is closed. The stop is bounded by a generous timeout, never timed."""

import asyncio
import os
import secrets
import signal
import time

import pytest

from referee.match.program import Program
from tests.support.procfs import open_descriptors, processes, stat_fields

SLOW_MACHINE_S = 60


def kill_when_seen(token: str, timeout_s: float = SLOW_MACHINE_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not (found := processes("cmdline", token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in found:
        os.kill(pid, signal.SIGKILL)


async def daemon_started(token: str, program: Program) -> None:
    """Once a process other than the program, with `token` in its command line, leads a
    session of its own: before, a stop would kill it with the program's group, leaving
    no daemon to test the stop against (and `kill_when_seen` waiting for one)."""
    deadline = time.monotonic() + SLOW_MACHINE_S
    while not any(pid != program.process.pid and leads_its_session(pid)
                  for pid in processes("cmdline", token)):
        assert time.monotonic() < deadline, "the daemon never started"
        await asyncio.sleep(0.02)


def leads_its_session(pid: int) -> bool:
    try:
        return stat_fields(pid)[3] == str(pid)
    except OSError:  # gone meanwhile
        return False


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
        program = await Program.start(["sh", "-c", script.format(token=token)], log, 1 << 16)
        await program.tell(b'{"update": 1}')
        if "{token}" in script:
            await daemon_started(token, program)
        await asyncio.wait_for(program.stop(None, 1.0), SLOW_MACHINE_S)
        return before, open_descriptors()

    try:
        before, after = asyncio.run(run())
        assert after <= before, f"left open: {sorted(after - before)}"
        assert how_it_ended in log.read_text()
    finally:
        if "{token}" in script:
            kill_when_seen(token)
