"""Processes of the hardening tests (imported by name: `conftest` is ambiguous across test
folders): `referee worker` processes and `referee serve` with their output kept in files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import redis
import requests
from apitest import ADMIN, ROOT, SECRET, worker_command, worker_env
from rq import Worker

from referee.redis_server import free_port


class Workers:
    """`referee worker` processes in their own sessions, their output in log files."""

    def __init__(self, redis_url: str, log_dir: Path):
        self.redis_url = redis_url
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen] = []

    def start(self, burst: bool = False, **env: str) -> subprocess.Popen:
        log_path = self.log_dir / f"worker-{len(self.procs)}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                worker_command(*(["--burst"] if burst else [])),
                env={**worker_env(self.redis_url), **env}, cwd=ROOT, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(proc)
        return proc

    def start_ready(self, count: int, **env: str) -> list[subprocess.Popen]:
        """Start `count` waiting workers; return once all have registered with rq, so
        jobs queued afterwards are taken at once, by whichever worker is idle."""
        connection = redis.Redis.from_url(self.redis_url)
        before = Worker.count(connection=connection)
        started = [self.start(**env) for _ in range(count)]
        deadline = time.monotonic() + 30
        while Worker.count(connection=connection) < before + count:
            assert time.monotonic() < deadline, f"workers did not start: {self.logs()}"
            time.sleep(0.05)
        connection.close()
        return started

    def logs(self) -> str:
        return "".join(path.read_text(errors="replace")
                       for path in sorted(self.log_dir.glob("worker-*.log")))

    def kill(self, proc: subprocess.Popen) -> None:
        """kill -9 the worker and its work horses (children, each in a group of its own),
        as a lost machine would."""
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        os.killpg(proc.pid, signal.SIGKILL)
        for horse in children:
            os.killpg(int(horse), signal.SIGKILL)
        proc.wait(timeout=10)

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)



class LiveServer:
    """`referee serve` (gunicorn, one worker process) against the test Redis."""

    def __init__(self, redis_url: str, log_path: Path, **env: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        with open(log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "referee.cli", "serve", "--port", str(self.port),
                 "--workers", "1", "--threads", "4"],
                env={**os.environ, "REDIS_URL": redis_url, "REFEREE_ADMIN_TOKEN": ADMIN,
                     "REFEREE_SECRET": SECRET, "PYTHONPATH": str(ROOT), **env},
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_healthy()

    def _wait_healthy(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            except requests.ConnectionError:
                time.sleep(0.1)
        raise AssertionError(f"referee serve did not answer: {self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
