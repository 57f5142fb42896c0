"""`referee log monitor URL [--state FILE] [--full]`: audit a server's results log.

Checks that the log only grew since the last run (a consistency proof from the head it
saved), that the entries since then (all of them with `--full`) give the signed root, and
that the record of each is served, verifies with the published keys and hashes to its leaf
(`referee.monitor`). Meant for cron: exit status 0 when everything holds (the new head is
saved), 1 on an inconsistency (said in one line, naming the entry; nothing is saved), 2
when the server or the state file cannot be read.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

from referee.monitor import Inconsistency, LogClient, MonitorState, Unreachable
from referee.monitor import run as monitor

HELP = "audit a server's results log: consistency, entries and records (exit 1 if rewritten)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    watch = actions.add_parser("monitor", help="check the log against the head saved by the "
                                               "last run, then save the new one")
    watch.add_argument("url", help="the server's base URL, e.g. https://referee.example.org")
    watch.add_argument("--state", type=Path, help="where the last head is kept (default: "
                                                  "~/.local/state/referee/monitor-HOST.json)")
    watch.add_argument("--full", action="store_true",
                       help="check the record of every entry, not only of the new ones")


def default_state(url: str) -> Path:
    host = re.sub(r"[^A-Za-z0-9.-]+", "_", urlsplit(url).netloc or url)
    return Path.home() / ".local" / "state" / "referee" / f"monitor-{host}.json"


def run(args: argparse.Namespace) -> int:
    url = args.url.rstrip("/")
    path = args.state or default_state(url)
    try:
        state, report = monitor(LogClient(url), MonitorState.load(path, url), args.full)
    except Inconsistency as error:
        print(f"INCONSISTENT: {error}", file=sys.stderr)
        return 1
    except Unreachable as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for note in report.notes:
        print(f"note: {note}")
    state.save(path)
    print(f"OK: head of {state.tree_size} entries saved to {path}")
    return 0
