"""`referee worker` processes for the tests that start, wait for and kill them (the
`workers` fixture): each in its own session, its output in a log file."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import redis
from rq import Worker

from tests.support.apitest import ROOT, worker_command, worker_env


class Workers:
    """`referee worker` processes against one Redis; `stop_all` kills what is left."""

    def __init__(self, redis_url: str, log_dir: Path):
        self.redis_url = redis_url
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen] = []

    def start(self, count: int = 1, burst: bool = False, hosted: bool = False, **env: str
              ) -> list[subprocess.Popen]:
        """Start `count` workers (waiting for jobs, or `burst`: until the queue is empty;
        `hosted`: `--hosted` workers, which also play and build hosted bots)."""
        flags = [*(["--burst"] if burst else []), *(["--hosted"] if hosted else [])]
        return [self._start_one(flags, env) for _ in range(count)]

    def _start_one(self, flags: list[str], env: dict[str, str]) -> subprocess.Popen:
        log_path = self.log_dir / f"worker-{len(self.procs)}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                worker_command(*flags),
                env={**worker_env(self.redis_url), **env}, cwd=ROOT, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(proc)
        return proc

    def start_ready(self, count: int, hosted: bool = False, **env: str
                    ) -> list[subprocess.Popen]:
        """Start `count` waiting workers; return once all have registered with rq, so
        jobs queued afterwards are taken at once, by whichever worker is idle."""
        connection = redis.Redis.from_url(self.redis_url)
        before = Worker.count(connection=connection)
        started = self.start(count, hosted=hosted, **env)
        deadline = time.monotonic() + 30
        while Worker.count(connection=connection) < before + count:
            assert time.monotonic() < deadline, f"workers did not start: {self.logs()}"
            time.sleep(0.05)
        connection.close()
        return started

    def logs(self) -> str:
        return "".join(path.read_text(errors="replace")
                       for path in sorted(self.log_dir.glob("worker-*.log")))

    @staticmethod
    def horses(proc: subprocess.Popen) -> list[int]:
        """The worker's work horses: its children, each in a process group of its own."""
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text()
        return [int(pid) for pid in children.split()]

    def kill(self, proc: subprocess.Popen) -> None:
        """kill -9 the worker and its work horses, as a lost machine would."""
        horses = self.horses(proc)
        os.killpg(proc.pid, signal.SIGKILL)
        for horse in horses:
            os.killpg(horse, signal.SIGKILL)
        proc.wait(timeout=10)

    def kill_horse(self, proc: subprocess.Popen) -> None:
        """kill -9 only the work horse playing the current job; the worker lives on."""
        for horse in self.horses(proc):
            os.killpg(horse, signal.SIGKILL)

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                self.kill(proc)
