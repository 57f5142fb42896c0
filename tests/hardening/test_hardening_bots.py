"""The misbehaving-bot catalogue: every way a push bot can misbehave is judged by the
failure policy, recorded in a replay that verifies, and costs at most its own deadline,
while a healthy match on a second worker finishes normally and the API keeps answering.

The bot client's own handling of each fault is unit-tested in
tests/match/test_botclient.py; here each bad bot plays whole matches on real
`referee worker` processes.
"""

from __future__ import annotations

import json
import time

from tests.support.live_server import wait_status

DEADLINE_MS = 1000
HANG_DEADLINE_MS = 4000
GOOD_DEADLINE_MS = 5000

# path -> the fault code the failure policy sees
CATALOGUE = {
    "/slow": "timeout", "/hang": "timeout", "/trickle": "timeout", "/slow-head": "timeout",
    "/continue": "timeout", "/close": "crash", "/error": "crash", "/garbage": "malformed",
    "/huge": "malformed", "/unknown": "malformed", "/deep": "malformed", "/junk": "malformed",
    "/illegal": "illegal",
    "/other-seat": "illegal", "/stale": "illegal",
}
RANDOM_POLICY = ("/error", "/garbage", "/illegal", "/unknown", "/deep", "/other-seat",
                 "/close")


def deadline_for(code: str) -> int:
    """A bot meant to time out gets a short deadline; any other answers at once, and gets
    the generous one, so that a loaded machine cannot turn its fault into a timeout."""
    return DEADLINE_MS if code == "timeout" else GOOD_DEADLINE_MS


def start(api, good: str, bad: str, policy: str, code: str, deadline_ms: int) -> str:
    """The bad seat has `deadline_ms`; the good one a generous deadline, so that a loaded
    machine cannot make it fault too."""
    match = api.create_match("aldabas", [{"kind": "bot", "bot_id": good},
                                         {"kind": "bot", "bot_id": bad,
                                          "deadline_ms": deadline_ms}],
                             seed=11, options={"mode": "multi"}, deadline_ms=GOOD_DEADLINE_MS,
                             failure_policy={code: policy, "strike_limit": None})
    return match["id"]


def check_faults(api, bad_bots, match_id: str, path: str, code: str, policy: str) -> None:
    match = api.get(f"/matches/{match_id}").get_json()
    record = api.get(f"/matches/{match_id}/replay").get_json()
    assert match["status"] == "finished", (path, match)
    faults = [(s, s["fault"]) for s in record["steps"] if s["fault"]]
    assert faults, path
    assert {fault["code"] for _, fault in faults} == {code}, (path, faults)
    assert {fault["policy"] for _, fault in faults} == {policy}
    assert {step["seat"] for step, _ in faults} == {1}, "only the bad seat faults"
    if policy == "forfeit":
        assert len(faults) == 1 and match["forfeit"]["seat"] == 1
        assert match["result"]["ranks"] == [1, 2]
    else:
        assert match["forfeit"] is None and record["strikes"] == [0, len(faults)]
    limit = HANG_DEADLINE_MS if path == "/hang" else DEADLINE_MS
    if code == "timeout":
        assert all(step["elapsed_ms"] < limit + 2000 for step, _ in faults), path
    if path == "/huge":
        assert "larger than" in faults[0][1]["detail"]
    if path == "/other-seat":
        check_other_seat_answer(bad_bots.by_match[match_id], faults[0][0])
    report = api.post("/replays/verify", json=record).get_json()
    assert report.get("valid") and report["signature"] == "valid", (path, report)


def check_other_seat_answer(requests: list[dict], step: dict) -> None:
    """The refused action was one seat 0 had been offered, and not one seat 1 had."""
    asked = next(r for r in requests if r["step"] == step["step"])
    offered_to_seat_0 = [a for r in requests if r["seat"] == 0 and r["step"] < step["step"]
                         for a in r["legal_actions"]]
    action = json.loads(step["fault"]["raw"])["action"]
    assert action in offered_to_seat_0 and action not in asked["legal_actions"]


def test_every_misbehaving_bot_is_handled_while_a_healthy_match_plays_beside(
        api, bad_bots, workers):
    good = api.register_bot(bad_bots.url("/good"), name="good")
    bad = {path: api.register_bot(bad_bots.url(path), name=path) for path in CATALOGUE}
    workers.start_ready(2, REFEREE_BOT_MAX_MATCHES="64")
    hang = start(api, good, bad["/hang"], "forfeit", "timeout", HANG_DEADLINE_MS)
    wait_status(api, hang, "running")
    while not any(r["path"] == "/hang" for r in bad_bots.by_match[hang]):
        time.sleep(0.02)

    healthy = api.create_match("aldabas", [{"kind": "bot", "bot_id": good}] * 2, seed=12,
                               options={"mode": "multi"}, deadline_ms=GOOD_DEADLINE_MS)["id"]
    matches = [(start(api, good, bad[path], policy, code, deadline_for(code)), path, code, policy)
               for path, code in CATALOGUE.items() if path != "/hang"
               for policy in ("forfeit", "random") if policy == "forfeit"
               or path in RANDOM_POLICY]
    done = wait_status(api, healthy, "finished", timeout=30)
    hung = api.get(f"/matches/{hang}").get_json()
    assert hung["status"] == "running", "the healthy match finished while a bot hung"
    assert api.get("/health").status_code == 200
    assert done["forfeit"] is None
    record = api.get(f"/matches/{healthy}/replay").get_json()
    assert not any(step["fault"] for step in record["steps"])
    report = api.post("/replays/verify", json=record).get_json()
    assert report["valid"], str(report)

    for match_id, *_ in [(hang,), *matches]:
        wait_status(api, match_id, "finished", timeout=60)
    check_faults(api, bad_bots, hang, "/hang", "timeout", "forfeit")
    for match_id, path, code, policy in matches:
        check_faults(api, bad_bots, match_id, path, code, policy)
    assert all(proc.poll() is None for proc in workers.procs), "no worker died"
    assert "Traceback" not in workers.logs()
