"""Every benchmark script runs in its tiny `--quick` mode and prints its figures and its
goal, so the scripts cannot rot. No timing is asserted: speed is measured, not tested."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import pytest

from tests.support.procfs import live_processes

ROOT = Path(__file__).resolve().parents[2]

SCRIPTS = {
    "engines_speed.py": ["decisions/s", "games/s"],
    "referee_overhead.py": ["in-process overall:", "referee worker overall:", "ratio"],
    "concurrency_models.py": ["asyncio + httptools", "threads + requests", "us/dec"],
    "cpu_ab.py": ["mean CPU ms/decision", "difference:", "inv"],
    "decision_cost.py": ["warm, in-process", "step (advance)", "idle 20 ms before each",
                         "40 in flight"],
    "execution.py": ["CPU ms/decision, 20 ms bots (lean", "(the SDK's threaded server)",
                     "a bare decision's time", "matches at once",
                     "asked again", "idle pull"],
    "throughput.py": ["referee m/s", "engine m/s", "ratio", "http", "stdio", "lowest ratio"],
    "replay_verify_speed.py": ["speed-up", "overall against"],
    "tournament_throughput.py": ["matches/s", "speed-up", "CPU ms/dec"],
    "api_latency.py": ["GET /ratings/aladino", "GET /matches/{id}", "p99 ms"],
    "bridge_overhead.py": ["bridge-python", "ratio bridge/http", "overall ratio"],
    "slowloris.py": ["a header line every 5 s", "a body byte every 5 s", "p99 ms"],
    "live_streams.py": ["without clients:", "with 20 clients:", "ratio with/without"],
    "storage.py": ["finished", "archived", "own"],
    "results_log.py": ["GET /log/proof", "bytes per match", "p99"],
    "clocks.py": ["referee-caused", "per 100k", "CPU ms/update"],
    "ratings_backtest.py": ["openskill Plackett-Luce", "pairwise Elo", "pair log-lik",
                            "kendall tau"],
    "ladder.py": ["next_match, played", "_plan after a count", "first tau >= 0.9", "p99 ms"],
    "hosted.py": ["start to first answer", "hosted (HostedProgram.ask)",
                  "bridge (BotClient.decide)", "hosted / bridge"],
    "counting.py": ["1 processes", "2 processes", "counts/s", "tries/count", "Redis CPU"],
    "remote_workers.py": ["CPU ms/dec", "matches/s", "ms each way", "Redis RTT ms"],
    "search_bots.py": ["a move): decision", "LLR", "solo ranking 1:"],
    "api_load.py": ["GET /ratings/aladino", "GET /matches?limit=20", "GET /matches/{id}",
                    "p99 ms", "errors"],
}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script_prints_its_figures_and_goal(script: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--quick"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "goal:" in done.stdout
    for label in SCRIPTS[script]:
        assert label in done.stdout, f"{label!r} missing from:\n{done.stdout}"


def test_a_bench_stopped_with_kill_stops_its_children() -> None:
    """Its children (here Redis, and the API in a session of its own with its workers):
    a bench stopped with SIGTERM left them running, as no `finally` of it ran."""
    bench = subprocess.Popen([sys.executable, str(ROOT / "bench" / "api_latency.py"),
                              "--quick"], cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    children: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while not any(pid == session for pid, _, session in live_processes()
                      if pid in children):  # the API started (Redis was first)
            assert bench.poll() is None and time.monotonic() < deadline, "no API seen"
            time.sleep(0.05)
            children = {pid for pid, parent, _ in live_processes() if parent == bench.pid}
        bench.send_signal(signal.SIGTERM)
        bench.wait(timeout=60)
        deadline = time.monotonic() + 30
        while (left := [pid for pid, _, session in live_processes()
                        if pid in children or session in children]) \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == []
    finally:
        for pid in children:  # what a failure left: each child, and the group it leads
            for kill in (os.killpg, os.kill):
                with suppress(ProcessLookupError):
                    kill(pid, signal.SIGKILL)
        bench.kill()
        bench.wait()
