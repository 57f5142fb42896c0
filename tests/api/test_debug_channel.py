"""The debug channel (issue 26): a bot's `debug` (at most 4 KiB) and `info` (at most 1 KiB
of JSON) are kept with each step, cut and flagged when larger, never a fault; while the
match runs only the admin and the seat itself see them."""

from __future__ import annotations

import time

import orjson
import redis

from referee.match.botclient import MAX_DEBUG_BYTES, MAX_INFO_BYTES, debug_channel
from tests.support.apitest import ADMIN, drive_match


def test_what_fits_is_kept_what_does_not_is_cut_and_flagged_and_nothing_else_is_taken():
    assert debug_channel({"debug": "d7", "info": {"depth": 7}}) == ("d7", {"depth": 7}, False)
    debug, info, cut = debug_channel({"debug": "é" * 3000, "info": {"a": "x" * 600,
                                                                     "b": "y" * 600}})
    assert cut and len(debug.encode()) <= MAX_DEBUG_BYTES and debug == "é" * 2048
    assert info == {"a": "x" * 600} and len(orjson.dumps(info)) <= MAX_INFO_BYTES
    assert debug_channel({"debug": 7, "info": [1, 2]}) == (None, None, False)


def played_against_a_quiet_bot(api, bot_server, redis_url, path: str) -> tuple[dict, list]:
    """An aladino match of the bot at `path` (seat 0) against one that always answers its
    first legal action, driven to its end: (its replay, the steps seat 0 played)."""
    talker = api.register_bot(bot_server.url(path), name=path.strip("/"))
    quiet = api.register_bot(bot_server.url("/first"), name="quiet")
    match = api.create_match("aladino", [{"kind": "bot", "bot_id": talker},
                                         {"kind": "bot", "bot_id": quiet}], seed=3)
    assert drive_match(redis_url, match["id"])["status"] == "finished"
    record = api.get(f"/matches/{match['id']}/replay").get_json()
    return record, [step for step in record["steps"] if step["seat"] == 0]


def test_a_match_keeps_each_steps_debug_and_shows_it_to_its_seat_and_the_admin_only(
        api, bot_server, redis_url):
    record, said = played_against_a_quiet_bot(api, bot_server, redis_url, "/chatty")
    replay = f"/matches/{record['match_id']}/replay"
    assert said and all(step["debug"].startswith(f"step {step['step']} ") and
                        step["debug_truncated"] and step["info"]["score"] == 0.5 for step in said)
    assert all("debug" not in step for step in record["steps"] if step["seat"] == 1)
    assert all(step["fault"] is None for step in record["steps"])
    index = said[0]["step"]
    own = api.get(f"{replay}/{index}?seat=0").get_json()["played"]
    assert own["debug"] == said[0]["debug"] and own["info"] == said[0]["info"]
    other = api.get(f"{replay}/{index}?seat=1").get_json()["played"]
    spectator = api.get(f"{replay}/{index}").get_json()["played"]
    assert not {"debug", "info", "debug_truncated"} & (set(other) | set(spectator))
    assert api.post("/replays/verify", json=record).get_json()["valid"]


def test_a_pull_seat_sends_its_debug_with_its_move(api, workers):
    created = api.post("/matches", token=ADMIN, json={
        "game": "aladino", "seats": [{"kind": "pull"}, {"kind": "pull"}], "seed": 4}).get_json()
    token = created["tokens"][0]["token"]
    workers.start_ready(1)
    seen = api.get(f"/matches/{created['id']}/observation", token=token).get_json()
    moved = api.post(f"/matches/{created['id']}/actions", token=token, json={
        "step": seen["step"], "action": seen["legal_actions"][0], "debug": "thinking",
        "info": {"nodes": 12}})
    assert moved.status_code == 200, moved.get_json()
    record = api.get(f"/matches/{created['id']}/replay", token=ADMIN).get_json()
    assert record["steps"][0]["debug"] == "thinking" and record["steps"][0]["info"] == {
        "nodes": 12}


def test_debug_shaped_like_numbers_is_kept_whole_and_its_replay_verifies(
        api, bot_server, redis_url):
    """A bot's debug of 4 KiB written `1.1.1...` and an info of `1e-1e-...`: text a search
    for doubles in canonical JSON must look at once, not once a mark. The match finishes,
    each step keeps the text as sent, and the replay verifies (its chain is made over the
    steps' canonical bytes, written by the worker and again by the API)."""
    record, said = played_against_a_quiet_bot(api, bot_server, redis_url, "/numberish")
    assert said and all(step["debug"] == "1." * (MAX_DEBUG_BYTES // 2)
                        and step["info"]["pv"] == "1e-" * 300 for step in said)
    assert api.post("/replays/verify", json=record).get_json()["valid"]


def test_an_info_nested_too_deep_or_too_big_is_cut_and_the_match_plays_on(
        api, bot_server, redis_url):
    """A hostile answer: `info` with 50,000 members and one nested 400 deep (more than a
    JSON writer writes), `debug` not a string. The step keeps what fits, flagged; no fault."""
    _, said = played_against_a_quiet_bot(api, bot_server, redis_url, "/deepinfo")
    assert all(step["fault"] is None and step["debug_truncated"] and "debug" not in step
               for step in said)
    assert all(len(orjson.dumps(step["info"])) <= MAX_INFO_BYTES for step in said)


def test_a_pull_seats_debug_is_cut_before_it_is_kept(api, workers, redis_url):
    created = api.post("/matches", token=ADMIN, json={
        "game": "aladino", "seats": [{"kind": "pull"}, {"kind": "pull"}], "seed": 4}).get_json()
    token = created["tokens"][0]["token"]
    seen = api.get(f"/matches/{created['id']}/observation", token=token).get_json()
    deep: dict = {}
    for _ in range(300):
        deep = {"a": deep}
    moved = api.post(f"/matches/{created['id']}/actions", token=token, json={
        "step": seen["step"], "action": seen["legal_actions"][0], "debug": "x" * 200_000,
        "info": {"deep": deep}})
    assert moved.status_code in (200, 202), moved.get_json()
    inbox = redis.Redis.from_url(redis_url).lrange(f"referee:match:{created['id']}:inbox:0", 0, -1)
    assert inbox and all(len(entry) < MAX_DEBUG_BYTES + 1000 for entry in inbox)
    workers.start_ready(1)
    for _ in range(200):
        record = api.get(f"/matches/{created['id']}/replay", token=ADMIN).get_json()
        if record["steps"]:
            break
        time.sleep(0.05)
    assert record["steps"][0]["debug"] == "x" * MAX_DEBUG_BYTES
    assert record["steps"][0]["debug_truncated"] and record["steps"][0]["info"] == {}
