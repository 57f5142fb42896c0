"""`referee archive`: finished replays move from Redis to files, and every reader answers as
before (the match, its list, the replay, the viewer's steps, verification, standings,
ratings); what stays in Redis of an archived match is small; archiving is idempotent, safe
with two archivers at once, and leaves what is not due."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

import engines
from referee.api.app import create_app
from referee.match.sealing import b64url
from tests.support.apitest import (
    ADMIN,
    ROOT,
    SECRET,
    ApiClient,
    drive_match,
    sealer_of_tests,
    worker_env,
)
from tournament import archive, archive_files, results
from tournament.store import Store, archive_cursor_key, match_key, ratings_key

NOW = timedelta(0)
GAME_PLAYERS = [(game, players) for game in engines.names() for players in (2, 4)]


def readings(api, match_id: str) -> dict:
    """Everything the API and the viewer read about a finished match."""
    match = api.get(f"/matches/{match_id}").get_json()
    record = api.get(f"/matches/{match_id}/replay").get_json()
    last = len(record["steps"])
    steps = {(step, seat): api.get(f"/matches/{match_id}/replay/{step}?seat={seat}").get_json()
             for step in (0, last // 2, last) for seat in range(match["num_players"])}
    steps[(last // 2, None)] = api.get(f"/matches/{match_id}/replay/{last // 2}").get_json()
    return {"match": match, "record": record, "steps": steps,
            "listed": api.get(f"/matches?game={match['game']}").get_json(),
            "ratings": api.get(f"/ratings/{match['game']}").get_json()}


def own_bytes(store: Store, match_id: str) -> int:
    """MEMORY USAGE of every key the match still has (`match:{id}` and its parts)."""
    keys = [match_key(match_id), *store.redis.scan_iter(match=match_key(match_id, "*"))]
    return sum(store.redis.memory_usage(key, samples=0) or 0 for key in keys)


@pytest.mark.parametrize(("game", "players"), GAME_PLAYERS)
def test_an_archived_match_reads_as_before_and_leaves_under_1_kib(api, store, archive_dir,
                                                                   finished_match, game,
                                                                   players):
    match_id = finished_match(game, players)
    before = readings(api, match_id)
    assert store.redis.exists(match_key(match_id, "decisions"))  # its driver kept them
    report = archive.archive_finished(store, archive.ReplayArchive(archive_dir), NOW)
    assert report.archived == 1 and report.failed == []
    assert not store.redis.exists(match_key(match_id, "replay"), match_key(match_id, "decisions"))
    assert own_bytes(store, match_id) <= 1024
    assert readings(api, match_id) == before
    verified = api.post("/replays/verify", json=before["record"]).get_json()
    assert verified["valid"] and verified["signature"] == "valid", verified
    month = before["match"]["finished_at"][:7]
    stored = orjson.loads(gzip.decompress(
        (archive_dir / game / month / f"{match_id}.json.gz").read_bytes()))
    assert stored == {k: v for k, v in before["record"].items() if k != "log"}
    assert all("state_hash" in step for step in stored["steps"])
    assert before["record"]["log"]["index"] == before["match"]["log_index"]


def test_a_tournament_keeps_its_standings_matches_and_seeds_once_archived(
        api, store, archive_dir, redis_url, random_bots):
    created = api.post("/tournaments", token=ADMIN, json={
        "game": "caravans", "bots": random_bots[:2], "rounds": 2, "deadline_ms": 5000})
    tournament_id = created.get_json()["id"]
    for match_id in created.get_json()["matches"]:
        drive_match(redis_url, match_id, SECRET)
    view = api.get(f"/tournaments/{tournament_id}").get_json()
    page = api.get(f"/tournaments/{tournament_id}/matches?limit=3").get_json()
    assert view["status"] == "finished" and page["total"] == 4 and len(page["matches"]) == 3
    report = archive.archive_finished(store, archive.ReplayArchive(archive_dir), NOW)
    assert report.archived == 4
    assert api.get(f"/tournaments/{tournament_id}").get_json() == view
    assert api.get(f"/tournaments/{tournament_id}/matches?limit=3").get_json() == page
    assert all(own_bytes(store, match_id) <= 1024 for match_id in view["matches"])


def test_two_archivers_at_once_move_each_replay_once(redis_url, store, archive_dir,
                                                      finished_match):
    match_ids = [finished_match("aladino") for _ in range(6)]
    records = {match_id: store.get_replay(match_id) for match_id in match_ids}
    reports = []

    def run() -> None:
        reports.append(archive.archive_finished(
            Store.from_url(redis_url), archive.ReplayArchive(archive_dir), NOW))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(report.archived for report in reports) == 6
    assert [report.failed for report in reports] == [[], []]
    again = archive.archive_finished(store, archive.ReplayArchive(archive_dir), NOW)
    assert again.archived == 0 and again.failed == []
    for match_id, record in records.items():
        assert store.get_replay(match_id) == record
    assert not list(archive_dir.rglob("*.tmp"))


def test_a_file_written_before_redis_let_go_is_rewritten_and_redis_still_serves(
        api, store, archive_dir, finished_match):
    """An archiver that died between writing the file and the Redis transaction: the match
    reads from Redis (even with the file gone), and the next run finishes the move."""
    match_id = finished_match("aldabas")
    match = store.get_match(match_id)
    record = store.get_replay(match["id"])
    files = archive.ReplayArchive(archive_dir)
    relative = files.relative_path(match)
    files.write(relative, record)
    (archive_dir / relative).unlink()
    served = api.get(f"/matches/{match_id}/replay").get_json()
    assert {k: v for k, v in served.items() if k != "log"} == record
    assert archive.archive_finished(store, files, NOW).archived == 1
    assert api.get(f"/matches/{match_id}/replay").get_json() == served


def test_only_counted_matches_finished_long_enough_ago_move(store, archive_dir,
                                                             finished_match):
    files = archive.ReplayArchive(archive_dir)
    counted_id, uncounted_id = finished_match("aladino"), finished_match("aladino")
    store.redis.srem(ratings_key("aladino", "counted"), uncounted_id)  # as if not counted yet
    assert archive.archive_finished(store, files, timedelta(days=1)).archived == 0
    report = archive.archive_finished(store, files, NOW)
    assert report.archived == 1 and report.waiting == 1
    assert "archive" in store.get_match(counted_id)
    assert "archive" not in store.get_match(uncounted_id)
    cursor = float(store.redis.get(archive_cursor_key("aladino")))
    assert cursor == store.redis.zscore("referee:matches:aladino", uncounted_id)
    store.redis.sadd(ratings_key("aladino", "counted"), uncounted_id)
    assert archive.archive_finished(store, files, NOW).archived == 1
    assert "archive" in store.get_match(uncounted_id)


def test_a_server_without_the_archive_answers_503_for_an_archived_replay(
        config, store, archive_dir, finished_match, openapi):
    match_id = finished_match("caravans")
    archive.archive_finished(store, archive.ReplayArchive(archive_dir), NOW)
    blind = ApiClient(create_app(replace(config, archive_dir="")), openapi)
    assert blind.get(f"/matches/{match_id}").status_code == 200
    response = blind.get(f"/matches/{match_id}/replay")
    assert response.status_code == 503
    assert response.get_json()["type"] == "/problems/replay/unavailable"
    assert str(archive_dir) not in response.get_json()["detail"]


def test_the_archive_command_and_verify_read_the_files(redis_url, archive_dir,
                                                       finished_match, tmp_path: Path):
    match_id = finished_match("aladino")
    env = {**worker_env(redis_url), "REFEREE_ARCHIVE_DIR": ""}
    refused = [subprocess.run([sys.executable, "-m", "referee.cli", "archive", *args], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=60)
               for args in (["--older-than", "30d"],
                            ["--older-than", "thirty", "--archive-dir", str(archive_dir)])]
    assert [done.returncode for done in refused] == [2, 2]
    assert "REFEREE_ARCHIVE_DIR" in refused[0].stderr and "30d" in refused[1].stderr
    done = subprocess.run([sys.executable, "-m", "referee.cli", "archive", "--older-than", "0s"],
                          cwd=ROOT, env={**env, "REFEREE_ARCHIVE_DIR": str(archive_dir)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "archived 1 replays" in done.stdout, done.stderr
    (path,) = archive_dir.rglob(f"{match_id}.json.gz")
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [
        {"key_id": key.key_id, "algorithm": "ed25519", "public_key": b64url(key.public_raw),
         "not_before": "2026-12-01T00:00:00.000Z", "not_after": None}
        for key in sealer_of_tests().keys]}))
    verified = subprocess.run([sys.executable, "-m", "referee.cli", "verify", str(path),
                               "--keys", str(keys)], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=60)
    assert verified.returncode == 0 and verified.stdout.strip().endswith("VALID")


@pytest.mark.parametrize(("text", "seconds"), [("30d", 30 * 86400), ("12h", 43200),
                                               ("90m", 5400), ("45s", 45), ("2w", 1209600)])
def test_durations(text: str, seconds: int) -> None:
    assert archive.parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "30", "d", "-1d", "1.5h", "30 days", "1y"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="duration"):
        archive.parse_duration(text)


def test_a_file_outside_the_archive_or_of_another_match_is_refused(store, archive_dir,
                                                                    finished_match):
    files = archive.ReplayArchive(archive_dir)
    match_id = finished_match("aladino")
    record = store.get_replay(match_id)
    files.write("aladino/2026-01/other.json.gz", record)
    with pytest.raises(archive_files.ArchiveUnavailable, match="another match"):
        files.read("aladino/2026-01/other.json.gz", "m-other")
    with pytest.raises(archive_files.ArchiveUnavailable, match="outside"):
        files.read("../../etc/passwd", match_id)
    with pytest.raises(ValueError, match="safe file name"):
        files.relative_path({"id": "../x", "game": "aladino",
                             "finished_at": datetime.now(UTC).isoformat()})


def test_counting_an_archived_match_again_changes_nothing(redis_url, store, archive_dir,
                                                         finished_match):
    """As a late job or the recovery sweep does, in a worker that has no archive."""
    match_id = finished_match("aladino")
    archive.archive_finished(store, archive.ReplayArchive(archive_dir), NOW)
    assert not results.count_finished(Store.from_url(redis_url), match_id)
    assert drive_match(redis_url, match_id, SECRET)["status"] == "finished"


def test_an_archived_replay_of_rules_not_played_here_is_served_but_not_stepped(
        api, store, archive_dir, finished_match):
    """An archived record carries every hash and reads back without an engine; stepping
    through it needs its rules version, and one this referee lacks (a file written by a
    newer referee) is a 503, not a server error."""
    match_id = finished_match("aladino")
    record = api.get(f"/matches/{match_id}/replay").get_json()
    archive.archive_finished(store, archive.ReplayArchive(archive_dir), NOW)
    path = next(archive_dir.rglob(f"{match_id}.json.gz"))
    path.write_bytes(gzip.compress(orjson.dumps({**record, "game_version": "99.0.0"})))
    assert api.get(f"/matches/{match_id}/replay").get_json()["game_version"] == "99.0.0"
    response = api.get(f"/matches/{match_id}/replay/1")
    assert response.status_code == 503, response.get_json()
    assert response.get_json()["type"] == "/problems/replay/unavailable"
