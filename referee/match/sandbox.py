"""Hosted bots (issue 29): uploaded source, built and run as hostile code, one sandboxed
process per match and seat, kept for the whole match and spoken to as the bridge speaks to
its programs (`referee.match.program`: a JSON line in, a JSON line out).

The sandbox is bubblewrap's, not one of our own. bwrap starts with an empty environment as
an unprivileged uid and gid (REFEREE_SANDBOX_UID/GID, default 65534; no supplementary
groups) and makes new user, pid, network, ipc, uts and cgroup namespaces: the program sees
no process of the machine (`kill -9 -1` reaches its own), no network but a loopback of its
own, no capability, and may make no user namespace. Its files: /usr (and the links of
Debian's merged /usr), the few /etc files the languages need, a passwd of its own user, a
new /proc, a minimal /dev, a private /tmp of `tmp_bytes` and its bot's folder at /bot
(writable for the build, read-only in a match); the root is read-only. Its stderr is a
pipe the worker reads, not a file of the host (`referee.match.stderr`). A seccomp filter
(libseccomp's, through pyseccomp; bwrap loads it) answers EPERM to the system calls that
widen the kernel's attack surface or reach other processes (ptrace, mount, bpf, io_uring,
keyrings, ...), lets personality(2) keep the default persona only, and kills a process that
calls in another ABI (x32, i386).

Each sandbox has cgroups of its own (v2, or v1's memory, pids, cpu and cpuacct trees): memory
without swap, a number of tasks (threads included; RLIMIT_NPROC would count every sandbox
of the uid together), a CPU quota, and the CPU time used, which a watchdog holds to the
match's budget. The new process enters them before it execs bwrap, so nothing it starts is
outside; it sets its rlimits (open files, file size, no core) there too, then drops to the
sandbox uid. Stopping kills every task of the cgroups and removes them, so a daemon does
not outlive its match (nor does it outlive the program, pid 1 of its pid namespace).
"""

from __future__ import annotations

import asyncio
import errno
import functools
import glob
import logging
import math
import os
import re
import resource
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from referee.errors import RefereeError
from referee.match import cgroups
from referee.match.program import (
    READ_CHUNK,
    Child,
    Program,
    ProgramDied,
    StderrPipe,
    describe_exit,
    spawn,
)
from referee.match.stderr import StderrRecord

log = logging.getLogger(__name__)

MIB = 1 << 20
SANDBOX_PATH = "/usr/bin:/bin"
SANDBOX_ENV = {"PATH": SANDBOX_PATH, "HOME": "/tmp", "LANG": "C.UTF-8"}
BOT_DIR = "/bot"
ETC_FILES = ("/etc/ld.so.cache", "/etc/alternatives", "/etc/java-*")  # java's conf/ links there
MERGED_USR_LINKS = ("/bin", "/lib", "/lib64", "/sbin")
NO_BWRAP = "bwrap (bubblewrap) is not on PATH: install it (scripts/install does)"
BUILD_LOG_BYTES = 64 * 1024
VERSION_WAIT_S = 10.0
CHECK_WAIT_S = 30.0
CGROUP_FOLDER = "referee-sandbox"
CGROUP_NAME = re.compile(r"(\d+)-[0-9a-f]{32}")  # the pid of its maker, a random part
V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
V2_CONTROLLERS = ("memory", "pids", "cpu")
CPU_PERIOD_US = 100_000
CPU_LOOK_MIN_S = 0.05
KILL_WAIT_S = 5.0
KILL_POLL_S = 0.005

# EPERM for these (the rest is allowed): debugging and reading other processes, mounts and
# namespaces, kernel modules and keyrings, eBPF, io_uring, perf, the clock, swap, reboot,
# inotify;
# and EAFNOSUPPORT for a socket of any family but AF_UNIX (`_seccomp_program`)
DENIED_SYSCALLS = (
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd",
    "kcmp", "mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig", "fsmount",
    "fspick", "open_tree", "move_mount", "mount_setattr", "unshare", "setns", "bpf", "keyctl",
    "add_key", "request_key", "perf_event_open", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "swapon", "swapoff", "reboot", "acct",
    "iopl", "ioperm", "userfaultfd", "open_by_handle_at", "name_to_handle_at", "syslog",
    "settimeofday", "clock_settime", "quotactl", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "lookup_dcookie",
    # per-user kernel counters, and every sandbox runs as the same uid: one sandbox's 128
    # inotify instances left the next none (EMFILE)
    "inotify_init", "inotify_init1",
)


class SandboxUnavailable(RefereeError):
    """This machine cannot make sandboxes; the message (one line) says what is missing."""


