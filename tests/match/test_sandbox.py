"""The hosted bots' sandbox, for real: bwrap, cgroups and seccomp on this machine, and small
hostile programs in it. Most are a python3 "probe" that runs the code each message carries
and answers what it found out, so a test reads as what the bot tries and what it got."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson
import pyseccomp
import pytest

import engines
from referee.match import sandbox
from referee.match.program import UPDATE_BACKLOG_BYTES, LineTooLong, ProgramDied
from referee.match.runner import state_payload
from referee.match.sandbox import MIB, HostedProgram, Limits, SandboxUnavailable
from referee.match.stderr import KEPT_BYTES, PROGRAM_BYTES
from tests.support.hosted import ENTRY, reachable_folder
from tests.support.hosted import HERE as HOSTED_SOURCES
from tests.support.procfs import open_descriptors, processes
from tests.support.python_process import ENDLESS_S

ROOT = Path(__file__).resolve().parents[2]
PROBE = """\
import json, sys
for line in sys.stdin:
    scope = {}
    try:
        exec(json.loads(line)["code"], scope)
        answer = scope.get("result")
    except Exception as error:
        answer = {"error": repr(error)}
    print(json.dumps(answer), flush=True)
"""
BROKEN = {  # a syntax error in each language, and what its compiler says of it
    "python3": ("def main(:\n", "SyntaxError"),
    "c": ("int main(void) { return 0 }\n", "error:"),
    "cpp": ("int main() { return 0 }\n", "error:"),
    "node": ("function (\n", "SyntaxError"),
    "java": ("public class Main { void f( }\n", "error:"),
    "perl": ("my $x = ;\n", "syntax error"),
}


def python3() -> sandbox.Language:
    return sandbox.languages()["python3"]


@pytest.fixture
def bot_dir() -> Iterator[Path]:
    with reachable_folder("referee-sandbox-test-") as folder:
        yield folder


@asynccontextmanager
async def hosted(bot_dir: Path, limits: Limits | None = None) -> AsyncIterator[HostedProgram]:
    """The probe, in a sandbox for the block, stopped after it."""
    (bot_dir / "main.py").write_text(PROBE)
    program = await HostedProgram.start(python3(), bot_dir, limits or Limits())
    try:
        yield program
    finally:
        await program.stop(None, 0.5)


async def probe(program: HostedProgram, code: str, timeout_s: float = 20.0) -> Any:
    """What the probe's `result` is after running `code` in the sandbox."""
    line = json.dumps({"code": textwrap.dedent(code)}).encode()
    return json.loads(await program.ask(line, timeout_s))


def decision() -> dict:
    """The first decision of an aladino match, as the referee sends it."""
    engine = engines.get("aladino")
    state = engine.new_game(num_players=2, seed=7, options={})
    return state_payload(engine, state, "m-sandbox", engine.current_seat(state), 0, 2000)


# ----- configuration ----------------------------------------------------------------------
def test_limits_from_the_environment():
    assert Limits.from_env({}) == Limits()
    limits = Limits.from_env({"REFEREE_SANDBOX_MEMORY_MB": "256", "REFEREE_SANDBOX_CPU_S": "2.5",
                              "REFEREE_SANDBOX_LINE_KB": "64", "REFEREE_SANDBOX_UID": "1234",
                              "REFEREE_SANDBOX_BUILD_S": "5"})
    assert (limits.memory_bytes, limits.cpu_s, limits.line_bytes, limits.uid, limits.build_s) \
        == (256 * MIB, 2.5, 65536, 1234, 5.0)


@pytest.mark.parametrize("variable, value", [
    ("REFEREE_SANDBOX_PROCESSES", "many"), ("REFEREE_SANDBOX_CPU_S", "-1"),
    ("REFEREE_SANDBOX_UID", "0"), ("REFEREE_SANDBOX_MEMORY_MB", "1.5"),
    ("REFEREE_SANDBOX_BUILD_S", "nan")])
def test_a_bad_limit_names_its_variable(variable, value):
    with pytest.raises(ValueError, match=variable):
        Limits.from_env({variable: value})


def test_the_sandbox_is_available_here():
    sandbox.check_available()


def test_without_bwrap_the_sandbox_is_unavailable(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxUnavailable, match=r"^bwrap \(bubblewrap\) is not on PATH"):
        sandbox.check_available()


