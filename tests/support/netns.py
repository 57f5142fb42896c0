"""Machines simulated on this one (issue 31): network namespaces made by the test (as root),
each joined by a veth pair to a bridge in this namespace, which holds the address of "this
host" on the network. Traffic stays on that private network (a 10.x.y.0/24 no route of
this machine uses) and loopback; nothing is forwarded anywhere else.

A machine's link is cut (`Machine.cut`: its bridge port goes down, as a pulled cable) and
mended (`Machine.mend`); what runs on a machine is started under `ip netns exec`. The
network goes with `close`, with whatever still runs on its machines."""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

_NETWORKS = itertools.count()


def ip(*args: str) -> str:
    """Run `ip ARGS...`; its output (RuntimeError with its message when it fails)."""
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


@dataclass(frozen=True)
class Machine:
    """A namespace of its own with an address on the network."""

    namespace: str
    address: str
    link: str  # its veth's end on the bridge, in this namespace

    def command(self, argv: list[str]) -> list[str]:
        """`argv` run on this machine."""
        return ["ip", "netns", "exec", self.namespace, *argv]

    def start(self, argv: list[str], env: dict[str, str], log_path: Path,
              cwd: Path | None = None) -> subprocess.Popen:
        """Run `argv` on this machine in a session of its own, its output in `log_path`."""
        with open(log_path, "wb") as log:
            return subprocess.Popen(self.command(argv), env=env, cwd=cwd, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)

    def cut(self) -> None:
        ip("link", "set", self.link, "down")

    def mend(self) -> None:
        ip("link", "set", self.link, "up")


class Network:
    """A bridge with this host's address (`host`) and the machines on it."""

    def __init__(self) -> None:
        if os.geteuid() != 0:
            raise RuntimeError("simulated machines need root (network namespaces, veth pairs)")
        if shutil.which("ip") is None:
            raise RuntimeError("`ip` is missing: run scripts/install (Debian: iproute2)")
        self.tag = f"rf{os.getpid() % 10000}{next(_NETWORKS)}"
        self.prefix = _unused_prefix()
        self.host = f"{self.prefix}.1"
        self.bridge = f"{self.tag}b"
        self.machines: list[Machine] = []
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", f"{self.host}/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")

    @property
    def subnet(self) -> str:
        return f"{self.prefix}.0/24"

    def machine(self) -> Machine:
        """A new machine on the network, its link up."""
        number = len(self.machines) + 1
        machine = Machine(f"{self.tag}-m{number}", f"{self.prefix}.{number + 1}",
                          f"{self.tag}h{number}")
        ip("netns", "add", machine.namespace)
        self.machines.append(machine)
        ip("link", "add", machine.link, "type", "veth", "peer", "name", "eth0", "netns",
           machine.namespace)
        ip("link", "set", machine.link, "master", self.bridge)
        ip("-n", machine.namespace, "addr", "add", f"{machine.address}/24", "dev", "eth0")
        for device in ("lo", "eth0"):
            ip("-n", machine.namespace, "link", "set", device, "up")
        ip("link", "set", machine.link, "up")
        return machine

    def close(self) -> None:
        """Stop what still runs on the machines, remove them and the bridge."""
        for machine in self.machines:
            for pid in ip("netns", "pids", machine.namespace).split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
            ip("netns", "del", machine.namespace)
        ip("link", "del", self.bridge)

    def __enter__(self) -> Network:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _unused_prefix() -> str:
    """`10.A.B` of a /24 that no address or route of this machine is in."""
    taken = ip("-4", "route", "show", "table", "all") + ip("-4", "-o", "addr", "show")
    start = os.getpid() % 200
    for index in range(start, start + 200 * 256):
        prefix = f"10.{200 + index % 50}.{index // 50 % 256}"
        if f"{prefix}." not in taken:
            return prefix
    raise RuntimeError("no unused 10.x.y.0/24 on this machine")