# ----- languages --------------------------------------------------------------------------
@dataclass(frozen=True)
class Language:
    """A language hosted bots are written in: the file its source starts from, and the
    command lines (run in /bot) that build and run it."""

    name: str
    version: str
    entry: str
    build: tuple[str, ...]  # also for the languages without a compiler: a syntax check
    run: tuple[str, ...]

    def public(self) -> dict[str, str]:
        """What GET /languages shows of it."""
        return {"name": self.name, "version": self.version, "build": shlex.join(self.build),
                "run": shlex.join(self.run)}


@dataclass(frozen=True)
class _Toolchain:
    entry: str
    build: tuple[str, ...]
    run: tuple[str, ...]
    probe: tuple[str, ...]  # prints the version
    pattern: str  # finds it in the probe's output (its first group)
    label: str = "{}"


# The JVM sizes its threads by the machine's cores and its heap by the machine's memory (it
# sees no cgroup in the sandbox): one core's worth of threads, and a heap that fits
JVM_OPTIONS = ("-XX:+UseSerialGC", "-XX:ActiveProcessorCount=1")
TOOLCHAINS = {
    "python3": _Toolchain("main.py", ("python3", "-m", "py_compile", "main.py"),
                          ("python3", "-u", "main.py"), ("python3", "--version"), r"Python (\S+)"),
    # every source file at the top of the bot's folder (a shell expands the pattern)
    "c": _Toolchain("main.c", ("sh", "-c", "gcc -O2 -o main *.c -lm"), ("./main",),
                    ("gcc", "-dumpfullversion"), r"(\S+)", "gcc {}"),
    "cpp": _Toolchain("main.cpp", ("sh", "-c", "g++ -O2 -std=c++17 -o main *.cpp"),
                      ("./main",), ("g++", "-dumpfullversion"), r"(\S+)", "g++ {}"),
    "node": _Toolchain("main.js", ("node", "--check", "main.js"), ("node", "main.js"),
                       ("node", "--version"), r"(v\S+)"),
    "java": _Toolchain("Main.java",
                       ("javac", *(f"-J{option}" for option in JVM_OPTIONS), "-J-Xmx512m",
                        "Main.java"),
                       ("java", *JVM_OPTIONS, "-Xmx256m", "Main"), ("java", "-version"),
                       r'version "([^"]+)"'),
    "perl": _Toolchain("main.pl", ("perl", "-c", "main.pl"), ("perl", "main.pl"),
                       ("perl", "-e", "print $^V"), r"v(\S+)"),
}


LANGUAGE_NAMES = tuple(TOOLCHAINS)


def entry_file(language: str) -> str:
    """The file a bot in `language` (one of LANGUAGE_NAMES) starts from, whether this
    machine runs the language or not."""
    return TOOLCHAINS[language].entry


@functools.cache
def languages() -> dict[str, Language]:
    """The languages whose tools this machine has where the sandbox sees them (/usr)."""
    found = {}
    for name, chain in TOOLCHAINS.items():
        version = _version(chain)
        if version is not None:
            found[name] = Language(name, version, chain.entry, chain.build, chain.run)
    return found


