"""A local redis-server process: the demo's embedded default and the tests' real Redis."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

from referee.errors import RefereeError

# docs/operations.md's settings for the referee's Redis: a finished match's hash (its meta
# and result run to a few hundred bytes) stays in the compact listpack encoding, where each
# field costs a few bytes rather than a hash table entry of 40 (the results log's `log`
# field among them: docs/performance.md, results log).
RECOMMENDED = ["--hash-max-listpack-value", "1024"]


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

    def __init__(self, directory: Path, port: int | None = None, persistent: bool = True):
        self.directory = Path(directory)
        self.port = port or free_port()
        self.persistent = persistent
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

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
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
             str(self.directory), "--save", "", "--protected-mode", "yes", *persistence,
             *RECOMMENDED],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port(self.port)
        except RedisServerError:
            self.stop()
            raise
        return self

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