def test_a_bot_folder_out_of_the_sandbox_uids_reach_is_refused(tmp_path):
    async def start() -> None:
        await HostedProgram.start(python3(), tmp_path, Limits())

    with pytest.raises(PermissionError, match="may not pass through"):
        asyncio.run(start())


# ----- languages --------------------------------------------------------------------------
@pytest.mark.parametrize("name", sandbox.LANGUAGE_NAMES)
def test_each_language_builds_and_plays_and_reports_a_syntax_error(name, bot_dir):
    language = sandbox.languages().get(name)
    assert language is not None, f"no {name} on this machine (scripts/install installs it)"
    assert sandbox.entry_file(name) == language.entry == ENTRY[name]
    assert language.version and set(language.public()) == {"name", "version", "build", "run"}
    shutil.copy(HOSTED_SOURCES / "first_legal" / language.entry, bot_dir)
    payload = decision()

    async def build_and_play() -> bytes:
        built = await sandbox.build(language, bot_dir, Limits())
        assert built.ok, built.log
        assert built.log.splitlines()[-1].startswith("build ok")
        program = await HostedProgram.start(language, bot_dir, Limits())
        try:
            await program.tell(orjson.dumps({"type": "update", "step": 0}))
            return await program.ask(orjson.dumps(payload), 20)
        finally:
            await program.stop(orjson.dumps({"type": "result", "result": {"ranks": [1, 2]}}),
                               1)

    assert json.loads(asyncio.run(build_and_play())) == {"action": payload["legal_actions"][0]}
    source, message = BROKEN[name]
    (bot_dir / language.entry).write_text(source)
    broken = asyncio.run(sandbox.build(language, bot_dir, Limits()))
    assert not broken.ok and message in broken.log
    assert re.search(r"^build failed: .* exited with code [1-9]\d*$", broken.log, re.M)


def test_a_build_is_stopped_at_its_time_limit(bot_dir):
    # perl's syntax check runs BEGIN blocks: a build that runs code (scripts/install: perl)
    assert "perl" in sandbox.languages()
    token = f"stuck-build-{secrets.token_hex(4)}"
    (bot_dir / "main.pl").write_text(f'BEGIN {{ $0 = "{token}"; sleep 60 }}\n')
    started = time.monotonic()
    result = asyncio.run(sandbox.build(sandbox.languages()["perl"], bot_dir,
                                       Limits(build_s=1.0)))
    assert not result.ok and "time limit of 1 s" in result.log
    assert time.monotonic() - started < 10
    assert processes("cmdline", token) == []


def test_a_build_log_keeps_its_start(bot_dir):
    assert "perl" in sandbox.languages()  # scripts/install installs it
    (bot_dir / "main.pl").write_text('BEGIN { print STDERR "start\\n", "x" x 1_000_000 }\n')
    result = asyncio.run(sandbox.build(sandbox.languages()["perl"], bot_dir, Limits()))
    assert result.ok and result.log.startswith("start\n")
    assert len(result.log) < 70_000 and "more bytes cut" in result.log


def test_a_build_that_never_stops_writing_is_stopped_at_its_output_limit(bot_dir):
    """Before, its output was read to the end, for up to the build's time limit: a worker's
    CPU spent reading what a build wrote as fast as it could (the hosted-fixes helper)."""
    (bot_dir / "main.pl").write_text('BEGIN { print "x" x 65536 while 1 }\n')
    result = asyncio.run(sandbox.build(sandbox.languages()["perl"], bot_dir,
                                       Limits(file_bytes=1 << 20, build_s=20.0)))
    assert not result.ok, result.log[-300:]
    assert result.log.splitlines()[-1] == ("build failed: stopped once its output passed "
                                           "1 MiB (REFEREE_SANDBOX_FILE_MB)")
    assert len(result.log) < 70_000 and "more bytes cut" in result.log


