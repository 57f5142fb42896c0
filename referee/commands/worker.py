"""`referee worker [--burst] [--concurrency N]`: one process driving many matches at once."""

from __future__ import annotations

import argparse
import logging

import redis

import engines
from referee import logs
from referee.config import DEFAULT_CONCURRENCY, Config, positive_int, redacted_url
from tournament.store import QUEUES
from tournament.worker import MatchWorker

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


def run(args: argparse.Namespace) -> int:
    logs.configure("worker")
    engines.names()  # load every engine before the first match
    config = Config.from_env()
    concurrency = args.concurrency or config.worker_concurrency
    connection = redis.Redis.from_url(config.redis_url)
    worker = MatchWorker(list(QUEUES), connection, config, concurrency=concurrency)
    mode = "until the queues are empty" if args.burst else "until stopped"
    logs.announce(log, f"worker {worker.name} on queues {', '.join(QUEUES)} at "
                       f"{redacted_url(config.redis_url)}, up to {concurrency} matches "
                       f"at once, {mode}")
    worker.work(burst=args.burst, logging_level="INFO")
    return 0
