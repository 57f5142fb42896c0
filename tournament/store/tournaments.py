"""A tournament in Redis: its meta, its matches in schedule order, what was counted of them,
a progressive format's bookkeeping (changed in one WATCH/MULTI transaction with the
matches it schedules: `advance_format`) and the final ratings, stored once."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import redis

from referee.match.replay import utc_now
from tournament.store.base import StoreBase
from tournament.store.codec import decoded, dumps, loads
from tournament.store.keys import (
    FINISHED,
    INTERVALS,
    RatingsPart,
    TournamentField,
    TournamentPart,
    ratings_events_channel,
    ratings_key,
    tournament_events_channel,
    tournament_key,
    tournaments_key,
)
from tournament.store.matches import match_meta


class TournamentState(NamedTuple):
    """A tournament's meta, when it ended, and how many of its matches were counted as
    played (`done`) and as failed."""

    meta: dict
    finished_at: str | None
    done: int
    failed: int


class FormatTransaction:
    """A progressive format's bookkeeping and what it reads, under WATCH on the bookkeeping
    (reads before `commit`, writes after it)."""

    def __init__(self, pipe: redis.client.Pipeline, tournament_id: str, kind: str):
        self.pipe = pipe
        self.tournament_id = tournament_id
        self.kind = kind

    def state(self) -> dict | None:
        return loads(self.pipe.get(tournament_key(self.tournament_id, self.kind)))

    def match_ids(self, first: int, count: int) -> list[str]:
        """`count` of the tournament's match ids from place `first` in schedule order."""
        return [decoded(raw) for raw in self.pipe.lrange(
            tournament_key(self.tournament_id, TournamentPart.MATCHES), first,
            first + count - 1)]

    def outcomes(self, match_ids: list[str]) -> tuple[list[dict | None], list[bool]]:
        """Each match's counted result (None if not counted as played) and whether it was
        counted as failed."""
        results = [loads(raw) for raw in self.pipe.hmget(
            tournament_key(self.tournament_id, TournamentPart.RESULTS), match_ids)]
        failed = [bool(flag) for flag in self.pipe.smismember(
            tournament_key(self.tournament_id, TournamentPart.FAILED), match_ids)]
        return results, failed

    def results(self) -> list[dict]:
        """Every counted result, in no particular order."""
        return [loads(raw) for raw in self.pipe.hvals(
            tournament_key(self.tournament_id, TournamentPart.RESULTS))]

    def tournament_index(self, match_id: str) -> int | None:
        """The match's place in this tournament (None: not one of its matches)."""
        meta = match_meta(self.pipe, match_id)
        if meta is None or meta.get("tournament_id") != self.tournament_id:
            return None
        return meta["tournament_index"]

    def commit(self, state: dict, meta: dict | None = None) -> redis.client.Pipeline:
        """Start the MULTI: the new bookkeeping (and meta, when it changed); the pipeline
        takes the matches scheduled with them (`Tournaments.append_matches`)."""
        self.pipe.multi()
        self.pipe.set(tournament_key(self.tournament_id, self.kind), dumps(state))
        if meta is not None:
            self.pipe.hset(tournament_key(self.tournament_id), TournamentField.META,
                           dumps(meta))
        return self.pipe


