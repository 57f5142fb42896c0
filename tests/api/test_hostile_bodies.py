"""Bodies built to cost the API: each is refused (or verified) at a cost bounded by its
size, with an answer a few KB long. Found by an audit of what one anonymous request can
make an API process spend (measured before, on `referee serve`): a replay of 348,659 empty
steps cost 13.9 s of CPU and a 101 MB answer, a match of 349,512 empty seats 6.9 s, a
replay with 338,491 short strings beside one non-ASCII character peaked at 1.5 GB, and a
value nested 500 deep was a 500."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import orjson
import pytest

from referee.match.botclient import BotReply
from referee.match.runner import FailurePolicy, run_match
from tests.support.apitest import ADMIN, ROOT

LIMIT = 1 << 20  # the API's body limit (MAX_BODY_BYTES)


class RandomSeat:
    deadline_ms = 800

    def __init__(self, seed: int):
        self.chooser = random.Random(seed)

    def info(self) -> dict:
        return {"kind": "bot", "bot_id": "bot-r", "name": "r", "deadline_ms": 800}

    async def decide(self, payload: dict) -> BotReply:
        return BotReply(self.chooser.choice(payload["legal_actions"]), None, "", 1.5)

    async def aclose(self) -> None:
        """Nothing to release."""


@pytest.fixture(scope="module")
def record() -> dict:
    return run_match("aladino", 5, {}, [RandomSeat(n) for n in range(2)],
                     FailurePolicy.uniform("random"), "m-hostile")


def filling(item: object, room: int) -> list:
    """As many copies of `item` as fit in `room` bytes of JSON."""
    return [item] * (room // (len(orjson.dumps(item)) + 1))


def post(api, path: str, body: dict, token: str | None = None):
    """`body` written compact (as many items as the body limit holds)."""
    data = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    assert len(data) <= LIMIT
    return api.post(path, token=token, data=data, content_type="application/json")


def small_refusal(response, status: int = 400) -> dict:
    assert response.status_code == status, response.get_data()[:300]
    assert len(response.get_data()) < 4096, len(response.get_data())
    return response.get_json()


def test_a_replay_of_a_million_bytes_of_empty_steps_is_refused_on_its_length(api, record):
    def filled(key: str) -> dict:
        return {**record, key: filling({}, LIMIT - len(orjson.dumps({**record, key: []})) - 64)}

    problem = small_refusal(post(api, "/replays/verify", filled("steps")))
    assert problem["errors"] == {"steps": ["at most 5000 items"]}
    seats = small_refusal(post(api, "/replays/verify", filled("seats")))
    assert seats["errors"] == {"seats": ["at most 16 items"]}


def test_request_lists_are_refused_on_their_length_before_their_items(api):
    seats = small_refusal(post(api, "/matches", {
        "game": "aladino", "seats": filling({}, LIMIT - 100)}, ADMIN))
    assert seats["errors"] == {"seats": ["at most 16 items"]}
    games = small_refusal(post(api, "/bots", {
        "name": "many", "url": "http://127.0.0.1:9/", "games": filling(0, LIMIT - 100)}, ADMIN))
    assert games["errors"] == {"games": ["at most 16 items"]}
    bots = small_refusal(post(api, "/tournaments", {
        "game": "aladino", "bots": filling(0, LIMIT - 100)}, ADMIN))
    assert bots["errors"]["bots"] == ["at most 64 items"]


def test_a_problem_names_at_most_twenty_fields_and_counts_the_rest(api):
    body = {"game": "aladino", "seats": [{"kind": "pull"}] * 2,
            **{f"x{n}": 1 for n in range(50_000)}}
    problem = small_refusal(post(api, "/matches", body, ADMIN))
    assert len(problem["errors"]) == 21
    assert problem["errors"]["_more"] == ["49980 more with errors, not listed"]


def test_a_value_nested_too_deep_to_write_canonically_is_refused_not_a_500(api, record):
    deep: object = "é"
    for _ in range(600):
        deep = {"a": deep}
    steps = [{**record["steps"][0], "action": {"x": deep}}, *record["steps"][1:]]
    problem = small_refusal(post(api, "/replays/verify", {**record, "steps": steps}), 422)
    assert problem["type"].endswith("replay/unsupported") and "nested" in problem["detail"]


def test_a_report_quotes_at_most_a_thousand_characters_of_the_record(api, record):
    details = {f"key {n}": n for n in range(50_000)}
    report = post(api, "/replays/verify", {**record, "result": {**record["result"],
                                                                "details": details}})
    assert report.status_code == 200 and len(report.get_data()) < 4096
    problem = report.get_json()["problem"]
    assert problem["field"] == "result.details" and len(problem["reason"]) == 1000
    assert problem["reason"].endswith("...")


def test_canonical_json_of_many_short_strings_takes_memory_in_proportion():
    """Each string was written by its own orjson call, and each small bytes object orjson
    answers holds ~4 KB: 300,000 strings beside one non-ASCII one (which takes the exact
    writer) held 347 MB, now ~70. Measured in a process of its own, by its peak RSS."""
    script = (
        "import resource\n"
        "from referee.match.canonical import jcs\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "written = jcs({'x': [''] * 300_000, 'y': 'é'})\n"
        "assert written == (b'{\"x\":[' + b','.join([b'\"\"'] * 300_000)\n"
        "                   + b'],\"y\":\"' + 'é'.encode() + b'\"}')\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)\n")
    grown_kb = int(subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True,
                                  capture_output=True, text=True).stdout)
    assert grown_kb < 200_000, f"{grown_kb} KB for 1.2 MB of JSON"
