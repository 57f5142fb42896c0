"""Whatever a bot or a pull client sends as an action is a legal action or a fault of that
seat (`malformed`, `illegal`) or a 4xx, never an internal error; the replay keeps the
engine's canonical form of each action, never the junk that came with it.

The push side of deep nesting and junk keys is in the misbehaving-bot catalogue
(`test_hardening_bots.py`: `/deep`, `/junk`); here the pull side, and the canonical form."""

from __future__ import annotations

import json

import pytest

import engines
from tests.support.live_server import wait_status


def test_a_bots_floats_are_stored_as_the_integers_they_mean(api, bad_bots, workers):
    good = api.register_bot(bad_bots.url("/good"), name="good")
    floats = api.register_bot(bad_bots.url("/floats"), name="floats")
    match = api.create_match("aladino", [{"kind": "bot", "bot_id": floats},
                                         {"kind": "bot", "bot_id": good}], seed=7)
    workers.start(1)
    wait_status(api, match["id"], "finished")
    record = api.get(f"/matches/{match['id']}/replay").get_json()
    mine = [step for step in record["steps"] if step["seat"] == 0]
    assert mine and not any(step["fault"] for step in mine)
    engine = engines.get("aladino")
    for step in mine:
        assert step["action"] == engine.canonical_action(step["action"])
        assert not any(isinstance(value, float) for value in step["action"].values())
    assert api.post("/replays/verify", json=record).get_json()["valid"]


def deep(action: dict, depth: int) -> str:
    return json.dumps(action)[:-1] + ', "junk": ' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize("spoil", ["deep", "junk key", "huge int", "too large", "float"])
def test_a_pull_seats_spoiled_action_is_a_400_and_changes_nothing(api, spoil):
    match = api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}], seed=3)
    tokens = {t["seat"]: t["token"] for t in match["tokens"]}
    seen = api.get(f"/matches/{match['id']}/observation", token=tokens[0]).get_json()
    mover = seen["to_move"]
    legal = api.get(f"/matches/{match['id']}/observation",
                    token=tokens[mover]).get_json()["legal_actions"][0]
    body = {"deep": '{"step": 0, "action": ' + deep(legal, 300) + "}",
            "junk key": json.dumps({"step": 0, "action": {**legal, "junk": 1}}),
            "huge int": json.dumps({"step": 0, "action": {**legal, "direction": 2 ** 64}}),
            "too large": json.dumps({"step": 0, "action": {**legal, "pad": "x" * 20000}}),
            "float": None}[spoil]
    if body is None:  # not spoiled: a float that means an integer is the same action
        action = {k: float(v) if isinstance(v, int) else v for k, v in legal.items()}
        answer = api.post(f"/matches/{match['id']}/actions", token=tokens[mover],
                          json={"step": 0, "action": action})
        assert answer.status_code == 200, answer.get_json()
        return
    answer = api.post(f"/matches/{match['id']}/actions", token=tokens[mover], data=body,
                      content_type="application/json")
    assert answer.status_code in (400, 413), answer.get_json()
    assert answer.get_json()["status"] == answer.status_code
    after = api.get(f"/matches/{match['id']}/observation", token=tokens[mover]).get_json()
    assert after["step"] == 0 and after["to_move"] == mover
