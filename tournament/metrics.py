"""Cluster-wide metrics, rendered in the Prometheus text format by `GET /metrics`.

Workers on many machines share one Redis, and gunicorn runs several API processes: a
counter kept in one process's memory would show a scrape only that process's share. So the
counters live in Redis (`tournament.store.metrics`: their keys, and the recording of a
decision, a match's status, a replay verification), and at scrape time `ClusterCollector`
reads them back, with the rq queues, and renders Prometheus metric families: one scrape of
any API process shows the whole cluster, and no process keeps state of its own
(docs/operations.md).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator, Sequence

import rq
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from tournament.store import Store
from tournament.store.keys import MetricCounter
from tournament.store.metrics import BUCKET_NAMES, Counters


class ClusterCollector(Collector):
    """Reads the counters of the whole cluster from Redis, and the rq queues, at scrape
    time (prometheus_client calls `collect` once per scrape)."""

    def __init__(self, store: Store, queues: Sequence[str]):
        self.store = store
        self.queues = [store.queue(name) for name in queues]

    def collect(self) -> Iterator[Metric]:
        counters = self.store.counters()
        yield decision_histogram(counters)
        yield counter("referee_faults", "Bot faults, by game and code", ["game", "code"],
                      counters[MetricCounter.FAULTS])
        yield counter("referee_matches", "Matches that entered each status (queued again "
                      "after a dead worker: counted again)", ["game", "status"],
                      counters[MetricCounter.MATCHES])
        yield counter("referee_replay_verifications", "Replays verified by POST "
                      "/replays/verify, by result", ["result"],
                      counters[MetricCounter.VERIFICATIONS])
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
                                value=self.store.running_count())
        yield GaugeMetricFamily("referee_workers", "rq workers alive (registered, "
                                "heartbeat not expired)", value=self.store.workers_alive())


def decision_histogram(counters: Counters) -> Metric:
    histogram = HistogramMetricFamily(
        "referee_decision_duration_seconds", "Time a seat took to answer a decision, by "
        "game and bot (bot id, or \"pull\"); its _count is the number of decisions",
        labels=["game", "bot"])
    per_bucket: dict[tuple[str, ...], dict[str, int]] = defaultdict(dict)
    for (game, bot, bucket), count in counters[MetricCounter.DECISION_BUCKETS].items():
        per_bucket[(game, bot)][bucket] = count
    for labels in sorted(counters[MetricCounter.DECISIONS]):
        histogram.add_metric(list(labels), cumulative(per_bucket[labels]),
                             counters[MetricCounter.DECISION_US].get(labels, 0) / 1_000_000)
    return histogram


def cumulative(counts: dict[str, int]) -> list[tuple[str, float]]:
    """Prometheus buckets (cumulative, ending with +Inf) from one count per bucket."""
    total, buckets = 0, list[tuple[str, float]]()
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


def oldest_job_age(queue: rq.Queue, now: float | None = None) -> float:
    """Seconds since the job at the head of the queue was queued (0 when it is empty)."""
    for job_id in queue.get_job_ids(0, 1):
        job = queue.fetch_job(job_id)
        if job is not None and job.enqueued_at is not None:
            return max(0.0, (now or time.time()) - job.enqueued_at.timestamp())
    return 0.0

