"""`referee serve` (gunicorn) against the test Redis with its output kept in a file (the
`live_server` fixture), and waiting for a match the workers play."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests

from referee.redis_server import free_port
from tests.support.apitest import ADMIN, ROOT, SECRET


def wait_status(api, match_id: str, wanted: str, timeout: float = 60) -> dict:
    """Poll the match (as the admin) until its status is `wanted`; returns it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = api.get(f"/matches/{match_id}", token=ADMIN).get_json()
        if match["status"] == wanted:
            return match
        time.sleep(0.05)
    raise AssertionError(f"match {match_id} not {wanted} after {timeout}s: {match}")


class LiveServer:
    """`referee serve` (gunicorn, one worker process) against the test Redis."""

    def __init__(self, redis_url: str, log_path: Path, **env: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        with open(log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "referee.cli", "serve", "--port", str(self.port),
                 "--workers", "1"],
                env={**os.environ, "REDIS_URL": redis_url, "REFEREE_ADMIN_TOKEN": ADMIN,
                     "REFEREE_SECRET": SECRET, "PYTHONPATH": str(ROOT), **env},
                cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self._wait_healthy()
        except BaseException:  # no fixture or test will stop a server it never got
            self.stop()
            raise

    def _wait_healthy(self, timeout: float = 30) -> None:
        """Until `GET /health` says 200; a refused connection or a slow answer (gunicorn
        listens before its worker process serves, later still on a loaded machine) is
        asked again."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{self.url}/health", timeout=1).status_code == 200:
                    return
            except (requests.ConnectionError, requests.Timeout):
                time.sleep(0.1)
        raise AssertionError(f"referee serve did not answer: {self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is not None:
            return
        # gunicorn's quick shutdown: a graceful one (SIGTERM, which
        # tests/commands/test_serve_worker.py checks) waits 10 s for open event streams
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
