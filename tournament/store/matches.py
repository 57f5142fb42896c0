"""A match's record in Redis: its creation, its hash as the API reads it, the match lists,
its recorded steps and its replay (from Redis or, once archived, from its file)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack, cast

import redis
from redis.typing import EncodableT, FieldT

from referee.match import compact, replay, rerun
from referee.match.replay import Record, StepRecord, utc_now
from tournament.store.base import StoreBase
from tournament.store.codec import binary, decoded, dumps, loads, text
from tournament.store.keys import (
    HOSTED_QUEUE,
    MatchField,
    MatchPart,
    MatchStatus,
    hosted_bots_key,
    match_key,
    matches_key,
)


@dataclass(frozen=True)
class ExportSource:
    """What the export reads of a finished match: its replay's stored form (or the record
    read from its archive file) and the decisions its driver kept (None: none kept)."""

    stored: bytes | None
    archived: Record | None
    kept: bytes | None

    @property
    def found(self) -> bool:
        return self.stored is not None or self.archived is not None

    def record(self) -> Record:
        """The replay, its steps without state hashes unless archived (no re-run)."""
        if self.archived is not None:
            return self.archived
        if self.stored is None:
            raise compact.StoredReplayError("no replay is stored")
        return compact.decode_steps(self.stored)


class SeatDeadline(TypedDict, total=False):
    """A seat's own deadline per decision, when it was given one; a bot seat's `version`
    (issue 27: the bot's version it plays; none in matches made before versions)."""

    deadline_ms: int
    version: int


class MatchSeat(SeatDeadline):
    """A seat of a match: a registered bot (`kind` "bot") or a pull seat (`kind` "pull",
    `bot_id` None); `deadline_ms` only when the seat was given a deadline of its own."""

    seat: int
    kind: str
    bot_id: str | None
    name: str


class MatchTags(TypedDict, total=False):
    """What ties a match to others: the tournament it belongs to and its index there, and
    the matches that share its deal (`tournament.deals`)."""

    tournament_id: str
    tournament_index: int
    deal_siblings: list[str]
    time_control: dict[str, Any]  # `referee.match.clock.TimeControl`: the match is on a clock
    account: str  # the account that started it (issue 27), directly or by a tournament
    ladder_id: str  # the ladder it was made by (issue 28), and its number there
    ladder_index: int


class MatchMeta(MatchTags):
    """A match's record as created (`new_match_meta`), fixed from then on: the `meta` field
    of its hash."""

    id: str
    game: str
    game_version: str
    num_players: int
    seats: list[MatchSeat]
    options: dict[str, Any]
    seed: int
    policy: dict[str, Any]
    deadline_ms: int
    pull_deadline_ms: int
    created_at: str


def new_match_meta(game: str, game_version: str, seats: list[MatchSeat],
                   options: dict[str, Any], seed: int, policy: dict[str, Any], deadline_ms: int,
                   pull_deadline_ms: int, match_id: str | None = None,
                   **tags: Unpack[MatchTags]) -> MatchMeta:
    """A new match's record as `create_match` stores it (a fresh id unless given); `tags`
    add fields such as the tournament it belongs to."""
    return {
        "id": match_id or f"m-{secrets.token_hex(8)}", "game": game,
        "game_version": game_version, "num_players": len(seats), "seats": seats,
        "options": options, "seed": seed, "policy": policy, "deadline_ms": deadline_ms,
        "pull_deadline_ms": pull_deadline_ms, "created_at": utc_now(), **tags,
    }


def seat_deadline_ms(match: Mapping[str, Any], seat: int) -> int:
    """A seat's deadline per decision: its own when it was given one, else the match's for
    its kind (`deadline_ms` for a bot, `pull_deadline_ms` for a pull seat)."""
    info = match["seats"][seat]
    default = match["deadline_ms"] if info["kind"] == "bot" else match["pull_deadline_ms"]
    return info.get("deadline_ms", default)


def bot_seats(bots: list[tuple[str, str]]) -> list[MatchSeat]:
    """The seats of a match between registered bots, from (bot id, seat name) in seat order."""
    return [{"seat": seat, "kind": "bot", "bot_id": bot_id, "name": name}
            for seat, (bot_id, name) in enumerate(bots)]


def match_fields(fields: Mapping[bytes, bytes] | Mapping[bytes | str, bytes | str]
                 ) -> dict[str, Any] | None:
    """A match hash as `Store.get_match` answers it: meta merged with the status fields
    (an archived match: its packed summary, with `archive`, the replay's file)."""
    if not fields:
        return None
    named = {decoded(k): v for k, v in fields.items()}
    log_index = None if named.get(MatchField.LOG) is None else int(named[MatchField.LOG])
    if MatchField.ARCHIVED in named:
        return {**compact.unpack(binary(named[MatchField.ARCHIVED])), "log_index": log_index}
    match = compact.unpack(binary(named[MatchField.META]))
    match.update(
        status=decoded(named[MatchField.STATUS]),
        step=int(named[MatchField.STEP]),
        to_move=loads(named.get(MatchField.TO_MOVE)),
        result=compact.unpack(binary(named.get(MatchField.RESULT))),
        forfeit=loads(named.get(MatchField.FORFEIT)),
        error=text(named.get(MatchField.ERROR)),
        started_at=text(named.get(MatchField.STARTED_AT)),
        finished_at=text(named.get(MatchField.FINISHED_AT)),
        log_index=log_index,
    )
    return match


def match_meta(client: redis.Redis | redis.client.Pipeline, match_id: str
               ) -> MatchMeta | None:
    """The match's meta (archived or not) read on `client`, e.g. a pipeline in WATCH."""
    meta, archived = client.hmget(match_key(match_id), MatchField.META, MatchField.ARCHIVED)
    return compact.unpack(binary(meta if meta is not None else archived))


class Matches(StoreBase):
    """Matches: created, read one or many, listed, their steps and replays."""

    def create_match(self, meta: MatchMeta, state: dict[str, Any], to_move: int | None,
                     token_digests: dict[int, str],
                     pipe: redis.client.Pipeline | None = None) -> None:
        """Store a new match, queued, with its initial state as the live state; on `pipe`,
        which the caller executes, when given (many matches in one round trip)."""
        if pipe is None:
            with self.redis.pipeline() as own:
                self.create_match(meta, state, to_move, token_digests, own)
                own.execute()
            return
        match_id = meta["id"]
        fields: dict[FieldT, EncodableT] = {
            MatchField.META: compact.pack(meta), MatchField.STATUS: MatchStatus.QUEUED.value,
            MatchField.STEP: 0, MatchField.TO_MOVE: dumps(to_move)}
        bot_ids = [seat["bot_id"] for seat in meta["seats"] if seat.get("bot_id")]
        if bot_ids and self.redis.smismember(hosted_bots_key(), bot_ids).count(1):
            fields[MatchField.QUEUE] = HOSTED_QUEUE
        pipe.hset(match_key(match_id), mapping=fields)
        if token_digests:
            pipe.hset(match_key(match_id, MatchPart.TOKENS),
                      mapping={str(seat): digest for seat, digest in token_digests.items()})
        pipe.set(match_key(match_id, MatchPart.LIVE), dumps({"step": 0, "state": state}))
        created = time.time()
        pipe.zadd(matches_key(), {match_id: created})
        pipe.zadd(matches_key(meta["game"]), {match_id: created})

    def get_match(self, match_id: str) -> dict[str, Any] | None:
        """The match's meta merged with its current status fields, or None."""
        return match_fields(self.redis.hgetall(match_key(match_id)))

    def get_matches(self, match_ids: list[str]) -> list[dict[str, Any] | None]:
        """`get_match` of every id, in one round trip."""
        return [match_fields(fields) for fields in self.get_match_hashes(match_ids)]

    def get_match_hashes(self, match_ids: list[str]) -> list[dict[bytes, bytes]]:
        """Each match's hash as stored (empty: no such match; `match_fields` reads one), in
        one round trip."""
        with self.redis.pipeline(transaction=False) as pipe:
            for match_id in match_ids:
                pipe.hgetall(match_key(match_id))
            return pipe.execute()

    def match_statuses(self, match_ids: list[str]) -> dict[str, str | None]:
        """Each match's status (None: no such match), in one round trip."""
        with self.redis.pipeline(transaction=False) as pipe:
            for match_id in match_ids:
                pipe.hget(match_key(match_id), MatchField.STATUS)
            found = pipe.execute()
        return {match_id: text(status) for match_id, status in zip(match_ids, found,
                                                                     strict=True)}

    def current_attempt(self, match_id: str) -> int:
        """How many times the match was queued again after its worker died (0 at first)."""
        return int(self.redis.hget(match_key(match_id), MatchField.ATTEMPT) or 0)

    def list_match_ids(self, offset: int, limit: int,
                       game: str | None = None) -> tuple[list[str], int]:
        """Newest first (of one game, or all): one page of ids and the total count."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrevrange(matches_key(game), offset, offset + limit - 1)
            pipe.zcard(matches_key(game))
            ids, total = pipe.execute()
        return [i.decode() for i in ids], total

    def steps(self, match_id: str) -> list[StepRecord]:
        """A running match's steps so far, each with its state hash: those its driver did
        not hash (`referee-replay/3`, between checkpoints) computed here, re-run from the
        match's seed."""
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(match_key(match_id))
            pipe.lrange(match_key(match_id, MatchPart.STEPS), 0, -1)
            fields, stored = pipe.execute()
        steps: list[StepRecord] = [loads(raw) for raw in stored]
        match = match_fields(fields)
        if match is None or all("state_hash" in step for step in steps):
            return steps
        played = cast(Record, {"format": replay.FORMAT, "steps": steps, **{
            key: match[key] for key in ("game", "game_version", "num_players", "seed",
                                        "options")}})
        return rerun.with_state_hashes(rerun.engine_for(played), played)

    def get_replay(self, match_id: str) -> Record | None:
        """The finished match's sealed replay, from Redis or from the archive
        (`referee.match.compact.StoredReplayError` when it cannot be read back here)."""
        data, archived = self._stored_replay(match_id)
        if archived is not None:
            return self._archived_replay(match_id, archived)
        return None if data is None else compact.decode(data)

    def get_replay_steps(self, match_id: str) -> Record | None:
        """The finished match's replay, its steps without state hashes unless archived (no
        re-run)."""
        data, archived = self._stored_replay(match_id)
        if archived is not None:
            return self._archived_replay(match_id, archived)
        return None if data is None else compact.decode_steps(data)

    def get_export_sources(self, match_ids: list[str]) -> list[ExportSource]:
        """Each match's replay as stored (or read from its archive file) and the kept
        decisions stored with it, in one round trip; decoded by whoever reads the records
        (`ExportSource.record`: `referee export --jobs` decodes in its processes)."""
        with self.redis.pipeline() as pipe:
            for match_id in match_ids:
                pipe.get(match_key(match_id, MatchPart.REPLAY))
                pipe.hget(match_key(match_id), MatchField.ARCHIVED)
                pipe.get(match_key(match_id, MatchPart.DECISIONS))
            found = pipe.execute()
        sources = []
        for at, match_id in enumerate(match_ids):
            stored, archived, kept = found[3 * at:3 * at + 3]
            if archived is not None:
                sources.append(ExportSource(None, self._archived_replay(
                    match_id, compact.unpack(archived)["archive"]), None))
            else:
                sources.append(ExportSource(stored, None, kept))
        return sources

    def _stored_replay(self, match_id: str) -> tuple[bytes | None, str | None]:
        """(the stored form in Redis, None) or (None, the archive file): the archiver
        replaces one with the other atomically, so one transaction sees one of them."""
        with self.redis.pipeline() as pipe:
            pipe.get(match_key(match_id, MatchPart.REPLAY))
            pipe.hget(match_key(match_id), MatchField.ARCHIVED)
            data, archived = pipe.execute()
        return data, None if archived is None else compact.unpack(archived)["archive"]

    def _archived_replay(self, match_id: str, relative: str) -> Record:
        if self.archive is None:
            raise compact.StoredReplayError(
                f"the replay of match {match_id} is archived ({relative}) and this process "
                "has no REFEREE_ARCHIVE_DIR")
        return self.archive.read(relative, match_id)
