"""Failing a Sentinel set's primary the two ways the failover tests do (issue 31), waiting
for the new one, bringing the old one back as its replica; and a watch on `GET /health`.

- `Kill`: kill -9 the primary; it comes back as a replica of the new one (restarted with
  `--replicaof`), on loopback like every node;
- `Partition`: each node runs on a simulated machine of its own (tests/support/netns.py);
  the primary's link is cut (it lives on, unreachable), then mended: the Sentinels make it a
  replica of the new primary.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from referee.redis_server import RedisServer, SentinelSet
from tests.support.netns import Machine, Network

FAILOVER_TIMEOUT_S = 30.0
DOWN_AFTER_MS = 1000
FAILOVER_AFTER_MS = 2000


def sentinel_set(directory: Path, network: Network | None = None) -> SentinelSet:
    """A primary, a replica and three Sentinels that fail over within seconds: on loopback,
    or each node on a machine of `network`."""
    placements = [] if network is None else [
        (machine.address, machine.command([])) for machine in
        (network.machine(), network.machine())]
    return SentinelSet(directory, persistent=False, down_after_ms=DOWN_AFTER_MS,
                       failover_timeout_ms=FAILOVER_AFTER_MS, placements=placements,
                       network_address=None if network is None else network.host)


def wait_new_primary(ha: SentinelSet, old: tuple[str, int]) -> tuple[str, int]:
    """The address of the primary the Sentinels elect in place of `old`."""
    deadline = time.monotonic() + FAILOVER_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            if (now := ha.primary()) != old:
                return now
        except RuntimeError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"no new primary in place of {old} after {FAILOVER_TIMEOUT_S} s")


class Kill:
    """kill -9 of the primary; back as a replica of the new one."""

    name = "kill -9"

    def fail(self, node: RedisServer) -> None:
        assert node.process is not None
        node.process.kill()
        node.process.wait()

    def restore(self, node: RedisServer, primary: tuple[str, int]) -> None:
        node.replica_of = primary
        node.start()


@dataclass
class Partition:
    """The primary's machine cut off the network; back on it once the new one is elected."""

    network: Network
    name: str = "partition"

    def machine_of(self, node: RedisServer) -> Machine:
        return next(m for m in self.network.machines if m.address == node.host)

    def fail(self, node: RedisServer) -> None:
        self.machine_of(node).cut()

    def restore(self, node: RedisServer, primary: tuple[str, int]) -> None:
        self.machine_of(node).mend()


@dataclass
class HealthWatch:
    """`GET /health` of `base` asked every `every_s` in a thread; each answer's status (0:
    none came) with the time it came (time.monotonic)."""

    base: str
    every_s: float = 0.1
    answers: list[tuple[float, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                status = requests.get(f"{self.base}/health", timeout=15).status_code
            except requests.RequestException:
                status = 0
            self.answers.append((time.monotonic(), status))
            self._stop.wait(self.every_s)

    def healthy_after(self, since: float, timeout: float = FAILOVER_TIMEOUT_S) -> float:
        """When /health first answered 200 after `since` (waiting for it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [at for at, status in list(self.answers) if at > since and status == 200]
            if found:
                return found[0]
            time.sleep(0.05)
        raise AssertionError(f"GET /health not 200 within {timeout} s: {self.answers[-5:]}")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=20)