def _version(chain: _Toolchain) -> str | None:
    """The toolchain's version; None when one of its tools is missing."""
    tools = {argv[0] for argv in (chain.build, chain.run, chain.probe)
             if not argv[0].startswith("./")}
    for tool in tools:
        path = shutil.which(tool, path=SANDBOX_PATH)
        if path is None or not os.path.realpath(path).startswith("/usr/"):
            return None
    try:
        probe = subprocess.run(chain.probe, capture_output=True, text=True, env=SANDBOX_ENV,
                               timeout=VERSION_WAIT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(chain.pattern, probe.stdout + probe.stderr)
    return chain.label.format(found[1]) if found else None


# ----- limits -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Limits:
    """What bounds one sandbox, and the unprivileged uid and gid it runs as."""

    memory_bytes: int = 512 * MIB  # all its processes, no swap
    cpu_s: float = 60.0  # CPU time of the match, all its processes
    cpu_cores: float = 1.0  # the CPU quota
    processes: int = 64  # tasks, threads included
    open_files: int = 256
    file_bytes: int = 16 * MIB  # the largest file written; the most stderr or build output read
    tmp_bytes: int = 64 * MIB
    line_bytes: int = MIB  # the longest answer line
    build_s: float = 60.0  # wall time
    build_memory_bytes: int = 1024 * MIB
    uid: int = 65534
    gid: int = 65534

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Limits:
        """The defaults, but for the REFEREE_SANDBOX_* variables set; ValueError naming the
        variable when one is not a number above 0 (an integer where the unit is)."""
        values: dict[str, Any] = {field: _positive(variable, environ[variable], unit)
                                  for variable, field, unit in LIMIT_VARIABLES
                                  if variable in environ}
        return cls(**values)


LIMIT_VARIABLES: tuple[tuple[str, str, int | float], ...] = (
    ("REFEREE_SANDBOX_MEMORY_MB", "memory_bytes", MIB),
    ("REFEREE_SANDBOX_CPU_S", "cpu_s", 1.0),
    ("REFEREE_SANDBOX_CPU_CORES", "cpu_cores", 1.0),
    ("REFEREE_SANDBOX_PROCESSES", "processes", 1),
    ("REFEREE_SANDBOX_OPEN_FILES", "open_files", 1),
    ("REFEREE_SANDBOX_FILE_MB", "file_bytes", MIB),
    ("REFEREE_SANDBOX_TMP_MB", "tmp_bytes", MIB),
    ("REFEREE_SANDBOX_LINE_KB", "line_bytes", 1024),
    ("REFEREE_SANDBOX_BUILD_S", "build_s", 1.0),
    ("REFEREE_SANDBOX_BUILD_MEMORY_MB", "build_memory_bytes", MIB),
    ("REFEREE_SANDBOX_UID", "uid", 1),
    ("REFEREE_SANDBOX_GID", "gid", 1),
)
"""(variable, field of Limits, unit): an integer unit takes an integer."""


def _positive(variable: str, text: str, unit: int | float) -> int | float:
    try:
        number = int(text) if isinstance(unit, int) else float(text)
    except ValueError:
        kind = "an integer" if isinstance(unit, int) else "a number"
        raise ValueError(f"{variable}={text!r} is not {kind}") from None
    if not 0 < number < math.inf:
        raise ValueError(f"{variable}={text!r} must be above 0")
    return number * unit


# ----- seccomp ----------------------------------------------------------------------------
@functools.cache
def _seccomp_program() -> bytes:
    """The seccomp filter as BPF, for bwrap to load (made once per process)."""
    try:
        # imported here: it raises at import when libseccomp is missing
        import pyseccomp  # type: ignore[import-untyped]
    except (ImportError, RuntimeError) as error:
        raise SandboxUnavailable(f"seccomp cannot be loaded: {error}") from None
    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    rules.set_attr(pyseccomp.Attr.ACT_BADARCH, pyseccomp.KILL_PROCESS)  # the native ABI only
    denied = pyseccomp.ERRNO(errno.EPERM)
    try:
        for name in DENIED_SYSCALLS:
            rules.add_rule(denied, name)
        # sockets of the local kind only: the sandbox's network namespace reaches nothing,
        # but its loopback's TCP and UDP buffers are the kernel's, not charged to the
        # sandbox's memory (1.2 GiB queued under a 128 MiB limit), and AF_VSOCK is the
        # whole machine's
        rules.add_rule(pyseccomp.ERRNO(errno.EAFNOSUPPORT), "socket",
                       pyseccomp.Arg(0, pyseccomp.NE, socket.AF_UNIX))
        # personality(2) may keep the default persona (0) or ask for it (0xffffffff): any
        # other 32 bits have a 1 followed, cyclically, by a 0, and each such pair is a rule
        for bit in range(32):
            pair = 1 << bit | 1 << (bit + 1) % 32
            rules.add_rule(denied, "personality",
                           pyseccomp.Arg(0, pyseccomp.MASKED_EQ, pair, 1 << bit))
        with tempfile.TemporaryFile() as program:
            rules.export_bpf(program)
            program.seek(0)
            return program.read()
    except OSError as error:
        raise SandboxUnavailable(f"libseccomp cannot make the seccomp filter: {error}"
                                 ) from None


# ----- cgroups ----------------------------------------------------------------------------
@dataclass(frozen=True)
class _Hierarchy:
    """Where the sandboxes' cgroups go: the folder of each controller (v1 has a tree per
    controller, or per few; v2 one tree for all)."""

    version: int
    folders: Mapping[str, Path]

    def settings(self, memory_bytes: int, limits: Limits) -> list[tuple[str, str, str, bool]]:
        """(controller, file, value, required) for a new sandbox."""
        quota = max(1000, round(limits.cpu_cores * CPU_PERIOD_US))
        if self.version == 2:
            return [("memory", "memory.max", str(memory_bytes), True),
                    ("memory", "memory.swap.max", "0", False),
                    ("pids", "pids.max", str(limits.processes), True),
                    ("cpu", "cpu.max", f"{quota} {CPU_PERIOD_US}", True)]
        return [("memory", "memory.limit_in_bytes", str(memory_bytes), True),
                ("memory", "memory.memsw.limit_in_bytes", str(memory_bytes), False),
                ("pids", "pids.max", str(limits.processes), True),
                ("cpu", "cpu.cfs_period_us", str(CPU_PERIOD_US), True),
                ("cpu", "cpu.cfs_quota_us", str(quota), True)]

    @property
    def cpu_usage(self) -> tuple[str, str, str, float]:
        """(controller, file, key, seconds per unit) of the CPU time used."""
        if self.version == 2:
            return "cpu", "cpu.stat", "usage_usec", 1e-6
        return "cpuacct", "cpuacct.usage", "", 1e-9

    @property
    def oom_kills(self) -> tuple[str, str, str]:
        """(controller, file, key) of the count of processes killed out of memory."""
        if self.version == 2:
            return "memory", "memory.events", "oom_kill"
        return "memory", "memory.oom_control", "oom_kill"


@functools.cache
def _hierarchy() -> _Hierarchy:
    """cgroup v2 when its tree has the controllers, else v1's trees; SandboxUnavailable
    when neither does. v1: under the process's own cgroups (its limits hold the sandboxes
    too); v2: beside its own (a cgroup that has processes cannot delegate controllers), at
    the top when it is the root."""
    hierarchy = _found_hierarchy()
    _remove_stale(hierarchy)
    return hierarchy


def _found_hierarchy() -> _Hierarchy:
    mounts, own = cgroups.mounts(), cgroups.own()
    if "" in mounts and "" in own:
        folder = cgroups.own_folder(mounts[""], own[""])
        parent = folder if folder == mounts[""][1] else folder.parent
        if set(V2_CONTROLLERS) <= set((parent / "cgroup.controllers").read_text().split()):
            return _delegated(parent / CGROUP_FOLDER)
    if all(controller in mounts for controller in V1_CONTROLLERS):
        folders = {controller: cgroups.own_folder(mounts[controller], own.get(controller, "/"))
                   / CGROUP_FOLDER for controller in V1_CONTROLLERS}
        try:
            for folder in set(folders.values()):
                folder.mkdir(exist_ok=True)
        except OSError as error:
            raise SandboxUnavailable(f"cannot make the sandboxes' cgroup: {error}") from None
        return _Hierarchy(1, folders)
    raise SandboxUnavailable("no cgroup tree has the memory, pids and cpu controllers (v2), "
                             "nor are v1's memory, pids, cpu and cpuacct mounted")


def _delegated(folder: Path) -> _Hierarchy:
    """The v2 folder of the sandboxes' cgroups, the controllers enabled down to them."""
    enable = " ".join(f"+{controller}" for controller in V2_CONTROLLERS)
    try:
        (folder.parent / "cgroup.subtree_control").write_text(enable)
        folder.mkdir(exist_ok=True)
        (folder / "cgroup.subtree_control").write_text(enable)
    except OSError as error:
        hint = (" (a cgroup with processes cannot delegate: run the worker in a cgroup of "
                "its own)" if error.errno == errno.EBUSY else "")
        raise SandboxUnavailable(f"cannot enable the {enable} controllers for {folder}: "
                                 f"{error}{hint}") from None
    return _Hierarchy(2, {controller: folder for controller in V2_CONTROLLERS})


def _remove_stale(hierarchy: _Hierarchy) -> None:
    """Remove the cgroups left by a process that is gone (a worker killed before it could
    stop its sandboxes, whose processes died with it): a name starts with its maker's pid."""
    for folder in set(hierarchy.folders.values()):
        for cgroup in folder.iterdir():
            made = CGROUP_NAME.fullmatch(cgroup.name)
            if made and not _alive(int(made[1])):
                with suppress(OSError):  # processes in it still: leave it
                    cgroup.rmdir()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _read_number(path: Path, key: str) -> int | None:
    """The number a cgroup file holds, or the one after `key` on one of its lines; None
    once the cgroup is gone."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    if not key:
        return int(text)
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return 0


class _Cgroup:
    """The cgroups of one sandbox: a folder of one unique name in each tree."""

    def __init__(self, hierarchy: _Hierarchy, name: str):
        self.hierarchy = hierarchy
        self.name = name
        self.folders = {controller: folder / name
                        for controller, folder in hierarchy.folders.items()}
        self.dirs = sorted(set(self.folders.values()))
        self.final_cpu_s: float | None = None  # once it is removed

    @classmethod
    def make(cls, memory_bytes: int, limits: Limits) -> _Cgroup:
        hierarchy = _hierarchy()
        cgroup = cls(hierarchy, f"{os.getpid()}-{uuid.uuid4().hex}")
        try:
            for folder in cgroup.dirs:
                folder.mkdir()
            for controller, file, value, required in hierarchy.settings(memory_bytes, limits):
                path = cgroup.folders[controller] / file
                if required or path.exists():
                    path.write_text(value)
        except OSError as error:
            cgroup.remove()
            raise SandboxUnavailable(f"cannot make a sandbox's cgroup: {error}") from None
        return cgroup

    def open_procs(self) -> list[int]:
        """Descriptors of its cgroup.procs files, for the new process to enter by."""
        return [os.open(folder / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
                for folder in self.dirs]

    def cpu_seconds(self) -> float:
        controller, file, key, unit = self.hierarchy.cpu_usage
        used = _read_number(self.folders[controller] / file, key)
        return (self.final_cpu_s or 0.0) if used is None else used * unit

    def oom_kills(self) -> int:
        controller, file, key = self.hierarchy.oom_kills
        return _read_number(self.folders[controller] / file, key) or 0

    def pids(self) -> set[int]:
        found: set[int] = set()
        for folder in self.dirs:
            with suppress(FileNotFoundError):
                found.update(map(int, (folder / "cgroup.procs").read_text().split()))
        return found

    def kill(self) -> None:
        """SIGKILL every process in it (one it forks meanwhile, the next call kills)."""
        with suppress(FileNotFoundError):  # no cgroup.kill before Linux 5.14
            if self.hierarchy.version == 2:
                (self.dirs[0] / "cgroup.kill").write_text("1")
                return
        for pid in self.pids():
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    async def destroy(self) -> None:
        """Kill every process in it, wait until they are gone, then remove it."""
        give_up = time.monotonic() + KILL_WAIT_S
        while not self._removed(give_up):
            await asyncio.sleep(KILL_POLL_S)

    def destroy_now(self) -> None:
        """destroy(), blocking."""
        give_up = time.monotonic() + KILL_WAIT_S
        while not self._removed(give_up):
            time.sleep(KILL_POLL_S)

    def _removed(self, give_up: float) -> bool:
        """One step of destroying it: kill what is in it, remove it once nothing is (the
        last to go may hold it a moment after it exited); whether that is done, or given
        up on at `give_up`."""
        self.kill()
        if left := self.pids():
            problem = f"processes {sorted(left)} are still in it"
        else:
            if self.final_cpu_s is None:
                self.final_cpu_s = self.cpu_seconds()
            try:
                self.remove()
                return True
            except OSError as error:
                problem = str(error)
        if time.monotonic() < give_up:
            return False
        log.warning("sandbox %s: its cgroup stays: %s", self.name, problem)
        return True

    def remove(self) -> None:
        """Remove its folders (they hold no process any more)."""
        for folder in self.dirs:
            with suppress(FileNotFoundError):
                folder.rmdir()


# ----- starting a sandbox -----------------------------------------------------------------
class _Options(TypedDict):
    """The keywords of subprocess.Popen (and `referee.match.program.spawn`) for bwrap."""

    env: dict[str, str]
    pass_fds: tuple[int, ...]
    start_new_session: bool
    preexec_fn: Callable[[], None]


@contextmanager
def _launch(command: tuple[str, ...], bot_dir: Path | None, writable: bool, limits: Limits,
            cgroup: _Cgroup) -> Iterator[tuple[list[str], _Options]]:
    """bwrap's argv for `command` in a sandbox, and the keywords of subprocess.Popen (or
    `referee.match.program.spawn`) that start it in `cgroup` as the sandbox uid. The
    descriptors bwrap reads are closed after the block (the child has its own)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable(NO_BWRAP)
    descriptors: list[int] = []
    try:
        seccomp, passwd, group = (_data_descriptor(data, descriptors) for data in (
            _seccomp_program(), f"sandbox:x:{limits.uid}:{limits.gid}::/tmp:/bin/false\n",
            f"sandbox:x:{limits.gid}:\n"))
        procs = cgroup.open_procs()
        descriptors += procs
        argv = [bwrap, *_bwrap_options(bot_dir, writable, limits.tmp_bytes),
                "--ro-bind-data", str(passwd), "/etc/passwd",
                "--ro-bind-data", str(group), "/etc/group",
                "--remount-ro", "/", "--seccomp", str(seccomp), "--", *command]
        yield argv, _Options(env={}, pass_fds=(seccomp, passwd, group),
                             start_new_session=True, preexec_fn=_entering(procs, limits))
    finally:
        for descriptor in descriptors:
            os.close(descriptor)


