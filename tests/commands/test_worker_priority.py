"""`referee worker` yields the CPU to an API on its machine by default (issue 31, "The API
first, by default"): it gives itself nice 19, and its session's autogroup when it leads its
session, and at 19 it joins an idle cgroup (`cpu.idle`); `REFEREE_WORKER_NICE` and
`--nice` choose another value. It also schedules itself as a batch job (`SCHED_BATCH`,
`REFEREE_WORKER_BATCH`), every thread of it."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from referee.config import Config, ConfigError
from referee.match import cgroups
from tests.support.apitest import ROOT, worker_command, worker_env
from tests.support.procfs import stat_fields


@contextmanager
def running_worker(redis_url: str, *args: str, nice: str | None, own_session: bool = True,
                   **env_vars: str) -> Iterator[tuple[subprocess.Popen, str]]:
    """A worker (not in burst mode) and the start-up line it printed; stopped after."""
    env = {**worker_env(redis_url), **env_vars}
    env.pop("REFEREE_WORKER_NICE")  # the tests' own setting (tests/conftest.py)
    if nice is not None:
        env["REFEREE_WORKER_NICE"] = nice
    proc = subprocess.Popen(worker_command(*args), env=env, cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=own_session)
    try:
        assert proc.stdout is not None
        line = next((line for line in proc.stdout if "on queues" in line), None)
        assert line is not None, "the worker stopped before its start-up line"
        yield proc, line
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)


def niceness_of(pid: int) -> int:
    """The nice value in /proc/<pid>/stat (field 19; the name may hold spaces)."""
    return int(stat_fields(pid)[16])


def autogroup_nice(pid: int) -> int | None:
    """The nice value of the process's autogroup ("/autogroup-42 nice 10"), or None when the
    kernel has no autogroups or the process is in a cgroup that overrides it (the file is
    empty then)."""
    path = Path(f"/proc/{pid}/autogroup")
    words = path.read_text().split() if path.exists() else []
    return int(words[-1]) if words else None


def test_a_worker_gives_itself_nice_19_and_its_sessions_autogroup_by_default(redis_url):
    with running_worker(redis_url, nice=None) as (proc, line):
        assert "nice 19" in line, line
        assert niceness_of(proc.pid) == max(19, os.getpriority(os.PRIO_PROCESS, 0))
        if autogroup_nice(proc.pid) is not None:  # a kernel with autogroup scheduling
            assert autogroup_nice(proc.pid) == 19
            assert "autogroup" in line
        else:
            assert "autogroup" not in line


def cpu_cgroup_of(pid: int) -> Path:
    """The folder of the process's cgroup in the tree of the cpu controller (v1's cpu tree,
    else v2's)."""
    lines = [line.split(":", 2) for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines()]
    paths = {controller: path for _, names, path in lines for controller in names.split(",")}
    trees = cgroups.mounts()
    tree = "cpu" if "cpu" in trees else ""
    return cgroups.own_folder(trees[tree], paths[tree])


def test_a_worker_at_nice_19_runs_in_an_idle_cgroup(redis_url):
    """Nice 19 alone let a waking API wait up to 60 ms behind the workers (another session's
    autogroup); in a cgroup whose cpu.idle is 1 they run only on what the rest leaves. The
    tests run as root, where the worker may make it."""
    with running_worker(redis_url, nice=None) as (proc, line):
        folder = cpu_cgroup_of(proc.pid)
        assert folder.name == "referee-idle", (folder, line)
        assert (folder / "cpu.idle").read_text().strip() == "1"
        assert f"in the idle cgroup {folder}" in line


def test_a_worker_below_nice_19_stays_in_its_cgroup(redis_url):
    with running_worker(redis_url, nice="18") as (proc, line):
        assert cpu_cgroup_of(proc.pid) == cpu_cgroup_of(os.getpid())
        assert "idle cgroup" not in line and "nice 18" in line


def test_the_variable_and_the_option_choose_the_niceness(redis_url):
    with running_worker(redis_url, nice="3") as (proc, line):
        assert niceness_of(proc.pid) == 3 and "nice 3" in line
    with running_worker(redis_url, "--nice", "0", nice="3") as (proc, line):
        assert niceness_of(proc.pid) == os.getpriority(os.PRIO_PROCESS, 0)
        assert "priority unchanged" in line


def test_a_worker_in_anothers_session_leaves_that_sessions_autogroup_alone(redis_url):
    """The autogroup is the whole session's: a worker started from a shell would lower the
    shell's other jobs (an API among them) with it."""
    before = autogroup_nice(os.getpid())
    with running_worker(redis_url, nice=None, own_session=False) as (proc, line):
        assert niceness_of(proc.pid) == max(19, os.getpriority(os.PRIO_PROCESS, 0))
        assert autogroup_nice(os.getpid()) == before
        assert "autogroup" not in line


@pytest.mark.parametrize("value", ["20", "-1", "high"])
def test_a_bad_niceness_names_its_variable(value):
    with pytest.raises(ConfigError, match="REFEREE_WORKER_NICE"):
        Config.from_env({"REFEREE_WORKER_NICE": value})


def test_a_bad_niceness_stops_the_worker_with_one_line_and_exit_2(redis_url):
    env = {**worker_env(redis_url), "REFEREE_WORKER_NICE": "20"}
    done = subprocess.run(worker_command("--burst"), env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "REFEREE_WORKER_NICE" in done.stderr


def thread_policies(pid: int, threads: int) -> set[int]:
    """The scheduling policies of the process's threads, once it runs at least `threads`
    (a worker starts its event loop's and rq's threads after its start-up line)."""
    deadline = time.monotonic() + 60
    while len(tasks := list(Path(f"/proc/{pid}/task").iterdir())) < threads:
        assert time.monotonic() < deadline, f"{len(tasks)} threads after 60 s"
        time.sleep(0.05)
    policies = set()
    for task in tasks:
        with suppress(ProcessLookupError):  # a thread that ended meanwhile
            policies.add(os.sched_getscheduler(int(task.name)))
    return policies


def test_a_worker_schedules_all_its_threads_as_a_batch_job_by_default(redis_url):
    with running_worker(redis_url, nice=None) as (proc, line):
        assert "scheduled as a batch job" in line, line
        assert thread_policies(proc.pid, threads=3) == {os.SCHED_BATCH}


def test_the_variable_turns_the_batch_policy_off(redis_url):
    with running_worker(redis_url, nice="0", REFEREE_WORKER_BATCH="0") as (proc, line):
        assert "batch" not in line, line
        assert thread_policies(proc.pid, threads=3) == {os.SCHED_OTHER}


@pytest.mark.parametrize("value", ["2", "batch", "-1"])
def test_a_bad_batch_setting_names_its_variable(value):
    with pytest.raises(ConfigError, match="REFEREE_WORKER_BATCH"):
        Config.from_env({"REFEREE_WORKER_BATCH": value})
