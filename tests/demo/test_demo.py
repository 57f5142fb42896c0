"""The main job (`referee demo`) end to end: real Redis, gunicorn, rq workers and bots."""

import os
import re
import signal
import socket
import subprocess
import sys
import time

import requests

from referee.redis_server import free_port


def _read_until(process: subprocess.Popen, marker: str, timeout: float) -> str:
    """The demo's output up to the line holding `marker`."""
    lines = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if marker in line:
            return "".join(lines)
    raise AssertionError(f"no {marker!r} in the demo's output:\n{''.join(lines)}")


def _as_from_a_terminal() -> None:
    """Ctrl-C as a terminal delivers it: a test process may ignore SIGINT (a job started
    in the background does), and a child inherits that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stopped(process: subprocess.Popen) -> str:
    """The rest of the demo's output once it has stopped (7 s at load 4); one that does not
    stop is sent SIGTERM, which it also handles, so that its processes do not outlive the
    test (each runs in a session of its own)."""
    try:
        return process.communicate(timeout=120)[0]
    except subprocess.TimeoutExpired:
        process.terminate()
        process.communicate(timeout=60)
        raise


def test_demo_prints_a_leaderboard_per_game_serves_the_pages_and_stops_on_ctrl_c(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "REFEREE_ADMIN_TOKEN")}
    process = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "demo", "--port", str(port), "--state-dir",
         str(tmp_path / "state")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        preexec_fn=_as_from_a_terminal,
    )
    try:
        output = _read_until(process, "Press Ctrl-C", timeout=240)
        for game in ("aladino", "aldabas", "caravans"):
            assert f"Leaderboard — {game}" in output
        assert "greedy (py)" in output and "Solo ranking" in output
        home = requests.get(f"http://127.0.0.1:{port}/", timeout=10, allow_redirects=False)
        assert home.status_code == 302 and home.headers["Location"].endswith("/ui/")
        page = requests.get(f"http://127.0.0.1:{port}/ui/games/aladino", timeout=10)
        assert page.status_code == 200 and "text/html" in page.headers["Content-Type"]
        board = requests.get(f"http://127.0.0.1:{port}/ratings/caravans", timeout=10).json()
        assert len(board["leaderboard"]) == 3
        assert (tmp_path / "state" / "redis").exists()
        dashboard, token = re.search(r"queue dashboard \(rq-dashboard\): (\S+) \(user admin, "
                                     r"password: the admin token (\S+)\)", output).groups()
        queues = requests.get(f"{dashboard}0/data/queues.json", auth=("admin", token),
                              timeout=10).json()["queues"]
        assert sorted(queue["name"] for queue in queues) == ["referee-hosted",
                                                              "referee-matches"]
        hosted = re.search(r"A hosted bot \(bots/c/random_bot.c, built and run in the "
                           r"sandbox\) plays: \S+/ui/matches/(\S+)", output)
        assert hosted, output
        match = requests.get(f"http://127.0.0.1:{port}/matches/{hosted.group(1)}", timeout=10)
        assert match.json()["seats"][0]["name"] == "random (c, hosted)"
        base, match_id, seat_token = re.search(
            r"Play aladino in your browser against the random bot: (\S+)/ui/play/(\S+)"
            r"#token=(\S+)", output).groups()
        assert requests.get(f"{base}/ui/play/{match_id}", timeout=10).status_code == 200
        seen = requests.get(f"{base}/matches/{match_id}/observation", timeout=10,
                            headers={"Authorization": f"Bearer {seat_token}"}).json()
        assert seen["seat"] == 0 and seen["status"] in ("queued", "running")
        match = requests.get(f"{base}/matches/{match_id}", timeout=10).json()
        assert match["pull_deadline_ms"] == 3_600_000
        assert match["seats"][1]["name"] == "random (py)"
        ladder_id = re.search(r"A ladder plays on while the demo runs: \S+/ui/ladders/(\S+)",
                              output).group(1)
        entered = requests.get(f"{base}/ladders/{ladder_id}/entries", timeout=10).json()
        assert {entry["name"] for entry in entered["entries"]} >= {"random (py)",
                                                                  "aladino greedy (py)"}
    finally:
        process.send_signal(signal.SIGINT)
        rest = _stopped(process)
    assert process.returncode == 0, rest
    assert "stopping" in rest
    try:
        requests.get(f"http://127.0.0.1:{port}/health", timeout=2)
        still_serving = True
    except requests.ConnectionError:
        still_serving = False
    assert not still_serving, "Ctrl-C left the API running"


def test_demo_says_clearly_when_its_port_is_taken(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "referee.cli", "demo", "--exit", "--port", str(port),
             "--state-dir", str(tmp_path / "state")],
            capture_output=True, text=True, timeout=60,
            env={k: v for k, v in os.environ.items() if k != "REDIS_URL"},
        )
    assert result.returncode == 1
    assert "already in use" in result.stderr and "Traceback" not in result.stderr


def test_demo_says_clearly_when_redis_server_is_missing(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["PATH"] = str(tmp_path / "empty-bin")  # no redis-server on the PATH
    result = subprocess.run(
        [sys.executable, "-m", "referee.cli", "demo", "--exit", "--port", str(free_port()),
         "--state-dir", str(tmp_path / "state")],
        capture_output=True, text=True, timeout=60, env=env,
    )
    assert result.returncode == 1
    assert "redis-server is not installed" in result.stderr
    assert "Traceback" not in result.stderr
