"""Local Redis processes: a redis-server (the demo's embedded default and the tests' real
Redis), and a Sentinel set of a primary, its replicas and redis-sentinel processes (`referee
demo --ha`, the failover tests)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import redis

from referee.errors import RefereeError

# docs/operations.md's settings for the referee's Redis: a finished match's hash (its meta
# and result run to a few hundred bytes) stays in the compact listpack encoding, where each
# field costs a few bytes rather than a hash table entry of 40 (the results log's `log`
# field among them: docs/performance.md, results log).
RECOMMENDED = ["--hash-max-listpack-value", "1024"]
# A replica (a new one, or an old primary back) is sent the data set at once, not after
# redis-server's default 5 s wait for more replicas to send it to together.
REPLICATION = ["--repl-diskless-sync-delay", "0"]
MASTER_NAME = "referee"
READY_TIMEOUT_S = 30.0


class RedisServerError(RefereeError, RuntimeError):
    """redis-server is missing or did not start."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def wait_for_port(port: int, timeout: float = 10.0, host: str = "127.0.0.1") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RedisServerError(f"nothing listens on {host}:{port} after {timeout}s")


class RedisServer:
    """Starts `redis-server` on a loopback port with its data in `directory`; a context manager.

    `persistent=True` turns append-only persistence on, so data survives a restart.
    """

    def __init__(self, directory: Path, port: int | None = None, persistent: bool = True,
                 host: str = "127.0.0.1", replica_of: tuple[str, int] | None = None,
                 launcher: Sequence[str] = (), options: Sequence[str] = ()):
        """`host`: the address it listens on; `replica_of`: the primary it replicates;
        `launcher`: a command it runs under (e.g. `ip netns exec NAME`); `options`: more
        redis-server options."""
        self.directory = Path(directory)
        self.host = host
        self.port = port or free_port()
        self.persistent = persistent
        self.replica_of = replica_of
        self.launcher = list(launcher)
        self.options = list(options)
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port

    def start(self) -> RedisServer:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RedisServerError(
                "redis-server is not installed: run scripts/install (Debian: apt-get install "
                "redis-server), or set REDIS_URL to a Redis you already run"
            )
        self.directory.mkdir(parents=True, exist_ok=True)
        persistence = ["--appendonly", "yes", "--appendfsync", "everysec"] if self.persistent \
            else ["--appendonly", "no"]
        replication = ["--replicaof", *map(str, self.replica_of)] if self.replica_of else []
        self.process = subprocess.Popen(
            [*self.launcher, binary, "--port", str(self.port), "--bind", self.host, "--dir",
             str(self.directory), "--save", "", "--protected-mode", self._protected_mode(),
             *persistence,
             *RECOMMENDED, *replication, *self.options],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port(self.port, host=self.host)
        except RedisServerError:
            self.stop()
            raise
        return self

    def _protected_mode(self) -> str:
        """On loopback, Redis's protected mode (no other host's connection); bound to
        another address, the caller chose who reaches it (a private network)."""
        return "yes" if self.host.startswith("127.") else "no"

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class SentinelProcess:
    """A redis-sentinel on a loopback port watching the primary named `MASTER_NAME`; its
    configuration (which Sentinel rewrites as it learns) in `directory`. `network_address`:
    this host's address on the nodes' network, when they are not on loopback (the
    Sentinels listen there too, and reach the nodes and each other from it)."""

    def __init__(self, directory: Path, primary: tuple[str, int], quorum: int,
                 down_after_ms: int, failover_timeout_ms: int,
                 network_address: str | None = None):
        self.directory = Path(directory)
        self.port = free_port()
        addresses = ["127.0.0.1"] if network_address is None else [network_address,
                                                                   "127.0.0.1"]
        source = [] if network_address is None else [f"bind-source-addr {network_address}"]
        self.settings = [f"port {self.port}", f"bind {' '.join(addresses)}", *source,
                         f"dir {self.directory}",
                         f"logfile {self.directory / 'sentinel.log'}",
                         f"sentinel monitor {MASTER_NAME} {primary[0]} {primary[1]} {quorum}",
                         f"sentinel down-after-milliseconds {MASTER_NAME} {down_after_ms}",
                         f"sentinel failover-timeout {MASTER_NAME} {failover_timeout_ms}",
                         f"sentinel parallel-syncs {MASTER_NAME} 1"]
        self.process: subprocess.Popen | None = None

    def start(self) -> SentinelProcess:
        binary = shutil.which("redis-sentinel")
        if binary is None:
            raise RedisServerError("redis-sentinel is not installed: run scripts/install "
                                   "(Debian: apt-get install redis-sentinel)")
        self.directory.mkdir(parents=True, exist_ok=True)
        config = self.directory / "sentinel.conf"
        config.write_text("\n".join(self.settings) + "\n")
        self.process = subprocess.Popen([binary, str(config)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        wait_for_port(self.port)
        return self

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=2, decode_responses=True)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None


class SentinelSet:
    """A primary, `replicas` replicas of it and `sentinels` Sentinels (quorum: a majority of
    them), on loopback ports; `url` names the set for REDIS_URL. `nodes` are the data nodes
    as `RedisServer`s, the first started as the primary, unless the file `primary` in
    `directory` names another (the primary when the set was last stopped: its data is the
    newest). `placements` puts node n on (its address, the command it runs under) instead
    of loopback, on a network where this host is `network_address`."""

    def __init__(self, directory: Path, replicas: int = 1, sentinels: int = 3,
                 persistent: bool = True, down_after_ms: int = 2000,
                 failover_timeout_ms: int = 10000,
                 placements: Sequence[tuple[str, Sequence[str]]] = (),
                 network_address: str | None = None):
        self.directory = Path(directory)
        self.nodes = [RedisServer(self.directory / f"node-{n}", persistent=persistent,
                                  options=REPLICATION)
                      for n in range(replicas + 1)]
        for node, (host, launcher) in zip(self.nodes, placements, strict=False):
            node.host, node.launcher = host, list(launcher)
        self.first = self._last_primary()
        for node in self.nodes:
            node.replica_of = None if node is self.nodes[self.first] else \
                self.nodes[self.first].address
        self.sentinels = [SentinelProcess(self.directory / f"sentinel-{n}",
                                          self.nodes[self.first].address, sentinels // 2 + 1,
                                          down_after_ms, failover_timeout_ms,
                                          network_address)
                          for n in range(sentinels)]

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{sentinel.port}" for sentinel in self.sentinels)
        return f"redis+sentinel://{hosts}/{MASTER_NAME}/0"

    def start(self) -> SentinelSet:
        """Start every process; return once every Sentinel knows every other one and
        every replica, and every replica has the primary's data."""
        try:
            for node in self.nodes:
                node.start()
            for sentinel in self.sentinels:
                sentinel.start()
            self.wait_ready()
        except (RedisServerError, redis.RedisError):
            self.stop()
            raise
        return self

    def primary(self) -> tuple[str, int]:
        """The primary's address, as the first Sentinel that answers says."""
        for sentinel in self.sentinels:
            try:
                answer = sentinel.client().sentinel_get_master_addr_by_name(MASTER_NAME)
            except redis.RedisError:
                continue
            if isinstance(answer, (tuple, list)):
                return str(answer[0]), int(answer[1])
        raise RedisServerError("no Sentinel answers")

    def node_at(self, address: tuple[str, int]) -> RedisServer:
        return next(node for node in self.nodes if node.address == address)

    def wait_ready(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Until every Sentinel knows the others and the replicas, and each replica is in
        sync with the primary."""
        deadline = time.monotonic() + timeout
        while not self._ready():
            if time.monotonic() > deadline:
                raise RedisServerError(f"the Sentinel set was not ready after {timeout} s "
                                       f"(logs in {self.directory})")
            time.sleep(0.1)

    def _ready(self) -> bool:
        try:
            states = [cast(dict, sentinel.client().sentinel_master(MASTER_NAME))
                      for sentinel in self.sentinels]
            primary = self.primary()
            replicas = [redis.Redis(host=node.host, port=node.port, socket_timeout=2).info(
                "replication") for node in self.nodes if node.address != primary]
        except redis.RedisError:
            return False
        return (all(state["num-other-sentinels"] == len(self.sentinels) - 1
                    and state["num-slaves"] == len(self.nodes) - 1
                    and (state["ip"], int(state["port"])) == primary for state in states)
                and all(info.get("master_link_status") == "up"
                        and (info.get("master_host"), info.get("master_port")) == primary
                        for info in replicas))

    def stop(self) -> None:
        """Stop every process, noting which node is the primary (for the next start)."""
        with contextlib.suppress(RedisServerError, StopIteration):
            self._note_primary(self.nodes.index(self.node_at(self.primary())))
        for sentinel in self.sentinels:
            sentinel.stop()
        for node in self.nodes:
            node.stop()

    def _last_primary(self) -> int:
        try:
            index = int((self.directory / "primary").read_text())
        except (OSError, ValueError):
            return 0
        return index if 0 <= index < len(self.nodes) else 0

    def _note_primary(self, index: int) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "primary").write_text(str(index))

    def __enter__(self) -> SentinelSet:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
