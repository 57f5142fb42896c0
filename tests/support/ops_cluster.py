"""A small real cluster for the operations tests: `referee serve` (gunicorn, two processes)
and two `referee worker` processes on one Redis, all logging JSON lines to files, and the
test bots of tests/support/botserver.py on loopback."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import requests

from referee.processes import spawn, stop_all
from referee.redis_server import free_port, wait_for_port
from tests.support.apitest import ROOT

ADMIN = "ops-admin-token-4f9d2c7e1b"
METRICS = "ops-metrics-token-8a3e6d0c5f"
SECRET = "ops-replay-secret-2b7c9e1d4a"
SECRETS = (ADMIN, METRICS, SECRET)


class Cluster:
    """The API at `base` and `worker_count` workers; `stop` ends them all."""

    def __init__(self, redis_url: str, log_dir: Path, worker_count: int = 2):
        self.redis_url = redis_url
        self.log_dir = log_dir
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, "REDIS_URL": redis_url, "REFEREE_ADMIN_TOKEN": ADMIN,
                    "REFEREE_METRICS_TOKEN": METRICS, "REFEREE_SECRET": SECRET,
                    "REFEREE_LOG_FORMAT": "json", "PYTHONPATH": str(ROOT)}
        self.processes = [self._start("api", "serve", "--port", str(self.port))]
        self.processes += [self._start(f"worker-{n}", "worker") for n in range(worker_count)]
        wait_for_port(self.port, timeout=60)

    def _start(self, name: str, *command: str):
        return spawn([sys.executable, "-m", "referee.cli", *command], self.env,
                     self.log_dir / f"{name}.log", cwd=ROOT)

    def stop(self) -> None:
        stop_all(self.processes)

    def log_lines(self, name: str) -> list[str]:
        """The non-empty lines of a process's log (`api`, `worker-0`...)."""
        text = (self.log_dir / f"{name}.log").read_text()
        return [line for line in text.splitlines() if line.strip()]

    def request(self, method: str, path: str, token: str | None = ADMIN,
                **kwargs) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.request(method, self.base + path, headers=headers, timeout=30,
                                **kwargs)

    def post(self, path: str, body: dict) -> dict:
        response = self.request("POST", path, json=body)
        assert response.status_code in (200, 201), response.text
        return response.json()

    def get(self, path: str) -> dict:
        response = self.request("GET", path)
        assert response.status_code == 200, response.text
        return response.json()

    def register(self, name: str, url: str) -> str:
        return self.post("/bots", {"name": name, "url": url,
                                   "games": ["aladino", "aldabas", "caravans"]})["id"]

    def wait_over(self, match_ids: list[str], timeout: float = 240) -> None:
        """Poll until every match is finished or failed (long deadline: a loaded machine)."""
        deadline = time.monotonic() + timeout
        pending = list(match_ids)
        while pending:
            assert time.monotonic() < deadline, f"matches not over: {pending}\n{self.logs()}"
            pending = [match_id for match_id in pending
                       if self.get(f"/matches/{match_id}")["status"] not in ("finished",
                                                                              "failed")]
            time.sleep(0.2)

    def logs(self) -> str:
        return "\n".join(path.read_text(errors="replace")[-3000:]
                         for path in sorted(self.log_dir.glob("*.log")))


def parse_json_lines(lines: list[str]) -> list[dict]:
    """Every line as a JSON object (fails naming the first line that is not one)."""
    entries = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            raise AssertionError(f"not a JSON line: {line!r}") from None
        assert isinstance(entry, dict), line
        entries.append(entry)
    return entries
