"""The Python SDK speaks referee/1 over real HTTP on loopback (design.md section 4)."""

import json
import select
import socket

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


def test_keep_alive_answers_arrive_in_one_piece(python_bot):
    """design.md: answered in two writes on a kept-alive connection, a decision costs about
    44 ms (Nagle + delayed ACK); the SDK answers in one write. Checked without timing: on a
    kept-alive connection, the first read after the answer starts holds the whole answer."""
    body = json.dumps(_payload([{"type": "x", "n": 1}])).encode()
    request = (f"POST / HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    with python_bot(random_bot.make_choose(1)) as url:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            for _ in range(5):
                sock.sendall(request)
                select.select([sock], [], [], 5)
                answer = sock.recv(1 << 16)
                head, _, payload = answer.partition(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                assert len(payload) == length, "the answer came in more than one write"
                assert json.loads(payload) == {"action": {"type": "x", "n": 1}}


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