class Tournaments(StoreBase):
    """Tournaments: stored, listed, read, advanced, ended."""

    def save_tournament(self, meta: dict, format_state: dict | None) -> None:
        """A new tournament's meta and its format's first bookkeeping; the matches follow
        (`append_matches`: their list is empty until then, and nothing counts before)."""
        with self.redis.pipeline() as pipe:
            pipe.hset(tournament_key(meta["id"]), TournamentField.META, dumps(meta))
            if format_state is not None:
                pipe.set(tournament_key(meta["id"], meta["format"]), dumps(format_state))
            pipe.zadd(tournaments_key(), {meta["id"]: time.time()})
            pipe.execute()

    def append_matches(self, pipe: redis.client.Pipeline, tournament_id: str,
                       match_ids: list[str]) -> None:
        """Add matches to the end of the tournament's schedule, on `pipe`."""
        pipe.rpush(tournament_key(tournament_id, TournamentPart.MATCHES), *match_ids)

    def tournament_meta(self, tournament_id: str) -> dict | None:
        return loads(self.redis.hget(tournament_key(tournament_id), TournamentField.META))

    def tournament_page(self, offset: int, limit: int) -> tuple[list[str], int]:
        """Newest first: one page of tournament ids and the total count."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrevrange(tournaments_key(), offset, offset + limit - 1)
            pipe.zcard(tournaments_key())
            ids, total = pipe.execute()
        return [i.decode() for i in ids], total

    def tournament_states(self, tournament_ids: list[str]) -> list[TournamentState]:
        """The state of each tournament that exists, in one round trip."""
        with self.redis.pipeline(transaction=False) as pipe:
            for tournament_id in tournament_ids:
                pipe.hmget(tournament_key(tournament_id), TournamentField.META,
                           TournamentField.FINISHED_AT)
                pipe.scard(tournament_key(tournament_id, TournamentPart.DONE))
                pipe.scard(tournament_key(tournament_id, TournamentPart.FAILED))
            replies = pipe.execute()
        return [TournamentState(loads(meta), finished_at.decode() if finished_at else None,
                                done, failed)
                for (meta, finished_at), done, failed in zip(replies[0::3], replies[1::3],
                                                             replies[2::3], strict=True)
                if meta is not None]

    def tournament_finished(self, tournament_id: str) -> bool:
        """Whether the final ratings are stored."""
        return bool(self.redis.hexists(tournament_key(tournament_id),
                                       TournamentField.FINISHED_AT))

    def tournament_match_ids(self, tournament_id: str) -> list[str]:
        """Every match id, in schedule order."""
        return self.tournament_match_page(tournament_id, 0, -1)[0]

    def tournament_match_page(self, tournament_id: str, offset: int,
                              limit: int) -> tuple[list[str], int]:
        """One page of the match ids in schedule order (`limit` -1: all after `offset`),
        and how many there are."""
        key = tournament_key(tournament_id, TournamentPart.MATCHES)
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.lrange(key, offset, offset + limit - 1 if limit >= 0 else -1)
            pipe.llen(key)
            ids, total = pipe.execute()
        return [i.decode() for i in ids], total

    def counted_match_ids(self, tournament_id: str) -> set[str]:
        """The matches counted, as played or failed."""
        return {decoded(m) for m in self.redis.sunion(
            [tournament_key(tournament_id, TournamentPart.DONE),
             tournament_key(tournament_id, TournamentPart.FAILED)])}

    def tournament_results(self, tournament_id: str) -> list[dict]:
        """The counted results, in schedule order."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.hvals(tournament_key(tournament_id, TournamentPart.RESULTS))
            pipe.lrange(tournament_key(tournament_id, TournamentPart.MATCHES), 0, -1)
            raw, match_ids = pipe.execute()
        order = {match_id.decode(): index for index, match_id in enumerate(match_ids)}
        return sorted(map(loads, raw), key=lambda result: order[result["match_id"]])

    def final_ratings(self, tournament_id: str) -> list[dict] | None:
        """The final ratings (or solo ranking) rows, once stored."""
        return loads(self.redis.hget(tournament_key(tournament_id), TournamentField.RATINGS))

    def store_final_ratings(self, meta: dict, final: list[dict]) -> bool:
        """Store the final ratings once (and, unless solo, each bot's interval on the game's
        leaderboard), announcing them; True if this call did."""
        key = tournament_key(meta["id"])

        def apply(pipe: redis.client.Pipeline) -> bool:
            if pipe.hexists(key, TournamentField.FINISHED_AT):
                return False
            pipe.multi()
            pipe.hset(key, mapping={TournamentField.FINISHED_AT: utc_now(),
                                    TournamentField.RATINGS: dumps(final)})
            if meta["players"] > 1:
                versions = {bot["bot_id"]: bot.get("version", 1) for bot in meta["bots"]}
                for row in final:  # with the version each bot played in the tournament
                    pipe.hset(ratings_key(meta["game"], RatingsPart.INTERVALS), row["bot"],
                              dumps({**row, "tournament_id": meta["id"],
                                     "version": versions.get(row["bot"], 1)}))
                pipe.publish(ratings_events_channel(meta["game"]), INTERVALS)
            pipe.publish(tournament_events_channel(meta["id"]), FINISHED)
            return True

        return self.transaction(apply, key)

    # ----- progressive formats ------------------------------------------------------------
    def format_state(self, tournament_id: str, kind: str) -> dict | None:
        """The bookkeeping of a progressive format (`kind`: its name)."""
        return loads(self.redis.get(tournament_key(tournament_id, kind)))

    def advance_format(self, tournament_id: str, kind: str,
                       step: Callable[[FormatTransaction], None]) -> None:
        """Run `step` in a transaction watching the format's bookkeeping, again from the
        start whenever another process changed it before the commit."""
        self.redis.transaction(lambda pipe: step(FormatTransaction(pipe, tournament_id, kind)),
                               tournament_key(tournament_id, kind))
