"""The Python SDK speaks referee/1 over real HTTP on loopback (design.md section 4)."""

import statistics
import time

import requests

from bots.python import random_bot
from bots.python.sdk import PROTOCOL


def _payload(legal_actions, **extra):
    return {"protocol": PROTOCOL, "match_id": "m1", "game": "aladino", "seat": 0, "step": 3,
            "deadline_ms": 2000, "observation": {"seat": 0}, "legal_actions": legal_actions,
            **extra}


def test_answers_with_the_choosers_action(python_bot):
    seen = []

    def choose(observation, legal_actions):
        seen.append((observation, legal_actions))
        return legal_actions[-1]

    with python_bot(choose) as url:
        reply = requests.post(url, json=_payload([{"type": "a"}, {"type": "b"}]), timeout=5)
    assert reply.status_code == 200
    assert reply.json() == {"action": {"type": "b"}}
    assert seen == [({"seat": 0}, [{"type": "a"}, {"type": "b"}])]


def test_keep_alive_decisions_do_not_pay_the_nagle_delay(python_bot):
    """design.md: answered in two writes on a kept-alive connection, a decision costs about
    44 ms; the SDK answers in one write with TCP_NODELAY, so it stays far below that."""
    with python_bot(random_bot.make_choose(1)) as url, requests.Session() as session:
        timings = []
        for _ in range(30):
            started = time.perf_counter()
            reply = session.post(url, json=_payload([{"type": "x", "n": 1}]), timeout=5)
            timings.append((time.perf_counter() - started) * 1000)
            assert reply.json() == {"action": {"type": "x", "n": 1}}
    assert statistics.median(timings) < 20, f"median round trip {statistics.median(timings)} ms"


def test_refuses_a_request_that_is_not_a_decision(python_bot):
    with python_bot(random_bot.make_choose(1)) as url:
        wrong_protocol = requests.post(url, json=_payload([{"type": "a"}], protocol="x/0"),
                                       timeout=5)
        no_actions = requests.post(url, json=_payload([]), timeout=5)
        not_json = requests.post(url, data=b"{oops", timeout=5)
    assert wrong_protocol.status_code == 400 and "referee/1" in wrong_protocol.json()["error"]
    assert no_actions.status_code == 400 and "legal_actions" in no_actions.json()["error"]
    assert not_json.status_code == 400 and "not JSON" in not_json.json()["error"]


def test_a_choose_that_raises_gets_a_500_naming_the_error(python_bot):
    def choose(observation, legal_actions):
        raise KeyError("board")

    with python_bot(choose) as url:
        reply = requests.post(url, json=_payload([{"type": "a"}]), timeout=5)
    assert reply.status_code == 500
    assert "KeyError" in reply.json()["error"]
