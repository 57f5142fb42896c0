"""Bots that read the clock and use it (issue 26): the SDK's clocked bot
(bots/python/clocked_bot.py) and the Node.js bot with --think spend a twentieth of their
clock plus most of the increment on each decision, through the real API and a worker, and
hear their updates; the SDK hands a `choose` of three parameters the whole decision and
sends an `Answer`'s debug and info."""

from __future__ import annotations

import io
import json

from bots.python.clocked_bot import ClockedBot
from bots.python.sdk import Answer, make_server, serve_stdio
from tests.support.apitest import ADMIN
from tests.support.bot_servers import node_command, running_process_bot
from tests.support.loopback import serving
from tests.support.updates import clocks_before, expected_updates

CLOCK = {"base_ms": 4000, "increment_ms": 100}


def register_listening(api, url: str, name: str) -> str:
    response = api.post("/bots", token=ADMIN, json={"name": name, "url": url,
                                                    "games": ["aladino"], "updates": True})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["id"]


def test_the_python_and_node_bots_spend_their_budget_and_count_their_updates(api, run_worker):
    clocked = ClockedBot(seed=3)
    server = make_server(clocked.choose, port=0, secret="", on_update=clocked.hear)
    with serving(server) as port, running_process_bot(node_command() + ["--think"]) as node:
        bots = [register_listening(api, f"http://127.0.0.1:{port}/", "clocked python"),
                register_listening(api, node, "clocked node"),
                register_listening(api, f"http://127.0.0.1:{port}/", "clocked python 2")]
        match = api.post("/matches", token=ADMIN, json={
            "game": "aladino", "seats": [{"kind": "bot", "bot_id": bot} for bot in bots],
            "seed": 5, "time_control": CLOCK}).get_json()
        run_worker(300)
    record = api.get(f"/matches/{match['id']}/replay", token=ADMIN).get_json()
    assert record["steps"] and all(step["fault"] is None for step in record["steps"])
    for step in record["steps"]:
        clock = clocks_before(record, step["step"])
        mine = clock["remaining_ms"][step["seat"]]
        budget = max(min(mine / 20 + 80, clock["deadline_ms"] - 50), 0)
        info = step["info"]
        assert abs(info["budget_ms"] - budget) <= 1, (step["step"], info, budget)
        assert info["spent_ms"] >= info["budget_ms"] - 1, "it spent its budget, by its clock"
        # and the referee saw it do so (less a referee preempted between its write and its
        # clock read: such time is never charged)
        assert step["elapsed_ms"] >= info["budget_ms"] * 0.9 - 2
        heard_before = [u for u in expected_updates(record, step["seat"])
                        if u["step"] < step["step"]]
        assert info["updates_heard"] == len(heard_before), step["step"]
    assert max(step["info"]["updates_heard"] for step in record["steps"]) > 0
    assert all(step["debug"].startswith("thought ") for step in record["steps"]
               if step["seat"] != 1)


def test_a_choose_of_three_parameters_gets_the_decision_and_its_answer_says_more():
    seen = []

    def choose(observation, legal_actions, decision):
        seen.append(decision)
        return Answer(legal_actions[-1], debug="why not", info={"depth": 2})

    updates = []
    decision = {"protocol": "referee/1", "type": "decision", "match_id": "m", "seat": 0,
                "step": 3, "deadline_ms": 900, "observation": {"x": 1},
                "legal_actions": [{"a": 1}, {"a": 2}],
                "clock": {"remaining_ms": [800, 900], "increment_ms": 0,
                          "overdraft_ms": [0, 0], "deadline_ms": 800}}
    update = {"protocol": "referee/1", "type": "update", "match_id": "m", "seat": 0,
              "step": 4, "events": [], "clock": None}
    out = io.StringIO()
    serve_stdio(choose, stdin=io.StringIO(json.dumps(update) + "\n" + json.dumps(decision)
                                          + "\n"), stdout=out, on_update=updates.append)
    assert updates == [update], "an update is handed over and never answered"
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [
        {"action": {"a": 2}, "debug": "why not", "info": {"depth": 2}}]
    assert seen == [decision]
