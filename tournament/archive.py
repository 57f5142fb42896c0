"""Finished replays moved out of Redis into files: `referee archive --older-than DURATION`.

Each archived match becomes one gzip file (`tournament.archive_files.ReplayArchive`). What
Redis keeps of the match shrinks to its status and one packed summary (everything
`GET /matches/{id}` answers, and the file's path): the match list, standings and ratings
read what they read before.

Moving one match: the file is written and read back; only then, in one Redis transaction
watching the match (`Store.replace_with_summary`), the replay is deleted and the hash
replaced by its summary. Until that transaction the replay is read from Redis; after it,
from the file (`Store.get_replay` reads both in one transaction, so it never falls between
them). Archiving is idempotent and safe with several archivers at once: the same match
always gives the same file bytes, a rename replaces a file whole, and a transaction that
finds the match changed (archived by another) starts over.

Only what is settled moves: a finished match, over for longer than the given age, whose
outcome was counted (so a recovery that counts it later still finds its replay). Each
game's cursor (`Store.archive_cursor`) remembers up to where (creation time) every match is
archived or failed, so a run looks only at the matches after it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import engines
from referee.match import compact
from tournament.archive_files import ReplayArchive
from tournament.store import MatchStatus, Store, match_fields
from tournament.store.archive import ArchiveCandidate

BATCH = 200
DURATION = re.compile(r"^(\d+)([smhdw])$")
UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_duration(text: str) -> timedelta:
    """`30d`, `12h`, `90m`, `45s`, `2w` as a duration (ValueError otherwise)."""
    found = DURATION.match(text.strip())
    if not found:
        raise ValueError(f"{text!r} is not a duration such as 30d, 12h, 90m, 45s or 2w")
    return timedelta(seconds=int(found[1]) * UNITS_S[found[2]])


@dataclass
class Report:
    """What one run did, per kind of match looked at."""

    archived: int = 0
    already: int = 0
    waiting: int = 0
    failed: list[str] = field(default_factory=list)

    def add(self, other: Report) -> None:
        self.archived += other.archived
        self.already += other.already
        self.waiting += other.waiting
        self.failed += other.failed


def archive_finished(store: Store, archive: ReplayArchive, older_than: timedelta,
                     now: datetime | None = None) -> Report:
    """Archive every match of every game that finished more than `older_than` ago (and
    was counted)."""
    cutoff = (now or datetime.now(UTC)) - older_than
    report = Report()
    for game in engines.names():
        report.add(archive_game(store, archive, game, cutoff))
    return report


def archive_game(store: Store, archive: ReplayArchive, game: str, cutoff: datetime) -> Report:
    """Archive the game's matches finished before `cutoff`, from its cursor on."""
    report = Report()
    low = store.archive_cursor(game)
    settled_until: float | None = None  # the first match that is not settled yet
    last, ties = low, 0
    while page := store.created_between(game, last, cutoff.timestamp(), ties, BATCH):
        for score, settled in _archive_page(store, archive, game, cutoff, page, report):
            if not settled and settled_until is None:
                settled_until = score
            ties = ties + 1 if score == last else 1
            last = score
    cursor = settled_until if settled_until is not None else last
    if cursor != float("-inf"):
        store.advance_archive_cursor(game, cursor)
    return report


def _archive_page(store: Store, archive: ReplayArchive, game: str, cutoff: datetime,
                  page: list[tuple[str, float]], report: Report) -> list[tuple[float, bool]]:
    """(score, settled) of each match of a page, archiving those that are due."""
    candidates = store.archive_candidates(game, [match_id for match_id, _ in page])
    return [(score, _settle(store, archive, match_id, candidate, cutoff, report))
            for (match_id, score), candidate in zip(page, candidates, strict=True)]


def _settle(store: Store, archive: ReplayArchive, match_id: str, candidate: ArchiveCandidate,
            cutoff: datetime, report: Report) -> bool:
    """Archive the match if it is due; whether it is settled (nothing left to archive)."""
    if candidate.archived:
        report.already += 1
        return True
    if candidate.status is None or candidate.status == MatchStatus.FAILED:
        return True
    if (candidate.status == MatchStatus.FINISHED and candidate.counted
            and _ended(candidate.finished_at) <= cutoff):
        return archive_match(store, archive, match_id, report)
    report.waiting += 1
    return False


def archive_match(store: Store, archive: ReplayArchive, match_id: str, report: Report) -> bool:
    """Move one finished match's replay to the archive; True once it is archived (by this
    call or another archiver)."""
    while True:
        fields, stored = store.stored_match(match_id)
        match = match_fields(fields)
        if match is None:
            return True  # nothing left to archive
        if "archive" in match:
            report.already += 1
            return True
        try:
            if stored is None:
                raise compact.StoredReplayError("no stored replay")
            relative = archive.relative_path(match)
            archive.write(relative, compact.decode(stored))
        except (compact.StoredReplayError, OSError, ValueError) as error:
            report.failed.append(f"{match_id}: {error}")
            return False
        if store.replace_with_summary(match_id, fields, {**match, "archive": relative}):
            report.archived += 1
            return True


def _ended(finished_at: str | None) -> datetime:
    if finished_at is None:
        return datetime.max.replace(tzinfo=UTC)
    return datetime.fromisoformat(finished_at.replace("Z", "+00:00"))
