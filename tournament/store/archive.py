"""The Redis side of the archive (`tournament.archive` moves the replays, `ReplayArchive`
writes the files): each game's cursor, the matches to look at, and the one transaction
that swaps a match's replay for its summary."""

from __future__ import annotations

from typing import Any, NamedTuple, cast

import redis

from referee.match import compact
from tournament.store.base import StoreBase
from tournament.store.codec import decoded, text
from tournament.store.keys import (
    MatchField,
    MatchPart,
    MatchStatus,
    RatingsPart,
    archive_cursor_key,
    match_key,
    matches_key,
    ratings_key,
)

# A match's hash as stored (bytes, typed as redis-py types HGETALL: see `codec.text`).
MatchFields = dict[bytes | str, bytes | str]


class ArchiveCandidate(NamedTuple):
    """What decides whether a match is archived now: its status and end, whether it is
    archived already and whether its outcome was counted."""

    status: str | None
    finished_at: str | None
    archived: bool
    counted: bool


class ArchiveSide(StoreBase):
    """The archiver's reads and writes."""

    def archive_cursor(self, game: str) -> float:
        """The creation time before which every match of the game is settled (-inf: none)."""
        return float(self.redis.get(archive_cursor_key(game)) or "-inf")

    def advance_archive_cursor(self, game: str, score: float) -> None:
        """Move the game's cursor to `score`, never backwards (a script)."""
        self.scripts.advance_cursor(keys=[archive_cursor_key(game)], args=[repr(score)])

    def created_between(self, game: str, low: float, high: float, start: int,
                        count: int) -> list[tuple[str, float]]:
        """(match id, creation time) of up to `count` of the game's matches created from
        `low` to `high`, skipping the first `start`, oldest first."""
        # (member, score) pairs (`withscores`), which redis-py's typing of ZRANGEBYSCORE
        # does not tell from plain members.
        page = cast(list[tuple[bytes, float]], self.redis.zrangebyscore(
            matches_key(game), low, high, start=start, num=count, withscores=True))
        return [(decoded(member), score) for member, score in page]

    def archive_candidates(self, game: str, match_ids: list[str]) -> list[ArchiveCandidate]:
        """Each match's `ArchiveCandidate`, in one round trip."""
        with self.redis.pipeline(transaction=False) as pipe:
            for match_id in match_ids:
                pipe.hmget(match_key(match_id), MatchField.STATUS, MatchField.FINISHED_AT)
                pipe.hexists(match_key(match_id), MatchField.ARCHIVED)
                pipe.sismember(ratings_key(game, RatingsPart.COUNTED), match_id)
            answers = pipe.execute()
        candidates = []
        for at in range(0, len(answers), 3):
            (status, finished_at), archived, counted = answers[at:at + 3]
            candidates.append(ArchiveCandidate(text(status), text(finished_at), bool(archived),
                                               bool(counted)))
        return candidates

    def stored_match(self, match_id: str) -> tuple[MatchFields, bytes | None]:
        """The match's hash as stored and its replay's stored form, in one transaction."""
        with self.redis.pipeline() as pipe:
            pipe.hgetall(match_key(match_id))
            pipe.get(match_key(match_id, MatchPart.REPLAY))
            fields, stored = pipe.execute()
        return fields, stored

    def replace_with_summary(self, match_id: str, fields: MatchFields, summary: dict[str, Any]
                             ) -> bool:
        """Delete the replay (and the kept decisions) and keep only the summary, if the
        match hash is still `fields`; False when it changed meanwhile (the caller reads it
        again)."""
        key = match_key(match_id)

        def apply(pipe: redis.client.Pipeline) -> bool:
            if pipe.hgetall(key) != fields:
                return False
            pipe.multi()
            pipe.delete(key, match_key(match_id, MatchPart.REPLAY),
                        match_key(match_id, MatchPart.DECISIONS))
            pipe.hset(key, mapping={MatchField.STATUS: MatchStatus.FINISHED.value,
                                    MatchField.ARCHIVED: compact.pack(summary)})
            if (log_index := fields.get(MatchField.LOG.encode())) is not None:
                pipe.hset(key, MatchField.LOG, log_index)  # an archived match keeps its leaf
            return True

        return self.transaction(apply, key)
