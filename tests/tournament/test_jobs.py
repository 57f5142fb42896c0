"""The match job and its driver against a real Redis: JSON payload, idempotence, a match
continued from its recorded steps, fenced writes, and a plain failure.

Bots here point at a closed loopback port: every decision is a connection error, and under
the "random" policy the runner substitutes seeded legal moves, so a whole game is played
with no bot server at all, the same way every time.
"""

from __future__ import annotations

import asyncio
import json
import zlib

import pytest
import redis
import redis.asyncio as aioredis
from redis.backoff import NoBackoff
from redis.retry import Retry
from rq import Callback
from rq.job import Job
from rq.serializers import JSONSerializer

import engines
from referee.match.botclient import BotReply
from referee.match.runner import FailurePolicy, MatchPlay
from referee.redis_server import free_port
from tests.support.apitest import drive_match
from tournament import driver, jobs, recovery
from tournament.store import MatchStatus, Store, lease_key, running_key, token_digest
from tournament.store.progress import LeaseLost, Progress
from tournament.wakeups import enqueue_match

TIMINGS = ("elapsed_ms",)


@pytest.fixture
def store(redis_url) -> Store:
    return Store.from_url(redis_url)


def stored_match(store: Store, match_id: str = "m-job", policy: str = "random",
                 bot_id: str = "bot-dead") -> dict:
    """A match between two bots that cannot be reached, stored as the API stores one."""
    store.save_bot({"id": "bot-dead", "name": "dead", "url": f"http://127.0.0.1:{free_port()}/",
                    "games": engines.names(), "created_at": "2026-01-01T00:00:00Z"})
    engine = engines.get("aladino")
    state = engine.new_game(2, 5, {})
    meta = {"id": match_id, "game": "aladino", "game_version": engine.version,
            "num_players": 2,
            "seats": [{"seat": i, "kind": "bot", "bot_id": bot_id, "name": "dead"}
                      for i in range(2)],
            "options": {}, "seed": 5,
            "policy": FailurePolicy.uniform(policy, strike_limit=None).to_dict(),
            "deadline_ms": 200, "pull_deadline_ms": 1000, "created_at": "2026-01-01T00:00:00Z"}
    store.create_match(meta, state, engine.current_seat(state), {})
    return meta


def without_timings(record: dict) -> dict:
    """The record as it depends on the answers only: no times, no chain or signature
    (both cover the times), no match id."""
    steps = [{k: v for k, v in step.items() if k not in TIMINGS} for step in record["steps"]]
    return {**{k: v for k, v in record.items() if k not in (
        "started_at", "finished_at", "chain", "signature", "match_id")}, "steps": steps}


def test_the_job_payload_is_json_not_pickle(store):
    meta = stored_match(store)
    job = enqueue_match(store, meta)
    raw = store.redis.hget(f"rq:job:{job.id}", "data")
    assert json.loads(zlib.decompress(raw))[2] == [{"match_id": "m-job"}]
    fetched = Job.fetch(job.id, connection=store.redis, serializer=JSONSerializer)
    assert fetched.func_name == "tournament.jobs.play_match"
    assert fetched.args == [{"match_id": "m-job"}]


def test_a_job_stored_by_an_earlier_release_finds_its_function_and_callback(store):
    """rq keeps the dotted names of the job's function and failure callback in the job's
    data and imports them when it runs the job: jobs queued before the store's rewrite
    name `tournament.jobs.play_match` and `tournament.recovery.on_job_failure`."""
    stored_match(store)
    job = store.queue().enqueue("tournament.jobs.play_match", {"match_id": "m-job"},
                                on_failure=Callback("tournament.recovery.on_job_failure"))
    old = Job.fetch(job.id, connection=store.redis, serializer=JSONSerializer)
    assert old.func is jobs.play_match
    assert old.failure_callback is recovery.on_job_failure
    new = Job.fetch(enqueue_match(store, store.get_match("m-job"), "again").id,
                    connection=store.redis, serializer=JSONSerializer)
    assert new.func_name == old.func_name  # this release queues them by the same names
    assert new.failure_callback is recovery.on_job_failure


def test_a_match_is_played_once_and_a_finished_match_is_not_replayed(redis_url, store):
    stored_match(store)
    summary = drive_match(redis_url, "m-job")
    match = store.get_match("m-job")
    assert match["status"] == MatchStatus.FINISHED and summary["result"] == match["result"]
    record = store.get_replay("m-job")
    assert record["strikes"][0] > 0 and record["forfeit"] is None
    assert drive_match(redis_url, "m-job") == {"match_id": "m-job", "status": "finished"}
    assert store.get_replay("m-job") == record
    for part in ("live", "steps", "lease"):
        assert not store.redis.exists(f"referee:match:m-job:{part}"), part
    assert not store.redis.zscore(running_key(), "m-job")


