"""A small tournament on a real cluster (gunicorn API, two `referee worker` processes, HTTP
bots on loopback, JSON logs): `GET /metrics` counts exactly what the replays hold, any API
process shows the same cluster-wide numbers, and every log line is JSON without a token."""

from __future__ import annotations

import copy
import time
from collections import Counter
from collections.abc import Iterator

import pytest
import redis
from prometheus_client.parser import text_string_to_metric_families

from referee.api.app import create_app
from referee.config import Config
from referee.redis_server import free_port
from tests.support.apitest import signing_key_file
from tests.support.botserver import BotServer
from tests.support.ops_cluster import ADMIN, METRICS, SECRETS, Cluster, parse_json_lines

ALL_RANDOM = {"timeout": "random", "crash": "random", "malformed": "random",
              "illegal": "random"}


@pytest.fixture(scope="module")
def played(redis_server, tmp_path_factory) -> Iterator[dict]:
    """Play a two-bot aladino tournament (one bot answers illegal moves, the random policy
    substitutes them) and a caravans match against a bot nobody serves (a crash, forfeit);
    verify one replay as it is and one tampered with. Yields the cluster and what it did."""
    client = redis.Redis.from_url(redis_server)
    client.flushall()
    bots = BotServer().start()
    cluster = Cluster(redis_server, tmp_path_factory.mktemp("ops-logs"))
    try:
        good = cluster.register("good", bots.url("/random"))
        liar = cluster.register("liar", bots.url("/illegal"))
        gone = cluster.register("gone", f"http://127.0.0.1:{free_port()}/bot")
        cluster.post("/tournaments", {
            "game": "aladino", "bots": [good, liar], "players": 2, "rounds": 1, "seed": 5,
            "failure_policy": ALL_RANDOM})
        cluster.post("/matches", {"game": "caravans", "seed": 9, "seats": [
            {"kind": "bot", "bot_id": good}, {"kind": "bot", "bot_id": gone}]})
        match_ids = [match["id"] for match in cluster.get("/matches?limit=100")["matches"]]
        cluster.wait_over(match_ids)
        replays = sorted((cluster.get(f"/matches/{match_id}/replay") for match_id in match_ids),
                         key=lambda record: record["game"] != "caravans")
        tampered = copy.deepcopy(replays[1])
        tampered["steps"][0]["state_hash"] = "0" * len(tampered["steps"][0]["state_hash"])
        verdicts = [cluster.post("/replays/verify", record)["valid"]
                    for record in (replays[1], tampered)]
        cluster.request("GET", f"/health?token={ADMIN}", token=None)  # a careless client
        # and one whose query and path are the longest a request line holds: the masking
        # of those log lines must not retry at every character (it took ~1 s of CPU)
        cluster.request("GET", "/health?" + "x" * 3800 + f"&token={ADMIN}", token=None)
        cluster.request("GET", "/" + "a" * 4000, token=None)
        metrics = _scrape_when_idle(cluster)
        yield {"cluster": cluster, "replays": replays, "verdicts": verdicts,
               "metrics": metrics, "bots": {"good": good, "liar": liar, "gone": gone}}
    finally:
        cluster.stop()
        bots.shutdown()
        bots.server_close()
        client.close()


def _scrape_when_idle(cluster: Cluster, timeout: float = 120) -> dict:
    """The metrics once the workers have closed their last jobs (rq removes a job from its
    started registry just after the match is stored)."""
    deadline = time.monotonic() + timeout
    while True:
        metrics = parse(cluster.request("GET", "/metrics", token=METRICS).text)
        if metrics[("referee_matches_running", ())] == 0 or time.monotonic() > deadline:
            return metrics
        time.sleep(0.2)


def parse(text: str) -> dict[tuple[str, tuple], float]:
    """(sample name, sorted labels) -> value."""
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def expected_decisions(replays: list[dict]) -> tuple[Counter, Counter, Counter]:
    """Decisions and summed seconds per (game, bot), faults per (game, code), from replays."""
    decisions, seconds, faults = Counter(), Counter(), Counter()
    for record in replays:
        for step in record["steps"]:
            labels = (record["game"], record["seats"][step["seat"]]["bot_id"])
            decisions[labels] += 1
            seconds[labels] += step["elapsed_ms"] / 1000
            if step["fault"]:
                faults[(record["game"], step["fault"]["code"])] += 1
    return decisions, seconds, faults


def test_the_decision_histogram_counts_every_step_of_every_replay(played):
    metrics, replays = played["metrics"], played["replays"]
    decisions, seconds, _ = expected_decisions(replays)
    assert len(decisions) == 4  # aladino: good and liar; caravans: good and gone
    for (game, bot), count in decisions.items():
        labels = (("bot", bot), ("game", game))
        assert metrics[("referee_decision_duration_seconds_count", labels)] == count
        assert metrics[("referee_decision_duration_seconds_sum", labels)] == pytest.approx(
            seconds[(game, bot)], abs=1e-4)
        inf = (("bot", bot), ("game", game), ("le", "+Inf"))
        assert metrics[("referee_decision_duration_seconds_bucket", inf)] == count
    reported = {labels for (name, labels) in metrics
                if name == "referee_decision_duration_seconds_count"}
    assert len(reported) == len(decisions)


