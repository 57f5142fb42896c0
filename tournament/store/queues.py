"""rq's side of the store's Redis: the queues on its connection and the workers alive (rq
keeps its own keys under `rq:`)."""

from __future__ import annotations

from collections.abc import Callable

import redis
import rq
from rq import worker_registration
from rq.executions import Execution
from rq.job import Job
from rq.results import Result
from rq.serializers import JSONSerializer
from rq.utils import now
from rq.worker import BaseWorker, WorkerStatus

from tournament.store.base import StoreBase
from tournament.store.keys import MATCH_QUEUE, MatchField, match_key


class Queues(StoreBase):
    """rq's queues and workers, on the store's connection."""

    def queue(self, name: str = MATCH_QUEUE) -> rq.Queue:
        """An rq queue with JSON job payloads (the match queue unless named)."""
        return rq.Queue(name, connection=self.redis, serializer=JSONSerializer)

    def match_queue(self, match_id: str) -> rq.Queue:
        """The queue a match's jobs go to: `HOSTED_QUEUE` when it seats a hosted bot."""
        name = self.redis.hget(match_key(match_id), MatchField.QUEUE)
        return self.queue(name.decode() if isinstance(name, bytes) else MATCH_QUEUE)

    def workers_alive(self) -> int:
        """Registered rq workers whose key still lives: rq's heartbeat renews it, so a
        worker killed without unregistering drops out within rq's worker TTL.
        (`Worker.count` counts it until a live worker cleans the registry, which never
        happens when all are dead.)"""
        keys = worker_registration.get_keys(connection=self.redis)
        return self.redis.exists(*keys) if keys else 0


def in_one_round_trip(client: redis.Redis, write: Callable[[redis.client.Pipeline], None]
                      ) -> None:
    """`write`'s commands sent together on a pipeline of `client` (for rq's bookkeeping,
    which sends its writes one by one unless it is handed a pipeline)."""
    with client.pipeline(transaction=False) as pipe:
        write(pipe)
        pipe.execute()


def start_job(worker: BaseWorker, job: Job, remove_from_intermediate_queue: bool
              ) -> Execution:
    """Write rq's start of a job in one transaction: its execution registered and the
    worker busy (rq's `prepare_execution`), the heartbeats and the job started (rq's
    `prepare_job_execution`), which rq sends as two."""
    ttl = worker.get_heartbeat_ttl(job)
    with worker.connection.pipeline() as pipe:
        execution = Execution.create(job, ttl, pipeline=pipe, worker_name=worker.name)
        worker.set_state(WorkerStatus.BUSY, pipeline=pipe)
        worker.heartbeat(ttl, pipeline=pipe)
        job.heartbeat(now(), ttl, pipeline=pipe)
        job.prepare_for_execution(worker.name, pipeline=pipe)
        pipe.persist(job.key)
        if remove_from_intermediate_queue:
            pipe.lrem(rq.Queue(job.origin, connection=worker.connection).intermediate_queue_key,
                      1, job.id)
        pipe.execute()
    worker.executions[execution.id] = execution
    return execution


def end_job(worker: BaseWorker, job: Job, execution: Execution) -> None:
    """Write rq's end of a job that succeeded and keeps nothing (no result, dependents,
    repeats, group or rate limit), in one transaction: the worker's counts, the execution
    and the job deleted; rq's own ending reads the job's status, dependents and
    executions first, each a round trip."""
    ended, started = job.ended_at or now(), job.started_at or job.ended_at or now()
    with worker.connection.pipeline() as pipe:
        worker.increment_successful_job_count(pipe)
        worker.increment_total_working_time(ended - started, pipe)
        execution.delete(job=job, pipeline=pipe)
        pipe.delete(job.key, job.dependents_key, job.dependencies_key, Result.get_key(job.id),
                    job.execution_registry.key)
        pipe.execute()


def command_channel(client: redis.Redis, channel: str, handler: Callable[[dict], None],
                    poll_s: float, on_error: Callable[..., None]
                    ) -> tuple[redis.client.PubSub, redis.client.PubSubWorkerThread]:
    """A subscription of `client` to `channel` (rq's worker commands), `handler` called
    for each message on a daemon thread that wakes every `poll_s` to see whether it is
    stopped."""
    pubsub = client.pubsub()
    pubsub.subscribe(**{channel: handler})
    return pubsub, pubsub.run_in_thread(sleep_time=poll_s, daemon=True,
                                        exception_handler=on_error)
