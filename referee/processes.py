"""Processes: the demo's and the benchmarks' children (each in a session of its own, output
in a log file, stopped together with their own children), SIGTERM as Ctrl-C for the demo
and the benchmarks themselves, and a process's own CPU share."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from referee.config import MAX_NICE
from referee.match import cgroups
from referee.redis_server import wait_for_port


def spawn(argv: list[str], env: dict[str, str], log_path: Path | None = None,
          port: int | None = None, cwd: Path | None = None) -> subprocess.Popen:
    """Start `argv` in a new session, its output appended to `log_path` (or discarded);
    when `port` is given, wait until it listens (RuntimeError after 30 s)."""
    with open(log_path, "ab") if log_path else open(os.devnull, "wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                   cwd=cwd, start_new_session=True)
    if port is not None:
        wait_for_port(port, timeout=30)
    return process


SignalHandler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None
_SIGTERM = {signal.SIGTERM}
_fork = threading.local()  # whether the fork under way blocked SIGTERM (`_hold_sigterm`)


def interrupt_on_sigterm() -> SignalHandler:
    """From now on, SIGTERM stops this process as Ctrl-C does: its `finally`s run (its
    children, in sessions of their own, would otherwise be left running). A process forked
    from it (a multiprocessing pool's worker) still dies of SIGTERM, even one sent before
    it ran a line: a pool stops its workers so, holding their queue's lock. Returns the
    handler it replaces."""
    _keep_forks_killable()
    return signal.signal(signal.SIGTERM, _interrupt)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@functools.cache
def _keep_forks_killable() -> None:
    """While `_interrupt` handles SIGTERM, a fork starts with SIGTERM's default. The signal
    is blocked across the fork, then let through once the child has the default: CPython
    drops a signal that its handler caught in a child not yet set up (one sent at once, to
    a child that had not run yet)."""
    os.register_at_fork(before=_hold_sigterm, after_in_parent=_release_sigterm,
                        after_in_child=_default_sigterm)


def _hold_sigterm() -> None:
    _fork.held = (signal.getsignal(signal.SIGTERM) is _interrupt
                  and signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, _SIGTERM))


def _release_sigterm() -> None:
    if getattr(_fork, "held", False):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGTERM)


def _default_sigterm() -> None:
    if getattr(_fork, "held", False):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGTERM)  # one sent meanwhile kills it


def stop_all(processes: list[subprocess.Popen]) -> None:
    """SIGTERM each process group, then SIGKILL what is still there after 10 s."""
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    for process in processes:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


class Supervisor:
    """Named children with their logs in one folder; `stop_all` ends them all."""

    def __init__(self, log_dir: Path, env: dict[str, str]):
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.env = env
        self.children: list[tuple[str, subprocess.Popen]] = []

    def start(self, name: str, argv: list[str], port: int | None = None) -> subprocess.Popen:
        """Start `argv`; when `port` is given, wait until it listens (or fail with its log)."""
        log_path = self.log_dir / f"{name}.log"
        try:
            process = spawn(argv, self.env, log_path)
            self.children.append((name, process))
            if port is not None:
                wait_for_port(port, timeout=30)
        except RuntimeError:
            raise RuntimeError(f"{name} did not start listening on port {port}; "
                               f"see {log_path}") from None
        return process

    def check_alive(self) -> None:
        """Fail with a clear message when a child died."""
        for name, process in self.children:
            if process.poll() is not None:
                raise RuntimeError(f"{name} stopped (exit code {process.returncode}); "
                                   f"see {self.log_dir / (name + '.log')}")

    def stop_all(self) -> None:
        stop_all([process for _, process in reversed(self.children)])
        self.children.clear()


def lower_own_priority(nice: int) -> str:
    """Give this process the niceness `nice`, unless it already has a higher one (its
    children inherit it; only root may lower it again) and, when it leads
    its session, its session's autogroup's too: with autogroup scheduling the kernel shares
    the CPU between sessions by those, and nice only orders a session's own processes. At
    19, the lowest, it also joins an idle cgroup when it may (`cgroups.join_idle`): what
    nice cannot promise across sessions and cgroups, that a waking API gets a core at once.
    Returns what was done, for the start-up line."""
    if nice <= 0:
        return "priority unchanged"
    now = max(os.getpriority(os.PRIO_PROCESS, 0), nice)
    os.setpriority(os.PRIO_PROCESS, 0, now)
    done = [f"nice {now}"]
    if os.getsid(0) == os.getpid() and _set_autogroup(nice):
        done.append("its session's autogroup too")
    if nice >= MAX_NICE:
        done.append(cgroups.join_idle())
    return ", ".join(done)


def schedule_as_batch() -> str:
    """Schedule this process as a batch job (`SCHED_BATCH`), each of its threads (numpy's
    start at import) and those it starts from now on: a thread of it that wakes does not
    preempt the one running, it waits for that one to block or to use up its time slice. A
    worker woken by each bot's answer so runs fewer, longer turns and is preempted less
    (docs/performance.md §10). Returns what was done, for the start-up line."""
    try:
        for thread in Path("/proc/self/task").iterdir():
            with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
                os.sched_setscheduler(int(thread.name), os.SCHED_BATCH, os.sched_param(0))
    except (AttributeError, OSError) as error:  # not Linux, or refused
        return f"not a batch job ({error})"
    return "scheduled as a batch job"


def _set_autogroup(nice: int) -> bool:
    autogroup = Path("/proc/self/autogroup")
    try:
        if not autogroup.read_text().startswith("/autogroup-"):
            return False  # in a cgroup of its own: the kernel ignores the autogroup
        autogroup.write_text(str(nice))
    except OSError:  # no autogroup scheduling, or a kernel without the file
        return False
    return True


def python_module(module: str, *args: str) -> list[str]:
    """The argv that runs a module with this interpreter."""
    return [sys.executable, "-m", module, *args]
