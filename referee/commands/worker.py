"""`referee worker [--burst] [--no-fork]`: one rq worker on the referee's queues."""

from __future__ import annotations

import argparse
import importlib
import logging

import redis
from rq import SimpleWorker, Worker
from rq.serializers import JSONSerializer

import engines
from referee import logs
from referee.config import Config, redacted_url
from tournament.jobs import JOB_FUNCTION
from tournament.store import QUEUES

HELP = "run one rq worker that plays the referee's queued matches"
log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--burst", action="store_true",
                        help="stop once the queues are empty instead of waiting for jobs")
    parser.add_argument("--no-fork", action="store_true",
                        help="play each match in the worker process itself instead of a work "
                             "horse forked per match: less CPU per match, less isolation")


def preload() -> None:
    """Load the match job and every engine in the worker before it forks a work horse per
    job, so that the horses inherit them: imported in each horse, they cost every match
    tens of milliseconds."""
    importlib.import_module(JOB_FUNCTION.rpartition(".")[0])
    engines.names()


def run(args: argparse.Namespace) -> int:
    logs.configure("worker")
    preload()
    config = Config.from_env()
    connection = redis.Redis.from_url(config.redis_url)
    worker_class = SimpleWorker if args.no_fork else Worker
    worker = worker_class(list(QUEUES), connection=connection, serializer=JSONSerializer)
    mode = "until the queues are empty" if args.burst else "until stopped"
    if args.no_fork:
        mode += ", without forking"
    logs.announce(log, f"rq worker {worker.name} on queues {', '.join(QUEUES)} at "
                       f"{redacted_url(config.redis_url)}, {mode}")
    worker.work(burst=args.burst, logging_level="INFO")
    return 0
