"""Records stored by earlier versions of the referee stay readable, verifiable and
archivable: plain JSON match fields and replays, the `RZ1` stored form, `referee-replay/1`
records (orjson canonical form, seeds above 2**53) and `referee-replay/2` records (every
step's state hash signed)."""

from __future__ import annotations

import zlib
from dataclasses import replace
from datetime import timedelta

import orjson
import pytest

from referee.api.app import create_app
from referee.match import compact
from tests.support.apitest import V1_RECORD, V1_SECRET, V2_RECORD, V2_SECRET, ApiClient
from tournament import archive
from tournament.store import Store, match_key


def plain_json(record: dict) -> bytes:
    return orjson.dumps(record)


def rz1(record: dict) -> bytes:
    """The stored form of the referee before steps as columns and the dictionary."""
    steps = [{k: v for k, v in step.items() if k != "state_hash"} for step in record["steps"]]
    return compact.MAGIC_V1 + zlib.compress(orjson.dumps({**record, "steps": steps}), 6)


def old_hash(store: Store, match: dict) -> None:
    """Rewrite the match hash as earlier versions wrote it: meta and result plain JSON."""
    meta = {k: v for k, v in match.items() if k not in (
        "status", "step", "to_move", "result", "forfeit", "error", "started_at",
        "finished_at", "log_index")}
    store.redis.hset(match_key(match["id"]), mapping={
        "meta": orjson.dumps(meta), "result": orjson.dumps(match["result"])})


@pytest.mark.parametrize("stored_form", [plain_json, rz1])
def test_an_old_stored_match_reads_verifies_and_archives(api, store, archive_dir,
                                                          finished_match, stored_form):
    match_id = finished_match("caravans")
    match = store.get_match(match_id)
    record = store.get_replay(match["id"])
    old_hash(store, match)
    store.redis.set(match_key(match_id, "replay"), stored_form(record))
    assert store.redis.hget(match_key(match_id), "meta").startswith(b"{")
    shown = api.get(f"/matches/{match_id}").get_json()
    served = api.get(f"/matches/{match_id}/replay").get_json()
    assert {k: v for k, v in served.items() if k != "log"} == record
    assert served["log"]["index"] == match["log_index"]
    assert api.post("/replays/verify", json=served).get_json()["valid"]
    report = archive.archive_finished(store, archive.ReplayArchive(archive_dir), timedelta(0))
    assert report.archived == 1 and report.failed == []
    assert api.get(f"/matches/{match_id}").get_json() == shown
    assert api.get(f"/matches/{match_id}/replay").get_json() == served


@pytest.mark.parametrize(("path", "secret", "stored_form"), [
    (V1_RECORD, V1_SECRET, plain_json),  # as the referee stored it before the RZ forms
    (V2_RECORD, V2_SECRET, compact.encode),  # RZ2, before referee-replay/3
], ids=["referee-replay/1", "referee-replay/2"])
def test_a_record_of_an_earlier_format_in_redis_reads_back_verifies_and_archives(
        config, store, archive_dir, openapi, path, secret, stored_form):
    record = orjson.loads(path.read_bytes())
    match_id = record["match_id"]
    seats = [{k: v for k, v in seat.items() if k != "deadline_ms"} for seat in record["seats"]]
    meta = {"id": match_id, "game": record["game"], "game_version": record["game_version"],
            "num_players": 2, "seats": seats, "options": record["options"],
            "seed": record["seed"], "policy": record["policy"], "deadline_ms": 2000,
            "pull_deadline_ms": 300000, "created_at": record["started_at"]}
    store.redis.hset(match_key(match_id), mapping={
        "meta": orjson.dumps(meta), "status": "finished", "step": len(record["steps"]),
        "to_move": b"null", "result": orjson.dumps(record["result"]), "forfeit": b"null",
        "started_at": record["started_at"], "finished_at": record["finished_at"]})
    store.redis.zadd(f"referee:matches:{record['game']}", {match_id: 1.0})
    store.redis.sadd(f"referee:ratings:{record['game']}:counted", match_id)
    store.redis.set(match_key(match_id, "replay"), stored_form(record))
    assert store.get_replay(match_id) == record
    api = ApiClient(create_app(replace(config, secret=secret)), openapi)  # its key
    verified = api.post("/replays/verify", json=record).get_json()
    assert verified["valid"] and verified["signature"] == "valid", verified
    if record["format"] == "referee-replay/2":  # served as documented (v1 seeds exceed it)
        served = api.get(f"/matches/{match_id}/replay").get_json()
        assert {k: v for k, v in served.items() if k != "log"} == record
    report = archive.archive_finished(store, archive.ReplayArchive(archive_dir), timedelta(0))
    assert report.archived == 1 and report.failed == []
    assert store.get_replay(match_id) == record
    assert store.get_match(match_id)["seed"] == record["seed"]
