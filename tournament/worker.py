"""`MatchWorker`: an rq worker that drives up to `concurrency` matches at once, in one process.

rq stays the queue and the registry of work: the worker's main thread is rq's own loop
(dequeue, registries, maintenance, suspension, signals), and each dequeued job is handed
to an asyncio event loop on a second thread, where its match is driven
(`tournament.driver`) while the main thread dequeues the next one. A bot that thinks, or a
match waiting for a slot, costs a coroutine; a parked pull match costs nothing. rq's
bookkeeping of a finished job (success or failure, callbacks) runs in a thread pool, off
the event loop. No process is forked per match.

The event loop also keeps, for the whole process:
- every held match lease renewed (`RENEW_EVERY_S`), in one round trip;
- the recovery sweep (`tournament.recovery.sweep`) and the due timers (parked matches'
  deadlines, deferred matches: `tournament.wakeups.fire_due_timers`);
- the ladders' upkeep: their entry checks, notices, counting left over and refilling
  (`tournament.ladder_upkeep`);
- on a hosted worker (`referee worker --hosted`), the hosted bots' builds
  (`tournament.hosted`), and the languages it runs, announced as it starts;
- each running job's rq heartbeat, so rq does not take a long match for a dead one.

rq's own clean-up of its registries runs every `MAINTENANCE_S` (rq's default is ten
minutes): it finds the jobs a dead worker had taken but not yet started to drive (no lease
yet), whose matches it hands to `tournament.recovery` through the jobs' failure callback.

Redis going away is ridden out: the main loop, the drivers and the periodic tasks wait and
retry with backoff; nothing exits or marks a match failed because Redis restarted. On
SIGTERM/SIGINT the worker stops taking jobs, stops its drivers and queues their matches
again (`tournament.recovery`), so another worker continues them at their last step.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from typing import Any, TypeVar

import redis
from rq.exceptions import StopRequested
from rq.executions import Execution
from rq.job import Job, JobStatus
from rq.queue import Queue
from rq.serializers import JSONSerializer
from rq.timeouts import TimerDeathPenalty
from rq.utils import now
from rq.worker import BaseWorker, WorkerStatus

from referee.config import DEFAULT_CONCURRENCY, Config, ConfigError
from referee.match import sandbox
from referee.match.botclient import KeptConnections
from referee.match.sealing import Sealer
from tournament import driver, hosted, ladder_upkeep, ladders, recovery, results_log, wakeups
from tournament.store import (
    Progress,
    Store,
    command_channel,
    end_job,
    in_one_round_trip,
    start_job,
)
from tournament.store.connection import connect_async, retrying_async

log = logging.getLogger(__name__)
T = TypeVar("T")

RENEW_EVERY_S = 1.5
BUILDS_EVERY_S = 0.5
TIMERS_EVERY_S = 0.2
JOB_HEARTBEAT_EVERY_S = 30.0
STALLED_S = 30.0  # a periodic task's round running this long is logged (stuck on something)
BURST_WAIT_S = 1  # --burst: wait this long for a job before asking whether all is done
SLOT_WAIT_S = 5.0
OUTAGE_BACKOFF_S = (0.1, 5.0)
# rq's registry clean-up, which finds the jobs of dead workers (rq: 600 s); an idle worker
# waits this long at most for a job (rq: 405 s), so it runs its clean-up this often too
MAINTENANCE_S = 30
MAINTENANCE_LOCK_S = 4 * MAINTENANCE_S  # the clean-up's lock, if its holder dies (rq: 899 s)
# at a stop, the drivers' background work (a hosted program stopping takes up to
# hosted.STOP_GRACE_S) gets this long before the loop stops (`_hand_back_matches` waits 10 s)
BACKGROUND_GRACE_S = 3.0
PUBSUB_POLL_S = 1.0  # rq's command channel's thread wakes this often (rq: 60 s)
# rq writes the worker's heartbeat twice a dequeue and asks whether workers are suspended
# once (~0.4 ms of CPU a match): at most this often here, the heartbeat's expiry being
# minutes (rq's worker_ttl) and a suspension waiting for the next check
BOOKKEEPING_EVERY_S = 1.0


class MaintainedQueue(Queue):
    """rq's queue, the lock of its registry clean-up lapsing after `MAINTENANCE_LOCK_S`
    instead of rq's 15 minutes: a worker killed mid-clean-up, or Redis killed before it
    kept the lock's release, would otherwise stop every worker's clean-up (and so rq's
    own finding of dead workers' jobs) for that long."""

    def acquire_maintenance_lock(self) -> bool:
        return bool(self.connection.set(self.registry_cleaning_key, 1, nx=True,
                                        ex=MAINTENANCE_LOCK_S))


class MatchWorker(BaseWorker):
    """An rq worker driving up to `concurrency` matches at once on one event loop."""

    death_penalty_class = TimerDeathPenalty  # rq callbacks run off the main thread
    queue_class = MaintainedQueue

    def __init__(self, queues: list[str], connection: redis.Redis, config: Config,
                 sealer: Sealer, concurrency: int = DEFAULT_CONCURRENCY,
                 hosted_limits: sandbox.Limits | None = None, **kwargs: Any):
        """`hosted_limits`: this worker plays hosted bots, in sandboxes of these limits,
        and builds them (it should then take `HOSTED_QUEUE` too)."""
        super().__init__(queues, connection=connection, serializer=JSONSerializer,
                         maintenance_interval=MAINTENANCE_S, **kwargs)
        self.config = config
        self.sealer = sealer
        self.store = Store(connection)
        self.concurrency = concurrency
        self.free_slots = threading.Semaphore(concurrency)
        self.running: dict[str, tuple[Job, Queue, Execution, concurrent.futures.Future]] = {}
        self.running_lock = threading.Lock()
        self.loop = asyncio.new_event_loop()
        self.loop_thread = threading.Thread(target=self.loop.run_forever, name="matches",
                                            daemon=True)
        self.bookkeeping = concurrent.futures.ThreadPoolExecutor(4, "rq-bookkeeping")
        # counts one at a time (`driver.Context.counted`), but side by side when each waits
        # for replicas (`Store.durably`: up to REDIS_WAIT_TIMEOUT_MS while one is missing)
        self.counting = None if self.store.waits_for_replicas() else \
            concurrent.futures.ThreadPoolExecutor(1, "counting")
        self.context: driver.Context | None = None
        self.periodic: list[asyncio.Task] = []
        self.checking: asyncio.Task | None = None  # the ladders' entry checks under way
        self.hosted_limits = hosted_limits
        self.building: asyncio.Task | None = None  # the hosted bots' builds under way
        self.heartbeat_sent_at = -BOOKKEEPING_EVERY_S  # time.monotonic() of the last one
        self.suspension_checked_at = -BOOKKEEPING_EVERY_S

    # ----- the main thread: rq's loop --------------------------------------------------
    def work(self, burst: bool = False, logging_level: str | None = "INFO", *_: object,
             **__: object) -> bool:
        """Take jobs until stopped (or, `burst`, until no job is queued, running or
        scheduled); Redis outages are waited out."""
        self._retrying(lambda: self.start_over_bootstrap(logging_level))
        self._install_signal_handlers()
        signal.signal(signal.SIGHUP, lambda *_: self.reload_keys())
        self._retrying(self._open_log)
        self.loop_thread.start()
        self.context = self._in_loop(self._start_loop()).result()
        try:
            while not self._stop_requested:
                try:
                    self.check_for_suspension(burst)
                    if self.should_run_maintenance_tasks:
                        self.run_maintenance_tasks()
                    result = self.dequeue_job_and_maintain_ttl(
                        BURST_WAIT_S if burst else MAINTENANCE_S,
                        max_idle_time=BURST_WAIT_S if burst else None)
                    if result is not None:
                        self.execute_job(*result)
                    elif burst and self._drained():
                        break
                except StopRequested:
                    break
                except redis.RedisError as error:
                    self.log.warning("Worker %s: Redis unavailable (%s); waiting", self.name,
                                     error)
                    self._wait_for_redis()
        finally:
            self._hand_back_matches()
            self._retrying(self.teardown, attempts=3)
        return True

    def start_over_bootstrap(self, logging_level: str | None) -> None:
        """rq's bootstrap, from the start again after Redis went away part-way: what a
        first try registered (its birth, its channel) is undone first, or rq refuses the
        worker's own name as another live worker's and the worker exits."""
        if self.birth_date is not None:
            with contextlib.suppress(redis.RedisError):
                self.unsubscribe()
            self.register_death()
        self.bootstrap(logging_level)

    def _open_log(self) -> None:
        """Publish this process's keys; log the results recorded before the log existed."""
        results_log.publish_keys(self.store, self.sealer)
        if logged := results_log.backfill(self.store):
            self.log.info("Worker %s: %d matches recorded before the results log are now "
                          "logged", self.name, logged)

    def reload_keys(self) -> None:
        """SIGHUP: read the key file again (after `referee keys rotate`) and sign with its
        current key from the next record on; a file that cannot be read keeps the keys."""
        try:
            sealer = self.config.sealer()
            results_log.publish_keys(self.store, sealer)
        except (ConfigError, redis.RedisError) as error:
            self.log.error("Worker %s: keys not reloaded: %s", self.name, error)
            return
        self.sealer = sealer
        if self.context is not None:
            self.context.sealer = sealer
        self.log.info("Worker %s: signing with key %s", self.name, sealer.key_id)

    def dequeue_job_and_maintain_ttl(self, timeout: int | None,
                                     max_idle_time: int | None = None
                                     ) -> tuple[Job, Queue] | None:
        """Wait for a free match slot first (heartbeating meanwhile), then dequeue."""
        while not self.free_slots.acquire(timeout=SLOT_WAIT_S):
            if self._stop_requested:
                raise StopRequested
            self.heartbeat()
        try:
            result = super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)
        except BaseException:
            self.free_slots.release()
            raise
        if result is None:
            self.free_slots.release()
        return result

    def heartbeat(self, timeout: int | None = None,
                  pipeline: redis.client.Pipeline | None = None) -> None:
        """rq's heartbeat (the worker's hash and its expiries), its writes in one round trip
        when it is not on a caller's pipeline (rq sends them one by one, twice a dequeue);
        one of its own with rq's expiry at most every `BOOKKEEPING_EVERY_S`."""
        if pipeline is not None:
            super().heartbeat(timeout, pipeline)
            return
        if timeout is None and not _due(self.heartbeat_sent_at):
            return
        in_one_round_trip(self.connection, partial(super().heartbeat, timeout))
        self.heartbeat_sent_at = time.monotonic()

    def check_for_suspension(self, burst: bool) -> None:
        """rq's wait while workers are suspended (`rq suspend`), asked at most every
        `BOOKKEEPING_EVERY_S` (rq asks before every dequeue)."""
        if _due(self.suspension_checked_at):
            super().check_for_suspension(burst)
            self.suspension_checked_at = time.monotonic()

    def set_state(self, state: str, pipeline: redis.client.Pipeline | None = None) -> None:
        """rq's worker state, where "idle" (set before every dequeue) is written only when
        no match is being driven: a worker driving matches is busy while it takes more."""
        if state == WorkerStatus.IDLE and pipeline is None:
            with self.running_lock:
                if self.running:
                    self._state = state
                    return
        super().set_state(state, pipeline)

    def subscribe(self) -> None:
        """rq's subscription to this worker's command channel, its thread polling every
        `PUBSUB_POLL_S` instead of rq's 60 s: redis-py 8.2 joins that thread when rq
        unsubscribes at the end, and a thread that had gone back to waiting held the
        worker's exit (a burst's end, a SIGTERM) for up to a minute."""
        self.log.info("Worker %s: subscribing to channel %s", self.name,
                      self.pubsub_channel_name)
        self.pubsub, self.pubsub_thread = command_channel(  # type: ignore[assignment]  # rq: None
            self.connection, self.pubsub_channel_name, self.handle_payload, PUBSUB_POLL_S,
            self._pubsub_exception_handler)

    def execute_job(self, job: Job, queue: Queue) -> None:
        """Register the job as started (rq's bookkeeping, in one round trip: `start_job`)
        and hand it to the event loop."""
        try:
            execution = start_job(self, job, remove_from_intermediate_queue=len(self.queues) == 1)
            job.started_at = now()
        except BaseException:
            self.free_slots.release()
            raise
        future = self._in_loop(self._perform(job, queue, execution))
        with self.running_lock:
            self.running[job.id] = (job, queue, execution, future)

    def _finalize_success(self, job: Job, queue: Queue, execution: Execution,
                          return_value: Any) -> None:
        """rq's end of a job that returned, in one round trip for a plain job (a match's:
        no result kept, no dependents, repeats, callback, webhook, group or rate limit):
        the same writes (the worker's counts, the execution and the job deleted) without
        rq's reads before them (its WATCH of the dependents, the job's stored status and
        its executions: ~1.7 ms of CPU a match against 0.3, in-process). Any other job
        goes rq's way."""
        if not _plain(job, self.default_result_ttl):
            super()._finalize_success(job, queue, execution, return_value)
            return
        job.ended_at = now()
        end_job(self, job, execution)
        job._status = JobStatus.FINISHED
        self.executions.pop(execution.id, None)

    def _shutdown(self) -> None:
        """A stop request stops taking jobs at once, busy or not; the running matches are
        handed back (see `_hand_back_matches`)."""
        self._stop_requested = True
        raise StopRequested

    def _drained(self) -> bool:
        """Burst mode's end: nothing running here, no timer set, nothing queued. In that
        order: a timer fires (on the event loop, meanwhile) by queuing its job and dropping
        itself in one transaction, so a timer not seen is a job that the queue shows."""
        with self.running_lock:
            if self.running:
                return False
        return (not self.store.timers_set()
                and all(queue.count == 0 for queue in self.queues))

    def _wait_for_redis(self) -> None:
        delay = OUTAGE_BACKOFF_S[0]
        while not self._stop_requested:
            time.sleep(delay)
            try:
                self.connection.ping()
                return
            except redis.RedisError:
                delay = min(delay * 2, OUTAGE_BACKOFF_S[1])

    def _retrying(self, call: Callable[[], object], attempts: int | None = None) -> None:
        """Call until Redis answers (or `attempts` tries)."""
        tried = 0
        while True:
            try:
                call()
                return
            except redis.RedisError as error:
                tried += 1
                if attempts is not None and tried >= attempts:
                    self.log.warning("Worker %s: giving up on Redis: %s", self.name, error)
                    return
                self._wait_for_redis()

    def _in_loop(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    # ----- the event loop: matches ------------------------------------------------------
    @property
    def driving(self) -> driver.Context:
        """What the drivers share, from the start of the event loop (`work`) on."""
        if self.context is None:
            raise RuntimeError(f"worker {self.name}: its event loop is not started")
        return self.context

    async def _start_loop(self) -> driver.Context:
        client = connect_async(self.config.redis_url, retry=retrying_async(3, cap_s=0.5))
        context = driver.Context(Progress(client), self.store, self.config, self.sealer,
                                 name=self.name, sandbox=self.hosted_limits,
                                 kept=KeptConnections(), counting=self.counting)
        tasks = [(RENEW_EVERY_S, self._renew_leases), (recovery.SWEEP_EVERY_S, self._sweep),
                 (TIMERS_EVERY_S, self._fire_timers),
                 (JOB_HEARTBEAT_EVERY_S, self._heartbeat_jobs),
                 (ladders.TEND_EVERY_S, self._tend_ladders)]
        if self.hosted_limits is not None:
            await context.in_thread(self.store.announce_languages,
                                    {name: language.public()
                                     for name, language in sandbox.languages().items()})
            tasks.append((BUILDS_EVERY_S, self._start_builds))
        for every, task in tasks:
            self.periodic.append(asyncio.get_running_loop().create_task(_every(every, task)))
        return context

    async def _perform(self, job: Job, queue: Queue, execution: Execution) -> None:
        """Drive the job's match, then hand rq its outcome (off the loop)."""
        try:
            try:
                summary = await driver.drive(self.driving, wakeups.match_of_job(job))
            except Exception:
                await self._bookkeep(self._finalize_failure, job, queue, execution,
                                     sys.exc_info())
            else:
                await self._bookkeep(self._finalize_success, job, queue, execution, summary)
        finally:
            with self.running_lock:
                self.running.pop(job.id, None)
            self.free_slots.release()

    async def _bookkeep(self, function: Callable, *args: object) -> None:
        await self.driving.persist(lambda: asyncio.get_running_loop().run_in_executor(
            self.bookkeeping, function, *args))

    async def _renew_leases(self) -> None:
        if self.driving.leases:
            leases = dict(self.driving.leases)
            lost = await self.driving.persist(lambda: self.driving.progress.renew_leases(leases))
            for match_id in lost:
                log.warning("match %s: lease taken by another driver", match_id)

    async def _sweep(self) -> None:
        await self.driving.in_thread(recovery.sweep_in_turn, self.driving.store, self.name)

    async def _fire_timers(self) -> None:
        """Fire the due timers, in a thread, once a look on the loop found one (most looks
        find none: a look in a thread would cost an idle worker a millisecond each)."""
        if await self.driving.persist(self.driving.progress.timer_due):
            await self.driving.in_thread(wakeups.fire_due_timers, self.driving.store)

    async def _tend_ladders(self) -> None:
        """Count and refill the ladders, send their notices, and start running the entry
        checks queued (in a task of their own: a slow bot's check holds up nothing); when
        Redis holds none of these, nothing more."""
        context = self.driving
        if not await context.persist(context.progress.ladder_work):
            return
        await context.in_thread(ladder_upkeep.tend, context.store)
        await ladder_upkeep.send_notices(context.store, context.config, context.in_thread)
        if self.checking is None or self.checking.done():
            self.checking = asyncio.get_running_loop().create_task(
                ladder_upkeep.run_checks(context.store, context.config, context.in_thread))

    async def _start_builds(self) -> None:
        """Start building the hosted bots' versions queued (in a task of their own)."""
        if self.hosted_limits is not None and (self.building is None or self.building.done()):
            self.building = asyncio.get_running_loop().create_task(hosted.run_builds(
                self.store, self.hosted_limits, self.name, self.driving.in_thread))

    async def _heartbeat_jobs(self) -> None:
        with self.running_lock:
            running = list(self.running.values())
        for job, _, execution, _ in running:
            await self.driving.in_thread(self.maintain_heartbeats, job, execution)

    def _hand_back_matches(self) -> None:
        """Stop the running drivers; queue their matches again for another worker."""
        with self.running_lock:
            running = list(self.running.values())
        for _, _, _, future in running:
            future.cancel()
        concurrent.futures.wait([future for *_, future in running], timeout=10)
        try:
            recovery.hand_back(self.driving.store,
                               [wakeups.match_of_job(job) for job, *_ in running])
        except redis.RedisError:
            self.log.warning("Worker %s: matches left to the recovery sweep", self.name)
        concurrent.futures.wait([self._in_loop(self._stop_periodic())], timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)

    async def _stop_periodic(self) -> None:
        """Stop the periodic tasks; give the drivers' background work (seats closing: a
        hosted program stopped and its stderr kept; result notices) BACKGROUND_GRACE_S."""
        for task in [*self.periodic, *(task for task in (self.checking, self.building) if task)]:
            task.cancel()
        await asyncio.gather(*self.periodic, return_exceptions=True)
        if self.context is not None and self.context.background:
            await asyncio.wait(set(self.context.background), timeout=BACKGROUND_GRACE_S)
        if self.context is not None and self.context.kept is not None:
            self.context.kept.close()


def _due(last: float) -> bool:
    """`BOOKKEEPING_EVERY_S` or more since `last` (`time.monotonic()`)."""
    return time.monotonic() - last >= BOOKKEEPING_EVERY_S


def _plain(job: Job, default_result_ttl: int) -> bool:
    """A job whose success rq would end with writes alone: nothing kept or run after it."""
    return (job.get_result_ttl(default_result_ttl) == 0 and not job.repeats_left
            and job.success_callback is None and not job.webhooks and not job.group_id
            and not job.has_rate_limit)


async def _every(seconds: float, task: Callable[[], Awaitable[None]]) -> None:
    """Run `task` every `seconds`, forever; a failure is logged, never fatal, and so is a
    round still running after `STALLED_S` (every `STALLED_S` until it ends)."""
    while True:
        await asyncio.sleep(seconds)
        running = asyncio.ensure_future(task())
        waited = 0.0
        while not (await asyncio.wait({running}, timeout=STALLED_S))[0]:
            waited += STALLED_S
            log.warning("periodic task %s still running after %g s", task.__name__, waited)
        try:
            running.result()
        except Exception:
            log.exception("periodic task %s failed", task.__name__)
