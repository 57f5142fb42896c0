"""`referee worker [--burst] [--concurrency N] [--hosted]`: one process driving many matches
at once; `--hosted` also plays and builds hosted bots, in the sandbox."""

from __future__ import annotations

import argparse
import gc
import logging
import time
from collections.abc import Callable
from typing import TypeVar

import redis

import engines
from referee import logs
from referee.config import (
    DEFAULT_CONCURRENCY,
    DEFAULT_WORKER_NICE,
    Config,
    ConfigError,
    niceness,
    positive_int,
    redacted_url,
)
from referee.match import sandbox
from referee.processes import lower_own_priority, schedule_as_batch
from tournament import build_cache
from tournament.store import HOSTED_QUEUE, MATCH_QUEUE
from tournament.store.connection import connect
from tournament.worker import MatchWorker

STARTUP_BACKOFF_S = (0.1, 2.0)
T = TypeVar("T")
HELP = "run one worker that drives the referee's queued matches, many at once"
log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--burst", action="store_true",
                        help="stop once no match is queued, running or scheduled instead of "
                             "waiting for more")
    parser.add_argument("--concurrency", type=positive_int, default=None,
                        help="matches driven at once by this process (default: "
                             f"$REFEREE_WORKER_CONCURRENCY, else {DEFAULT_CONCURRENCY}); bots "
                             "that think cost a coroutine each")
    parser.add_argument("--hosted", action="store_true",
                        help="also play and build hosted bots (uploaded code), each in a "
                             "bubblewrap sandbox (docs/bots.md, Hosted bots): needs bwrap on "
                             "PATH and cgroups this user may create; limits from "
                             "REFEREE_SANDBOX_*")
    parser.add_argument("--nice", type=niceness, default=None,
                        help="lower this worker's CPU priority by N, 0 to 19, so an API on "
                             "the same machine answers first; at 19 the worker also joins an "
                             "idle cgroup when it may (default: $REFEREE_WORKER_NICE, "
                             f"else {DEFAULT_WORKER_NICE}; 0: unchanged)")


def run(args: argparse.Namespace) -> int:
    logs.configure("worker")
    config = Config.from_env()  # a bad variable: one line (referee.cli), before any work
    sealer = config.sealer()  # no key file (and HMAC-only not chosen): one line too
    engines.names()  # load every engine before the first match
    concurrency = args.concurrency or config.worker_concurrency
    priority = lower_own_priority(config.worker_nice if args.nice is None else args.nice)
    if config.worker_batch:  # before any thread starts: they inherit it
        priority += f", {schedule_as_batch()}"
    limits = _sandbox_limits(config) if args.hosted else None
    queues = [HOSTED_QUEUE, MATCH_QUEUE] if args.hosted else [MATCH_QUEUE]
    connection = connect(config.redis_url)  # rq sets its socket timeout
    worker = _when_redis_answers(
        lambda: MatchWorker(queues, connection, config, sealer, concurrency=concurrency,
                            hosted_limits=limits),
        redacted_url(config.redis_url))
    mode = "until the queues are empty" if args.burst else "until stopped"
    gc.freeze()  # what start-up made lives as long as the process: no collection scans it
    logs.announce(log, f"worker {worker.name} on queues {', '.join(queues)} at "
                       f"{redacted_url(config.redis_url)}, up to {concurrency} matches "
                       f"at once, {priority}, {mode}")
    worker.work(burst=args.burst, logging_level="INFO")
    return 0


def _sandbox_limits(config: Config) -> sandbox.Limits:
    """The hosted sandbox's limits; a ConfigError (one line) when the sandbox cannot run
    here, a REFEREE_SANDBOX_* variable is wrong or REFEREE_HOSTED_DIR is not this user's."""
    try:
        sandbox.check_available()
        build_cache.cache_root(config.hosted_dir)
        return sandbox.Limits.from_env()
    except (sandbox.SandboxUnavailable, build_cache.UnsafeCacheRoot, ValueError) as error:
        raise ConfigError(f"--hosted: {error}") from None


def _when_redis_answers(make: Callable[[], T], where: str) -> T:
    """`make()` (rq names the worker's connection in Redis as it starts), retried while Redis
    is down: a worker started during an outage waits for it, as a running one does."""
    delay = STARTUP_BACKOFF_S[0]
    while True:
        try:
            return make()
        except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError) as error:
            log.warning("Redis at %s unavailable (%s); retrying in %.1f s", where, error, delay)
            time.sleep(delay)
            delay = min(delay * 2, STARTUP_BACKOFF_S[1])