def test_the_match_its_driver_counts_is_the_match_as_stored_at_its_end(redis_url, store):
    """The driver counts a finished match from the match it loaded and the record in hand
    (`driver.as_finished`), not read back: that is exactly what `Store.get_match` reads."""
    stored_match(store, "m-as-stored")
    loaded = store.get_match("m-as-stored")
    drive_match(redis_url, "m-as-stored")
    after = store.get_match("m-as-stored")
    record = store.get_replay("m-as-stored")
    assert driver.as_finished(loaded, record, after["started_at"], after["log_index"]) == after
    assert after["status"] == MatchStatus.FINISHED and after["step"] == len(record["steps"])


def test_a_match_continues_from_its_recorded_steps_as_if_never_interrupted(redis_url, store):
    """A driver that died after 7 steps: the next one keeps them and plays on; the replay
    is the one an uninterrupted run with the same answers makes."""
    stored_match(store, "m-whole")
    drive_match(redis_url, "m-whole")
    whole = store.get_replay("m-whole")
    meta = stored_match(store, "m-cut")

    async def die_after(steps: int) -> list[dict]:
        client = aioredis.Redis.from_url(redis_url)
        progress = Progress(client)
        assert await progress.take_lease("m-cut", "dead-driver")
        started_at = await progress.start("m-cut", "aladino", "dead-driver",
                                          "2026-01-01T00:00:00Z")
        play = MatchPlay.start("aladino", 5, {}, driver._seat_infos(meta),
                               FailurePolicy.from_dict(meta["policy"]), "m-cut", started_at)
        recorded = []
        for step in range(steps):
            seat = play.to_move
            legal = play.payload(seat, 200)["legal_actions"]
            entry = play.advance(seat, BotReply(None, "crash", "", 1.0, "connection error: "
                                                 "ConnectionRefusedError"), legal)
            await progress.record("m-cut", "dead-driver", entry, play.state_json,
                                  play.to_move, False, "aladino", "bot-dead")
            recorded.append(entry)
            assert step == entry["step"]
        await client.aclose()
        return recorded

    recorded = asyncio.run(die_after(7))
    store.redis.delete(lease_key("m-cut"))  # the dead driver's lease lapses
    drive_match(redis_url, "m-cut")
    resumed = store.get_replay("m-cut")
    # read back, every step carries its state hash (played, only checkpoints do)
    assert [{k: v for k, v in step.items() if k != "state_hash"}
            for step in resumed["steps"][:7]] == recorded
    assert "state_hash" not in recorded[0] and all("state_hash" in s for s in resumed["steps"])
    assert resumed["started_at"] == "2026-01-01T00:00:00Z"
    assert len(resumed["steps"]) == len(whole["steps"])
    expected = without_timings(whole)
    got = without_timings(resumed)
    for step in expected["steps"] + got["steps"]:
        step["fault"]["detail"] = step["fault"]["detail"].split(":")[0]
    assert got == expected


def test_a_driver_that_lost_its_lease_writes_nothing(redis_url, store):
    meta = stored_match(store)

    async def run() -> None:
        client = aioredis.Redis.from_url(redis_url)
        progress = Progress(client)
        assert await progress.take_lease("m-job", "first")
        await progress.start("m-job", "aladino", "first", "2026-01-01T00:00:00Z")
        await client.set(lease_key("m-job"), "second")  # another driver took the match over
        play = MatchPlay.start("aladino", 5, {}, driver._seat_infos(meta),
                               FailurePolicy.from_dict(meta["policy"]), "m-job")
        seat = play.to_move
        entry = play.advance(seat, BotReply(None, "crash", "", 1.0, "x"),
                             play.payload(seat, 200)["legal_actions"])
        with pytest.raises(LeaseLost):
            await progress.record("m-job", "first", entry, play.state_json, play.to_move,
                                  False, "aladino", "bot-dead")
        assert not await progress.take_lease("m-job", "first")
        await progress.release_lease("m-job", "first")
        assert await client.get(lease_key("m-job")) == b"second"
        await client.aclose()

    asyncio.run(run())
    assert store.steps("m-job") == []


def test_a_match_whose_bot_is_gone_fails_with_a_plain_message(redis_url, store):
    stored_match(store, bot_id="bot-gone")
    with pytest.raises(LookupError, match="bot-gone"):
        drive_match(redis_url, "m-job")
    match = store.get_match("m-job")
    assert match["status"] == MatchStatus.FAILED and "internal error" in match["error"]
    assert not store.redis.exists(lease_key("m-job"))


def test_seat_tokens_are_matched_by_digest(store):
    engine = engines.get("aladino")
    meta = {**stored_match(store), "id": "m-tokens"}
    store.create_match(meta, engine.new_game(2, 5, {}), 0, {1: token_digest("secret-1")})
    assert store.seat_view("m-tokens", "secret-1")[1] == 1
    assert store.seat_view("m-tokens", "secret-2")[1] is None
    assert b"secret-1" not in b"".join(store.redis.hgetall("referee:match:m-tokens:tokens")
                                       .values())


def test_store_ping_reports_an_unreachable_redis():
    client = redis.Redis(port=free_port(), retry=Retry(NoBackoff(), 0))
    assert not Store(client).ping()