def test_a_build_stopped_at_its_output_limit_with_output_unread_is_not_waited_on_and_closed(
        bot_dir, no_garbage_collection):
    """Past 128 KiB unread, asyncio stops reading the pipe (here at once: a 1 MiB pipe, read
    256 KiB at a time); the build, killed, never reached its end there. Waiting for that
    (asyncio's `wait()`) waited out the build's time limit, and the pipe stayed open."""
    (bot_dir / "main.pl").write_text(
        'BEGIN { fcntl(STDOUT, 1031, 1 << 20); print "x" x (8 << 20); sleep 600 }\n')
    before = open_descriptors()
    result = asyncio.run(sandbox.build(sandbox.languages()["perl"], bot_dir,
                                       Limits(file_bytes=1 << 20, build_s=120.0)))
    after = open_descriptors()
    assert result.log.splitlines()[-1] == ("build failed: stopped once its output passed "
                                           "1 MiB (REFEREE_SANDBOX_FILE_MB)")
    assert after <= before, f"left open: {sorted(after - before)}"


# ----- what the program sees --------------------------------------------------------------
def test_the_environment_holds_no_secret(bot_dir, monkeypatch):
    secret = secrets.token_hex(16)
    monkeypatch.setenv("REFEREE_SECRET", secret)
    monkeypatch.setenv("REDIS_URL", f"redis://:{secret}@127.0.0.1:6379/0")

    async def look() -> tuple[Any, bytes, str]:
        async with hosted(bot_dir) as program:
            seen = await probe(program, """
                import glob, os, socket
                environs = []
                for path in glob.glob("/proc/[0-9]*/environ"):
                    try:
                        environs.append(open(path, "rb").read().decode(errors="replace"))
                    except OSError as error:
                        environs.append(repr(error))
                status = dict(line.split(":\\t", 1) for line in open("/proc/self/status")
                              if ":\\t" in line)
                result = {"env": dict(os.environ), "environs": environs,
                          "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
                          "ids": [os.getuid(), os.getgid(), os.getgroups()],
                          "caps": status["CapEff"].strip(), "host": socket.gethostname()}
            """)
            return (seen, Path(f"/proc/{program.pid}/environ").read_bytes(),
                    Path(f"/proc/{program.pid}/status").read_text())

    groups = os.getgroups()
    os.setgroups([4, 27])  # the worker's groups, which the sandbox must not keep
    try:
        seen, bwrap_environ, bwrap_status = asyncio.run(look())
    finally:
        os.setgroups(groups)
    assert secret not in json.dumps(seen)
    assert set(seen["env"]) <= {"PATH", "HOME", "LANG", "PWD"}
    assert seen["env"]["PATH"] == "/usr/bin:/bin"
    assert len(seen["environs"]) == 1 and seen["pids"] == [1]  # the program alone
    assert seen["ids"] == [65534, 65534, []] and seen["caps"] == "0000000000000000"
    assert seen["host"] == "sandbox"
    assert bwrap_environ == b""  # bwrap itself, on the host, started with nothing
    assert "\nUid:\t65534\t65534\t65534\t65534\n" in bwrap_status
    assert re.search(r"^Groups:\s*$", bwrap_status, re.M)  # none


