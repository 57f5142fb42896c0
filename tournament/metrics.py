"""Cluster-wide metrics, rendered in the Prometheus text format by `GET /metrics`.

Workers on many machines share one Redis, and gunicorn runs several API processes: a
counter kept in one process's memory would show a scrape only that process's share. So the
counters live in Redis. A worker queues a few HINCRBY per decision on a pipeline
(`record_decision`, `record_match_status`; the API counts replay verifications,
`record_verification`), and at scrape time `ClusterCollector` reads them back, with the
rq queues, and renders Prometheus metric families: one scrape of any API process shows the
whole cluster, and no process keeps state of its own (docs/operations.md).

Redis keys, hashes whose fields are JSON arrays of label values:
- `referee:metrics:decisions` [game, bot] -> decisions asked
- `referee:metrics:decision_us` [game, bot] -> their summed duration, in microseconds
- `referee:metrics:decision_buckets` [game, bot, le] -> decisions that took at most `le`
  seconds and more than the bucket below (one bucket each, summed up when rendered)
- `referee:metrics:faults` [game, code] -> faults (timeout, crash, malformed, illegal)
- `referee:metrics:matches` [game, status] -> matches that entered the status
- `referee:metrics:verifications` [result] -> replays verified, "valid" or "invalid"
"""

from __future__ import annotations

import bisect
import math
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

import orjson
import redis
import rq
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString
from rq import worker_registration
from rq.serializers import JSONSerializer

PREFIX = "referee:metrics:"
DECISIONS = PREFIX + "decisions"
DECISION_US = PREFIX + "decision_us"
DECISION_BUCKETS = PREFIX + "decision_buckets"
FAULTS = PREFIX + "faults"
MATCHES = PREFIX + "matches"
VERIFICATIONS = PREFIX + "verifications"
COUNTER_KEYS = (DECISIONS, DECISION_US, DECISION_BUCKETS, FAULTS, MATCHES, VERIFICATIONS)

# Upper bounds in seconds, from a bot that answers in a millisecond to the longest deadline.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
           math.inf)
BUCKET_NAMES = tuple(floatToGoString(bound) for bound in BUCKETS)
PULL_SEAT = "pull"  # the bot label of a seat played through the API by its token


def field(*labels: str) -> str:
    """The hash field of one label combination."""
    return orjson.dumps(labels).decode()


def record_decision(pipe: Any, game: str, bot: str, seconds: float, fault: str | None) -> None:
    """Queue the counting of one decision on `pipe`: a redis-py pipeline, sync or asyncio
    (queuing a command awaits nothing on either), which the caller executes with its own
    writes. `bot` is the bot id, or `PULL_SEAT`; `fault` the fault code, if any."""
    for key, name, amount in decision_increments(game, bot, seconds, fault):
        pipe.hincrby(key, name, amount)


def decision_increments(game: str, bot: str, seconds: float, fault: str | None
                        ) -> list[tuple[str, str, int]]:
    """The (hash, field, amount) increments that count one decision (`record_decision`),
    for a writer that sends them its own way (the driver: inside its step script)."""
    labels = (game, bot)
    bucket = BUCKET_NAMES[bisect.bisect_left(BUCKETS, max(seconds, 0.0))]
    increments = [(DECISIONS, field(*labels), 1),
                  (DECISION_US, field(*labels), round(max(seconds, 0.0) * 1_000_000)),
                  (DECISION_BUCKETS, field(*labels, bucket), 1)]
    if fault is not None:
        increments.append((FAULTS, field(game, fault), 1))
    return increments


def record_match_status(pipe: Any, game: str, status: str) -> None:
    """Queue the counting of a match entering `status` (queued, running, finished, failed)
    on `pipe` (a pipeline, or a sync client, which sends it at once)."""
    pipe.hincrby(MATCHES, field(game, str(status)), 1)


def record_verification(client: redis.Redis, valid: bool) -> None:
    """Count one replay verification (POST /replays/verify)."""
    client.hincrby(VERIFICATIONS, field("valid" if valid else "invalid"), 1)


