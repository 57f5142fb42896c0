"""The pull client plays a whole match through the real API: Flask app over HTTP, a real
Redis and a real rq worker, the other seat a push bot served by the SDK."""

import itertools
import json
import subprocess

import pytest
import requests

import engines
from bots.python import random_bot
from bots.python.pull import PullClient, RefusedMove, play_pull
from referee.match.rerun import state_before
from referee.processes import python_module
from tests.support.apitest import ADMIN, worker_env


def _start_match(app_url: str, push_url: str, game: str) -> tuple[str, str]:
    """Register the push bot, start a match bot vs pull seat; (match id, seat token)."""
    admin = {"Authorization": f"Bearer {ADMIN}"}
    bot = requests.post(f"{app_url}/bots", headers=admin, timeout=10,
                        json={"name": "random", "url": push_url, "games": [game]}).json()
    match = requests.post(f"{app_url}/matches", headers=admin, timeout=10, json={
        "game": game, "seed": 8, "seats": [{"kind": "bot", "bot_id": bot["id"]},
                                           {"kind": "pull", "name": "puller"}]}).json()
    return match["id"], match["tokens"][0]["token"]


def _worker(redis_url: str) -> subprocess.Popen:
    """A real `referee worker` (rq), waiting for jobs until stopped. Not `--burst`: a burst
    worker leaves after a second with nothing queued, which the match, parked while the
    pull client thinks, may well be on a loaded machine."""
    return subprocess.Popen(python_module("referee.cli", "worker"),
                            env=worker_env(redis_url),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_pull_client_plays_a_whole_match(app_url, redis_url, python_bot):
    with python_bot(random_bot.make_choose(1)) as push_url:
        match_id, token = _start_match(app_url, push_url, "aladino")
        worker = _worker(redis_url)
        try:
            match = play_pull(PullClient(app_url, match_id, token), random_bot.make_choose(2))
        finally:
            worker.terminate()
            _, errors = worker.communicate(timeout=60)
    assert match["status"] == "finished", errors.decode()[-2000:]
    assert match["forfeit"] is None and sorted(match["result"]["ranks"])[0] == 1
    replay = requests.get(f"{app_url}/matches/{match_id}/replay", timeout=10).json()
    assert any(step["seat"] == 1 for step in replay["steps"])
    assert all(step["fault"] is None for step in replay["steps"])


def test_pull_client_asks_for_new_log_entries_and_sees_whole_observations(app_url, redis_url,
                                                                          python_bot):
    """docs/bots.md, "The log since your last decision": after its first poll the client
    asks `?log_from=` its log's length, and every view it hands on is the engine's whole
    observation of that step (design.md section 4)."""
    views: list[dict] = []

    class Recording(PullClient):
        def call(self, method: str, path: str, body: dict | None = None) -> dict:
            answer = super().call(method, path, body)
            if path.startswith("/observation"):
                views.append({"path": path, "log_from": answer.get("log_from")})
            return answer

        def observation(self) -> dict:
            view = super().observation()
            views[-1]["view"] = view
            return view

    with python_bot(random_bot.make_choose(1)) as push_url:
        match_id, token = _start_match(app_url, push_url, "aldabas")
        client = Recording(app_url, match_id, token)
        worker = _worker(redis_url)
        try:
            match = play_pull(client, random_bot.make_choose(2))
        finally:
            worker.terminate()
            worker.communicate(timeout=60)
    assert match["status"] == "finished"
    record = requests.get(f"{app_url}/matches/{match_id}/replay", timeout=10).json()
    engine = engines.get(record["game"], record["game_version"])
    assert views[0]["path"] == "/observation?log_from=0" and views[0]["log_from"] is None
    assert any(view["log_from"] for view in views)
    for before, after in itertools.pairwise(views):
        assert after["path"] == f"/observation?log_from={len(before['view']['observation']['log'])}"
    for view in (v["view"] for v in views):
        state = state_before(engine, record, view["step"])
        assert view["observation"] == engine.observation(state, view["seat"])


def test_pull_client_reports_an_illegal_move_with_the_rule(app_url, redis_url, python_bot):
    def cheat(observation, legal_actions):
        return {"type": "move", "direction": 7}

    with python_bot(random_bot.make_choose(1)) as push_url:
        match_id, token = _start_match(app_url, push_url, "aladino")
        worker = _worker(redis_url)
        try:
            with pytest.raises(RefusedMove) as refused:
                play_pull(PullClient(app_url, match_id, token), cheat)
        finally:
            worker.kill()
            worker.wait(timeout=10)
    problem = json.loads(str(refused.value).split(": ", 1)[1])
    assert "direction" in json.dumps(problem)
