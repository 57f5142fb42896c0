"""tournament.metrics against a real Redis: the recording functions (tournament.store.metrics)
on sync and asyncio pipelines, the collector's families, the rq queue gauges, and
GET /metrics (checked against openapi.yaml by the API test client)."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
import redis
import redis.asyncio
import rq
from prometheus_client.parser import text_string_to_metric_families
from rq import worker_registration

from referee.api.app import create_app
from referee.redis_server import free_port
from tests.support.apitest import ADMIN, ApiClient
from tournament import metrics
from tournament.store import QUEUES, Store
from tournament.store import metrics as counters
from tournament.store.keys import MetricCounter, metrics_key


@pytest.fixture
def config_overrides() -> dict:
    """The common settings with a metrics token, without a replay signing key."""
    return {"metrics_token": "metrics-reader", "secret": ""}


@pytest.fixture
def client(redis_url):
    connection = redis.Redis.from_url(redis_url)
    yield connection
    connection.close()


def scrape(client: redis.Redis) -> dict[tuple[str, tuple], float]:
    """What one scrape renders: (sample name, sorted labels) -> value."""
    collector = metrics.ClusterCollector(Store(client), QUEUES)
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in collector.collect() for sample in family.samples}


def bucket(game: str, bot: str, le: str) -> tuple:
    return ("referee_decision_duration_seconds_bucket", (("bot", bot), ("game", game),
                                                         ("le", le)))


def test_decisions_queued_on_a_sync_pipeline_fill_the_histogram_and_the_faults(client):
    with client.pipeline(transaction=False) as pipe:
        counters.record_decision(pipe, "aladino", "bot-a", 0.0004, None)
        counters.record_decision(pipe, "aladino", "bot-a", 0.001, None)  # on the bound: in it
        counters.record_decision(pipe, "aladino", "bot-a", 0.3, "illegal")
        counters.record_decision(pipe, "aladino", "bot-a", 12.0, "timeout")
        assert client.hlen(metrics_key(MetricCounter.DECISIONS)) == 0  # only queued so far
        pipe.execute()
    seen = scrape(client)
    assert seen[bucket("aladino", "bot-a", "0.001")] == 2
    assert seen[bucket("aladino", "bot-a", "0.25")] == 2
    assert seen[bucket("aladino", "bot-a", "0.5")] == 3
    assert seen[bucket("aladino", "bot-a", "10.0")] == 3
    assert seen[bucket("aladino", "bot-a", "+Inf")] == 4
    labels = (("bot", "bot-a"), ("game", "aladino"))
    assert seen[("referee_decision_duration_seconds_count", labels)] == 4
    assert seen[("referee_decision_duration_seconds_sum", labels)] == pytest.approx(12.3014)
    assert seen[("referee_faults_total", (("code", "illegal"), ("game", "aladino")))] == 1
    assert seen[("referee_faults_total", (("code", "timeout"), ("game", "aladino")))] == 1


def test_an_asyncio_pipeline_takes_the_same_calls(client, redis_url):
    async def play() -> None:
        connection = redis.asyncio.from_url(redis_url)
        async with connection.pipeline(transaction=False) as pipe:
            counters.record_decision(pipe, "caravans", counters.PULL_SEAT, 0.02, "crash")
            counters.record_match_status(pipe, "caravans", "finished")
            await pipe.execute()
        await connection.aclose()

    asyncio.run(play())
    seen = scrape(client)
    assert seen[bucket("caravans", "pull", "0.025")] == 1
    assert seen[bucket("caravans", "pull", "0.01")] == 0
    assert seen[("referee_faults_total", (("code", "crash"), ("game", "caravans")))] == 1
    assert seen[("referee_matches_total", (("game", "caravans"), ("status", "finished")))] == 1


def test_statuses_and_verifications_count_on_a_plain_client(client):
    for status in ("queued", "running", "queued", "running", "failed"):
        counters.record_match_status(client, "aldabas", status)
    Store(client).count_verification(True)
    Store(client).count_verification(False)
    Store(client).count_verification(False)
    seen = scrape(client)
    assert seen[("referee_matches_total", (("game", "aldabas"), ("status", "queued")))] == 2
    assert seen[("referee_matches_total", (("game", "aldabas"), ("status", "failed")))] == 1
    assert seen[("referee_replay_verifications_total", (("result", "valid"),))] == 1
    assert seen[("referee_replay_verifications_total", (("result", "invalid"),))] == 2


def test_labels_with_any_characters_survive_the_round_trip(client):
    with client.pipeline(transaction=False) as pipe:
        counters.record_decision(pipe, "aladino", 'odd "bot", [1]\n', 0.002, None)
        pipe.execute()
    labels = (("bot", 'odd "bot", [1]\n'), ("game", "aladino"))
    assert scrape(client)[("referee_decision_duration_seconds_count", labels)] == 1


def test_queue_depth_oldest_age_and_workers_come_from_rq(api, client, workers, refused_url):
    bot = api.register_bot(refused_url, games=["aladino"])
    api.create_match("aladino", [{"kind": "bot", "bot_id": bot}] * 2)
    api.create_match("aladino", [{"kind": "bot", "bot_id": bot}] * 2)
    queue = (("queue", "referee-matches"),)
    seen = scrape(client)
    assert seen[("referee_queue_jobs", queue)] == 2
    assert seen[("referee_queue_oldest_job_age_seconds", queue)] > 0
    assert seen[("referee_matches_running", ())] == 0
    assert seen[("referee_workers", ())] == 0
    assert seen[("referee_matches_total", (("game", "aladino"), ("status", "queued")))] == 2
    workers.start_ready(1)
    assert scrape(client)[("referee_workers", ())] == 1
    # What a worker killed with -9 leaves: its registration, without the key it renewed.
    client.sadd(worker_registration.REDIS_WORKER_KEYS, "rq:worker:killed-long-ago")
    assert rq.Worker.count(connection=client) == 2
    assert scrape(client)[("referee_workers", ())] == 1


def test_get_metrics_serves_the_text_format_to_the_admin_and_the_metrics_token(api, client):
    Store(client).count_verification(True)
    for token in (ADMIN, "metrics-reader"):
        answer = api.get("/metrics", token=token)
        assert answer.status_code == 200
        assert answer.headers["Content-Type"].startswith("text/plain")
        families = {family.name for family in text_string_to_metric_families(
            answer.get_data(as_text=True))}
        assert {"referee_replay_verifications", "referee_queue_jobs",
                "referee_workers"} <= families
    assert api.get("/metrics").status_code == 401
    assert api.get("/metrics", token="guess").status_code == 403


def test_get_metrics_speaks_openmetrics_when_asked(api):
    answer = api.get("/metrics", token=ADMIN,
                     headers={"Accept": "application/openmetrics-text; version=1.0.0"})
    assert answer.status_code == 200
    assert answer.headers["Content-Type"].startswith("application/openmetrics-text")
    assert answer.get_data(as_text=True).endswith("# EOF\n")


def test_get_metrics_without_redis_is_a_503_problem(config, openapi):
    down = replace(config, redis_url=f"redis://127.0.0.1:{free_port()}/0")
    answer = ApiClient(create_app(down), openapi).get("/metrics", token=ADMIN)
    assert answer.status_code == 503
    assert answer.get_json()["type"].endswith("redis/unreachable")
