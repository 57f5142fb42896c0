"""The Node.js random bot (a real `node` process) plays a full match of every game through
the referee's runner: the protocol needs nothing from Python. It answers result notices
and, given its secret, checks the Referee-Signature (issue 18)."""

import json
import time

import pytest
import requests

import engines
from referee.match import signing
from referee.match.runner import FailurePolicy, PushSeat, run_match
from referee.match.signing import HEADER, signature_header


def _smallest_setups():
    """Per game, the fewest players of each mode (e.g. 2p, and 1p solo for Aldabas)."""
    for name in engines.names():
        by_options = {}
        for variant in engines.get(name).variants():
            key = repr(sorted(variant["options"].items()))
            by_options.setdefault(key, variant)
        for variant in by_options.values():
            yield pytest.param(name, variant, id=f"{name}-{variant['num_players']}p")


@pytest.mark.parametrize(("game", "variant"), list(_smallest_setups()))
def test_node_bot_plays_a_full_match(node_bot_url, game, variant):
    seats = [PushSeat(node_bot_url, deadline_ms=3000) for _ in range(variant["num_players"])]
    record = run_match(game, 11, variant["options"], seats, FailurePolicy(),
                       match_id=f"node-{game}")
    assert record["forfeit"] is None
    assert all(step["fault"] is None for step in record["steps"])
    assert record["steps"] and record["result"]["ranks"]
    engine = engines.get(game)
    state = engine.new_game(variant["num_players"], 11, variant["options"])
    for step in record["steps"]:
        state = engine.apply(state, step["action"])
    assert engine.is_over(state) and engine.result(state) == record["result"]


def _decision_body() -> bytes:
    return json.dumps({"protocol": "referee/1", "type": "decision", "match_id": "m1",
                       "game": "aladino", "seat": 0, "step": 0, "deadline_ms": 2000,
                       "observation": {}, "legal_actions": [{"type": "only"}]}).encode()


def test_node_bot_answers_a_result_notice_and_an_untyped_decision(node_bot_url):
    notice = {"protocol": "referee/1", "type": "result", "match_id": "m1", "game": "aladino",
              "seat": 0, "result": {"scores": [1, 0], "ranks": [1, 2]}, "replay_url": "x"}
    result = requests.post(node_bot_url, json=notice, timeout=10)
    untyped = json.loads(_decision_body())
    del untyped["type"]
    decision = requests.post(node_bot_url, json=untyped, timeout=10)
    assert result.status_code == 200 and result.json() == {}
    assert decision.json() == {"action": {"type": "only"}, "log": "new"}


def test_node_bot_with_a_secret_refuses_unsigned_and_badly_signed_requests(node_bot):
    body, now = _decision_body(), int(time.time())
    with node_bot({"REFEREE_BOT_SECRET": "s3cret"}) as url:
        def post(headers):
            return requests.post(url, data=body, timeout=10,
                                 headers={"Content-Type": "application/json", **headers})

        missing = post({})
        wrong = post({HEADER: signature_header("guess", body, now)})
        stale = post({HEADER: signature_header("s3cret", body, now - 1000)})
        malformed = post({HEADER: "t=later,v1=00"})
        rotated = post({HEADER: f"t={now},v1={signing.signature('old', body, now)},"
                                f"v1={signing.signature('s3cret', body, now)}"})
    assert missing.status_code == 401 and "missing" in missing.json()["error"]
    assert wrong.status_code == 401 and "does not match" in wrong.json()["error"]
    assert stale.status_code == 401 and "timestamp" in stale.json()["error"]
    assert malformed.status_code == 401 and "malformed" in malformed.json()["error"]
    assert rotated.status_code == 200
    assert rotated.json() == {"action": {"type": "only"}, "log": "new"}