def _bwrap_options(bot_dir: Path | None, writable: bool, tmp_bytes: int) -> list[str]:
    # --as-pid-1: the command is the namespace's init, the child bwrap waits for. bwrap's
    # own init would outlive bwrap a moment, an orphan for the machine's init to reap
    # (until then its cgroup cannot be removed; a worker that is pid 1 would never reap it)
    options = ["--unshare-all", "--unshare-user", "--disable-userns", "--as-pid-1",
               "--die-with-parent", "--new-session", "--cap-drop", "ALL",
               "--hostname", "sandbox", "--clearenv"]
    for name, value in SANDBOX_ENV.items():
        options += ["--setenv", name, value]
    options += ["--ro-bind", "/usr", "/usr", *_system_binds(), "--proc", "/proc",
                "--dev", "/dev", "--size", str(tmp_bytes), "--tmpfs", "/tmp",
                # --dev's own /dev/shm would be a second scratch space, bounded by memory only
                "--size", str(tmp_bytes), "--tmpfs", "/dev/shm"]
    if bot_dir is not None:
        options += ["--bind" if writable else "--ro-bind", str(bot_dir), BOT_DIR,
                    "--chdir", BOT_DIR]
    return options


@functools.cache
def _system_binds() -> tuple[str, ...]:
    """The links of a merged /usr (or the folders themselves), and the /etc files the
    languages need, read-only."""
    binds: list[str] = []
    for path in MERGED_USR_LINKS:
        if os.path.islink(path):
            binds += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            binds += ["--ro-bind", path, path]
    for pattern in ETC_FILES:
        for path in sorted(glob.glob(pattern)):
            binds += ["--ro-bind", path, path]
    return tuple(binds)