def test_the_filesystem_shows_the_system_and_the_bot_only(bot_dir, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    public = Path(tempfile.mkdtemp(prefix="referee-sandbox-other-"))
    public.chmod(0o755)
    (public / "other-bot.py").write_text("secret")

    async def look() -> Any:
        async with hosted(bot_dir) as program:
            return await probe(program, f"""
                import errno, os
                def attempt(action):
                    try:
                        action()
                        return "done"
                    except OSError as error:
                        return errno.errorcode[error.errno]
                result = {{
                    "top": sorted(os.listdir("/")), "etc": sorted(os.listdir("/etc")),
                    "passwd": open("/etc/passwd").read(),
                    "shadow": attempt(lambda: open("/etc/shadow").read()),
                    "hidden": [path for path in ({str(outside)!r}, {str(public)!r},
                               {str(ROOT / "pyproject.toml")!r}, "/root", "/home", "/work",
                               "/var", "/run", "/sys/fs/cgroup")
                               if os.path.exists(path)],
                    "bot": attempt(lambda: open("/bot/new", "w")),
                    "root": attempt(lambda: open("/new", "w")),
                    "usr": attempt(lambda: open("/usr/new", "w")),
                    "cwd": os.getcwd(),
                }}
            """)

    try:
        seen = asyncio.run(look())
    finally:
        shutil.rmtree(public)
    assert set(seen["top"]) <= {"bin", "bot", "dev", "etc", "lib", "lib64", "proc", "sbin",
                                "tmp", "usr"}
    assert set(seen["etc"]) <= {"alternatives", "group", "ld.so.cache", "passwd",
                                "java-17-openjdk"}
    assert "root" not in seen["passwd"] and seen["shadow"] == "ENOENT"
    assert seen["hidden"] == []
    assert (seen["bot"], seen["root"], seen["usr"]) == ("EROFS", "EROFS", "EROFS")
    assert seen["cwd"] == "/bot"


def test_writes_are_bounded(bot_dir):
    """Files stop at their size limit, and stderr (a pipe) is closed after as many bytes:
    the sandbox's notes, before and after, are kept, and the start and the end of what it
    wrote within `KEPT_BYTES`."""
    limits = Limits(tmp_bytes=4 * MIB, file_bytes=MIB, open_files=32)

    async def write() -> tuple[Any, str]:
        async with hosted(bot_dir, limits) as program:
            seen = await probe(program, """
                import errno, sys
                def error_of(action):
                    try:
                        action()
                    except OSError as error:
                        return errno.errorcode[error.errno]
                def fill(path, size):
                    with open(path, "wb") as out:
                        for _ in range(size // 65536):
                            out.write(b"x" * 65536)
                def fill_tmp():  # files of half the largest size, until it is full
                    for number in range(1000):
                        fill(f"/tmp/{number}", 1 << 19)
                def open_many():
                    while True:
                        kept.append(open("/dev/null"))
                kept = []
                print("hello from the bot", file=sys.stderr, flush=True)
                result = {"tmp": error_of(fill_tmp),
                          "file": error_of(lambda: fill("/dev/shm/big", 2 << 20)),
                          "stderr": error_of(lambda: [sys.stderr.buffer.write(b"e" * 65536)
                                                      for _ in range(32)]),
                          "files": error_of(open_many), "opened": len(kept)}
            """)
        return seen, program.stderr_text()

    seen, text = asyncio.run(write())
    assert (seen["tmp"], seen["file"], seen["stderr"], seen["files"]) \
        == ("ENOSPC", "EFBIG", "EPIPE", "EMFILE")
    assert seen["opened"] < 32
    lines = text.splitlines()
    assert "] started pid" in lines[0] and lines[1] == "| hello from the bot"
    assert f"[sandbox] ... {MIB - PROGRAM_BYTES} bytes of stderr left out ..." in lines
    assert f"stderr closed: it reached its limit of {MIB} bytes" in lines[-2]
    assert "] stopped:" in lines[-1] and len(text) < KEPT_BYTES + 1024


def test_there_is_no_network(bot_dir):
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.3)
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    receiver.settimeout(0.3)
    tcp_port, udp_port = listener.getsockname()[1], receiver.getsockname()[1]

    async def reach() -> Any:
        async with hosted(bot_dir) as program:
            return await probe(program, f"""
                import errno, socket
                def error_of(action):
                    try:
                        action()
                        return "done"
                    except OSError as error:
                        return type(error).__name__ + " " + str(error.errno)
                def udp():
                    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as out:
                        out.sendto(b"hello", ("127.0.0.1", {udp_port}))
                        out.sendto(b"hello", ("10.0.2.2", {udp_port}))
                result = {{
                    "tcp": error_of(lambda: socket.create_connection(("127.0.0.1", {tcp_port}),
                                                                     timeout=2)),
                    "outside": error_of(lambda: socket.create_connection(("1.1.1.1", 53),
                                                                         timeout=2)),
                    "udp": error_of(udp),
                    "dns": error_of(lambda: socket.getaddrinfo("example.com", 80)),
                    "ipv6": error_of(lambda: socket.socket(socket.AF_INET6)),
                    "netlink": error_of(lambda: socket.socket(socket.AF_NETLINK,
                                                              socket.SOCK_RAW)),
                    "vsock": error_of(lambda: socket.socket(socket.AF_VSOCK,
                                                            socket.SOCK_STREAM)),
                    "local": error_of(lambda: [end.close() for end in socket.socketpair()]),
                }}
            """)

    try:
        seen = asyncio.run(reach())
        with pytest.raises(TimeoutError):
            listener.accept()
        with pytest.raises(TimeoutError):
            receiver.recv(100)
    finally:
        listener.close()
        receiver.close()
    # no socket but local ones: a loopback of its own queued TCP and UDP buffers the
    # sandbox's memory limit did not count (1.2 GiB under 128 MiB), and vsock is the
    # machine's
    refused = f"OSError {errno.EAFNOSUPPORT}"
    assert {seen[kind] for kind in ("tcp", "outside", "udp", "ipv6", "netlink", "vsock")} == {
        refused}, seen
    assert seen["dns"].startswith("gaierror")
    assert seen["local"] == "done"


