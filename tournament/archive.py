"""Finished replays moved out of Redis into files: `referee archive --older-than DURATION`.

Each archived match is one gzip file of its full sealed record, state hashes included (so
reading it back needs no engine, whatever version played it), at
`REFEREE_ARCHIVE_DIR/{game}/{YYYY-MM of its end}/{match id}.json.gz`: `zcat` and
`referee verify` read it as it is. What Redis keeps of the match shrinks to its status and
one packed summary (everything `GET /matches/{id}` answers, and the file's path): the
match list, standings and ratings read what they read before.

Moving one match: the file is written to a temporary name, flushed and renamed, then read
back and compared; only then, in one Redis transaction watching the match, the replay is
deleted and the hash replaced by its summary. Until that transaction the replay is read
from Redis; after it, from the file (`Store.get_replay` reads both in one transaction,
so it never falls between them). Archiving is idempotent and safe with several archivers
at once: the same match always gives the same file bytes, a rename replaces a file
whole, and a transaction that finds the match changed (archived by another) starts over.

Only what is settled moves: a finished match, over for longer than the given age, whose
outcome was counted (so a recovery that counts it later still finds its replay). Each
game's `archive:cursor:{game}` remembers up to where (creation time) every match is
archived or failed, so a run looks only at the matches after it.
"""

from __future__ import annotations

import gzip
import os
import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import redis

import engines
from referee.match import compact
from tournament.store import (
    ARCHIVED,
    MatchStatus,
    Store,
    archive_cursor_key,
    match_fields,
    match_key,
    matches_key,
    ratings_key,
)

BATCH = 200
SAFE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
DURATION = re.compile(r"^(\d+)([smhdw])$")
UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}

# KEYS: cursor; ARGV: score. The cursor only moves forward.
ADVANCE_CURSOR = """
local now = redis.call('GET', KEYS[1])
if not now or tonumber(now) < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
"""


class ArchiveUnavailable(compact.StoredReplayError):
    """An archived replay cannot be read: the archive is not mounted, the file is gone or
    damaged (see the reason)."""


def parse_duration(text: str) -> timedelta:
    """`30d`, `12h`, `90m`, `45s`, `2w` as a duration (ValueError otherwise)."""
    found = DURATION.match(text.strip())
    if not found:
        raise ValueError(f"{text!r} is not a duration such as 30d, 12h, 90m, 45s or 2w")
    return timedelta(seconds=int(found[1]) * UNITS_S[found[2]])


class ReplayArchive:
    """The replay files under one directory (local, NFS, or an object-storage mount)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    @staticmethod
    def relative_path(match: dict) -> str:
        """Where a finished match's replay goes, from its game, end and id."""
        if not SAFE_ID.match(match["id"]) or match["game"] not in engines.names():
            raise ValueError(f"match {match['id']!r} of {match['game']!r} has no safe file name")
        return f"{match['game']}/{match['finished_at'][:7]}/{match['id']}.json.gz"

    def write(self, relative: str, record: dict) -> None:
        """Write the record under `relative` whole or not at all (a temporary file renamed
        over the target), then check it reads back the same."""
        data = gzip.compress(orjson.dumps(record), compresslevel=6, mtime=0)
        path = self._path(relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            with open(temporary, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
        if path.read_bytes() != data:
            raise ArchiveUnavailable(f"{relative} did not read back as written")

    def read(self, relative: str, match_id: str) -> dict:
        """The record archived under `relative` (ArchiveUnavailable when it cannot be)."""
        try:
            record = orjson.loads(gzip.decompress(self._path(relative).read_bytes()))
        except (OSError, EOFError, orjson.JSONDecodeError) as error:
            raise ArchiveUnavailable(f"the archived replay of match {match_id} ({relative}) "
                                     f"cannot be read: {error}") from None
        if record.get("match_id") != match_id:
            raise ArchiveUnavailable(f"{relative} holds another match's replay")
        return record

    def _path(self, relative: str) -> Path:
        path = (self.root / relative).resolve()
        if not path.is_relative_to(self.root.resolve()):
            raise ArchiveUnavailable(f"{relative!r} is outside the archive")
        return path


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
    low = float(store.redis.get(archive_cursor_key(game)) or "-inf")
    settled_until: float | None = None  # the first match that is not settled yet
    last, ties = low, 0
    while page := store.redis.zrangebyscore(matches_key(game), last, cutoff.timestamp(),
                                            start=ties, num=BATCH, withscores=True):
        for score, settled in _archive_page(store, archive, game, cutoff, page, report):
            if not settled and settled_until is None:
                settled_until = score
            ties = ties + 1 if score == last else 1
            last = score
    cursor = settled_until if settled_until is not None else last
    if cursor != float("-inf"):
        store.redis.eval(ADVANCE_CURSOR, 1, archive_cursor_key(game), repr(cursor))
    return report


def _archive_page(store: Store, archive: ReplayArchive, game: str, cutoff: datetime,
                  page: list[tuple[bytes, float]], report: Report) -> list[tuple[float, bool]]:
    """(score, settled) of each match of a page, archiving those that are due."""
    ids = [member.decode() for member, _ in page]
    with store.redis.pipeline(transaction=False) as pipe:
        for match_id in ids:
            pipe.hmget(match_key(match_id), "status", "finished_at")
            pipe.hexists(match_key(match_id), ARCHIVED)
            pipe.sismember(ratings_key(game, "counted"), match_id)
        answers = pipe.execute()
    seen = []
    for index, (match_id, (_, score)) in enumerate(zip(ids, page, strict=True)):
        (status, finished_at), archived, counted = answers[3 * index:3 * index + 3]
        if archived:
            report.already += 1
            settled = True
        elif status is None or status.decode() == MatchStatus.FAILED:
            settled = True
        elif (status.decode() == MatchStatus.FINISHED and counted
              and _ended(finished_at) <= cutoff):
            settled = archive_match(store, archive, match_id, report)
        else:
            report.waiting += 1
            settled = False
        seen.append((score, settled))
    return seen


def archive_match(store: Store, archive: ReplayArchive, match_id: str, report: Report) -> bool:
    """Move one finished match's replay to the archive; True once it is archived (by this
    call or another archiver)."""
    while True:
        with store.redis.pipeline() as pipe:
            pipe.hgetall(match_key(match_id))
            pipe.get(match_key(match_id, "replay"))
            fields, stored = pipe.execute()
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
        if _replace_with_summary(store, match_id, fields, {**match, "archive": relative}):
            report.archived += 1
            return True


def _replace_with_summary(store: Store, match_id: str, fields: dict[bytes, bytes],
                          summary: dict) -> bool:
    """Delete the replay and keep only the summary, if the match hash is still `fields`;
    False when it changed meanwhile (the caller reads it again)."""
    key = match_key(match_id)

    def apply(pipe: redis.client.Pipeline) -> bool:
        if pipe.hgetall(key) != fields:
            return False
        pipe.multi()
        pipe.delete(key, match_key(match_id, "replay"))
        pipe.hset(key, mapping={"status": MatchStatus.FINISHED.value,
                                ARCHIVED: compact.pack(summary)})
        return True

    return store.redis.transaction(apply, key, value_from_callable=True)


def _ended(finished_at: bytes | None) -> datetime:
    if finished_at is None:
        return datetime.max.replace(tzinfo=UTC)
    return datetime.fromisoformat(finished_at.decode().replace("Z", "+00:00"))
