"""The cluster's counters in Redis (`tournament.metrics` renders them for `GET /metrics`).

Workers on many machines and every API process share one Redis, so the counters live
there: one hash per `MetricCounter` (`metrics:{counter}`), whose fields are JSON arrays of
label values. A worker queues a few HINCRBY per decision on a pipeline it already holds
(`record_decision`, `record_match_status`; the driver sends `decision_increments` inside
its step script and `status_increment` beside a match's start and end), the API counts
replay verifications.
"""

from __future__ import annotations

import bisect
import functools
import math
from typing import Any

import orjson
import redis
from prometheus_client.utils import floatToGoString

from tournament.store.base import StoreBase
from tournament.store.keys import MetricCounter, metrics_key

# Upper bounds in seconds, from a bot that answers in a millisecond to the longest deadline.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
           math.inf)
BUCKET_NAMES = tuple(floatToGoString(bound) for bound in BUCKETS)
PULL_SEAT = "pull"  # the bot label of a seat played through the API by its token

Counters = dict[MetricCounter, dict[tuple[str, ...], int]]  # counter -> label values -> count


def field(*labels: str) -> str:
    """The hash field of one label combination."""
    return orjson.dumps(labels).decode()


def record_decision(pipe: Any, game: str, bot: str, seconds: float, fault: str | None) -> None:
    """Queue the counting of one decision on `pipe`: a redis-py pipeline, sync or asyncio
    (queuing a command awaits nothing on either), which the caller executes with its own
    writes. `bot` is the bot id, or `PULL_SEAT`; `fault` the fault code, if any."""
    for key, name, amount in decision_increments(game, bot, seconds, fault):
        pipe.hincrby(key, name, amount)


DECISIONS_KEY = metrics_key(MetricCounter.DECISIONS)
DECISION_US_KEY = metrics_key(MetricCounter.DECISION_US)
DECISION_BUCKETS_KEY = metrics_key(MetricCounter.DECISION_BUCKETS)


def decision_increments(game: str, bot: str, seconds: float, fault: str | None
                        ) -> list[tuple[str, str, int]]:
    """The (hash, field, amount) increments that count one decision (`record_decision`),
    for a writer that sends them its own way (the driver: inside its step script)."""
    seconds = max(seconds, 0.0)
    labels, by_bucket = _decision_fields(game, bot)
    increments = [
        (DECISIONS_KEY, labels, 1),
        (DECISION_US_KEY, labels, round(seconds * 1_000_000)),
        (DECISION_BUCKETS_KEY, by_bucket[bisect.bisect_left(BUCKETS, seconds)], 1)]
    if fault is not None:
        increments.append((metrics_key(MetricCounter.FAULTS), field(game, fault), 1))
    return increments


@functools.lru_cache(maxsize=4096)
def _decision_fields(game: str, bot: str) -> tuple[str, tuple[str, ...]]:
    """The field of (game, bot) in the decision counters, and in the histogram's per bucket
    (written once per bot and game: they are the same at every decision)."""
    return field(game, bot), tuple(field(game, bot, bucket) for bucket in BUCKET_NAMES)


def record_match_status(pipe: Any, game: str, status: str) -> None:
    """Queue the counting of a match entering `status` (queued, running, finished, failed)
    on `pipe` (a pipeline, sync or asyncio, or a sync client, which sends it at once)."""
    pipe.hincrby(*status_increment(game, status))


def status_increment(game: str, status: str) -> tuple[str, str, int]:
    """The (hash, field, amount) increment that counts a match entering `status`
    (`record_match_status`), for a writer that sends it its own way (the driver)."""
    return metrics_key(MetricCounter.MATCHES), field(game, str(status)), 1


class CounterStore(StoreBase):
    """The counters as the API and the recovery count and read them."""

    def count_match_status(self, game: str, status: str,
                           pipe: redis.client.Pipeline | None = None) -> None:
        """`record_match_status`, on `pipe` when given, else at once."""
        record_match_status(pipe or self.redis, game, status)

    def count_verification(self, valid: bool) -> None:
        """Count one replay verification (POST /replays/verify)."""
        self.redis.hincrby(metrics_key(MetricCounter.VERIFICATIONS),
                           field("valid" if valid else "invalid"), 1)

    def counters(self) -> Counters:
        """Every counter, in one round trip."""
        with self.redis.pipeline(transaction=False) as pipe:
            for counter in MetricCounter:
                pipe.hgetall(metrics_key(counter))
            hashes = pipe.execute()
        return {counter: {tuple(orjson.loads(name)): int(count)
                          for name, count in fields.items()}
                for counter, fields in zip(MetricCounter, hashes, strict=True)}
