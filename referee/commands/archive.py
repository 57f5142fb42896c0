"""`referee archive --older-than DURATION`: move finished replays out of Redis into files.

Every match finished (and counted) more than DURATION ago (`30d`, `12h`, `90m`, `45s`,
`2w`) gets its full replay written to `REFEREE_ARCHIVE_DIR` (or `--archive-dir`) and
removed from Redis (`tournament.archive`). Safe to run again, from cron, or from several
machines at once. Exit status: 0 done, 1 some matches could not be archived (listed on
stderr; they stay in Redis and are tried again next time), 2 no archive directory or a bad
duration.
"""

from __future__ import annotations

import argparse
import sys
import time

import redis

from referee.config import Config
from tournament.archive import ReplayArchive, archive_finished, parse_duration
from tournament.store import Store

HELP = ("move the replays of matches finished more than DURATION ago (30d, 12h, 90m) from "
        "Redis to REFEREE_ARCHIVE_DIR")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--older-than", required=True, metavar="DURATION",
                        help="archive matches finished longer ago than this: a number and a "
                             "unit, s, m, h, d or w (e.g. 30d)")
    parser.add_argument("--archive-dir", default=None,
                        help="the archive directory (default: $REFEREE_ARCHIVE_DIR); the same "
                             "one every API process reads")


def run(args: argparse.Namespace) -> int:
    config = Config.from_env()
    directory = args.archive_dir or config.archive_dir
    if not directory:
        print("error: set REFEREE_ARCHIVE_DIR (or --archive-dir): where the replays go",
              file=sys.stderr)
        return 2
    try:
        older_than = parse_duration(args.older_than)
    except ValueError as error:
        print(f"error: --older-than: {error}", file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        report = archive_finished(Store.from_url(config.redis_url), ReplayArchive(directory),
                                  older_than)
    except redis.RedisError as error:
        print(f"error: Redis: {error}", file=sys.stderr)
        return 1
    for failure in report.failed:
        print(f"not archived: {failure}", file=sys.stderr)
    print(f"archived {report.archived} replays to {directory} in "
          f"{time.monotonic() - started:.1f} s ({report.already} archived before, "
          f"{report.waiting} not due yet, {len(report.failed)} failed)")
    return 1 if report.failed else 0
