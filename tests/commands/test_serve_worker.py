"""`referee serve` (gunicorn) and `referee worker` as real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import requests
from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse

from referee.redis_server import RedisServer, free_port, wait_for_port
from tests.support.apitest import ROOT, worker_command, worker_env


def check(openapi, response: requests.Response) -> requests.Response:
    openapi.validate_response(RequestsOpenAPIRequest(response.request),
                              RequestsOpenAPIResponse(response))
    return response


def test_serve_runs_gunicorn_and_prints_its_address_and_admin_token(redis_url, openapi,
                                                                     bot_server):
    port = free_port()
    env = {k: v for k, v in worker_env(redis_url).items() if k != "REFEREE_ADMIN_TOKEN"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "serve", "--port", str(port), "--workers", "1"],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        start_new_session=True)
    try:
        token_line, listen_line = proc.stdout.readline(), proc.stdout.readline()
        wait_for_port(port)
        base = f"http://127.0.0.1:{port}"
        assert f"listening on {base}" in listen_line
        token = token_line.rsplit(" ", 1)[-1].strip()
        assert "admin token" in token_line and len(token) > 20
        health = check(openapi, requests.get(f"{base}/health", timeout=5))
        assert health.status_code == 200 and health.json()["redis"] == "ok"
        body = {"name": "r", "url": bot_server.url("/random"), "games": ["aladino"]}
        refused = check(openapi, requests.post(f"{base}/bots", json=body, timeout=5,
                                               headers={"Authorization": "Bearer nope"}))
        assert refused.status_code == 403
        assert refused.headers["Content-Type"] == "application/problem+json"
        created = check(openapi, requests.post(f"{base}/bots", json=body, timeout=5,
                                               headers={"Authorization": f"Bearer {token}"}))
        assert created.status_code == 201
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)


def test_ctrl_c_stops_serve_at_once_and_without_a_traceback(redis_url, tmp_path):
    """Ctrl-C reaches the whole group (gunicorn's master and its workers); gunicorn's
    gevent worker used to answer it with gevent's report of a greenlet that 'failed with
    SystemExit' and two tracebacks (gunicorn #3239)."""
    port, log = free_port(), tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "referee.cli", "serve", "--port", str(port), "--workers",
             "2"], env=worker_env(redis_url), cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)
    try:
        wait_for_port(port)
        assert requests.get(f"http://127.0.0.1:{port}/health", timeout=30).status_code == 200
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    output = log.read_text()
    assert "Handling signal: int" in output and "Shutting down: Master" in output, output
    assert "Traceback" not in output and "SystemExit" not in output, output


def test_worker_prints_its_queues_and_stops_when_empty_in_burst_mode(redis_url):
    done = subprocess.run(worker_command("--burst"), env=worker_env(redis_url), cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "on queues referee-matches" in done.stdout
    assert "until the queues are empty" in done.stdout


def test_a_worker_started_while_redis_is_down_waits_for_it(tmp_path):
    """As a running worker rides out an outage, one started during it waits (it used to
    exit at once: rq names its connection in Redis as the worker is made)."""
    redis_server = RedisServer(tmp_path / "redis", persistent=False)
    proc = subprocess.Popen(worker_command("--burst"), env=worker_env(redis_server.url),
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while "unavailable" not in (line := proc.stdout.readline()):
            assert line and time.monotonic() < deadline, "the worker did not say it waits"
        with redis_server:
            output, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert proc.returncode == 0, output
    assert "until the queues are empty" in output
