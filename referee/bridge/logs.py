"""The bridge's log folder, bounded: one file per match and seat (its program's stderr and
the bridge's notes of it), and past `budget` bytes in the files of sessions that ended, the
files that ended longest ago are removed (the one that ended last stays, even alone past
the budget). A bridge serving for weeks fills no disk.

The files of the sessions in play are not counted: each is bounded by the stderr limit
(`referee bridge --stderr-mb`) and there are at most `--max-programs` of them. Files
already in the folder when the bridge starts count as ended, oldest first by the time they
were last written, if named as the bridge names its logs (`LOG_NAME`): other files there
are never touched. A session of a match that goes on after its program was retired (a
later decision) takes its file back, uncounted again, until it ends again.
"""

from __future__ import annotations

import os
import re
from collections import Counter, OrderedDict
from contextlib import suppress
from pathlib import Path

DEFAULT_LOGS_MB = 1024
SUFFIX = ".log"
LOG_NAME = re.compile(r"[A-Za-z0-9_.-]+-seat[0-9]+\.log")
"""A name `log_name` gives: only such files of the folder are ever counted or removed."""


class LogFolder:
    """Names the log file of each (match, seat) and removes the oldest ended ones past the
    budget (0: none is ever removed)."""

    def __init__(self, path: Path, budget: int):
        self.path = path
        self.budget = budget
        self.ended: OrderedDict[Path, int] = OrderedDict()  # ended first to last: size
        self.in_play: Counter[Path] = Counter()  # sessions using each file now
        self.total = 0  # bytes in the ended files

    def open(self) -> None:
        """Make the folder; the logs already in it count as ended, oldest first."""
        self.path.mkdir(parents=True, exist_ok=True)
        found = []
        with os.scandir(self.path) as entries:
            for entry in entries:
                if LOG_NAME.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                    status = entry.stat(follow_symlinks=False)
                    found.append((status.st_mtime_ns, entry.name, status.st_size))
        for _, name, size in sorted(found):
            self._add_ended(self.path / name, size)
        self._trim()

    def take(self, match_id: str, seat: int) -> Path:
        """The log file of a match's seat, in play until `release` (never removed then)."""
        path = self.path / log_name(match_id, seat)
        self.total -= self.ended.pop(path, 0)
        self.in_play[path] += 1
        return path

    def release(self, path: Path) -> None:
        """A session of `path` ended: once none is left, the file counts, last in the line
        of removal."""
        self.in_play[path] -= 1
        if self.in_play[path] > 0:
            return
        del self.in_play[path]
        with suppress(OSError):
            self._add_ended(path, path.stat().st_size)
            self._trim()

    def _add_ended(self, path: Path, size: int) -> None:
        self.total += size - self.ended.pop(path, 0)
        self.ended[path] = size

    def _trim(self) -> None:
        while self.budget and self.total > self.budget and len(self.ended) > 1:
            path, size = self.ended.popitem(last=False)
            self.total -= size
            with suppress(FileNotFoundError):
                path.unlink()


def log_name(match_id: str, seat: int) -> str:
    """The log file of a match's seat: the match id with only safe characters kept."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", match_id)[:120].lstrip(".") or "match"
    return f"{safe}-seat{seat}{SUFFIX}"