# ----- what the program may not do --------------------------------------------------------
def test_hostile_system_calls_are_refused(bot_dir):
    numbers = {name: pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
               for name in sandbox.DENIED_SYSCALLS}

    async def call() -> Any:
        async with hosted(bot_dir) as program:
            return await probe(program, f"""
                import ctypes, os
                libc = ctypes.CDLL(None, use_errno=True)
                def errno_of(result):
                    return ctypes.get_errno() if result == -1 else "succeeded"
                result = {{name: errno_of(libc.syscall(number, 0, 0, 0, 0, 0, 0))
                           for name, number in {numbers!r}.items()}}
                result["ptrace the parent"] = errno_of(libc.ptrace(16, os.getppid(), 0, 0))
                result["mount a tmpfs"] = errno_of(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
                result["unshare a user namespace"] = errno_of(libc.unshare(0x10000000))
                result["no address randomisation"] = errno_of(
                    libc.personality(ctypes.c_ulong(0x0040000)))
                result["the persona asked"] = libc.personality(ctypes.c_ulong(0xffffffff))
            """)

    seen = asyncio.run(call())
    assert seen.pop("the persona asked") == 0
    assert seen == dict.fromkeys(seen, errno.EPERM)
    assert len(seen) == len(sandbox.DENIED_SYSCALLS) + 4


@pytest.mark.parametrize("abi, code", [
    ("x32", "import ctypes\nresult = ctypes.CDLL(None).syscall(0x40000000 | 39)"),
    ("i386", """
        import ctypes, mmap
        page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(bytes([0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0xc3]))  # getpid by int 0x80; ret
        address = ctypes.addressof(ctypes.c_char.from_buffer(page))
        result = ctypes.CFUNCTYPE(ctypes.c_int)(address)()
    """)])
def test_a_system_call_of_another_abi_kills_the_program(abi, code, bot_dir):
    async def call() -> None:
        async with hosted(bot_dir) as program:
            await probe(program, code)

    with pytest.raises(ProgramDied, match=r"killed by signal 31 \(SIGSYS\)"):
        asyncio.run(call())


def test_kill_minus_one_kills_its_own_sandbox_only(bot_dir):
    neighbour = subprocess.Popen(["sleep", "30"], user=65534, group=65534, extra_groups=[])
    other_dir = Path(tempfile.mkdtemp(prefix="referee-sandbox-test-"))
    other_dir.chmod(0o755)

    async def kill_all() -> tuple[Any, Any, Any]:
        async with (hosted(bot_dir) as killer,
                    hosted(other_dir) as other):
            killed = await probe(killer, """
                import os, signal, time
                children = []
                for _ in range(2):
                    if (child := os.fork()) == 0:
                        time.sleep(30)
                        os._exit(0)
                    children.append(child)
                os.kill(-1, signal.SIGKILL)  # all it may signal but init and itself
                result = [os.waitpid(child, 0)[1] for child in children]
            """)
            return killed, await probe(other, "result = 'alive'"), neighbour.poll()

    try:
        assert asyncio.run(kill_all()) == ([9, 9], "alive", None)
    finally:
        neighbour.kill()
        neighbour.wait()
        shutil.rmtree(other_dir)


