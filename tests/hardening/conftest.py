"""Fixtures of the hardening tests: misbehaving bots on loopback, the API client of
tests/referee (every response checked against openapi.yaml), `referee worker` processes
with their output kept, and `referee serve` (gunicorn) on a free loopback port."""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from badbots import BadBots
from openapi_core import OpenAPI

from referee.app import create_app
from referee.config import Config
from referee.redis_server import free_port

REFEREE_TESTS = Path(__file__).resolve().parents[1] / "referee"
sys.path.insert(0, str(REFEREE_TESTS))
apitest = importlib.import_module("apitest")  # the referee tests' helpers, by their own name
ADMIN = apitest.ADMIN
ROOT = apitest.ROOT


@pytest.fixture
def bad_bots() -> Iterator[BadBots]:
    server = BadBots().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def openapi() -> OpenAPI:
    return apitest.load_openapi()


@pytest.fixture
def config(redis_url) -> Config:
    return Config(redis_url=redis_url, admin_token=ADMIN, secret=apitest.SECRET,
                  max_body_bytes=64 * 1024)


@pytest.fixture
def api(config, openapi):
    return apitest.ApiClient(create_app(config), openapi)


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
                apitest.worker_command(*(["--burst"] if burst else [])),
                env={**apitest.worker_env(self.redis_url), **env}, cwd=ROOT, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(proc)
        return proc

    def logs(self) -> str:
        return "".join(path.read_text(errors="replace")
                       for path in sorted(self.log_dir.glob("worker-*.log")))

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


@pytest.fixture
def workers(redis_url, tmp_path) -> Iterator[Workers]:
    pool = Workers(redis_url, tmp_path)
    yield pool
    pool.stop_all()


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
                     "REFEREE_SECRET": apitest.SECRET, "PYTHONPATH": str(ROOT), **env},
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


@pytest.fixture(scope="module")
def live_server(redis_server, tmp_path_factory) -> Iterator[LiveServer]:
    server = LiveServer(redis_server, tmp_path_factory.mktemp("serve") / "serve.log")
    yield server
    server.stop()