def _data_descriptor(data: bytes | str, descriptors: list[int]) -> int:
    """A pipe holding `data` (a few KiB: it fits in the pipe's buffer), its read end."""
    reading, writing = os.pipe()
    descriptors.append(reading)
    try:
        os.write(writing, data.encode() if isinstance(data, str) else data)
    finally:
        os.close(writing)
    return reading


def _entering(procs: list[int], limits: Limits) -> Callable[[], None]:
    """The new process's first steps, between fork and exec: into the cgroups (as root),
    its rlimits, then the sandbox uid. Only system calls: the parent may have threads."""
    open_files, file_bytes, uid, gid = limits.open_files, limits.file_bytes, limits.uid, limits.gid

    def enter() -> None:
        for descriptor in procs:
            os.write(descriptor, b"0")  # 0: the writer
        resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)

    return enter


async def _start(command: tuple[str, ...], bot_dir: Path, writable: bool, memory_bytes: int,
                 limits: Limits, stdin: Any, stdout: Any, stderr: Any
                 ) -> tuple[Child, _Cgroup]:
    """`command` started in a new sandbox, and the sandbox's cgroup (the caller destroys
    it). SandboxUnavailable when the machine cannot make it, PermissionError when the
    sandbox uid cannot reach `bot_dir`."""
    bot_dir = bot_dir.resolve()
    _check_reachable(bot_dir, limits)
    cgroup = _Cgroup.make(memory_bytes, limits)
    try:
        with _launch(command, bot_dir, writable, limits, cgroup) as (argv, options):
            process = await spawn(*argv, **options, stdin=stdin, stdout=stdout,
                                  stderr=stderr)
    except subprocess.SubprocessError as error:  # from _entering
        await cgroup.destroy()
        raise SandboxUnavailable(f"cannot enter a sandbox's cgroup as uid {limits.uid}: "
                                 f"{error}") from None
    except BaseException:
        await cgroup.destroy()
        raise
    return process, cgroup


