"""The results log with real `referee worker` processes (issue 25): many workers finishing at
once, results recorded before the log existed, key rotation with SIGHUP, the refusal to
start without a key, and the result notice's log index."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from datetime import timedelta

import redis
import requests

from referee.api.app import create_app
from referee.match import merkle, replay
from referee.match.sealing import Verifier, append_new_key, from_b64url, read_key_file
from referee.match.verify import verify
from tests.support.apitest import (
    ADMIN,
    ROOT,
    ApiClient,
    common_config,
    drive_match,
    load_openapi,
    signing_key_file,
    worker_command,
    worker_env,
)
from tests.support.live_server import LiveServer, wait_status
from tests.support.tournament_checks import check_logged_once
from tests.support.waiting import wait_for
from tournament import archive
from tournament.store import Store, match_key
from tournament.store.keys import log_head_key, log_ids_key, log_level_key


def create_matches(api, bots: list[str], count: int, game: str = "aladino") -> list[str]:
    return [api.create_match(game, [{"kind": "bot", "bot_id": bots[n % len(bots)]},
                                    {"kind": "bot", "bot_id": bots[(n + 1) % len(bots)]}],
                             seed=n, deadline_ms=5000)["id"] for n in range(count)]


def wait_all(api, match_ids: list[str], timeout: float = 180) -> None:
    for match_id in match_ids:
        wait_status(api, match_id, "finished", timeout)


def test_eight_workers_finishing_at_once_never_share_an_index_nor_leave_a_gap(
        api, bot_server, workers, redis_url):
    """The workers also store each level-4 node as its 16th leaf lands (the driver's
    `complete_log`), before any reader of the log asks for it."""
    bots = [api.register_bot(bot_server.url("/first"), name=f"first {n}") for n in range(4)]
    workers.start_ready(8)
    match_ids = create_matches(api, bots, 48)
    wait_all(api, match_ids)
    client = redis.Redis.from_url(redis_url)
    wait_for(lambda: client.strlen(log_level_key(4)) == 3 * merkle.HASH_BYTES, 60,
             "the workers storing the log's 3 nodes of 16 leaves")
    check_logged_once(api, match_ids)


def test_results_recorded_before_the_log_existed_are_logged_once_in_finishing_order(
        api, bot_server, redis_url, run_worker):
    """An upgrade: finished matches without a leaf (the log wiped, as before issue 25) are
    logged by the next worker to start, in the order they finished; once only."""
    bots = [api.register_bot(bot_server.url("/first"), name=f"b{n}") for n in range(2)]
    match_ids = create_matches(api, bots, 5)
    for match_id in match_ids:
        drive_match(redis_url, match_id)
    client = redis.Redis.from_url(redis_url)
    client.delete(log_ids_key(), log_head_key(), *(log_level_key(n) for n in range(4)))
    for match_id in match_ids:
        client.hdel(match_key(match_id), "log")
    assert api.get("/log/head").get_json()["tree_size"] == 0
    run_worker()
    run_worker()  # a second start finds nothing left to log
    by_finish = sorted(match_ids, key=lambda m: api.get(f"/matches/{m}").get_json()[
        "finished_at"])
    entries = api.get("/log/entries?start=0&end=10").get_json()["entries"]
    assert [entry["match_id"] for entry in entries] == by_finish
    check_logged_once(api, match_ids)


def test_a_rotated_key_signs_after_sighup_and_records_signed_before_still_verify(
        api, bot_server, redis_url, workers, tmp_path):
    key_file = tmp_path / "keys.pem"
    key_file.write_bytes(signing_key_file().read_bytes())
    (first,) = workers.start_ready(1, REFEREE_SIGNING_KEY_FILE=str(key_file))
    bots = [api.register_bot(bot_server.url("/first"), name=f"b{n}") for n in range(2)]
    before = create_matches(api, bots, 1)
    wait_all(api, before)

    rotated = subprocess.run([sys.executable, "-m", "referee.cli", "keys", "rotate",
                              "--key-file", str(key_file)], cwd=ROOT, capture_output=True,
                             text=True, timeout=60, env=worker_env(redis_url))
    assert rotated.returncode == 0, rotated.stderr
    old, new = read_key_file(key_file)
    assert f"new current key {new.key_id}" in rotated.stdout
    published = {key["key_id"]: key for key in api.get("/keys").get_json()["keys"]}
    assert published[old.key_id]["not_after"] is not None
    assert published[new.key_id]["not_after"] is None

    first.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 30
    while f"signing with key {new.key_id}" not in workers.logs():
        assert time.monotonic() < deadline, workers.logs()
        time.sleep(0.1)
    after = create_matches(api, bots, 1)
    wait_all(api, after)
    keys = Verifier.of(from_b64url(key["public_key"]) for key in published.values())
    for match_id, key in ((before[0], old), (after[0], new)):
        record = api.get(f"/matches/{match_id}/replay").get_json()
        assert record["signature"]["key_id"] == key.key_id
        assert verify(record, keys).signature == "valid"
    assert first.poll() is None, "SIGHUP reloads the keys; it does not stop the worker"


def test_referee_serve_signs_its_heads_with_the_new_key_after_sighup(redis_url, tmp_path):
    key_file = tmp_path / "keys.pem"
    key_file.write_bytes(signing_key_file().read_bytes())
    server = LiveServer(redis_url, tmp_path / "serve.log",
                        REFEREE_SIGNING_KEY_FILE=str(key_file))
    try:
        (old,) = read_key_file(key_file)
        assert requests.get(f"{server.url}/log/head", timeout=10).json()["key_id"] == old.key_id
        append_new_key(key_file)
        new = read_key_file(key_file)[-1]
        os.kill(server.proc.pid, signal.SIGHUP)  # gunicorn starts new workers with the file
        deadline = time.monotonic() + 30
        while requests.get(f"{server.url}/log/head", timeout=10).json()["key_id"] != new.key_id:
            assert time.monotonic() < deadline, server.log()
            time.sleep(0.2)
        keys = requests.get(f"{server.url}/keys", timeout=10).json()["keys"]
        assert {key["key_id"] for key in keys} == {old.key_id, new.key_id}
    finally:
        server.stop()


def test_serve_and_worker_refuse_to_start_without_a_key_unless_hmac_only_is_chosen(
        redis_url, api, bot_server):
    env = {k: v for k, v in worker_env(redis_url).items() if k != "REFEREE_SIGNING_KEY_FILE"}
    for command in (worker_command("--burst"),
                    [sys.executable, "-m", "referee.cli", "serve", "--port", "9"]):
        refused = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True,
                                 timeout=60)
        assert refused.returncode == 2
        (line,) = refused.stderr.strip().splitlines()
        assert "REFEREE_SIGNING_KEY_FILE is not set" in line and "REFEREE_HMAC_ONLY" in line

    bots = [api.register_bot(bot_server.url("/first"), name=f"b{n}") for n in range(2)]
    (match_id,) = create_matches(api, bots, 1)
    hmac_only = subprocess.run(worker_command("--burst"), env={**env, "REFEREE_HMAC_ONLY": "1"},
                               cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert hmac_only.returncode == 0, hmac_only.stderr
    record = api.get(f"/matches/{match_id}/replay").get_json()
    assert record["signature"]["algorithm"] == "hmac-sha256"
    assert record["log"]["index"] == 0, "an HMAC-only server logs its results too"


def test_the_result_notice_carries_the_records_log_index(api, python_bot, run_worker):
    notices: list[dict] = []
    with python_bot(lambda observation: observation["legal_actions"][0],
                    notices.append) as url:
        bots = [api.register_bot(url, name=f"b{n}") for n in range(2)]
        match_ids = create_matches(api, bots, 2)
        run_worker()
        deadline = time.monotonic() + 10
        while len(notices) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
    indexes = {api.get(f"/matches/{m}").get_json()["log_index"]: m for m in match_ids}
    assert sorted(indexes) == [0, 1]
    for notice in notices:
        assert indexes[notice["log"]["index"]] == notice["match_id"]
    assert len(notices) == 4


def test_a_finished_record_hashes_to_its_leaf_and_an_archived_one_keeps_it(
        api, bot_server, redis_url, tmp_path):
    """The leaf is sha256(0x00 || sha256(canonical record without `log`)); archiving the
    record to a file leaves the log as it was and the proof served as before."""
    bots = [api.register_bot(bot_server.url("/first"), name=f"b{n}") for n in range(2)]
    (match_id,) = create_matches(api, bots, 1, game="caravans")
    drive_match(redis_url, match_id)
    record = api.get(f"/matches/{match_id}/replay", token=ADMIN).get_json()
    logged = {k: v for k, v in record.items() if k != "log"}
    leaf = merkle.leaf_hash(replay.leaf_data(logged)).hex()
    assert record["log"]["proof"]["leaf_hash"] == leaf
    head, proof = api.get("/log/head").get_json(), api.get(f"/log/proof/{match_id}").get_json()
    archive_dir = tmp_path / "archive"
    config = replace(common_config(redis_url), archive_dir=str(archive_dir))
    reader = ApiClient(create_app(config), load_openapi())
    report = archive.archive_finished(Store.from_url(redis_url),
                                      archive.ReplayArchive(archive_dir), timedelta(0))
    assert report.archived == 1
    assert not redis.Redis.from_url(redis_url).exists(match_key(match_id, "replay"))
    assert reader.get("/log/head").get_json() == head
    assert reader.get(f"/log/proof/{match_id}").get_json() == proof
    again = reader.get(f"/matches/{match_id}/replay").get_json()
    assert again["log"]["index"] == record["log"]["index"]
    assert json.dumps(again, sort_keys=True) == json.dumps(record, sort_keys=True)