def test_a_fork_bomb_is_contained(bot_dir):
    limits = Limits(processes=16)
    other_dir = Path(tempfile.mkdtemp(prefix="referee-sandbox-test-"))
    other_dir.chmod(0o755)

    async def bomb() -> tuple[Any, Any, list[int]]:
        async with (hosted(bot_dir, limits) as bomber,
                    hosted(other_dir, limits) as other):
            forked = await probe(bomber, """
                import errno, os, time
                children = 0
                try:
                    while True:
                        if os.fork() == 0:
                            time.sleep(60)
                            os._exit(0)
                        children += 1
                except OSError as error:
                    result = [children, errno.errorcode[error.errno]]
            """)
            in_cgroup = bomber.cgroup.pids()
            subprocess.run(["true"], check=True)  # the host still forks
            return forked, await probe(other, "result = 'alive'"), sorted(in_cgroup)

    try:
        (children, error), other, in_cgroup = asyncio.run(bomb())
    finally:
        shutil.rmtree(other_dir)
    assert error == "EAGAIN" and 8 <= children < 16
    assert len(in_cgroup) > children  # the children were there, with bwrap and the bot
    assert other == "alive"


def test_a_memory_hog_is_killed_out_of_memory(bot_dir):
    async def hog() -> None:
        async with hosted(bot_dir, Limits(memory_bytes=64 * MIB)) as program:
            await probe(program, """
                kept = []
                while True:
                    kept.append(b"x" * (4 << 20))
            """)

    with pytest.raises(ProgramDied, match=r"ran out of memory \(its limit is 64 MiB\)"):
        asyncio.run(hog())


def test_the_cpu_time_of_a_match_is_limited(bot_dir):
    async def spin() -> tuple[float, float, str]:
        async with hosted(bot_dir, Limits(cpu_s=0.5)) as program:
            # answers at once, and spins on in a thread: the budget counts all its time
            assert await probe(program, """
                import threading
                def spin():
                    while True:
                        pass
                threading.Thread(target=spin, daemon=True).start()
                result = "spinning"
            """) == "spinning"
            started = time.monotonic()
            with pytest.raises(ProgramDied, match=r"used up its 0\.5 s of CPU time"):
                await probe(program, "import time\ntime.sleep(30)")
            return time.monotonic() - started, program.cpu_seconds(), program.stderr_text()

    waited, used, text = asyncio.run(spin())
    assert waited < 5 and used >= 0.5
    assert "killed: it used up its 0.5 s of CPU time for the match" in text


def test_the_cpu_quota_holds_a_program_to_its_share(bot_dir):
    async def spin() -> tuple[float, float]:
        async with hosted(bot_dir, Limits(cpu_cores=0.25)) as program:
            before = program.cpu_seconds()
            wall = await probe(program, """
                import os, time
                def spin_a_second():
                    while time.monotonic() - started < 1:
                        pass
                started = time.monotonic()
                children = []
                for _ in range(2):
                    if (child := os.fork()) == 0:
                        spin_a_second()
                        os._exit(0)
                    children.append(child)
                spin_a_second()
                for child in children:
                    os.waitpid(child, 0)
                result = time.monotonic() - started
            """)
            return wall, program.cpu_seconds() - before

    wall, used = asyncio.run(spin())
    assert used <= 0.25 * wall * 1.5 + 0.1  # three spinning processes on two cores otherwise


def test_a_daemon_does_not_outlive_its_match(bot_dir):
    token = f"1000.{secrets.randbelow(10**9)}"

    async def daemonize() -> tuple[list[int], list[int], HostedProgram]:
        async with hosted(bot_dir) as program:
            await probe(program, f"""
                import os
                if os.fork() == 0:
                    os.setsid()
                    if os.fork() == 0:
                        os.closerange(0, 3)
                        os.execv("/usr/bin/sleep", ["sleep", "{token}"])
                    os._exit(0)
                os.wait()
            """)
            running = []
            for _ in range(100):
                if running := processes("cmdline", token):
                    break
                await asyncio.sleep(0.02)
            in_cgroup = processes("cgroup", program.name)
        await program.stop(None, 0.5)  # again: harmless
        return running, in_cgroup, program

    running, in_cgroup, program = asyncio.run(daemonize())
    assert len(running) == 1 and set(running) < set(in_cgroup)
    assert processes("cmdline", token) == [] and processes("cgroup", program.name) == []
    assert not any(folder.exists() for folder in program.cgroup_dirs)