def test_faults_are_counted_by_game_and_code(played):
    _, _, faults = expected_decisions(played["replays"])
    assert faults[("aladino", "illegal")] > 0 and faults[("caravans", "crash")] == 1
    reported = {dict(labels)["game"] + "/" + dict(labels)["code"]: value
                for (name, labels), value in played["metrics"].items()
                if name == "referee_faults_total"}
    assert reported == {f"{game}/{code}": count for (game, code), count in faults.items()}


def test_match_statuses_queues_workers_and_verifications(played):
    metrics, replays = played["metrics"], played["replays"]
    per_game = Counter(record["game"] for record in replays)
    assert per_game == {"aladino": 2, "caravans": 1}
    for game, count in per_game.items():
        for status in ("queued", "running", "finished"):
            assert metrics[("referee_matches_total", (("game", game), ("status", status)))] \
                == count
    assert not any(dict(labels).get("status") == "failed" for (_, labels) in metrics)
    queue = (("queue", "referee-matches"),)
    assert metrics[("referee_queue_jobs", queue)] == 0
    assert metrics[("referee_queue_oldest_job_age_seconds", queue)] == 0
    assert metrics[("referee_matches_running", ())] == 0
    assert metrics[("referee_workers", ())] == 2
    assert played["verdicts"] == [True, False]
    for result in ("valid", "invalid"):
        assert metrics[("referee_replay_verifications_total", (("result", result),))] == 1


def test_any_api_process_reads_the_same_cluster_wide_numbers(played, openapi):
    """An API process of its own (this test's), which served none of the requests, answers
    what the gunicorn processes answered: the numbers live in Redis, not in a process."""
    cluster = played["cluster"]
    app = create_app(Config(redis_url=cluster.redis_url, admin_token=ADMIN,
                            signing_key_file=str(signing_key_file())))
    answer = app.test_client().get("/metrics", headers={"Authorization": f"Bearer {ADMIN}"})
    assert answer.status_code == 200
    mine = {key: value for key, value in parse(answer.get_data(as_text=True)).items()
            if not key[0].startswith("referee_queue_oldest")}
    assert mine == {key: value for key, value in played["metrics"].items()
                    if not key[0].startswith("referee_queue_oldest")}


def test_metrics_need_the_metrics_or_admin_token(played):
    cluster = played["cluster"]
    assert cluster.request("GET", "/metrics", token=None).status_code == 401
    refused = cluster.request("GET", "/metrics", token="not-the-token")
    assert refused.status_code == 403
    assert refused.headers["Content-Type"] == "application/problem+json"
    admin = cluster.request("GET", "/metrics", token=ADMIN)
    assert admin.status_code == 200 and admin.headers["Content-Type"].startswith("text/plain")
    assert cluster.request("POST", "/bots", token=METRICS, json={}).status_code == 403


def test_api_logs_are_json_lines_with_gunicorn_access_and_error_records(played):
    entries = parse_json_lines(played["cluster"].log_lines("api"))
    for entry in entries:
        assert {"time", "level", "logger", "message", "component"} <= entry.keys()
    access = [entry for entry in entries if entry["logger"] == "gunicorn.access"]
    verify = [entry for entry in access if entry["path"] == "/replays/verify"]
    assert len(verify) == 2 and all(entry["status"] == 200 for entry in verify)
    assert all(isinstance(entry["duration_ms"], float) for entry in access)
    match_id = played["replays"][0]["match_id"]
    assert any(entry.get("match_id") == match_id for entry in access)
    assert any(entry["logger"] == "gunicorn.error" and "Booting worker" in entry["message"]
               for entry in entries)
    assert any("referee API listening" in entry["message"] for entry in entries)


def test_worker_logs_are_json_lines_with_rq_lines_and_match_context(played):
    cluster = played["cluster"]
    entries = [entry for name in ("worker-0", "worker-1")
               for entry in parse_json_lines(cluster.log_lines(name))]
    assert any(entry["logger"].startswith("rq.") for entry in entries)
    finished = {entry["match_id"]: entry for entry in entries
                if entry["message"] == "match finished"}
    assert finished.keys() == {record["match_id"] for record in played["replays"]}
    assert all(entry["duration_ms"] > 0 for entry in finished.values())
    crash = [entry for entry in entries if entry.get("fault") == "crash"]
    assert len(crash) == 1
    assert crash[0]["bot_id"] == played["bots"]["gone"] and crash[0]["step"] >= 0
    assert crash[0]["match_id"] == played["replays"][0]["match_id"]
    assert "duration_ms" in crash[0] and crash[0]["level"] == "warning"


def test_no_log_line_holds_a_token_or_the_secret(played):
    cluster = played["cluster"]
    text = "\n".join("\n".join(cluster.log_lines(name))
                     for name in ("api", "worker-0", "worker-1"))
    assert "/health" in text and "token=[redacted]" in text
    for secret in SECRETS:  # the tokens went out in Authorization headers and a query
        assert secret not in text