def _check_reachable(bot_dir: Path, limits: Limits) -> None:
    """PermissionError unless the sandbox uid may pass through every folder down to
    `bot_dir` (bwrap, as that uid, binds it); by the mode bits."""
    for folder in (*reversed(bot_dir.parents), bot_dir):
        status = folder.stat()
        if status.st_uid == limits.uid:
            bit = stat.S_IXUSR
        else:
            bit = stat.S_IXGRP if status.st_gid == limits.gid else stat.S_IXOTH
        if not status.st_mode & bit:
            raise PermissionError(f"the sandbox's uid {limits.uid} may not pass through "
                                  f"{folder} (mode {stat.filemode(status.st_mode)}) to the "
                                  f"bot's folder {bot_dir}")


def check_available() -> None:
    """SandboxUnavailable unless bwrap, the cgroups and seccomp all work here: a sandbox
    runs `true`."""
    limits = Limits.from_env()
    cgroup = _Cgroup.make(limits.memory_bytes, limits)
    try:
        with _launch(("true",), None, False, limits, cgroup) as (argv, options):
            done = subprocess.run(argv, **options, capture_output=True, text=True,
                                  timeout=CHECK_WAIT_S, check=False)
    finally:
        cgroup.destroy_now()
    if done.returncode != 0:
        said = done.stderr.strip().splitlines() or [describe_exit(done.returncode)]
        raise SandboxUnavailable(f"bwrap cannot make a sandbox here: {said[0]}")


