"""Child processes of one command (the demo): started in order, all stopped together."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .redis_server import wait_for_port


class Supervisor:
    """Starts child processes with their output in log files; `stop_all` ends them all."""

    def __init__(self, log_dir: Path, env: dict[str, str]):
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.env = env
        self.children: list[tuple[str, subprocess.Popen]] = []

    def start(self, name: str, argv: list[str], port: int | None = None) -> subprocess.Popen:
        """Start `argv`; when `port` is given, wait until it listens (or fail with its log)."""
        log_path = self.log_dir / f"{name}.log"
        with open(log_path, "ab") as log:
            process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                       start_new_session=True)
        self.children.append((name, process))
        if port is not None:
            try:
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
        for _, process in reversed(self.children):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for _, process in reversed(self.children):
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.children.clear()


def python_module(module: str, *args: str) -> list[str]:
    """The argv that runs a module with this interpreter."""
    return [sys.executable, "-m", module, *args]