class ClusterCollector(Collector):
    """Reads the counters of the whole cluster from Redis, and the rq queues, at scrape
    time (prometheus_client calls `collect` once per scrape)."""

    def __init__(self, client: redis.Redis, queues: Sequence[str], running_key: str):
        self.client = client
        self.running_key = running_key
        self.queues = [rq.Queue(name, connection=client, serializer=JSONSerializer)
                       for name in queues]

    def collect(self) -> Iterator[Metric]:
        counters = read_counters(self.client)
        yield decision_histogram(counters)
        yield counter("referee_faults", "Bot faults, by game and code", ["game", "code"],
                      counters[FAULTS])
        yield counter("referee_matches", "Matches that entered each status (queued again "
                      "after a dead worker: counted again)", ["game", "status"],
                      counters[MATCHES])
        yield counter("referee_replay_verifications", "Replays verified by POST "
                      "/replays/verify, by result", ["result"], counters[VERIFICATIONS])
        yield from self.queue_metrics()

    def queue_metrics(self) -> Iterator[Metric]:
        depth = GaugeMetricFamily("referee_queue_jobs", "Jobs waiting in the rq queue",
                                  labels=["queue"])
        age = GaugeMetricFamily("referee_queue_oldest_job_age_seconds", "How long the "
                                "oldest waiting job of the queue has waited (0: none)",
                                labels=["queue"])
        for queue in self.queues:
            depth.add_metric([queue.name], queue.count)
            age.add_metric([queue.name], oldest_job_age(queue))
        yield depth
        yield age
        yield GaugeMetricFamily("referee_matches_running", "Matches a worker drives now "
                                "(not counting matches parked for a pull seat)",
                                value=self.client.zcard(self.running_key))
        yield GaugeMetricFamily("referee_workers", "rq workers alive (registered, "
                                "heartbeat not expired)", value=workers_alive(self.client))


def read_counters(client: redis.Redis) -> dict[str, dict[tuple[str, ...], int]]:
    """Every counter hash, in one round trip: key -> label values -> count."""
    with client.pipeline(transaction=False) as pipe:
        for key in COUNTER_KEYS:
            pipe.hgetall(key)
        hashes = pipe.execute()
    return {key: {tuple(orjson.loads(name)): int(count) for name, count in fields.items()}
            for key, fields in zip(COUNTER_KEYS, hashes, strict=True)}


def decision_histogram(counters: dict[str, dict[tuple[str, ...], int]]) -> Metric:
    histogram = HistogramMetricFamily(
        "referee_decision_duration_seconds", "Time a seat took to answer a decision, by "
        "game and bot (bot id, or \"pull\"); its _count is the number of decisions",
        labels=["game", "bot"])
    per_bucket: dict[tuple[str, ...], dict[str, int]] = defaultdict(dict)
    for (game, bot, bucket), count in counters[DECISION_BUCKETS].items():
        per_bucket[(game, bot)][bucket] = count
    for labels in sorted(counters[DECISIONS]):
        histogram.add_metric(list(labels), cumulative(per_bucket[labels]),
                             counters[DECISION_US].get(labels, 0) / 1_000_000)
    return histogram


def cumulative(counts: dict[str, int]) -> list[tuple[str, float]]:
    """Prometheus buckets (cumulative, ending with +Inf) from one count per bucket."""
    total, buckets = 0, []
    for name in BUCKET_NAMES:
        total += counts.get(name, 0)
        buckets.append((name, total))
    return buckets


def counter(name: str, documentation: str, labels: list[str],
            values: dict[tuple[str, ...], int]) -> Metric:
    family = CounterMetricFamily(name, documentation, labels=labels)
    for label_values, count in sorted(values.items()):
        family.add_metric(list(label_values), count)
    return family


def workers_alive(client: redis.Redis) -> int:
    """Registered rq workers whose key still lives: rq's heartbeat renews it, so a worker
    killed without unregistering drops out within rq's worker TTL. (`Worker.count` counts
    it until a live worker cleans the registry, which never happens when all are dead.)"""
    keys = worker_registration.get_keys(connection=client)
    return client.exists(*keys) if keys else 0


def oldest_job_age(queue: rq.Queue, now: float | None = None) -> float:
    """Seconds since the job at the head of the queue was queued (0 when it is empty)."""
    for job_id in queue.get_job_ids(0, 1):
        job = queue.fetch_job(job_id)
        if job is not None and job.enqueued_at is not None:
            return max(0.0, (now or time.time()) - job.enqueued_at.timestamp())
    return 0.0

