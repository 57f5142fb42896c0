"""The rq match job: JSON payload, idempotence, restart after an interrupted attempt.

Bots here point at a closed loopback port: every decision is a connection error, and under
the "random" policy the runner substitutes seeded legal moves, so a whole game is played
with no bot server at all.
"""

from __future__ import annotations

import json
import zlib

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from rq.job import Job
from rq.serializers import JSONSerializer

import engines
from referee.redis_server import free_port
from referee.runner import FailurePolicy
from tournament.jobs import enqueue_match, play_stored_match
from tournament.store import MatchStatus, Store, dumps, match_key, token_digest


@pytest.fixture
def store(redis_url) -> Store:
    return Store.from_url(redis_url)


def stored_match(store: Store, policy: str = "random", bot_id: str = "bot-dead") -> dict:
    """A match between two bots that cannot be reached, stored as the API stores one."""
    store.save_bot({"id": "bot-dead", "name": "dead", "url": f"http://127.0.0.1:{free_port()}/",
                    "games": engines.names(), "created_at": "2026-01-01T00:00:00Z"})
    engine = engines.get("aladino")
    state = engine.new_game(2, 5, {})
    meta = {"id": "m-job", "game": "aladino", "game_version": engine.version, "num_players": 2,
            "seats": [{"seat": i, "kind": "bot", "bot_id": bot_id, "name": "dead"}
                      for i in range(2)],
            "options": {}, "seed": 5, "policy": FailurePolicy.uniform(policy).to_dict(),
            "deadline_ms": 200, "pull_deadline_ms": 1000, "created_at": "2026-01-01T00:00:00Z"}
    store.create_match(meta, state, engine.current_seat(state), {})
    return meta


def test_the_job_payload_is_json_not_pickle(store):
    meta = stored_match(store)
    job = enqueue_match(store, meta)
    raw = store.redis.hget(f"rq:job:{job.id}", "data")
    assert json.loads(zlib.decompress(raw))[2] == [{"match_id": "m-job"}]
    fetched = Job.fetch(job.id, connection=store.redis, serializer=JSONSerializer)
    assert fetched.func_name == "tournament.jobs.play_match"
    assert fetched.args == [{"match_id": "m-job"}]


def test_a_match_is_played_once_and_a_finished_match_is_not_replayed(store):
    stored_match(store)
    summary = play_stored_match(store, "m-job")
    match = store.get_match("m-job")
    assert match["status"] == MatchStatus.FINISHED and summary["result"] == match["result"]
    record = store.get_replay("m-job")
    assert record["strikes"][0] > 0 and record["forfeit"] is None
    assert store.steps("m-job") == record["steps"]
    assert play_stored_match(store, "m-job") == summary
    assert store.get_replay("m-job") == record


def test_an_interrupted_attempt_is_discarded_and_the_match_replayed(store):
    stored_match(store)
    store.mark_running("m-job", "2026-01-01T00:00:01Z")
    store.redis.rpush(match_key("m-job", "steps"), dumps({"step": 0, "junk": True}))
    play_stored_match(store, "m-job")
    record = store.get_replay("m-job")
    assert store.steps("m-job") == record["steps"]
    assert all("junk" not in step for step in record["steps"])


def test_a_match_whose_bot_is_gone_fails_with_a_plain_message(store):
    stored_match(store, bot_id="bot-gone")
    with pytest.raises(LookupError, match="bot-gone"):
        play_stored_match(store, "m-job")
    match = store.get_match("m-job")
    assert match["status"] == MatchStatus.FAILED and "internal error" in match["error"]


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
