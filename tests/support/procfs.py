"""What /proc says of the machine's processes, for tests that check what was left running
(processes, and this process's open descriptors)."""

from __future__ import annotations

import os
import signal
from contextlib import suppress
from pathlib import Path


def processes(where: str, token: str) -> list[int]:
    """The pids whose /proc/<pid>/<where> (cmdline, cgroup) holds `token`."""
    found = []
    for entry in Path("/proc").iterdir():
        with suppress(OSError):
            if entry.name.isdigit() and token.encode() in (entry / where).read_bytes():
                found.append(int(entry.name))
    return found


def stat_fields(pid: int) -> list[str]:
    """/proc/<pid>/stat's fields after the name (which may hold spaces and parentheses):
    [0] the state, [1] the parent's pid, [3] the session's id, [16] the nice value."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def live_processes() -> list[tuple[int, int, int]]:
    """(pid, parent pid, session id) of each live process (zombies left out)."""
    found = []
    for entry in Path("/proc").iterdir():
        with suppress(OSError):
            if entry.name.isdigit() and (fields := stat_fields(int(entry.name)))[0] != "Z":
                found.append((int(entry.name), int(fields[1]), int(fields[3])))
    return found


def open_descriptors() -> set[str]:
    """This process's open file descriptors."""
    return {entry.name for entry in Path("/proc/self/fd").iterdir()}


def daemons(token: str) -> list[int]:
    """The live processes with `token` in their command line that lead a session of their
    own (a daemon: what a stop of its starter's process group leaves running)."""
    return [pid for pid in processes("cmdline", token) if leads_its_session(pid)]


def leads_its_session(pid: int) -> bool:
    try:
        return stat_fields(pid)[3] == str(pid)
    except OSError:  # gone meanwhile
        return False


def kill_all(token: str) -> None:
    """SIGKILL the processes with `token` in their command line (a test's clean-up)."""
    for pid in processes("cmdline", token):
        with suppress(OSError):
            os.kill(pid, signal.SIGKILL)