def test_the_cgroups_a_killed_worker_left_go_when_the_next_one_starts(bot_dir):
    async def folders() -> list[Path]:
        async with hosted(bot_dir) as program:
            return [folder.parent for folder in program.cgroup_dirs]

    parents = asyncio.run(folders())
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = [parent / f"{gone.pid}-{uuid.uuid4().hex}" for parent in parents]
    for folder in stale:
        folder.mkdir()
    subprocess.run([sys.executable, "-c", "from referee.match import sandbox\n"
                    "sandbox.check_available()"], cwd=ROOT, check=True)
    assert not any(folder.exists() for folder in stale)


def test_a_worker_in_its_idle_cgroup_runs_its_sandboxes_inside_it(bot_dir):
    """A worker at nice 19 joins an idle cgroup (`cgroups.join_idle`) before it makes any
    sandbox: its hosted bots' cgroups are made inside it (v1, as here), so they too yield
    the CPU to an API on the machine, and they run there as anywhere. In a process of its
    own: the test's stays where it is."""
    (bot_dir / "main.py").write_text(PROBE)
    script = textwrap.dedent(f"""
        import asyncio, json
        from pathlib import Path
        from referee.match import cgroups, sandbox
        print(cgroups.join_idle())
        async def main():
            program = await sandbox.HostedProgram.start(
                sandbox.languages()["python3"], Path({str(bot_dir)!r}), sandbox.Limits())
            try:
                answer = await program.ask(b'{{"code": "result = 6 * 7"}}', 20)
                print(json.dumps({{"answer": json.loads(answer),
                                  "cgroups": [str(d) for d in program.cgroup_dirs]}}))
            finally:
                await program.stop(None, 0.5)
        asyncio.run(main())
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    joined, reported = done.stdout.splitlines()
    assert joined.startswith("in the idle cgroup "), joined
    idle = Path(joined.removeprefix("in the idle cgroup "))
    found = json.loads(reported)
    assert found["answer"] == 42
    assert any(idle in Path(folder).parents for folder in found["cgroups"]), found


# ----- the answer line --------------------------------------------------------------------
def test_a_gigabyte_line_is_too_long_and_costs_no_memory(bot_dir):
    status = Path("/proc/self/status")

    def memory_kib(field: str) -> int:
        line = next(line for line in status.read_text().splitlines() if line.startswith(field))
        return int(line.split()[1])

    async def read() -> tuple[bytes, Any]:
        async with hosted(bot_dir) as program:
            Path("/proc/self/clear_refs").write_text("5")  # the peak starts over
            with pytest.raises(LineTooLong) as too_long:
                await probe(program, """
                    import sys
                    chunk = b"x" * (1 << 20)
                    for _ in range(1024):
                        sys.stdout.buffer.write(chunk)
                    result = "after a gigabyte"
                """)
            return too_long.value.prefix, await probe(program, "result = 'next'", 60)

    before = memory_kib("VmRSS:")
    prefix, after = asyncio.run(read())
    assert prefix.startswith(b"xxxx") and after == "next"
    assert memory_kib("VmHWM:") - before < 64 * 1024


def test_updates_a_program_leaves_unread_are_dropped_not_waited_for(bot_dir):
    """A program busy (reading nothing) while 600 updates of 1 KiB are told: each is
    written at once, or dropped once `UPDATE_BACKLOG_BYTES` are left unread, so the
    seat's next decision is not held back. (Before: a second for each update past the
    pipe's buffer; 150 updates held a 100 ms decision 39 s.)"""
    async def tell() -> int:
        async with hosted(bot_dir) as program:
            with pytest.raises(TimeoutError):
                await probe(program, "import time\ntime.sleep(3600)", 0.1)  # reads no more
            update = orjson.dumps({"type": "update", "pad": "x" * 1024})

            async def all_of_them() -> None:
                for _ in range(600):
                    await program.tell(update)

            await asyncio.wait_for(all_of_them(), ENDLESS_S)
            return program.program.stdin.transport.get_write_buffer_size()

    assert asyncio.run(tell()) < UPDATE_BACKLOG_BYTES + 1100


def test_a_late_answer_is_dropped(bot_dir):
    async def ask() -> Any:
        async with hosted(bot_dir) as program:
            with pytest.raises(TimeoutError):
                await probe(program, "import time\ntime.sleep(0.5)\nresult = 'late'", 0.1)
            return await probe(program, "result = 'on time'")

    assert asyncio.run(ask()) == "on time"