# ----- builds -----------------------------------------------------------------------------
@dataclass(frozen=True)
class BuildResult:
    ok: bool
    log: str  # the build's output (its start, when long), then a line with the outcome
    seconds: float


class _Capped:
    """A stream's first `limit` bytes, and the count of those after them, read up to
    `most` bytes in all."""

    def __init__(self, limit: int, most: int):
        self.limit, self.most = limit, most
        self.kept = bytearray()
        self.dropped = 0

    async def read(self, stream: asyncio.StreamReader) -> bool:
        """Until the stream ends (True), or `most` bytes were read (False)."""
        while chunk := await stream.read(READ_CHUNK):
            room = self.limit - len(self.kept)
            self.kept += chunk[:room]
            self.dropped += max(0, len(chunk) - room)
            if len(self.kept) + self.dropped >= self.most:
                return False
        return True

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        if text and not text.endswith("\n"):
            text += "\n"
        return text + (f"[... {self.dropped} more bytes cut]\n" if self.dropped else "")


async def build(language: Language, bot_dir: Path, limits: Limits) -> BuildResult:
    """Build the bot in `bot_dir` (on the host; it and the folders above it must let the
    sandbox uid through) with `language.build`, in a sandbox where it is /bot, writable;
    the output stays there. `bot_dir` is handed over to the sandbox uid first."""
    if not language.build:
        return BuildResult(True, "no build step", 0.0)
    started = time.monotonic()
    _hand_over(bot_dir, limits)
    process, cgroup = await _start(language.build, bot_dir, True, limits.build_memory_bytes,
                                   limits, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert process.stdout is not None
    output = _Capped(BUILD_LOG_BYTES, limits.file_bytes)
    code: int | None = None
    flooded = False
    try:
        async with asyncio.timeout(limits.build_s):
            if not await output.read(process.stdout):  # a build that never stops writing
                flooded = True
                cgroup.kill()
            await process.exited()  # not `wait()`: the pipe left unread may never end
            code = process.returncode
    except TimeoutError:
        pass
    finally:
        out_of_memory = cgroup.oom_kills() > 0
        await cgroup.destroy()
        await process.exited()
        await process.close()
    seconds = time.monotonic() - started
    if flooded:
        outcome = (f"build failed: stopped once its output passed {limits.file_bytes // MIB} "
                   "MiB (REFEREE_SANDBOX_FILE_MB)")
    elif code is None:
        outcome = f"build failed: stopped at the time limit of {limits.build_s:g} s"
    elif out_of_memory:
        outcome = (f"build failed: out of memory (the limit is "
                   f"{limits.build_memory_bytes // MIB} MiB)")
    elif code == 0:
        outcome = f"build ok in {seconds:.2f} s"
    else:
        outcome = f"build failed: {shlex.join(language.build)} {_describe_status(code)}"
    return BuildResult(code == 0 and not out_of_memory, output.text() + outcome, seconds)


def _hand_over(bot_dir: Path, limits: Limits) -> None:
    """Make the sandbox uid the owner of `bot_dir` and all in it, without following a
    symbolic link (the upload may hold any) nor a path that might change meanwhile."""
    os.chown(bot_dir, limits.uid, limits.gid, follow_symlinks=False)
    for _, folders, files, folder in os.fwalk(bot_dir):
        for name in (*folders, *files):
            os.chown(name, limits.uid, limits.gid, dir_fd=folder, follow_symlinks=False)


def _describe_status(code: int) -> str:
    """How the command bwrap ran ended: bwrap exits with 128 + the signal that killed it
    (so an exit code of 129 to 128 + SIGRTMAX reads as a signal)."""
    return describe_exit(128 - code if 128 < code <= 128 + signal.SIGRTMAX else code)


# ----- hosted programs --------------------------------------------------------------------
class _Contained(Program):
    """A Program whose kill() kills its whole sandbox, its stderr (and its notes) kept in a
    `StderrRecord`."""

    def __init__(self, process: Child, line_limit: int, cgroup: _Cgroup,
                 stderr: StderrPipe, record: StderrRecord):
        super().__init__(process, record.note, line_limit, stderr=stderr)
        self.cgroup = cgroup
        self.record = record

    def kill(self) -> None:
        super().kill()
        self.cgroup.kill()

    async def _ended(self) -> None:
        """Once the program has exited and all it wrote on stderr is read (the pipe ends
        with its sandbox): its notes of how it ended come after."""
        await super()._ended()
        if self.stderr:
            await asyncio.shield(self.stderr.ended)

    async def _stderr_done(self) -> None:
        """Its sandbox is killed: once the pipe ends with it, or `KILL_WAIT_S` later."""
        if self.stderr:
            await self.stderr.read_to_end(KILL_WAIT_S)


class HostedProgram:
    """One sandboxed process serving one seat of one match; `stop` it in the end, whatever
    happened (that removes its cgroups); then `stderr_text()` is what its owner reads."""

    def __init__(self, program: _Contained, limits: Limits):
        self.program = program
        self.cgroup = program.cgroup
        self.limits = limits
        self.out_of_cpu = False
        self.watchdog = asyncio.create_task(self._hold_to_cpu_budget())

    @classmethod
    async def start(cls, language: Language, bot_dir: Path, limits: Limits) -> HostedProgram:
        """Run the built bot in `bot_dir` (read-only at /bot) with `language.run`, its
        stderr a pipe read (`limits.file_bytes` at most) into a `StderrRecord` with the
        notes of what happened to it. SandboxUnavailable when the machine cannot make the
        sandbox."""
        record = StderrRecord()
        reading, writing = os.pipe()
        try:
            stderr = StderrPipe(reading, limits.file_bytes, record.add, record.note,
                                "REFEREE_SANDBOX_FILE_MB")
            try:
                process, cgroup = await _start(language.run, bot_dir, False,
                                               limits.memory_bytes, limits,
                                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                               stderr=writing)
            except BaseException:
                stderr.close()
                raise
        finally:
            os.close(writing)  # the sandbox holds its own: the pipe ends with the sandbox
        record.note(f"started pid {process.pid} in sandbox {cgroup.name}: "
                    f"{shlex.join(language.run)}")
        return cls(_Contained(process, limits.line_bytes, cgroup, stderr, record), limits)

    @property
    def pid(self) -> int:
        """bwrap's pid (the program is pid 1 of its namespace)."""
        return self.program.process.pid

    @property
    def name(self) -> str:
        """The sandbox's name: that of its cgroups."""
        return self.cgroup.name

    @property
    def cgroup_dirs(self) -> list[Path]:
        return self.cgroup.dirs

    def cpu_seconds(self) -> float:
        """CPU time used by all its processes so far."""
        return self.cgroup.cpu_seconds()

    async def ask(self, line: bytes, timeout_s: float) -> bytes:
        """One message line in, its answer line out within `timeout_s`: TimeoutError (its
        late answer is dropped before the next), ProgramDied (every later call too; also
        when its CPU time for the match is used up) or LineTooLong."""
        with self._explained():
            async with asyncio.timeout(timeout_s):
                return await self.program.ask(line)

    async def tell(self, line: bytes) -> None:
        """A message line that is not answered (an update); ProgramDied."""
        with self._explained():
            await self.program.tell(line)

    async def stop(self, last_line: bytes | None, grace_s: float) -> None:
        """`last_line` (if any), EOF, `grace_s` to exit, then every process of the sandbox
        is killed and its cgroups are removed. Again is harmless."""
        self.watchdog.cancel()
        try:
            await self.program.stop(last_line, grace_s)
        finally:
            await self.cgroup.destroy()

    def stderr_text(self) -> str:
        """What the program wrote on stderr, with the sandbox's notes
        (`referee.match.stderr`); whole once it is stopped."""
        return self.program.record.text()

    async def _hold_to_cpu_budget(self) -> None:
        """Kill the sandbox once it has used its CPU time for the match. The quota lets it
        use `cpu_cores` seconds a second at most: the next look is never before the budget
        can be used up."""
        while (left := self.limits.cpu_s - self.cpu_seconds()) > 0:
            await asyncio.sleep(max(left / self.limits.cpu_cores, CPU_LOOK_MIN_S))
        self.out_of_cpu = True
        self.program.note(f"killed: it used up its {self.limits.cpu_s:g} s of CPU time for "
                          "the match")
        self.program.kill()

    @contextmanager
    def _explained(self) -> Iterator[None]:
        """A ProgramDied says why the sandbox's program died, when the sandbox knows."""
        try:
            yield
        except ProgramDied as error:
            raise ProgramDied(self._cause(error)) from None

    def _cause(self, error: ProgramDied) -> str:
        if self.out_of_cpu:
            return (f"the program used up its {self.limits.cpu_s:g} s of CPU time for the "
                    "match and was killed")
        if self.cgroup.oom_kills():
            return (f"the program ran out of memory (its limit is "
                    f"{self.limits.memory_bytes // MIB} MiB) and was killed")
        code = self.program.process.returncode
        return str(error) if code is None else f"the program {_describe_status(code)}"
