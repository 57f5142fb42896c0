"""Ladders in Redis: the settings, the entries, the running matches and what was counted,
changed only in one WATCH/MULTI transaction on a ladder's entries and state together with
the matches it schedules (`ladder_transaction`); the entry checks waiting for a worker and
the notices waiting to be sent."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TypeVar, cast

import redis

from tournament.store.codec import decoded, dumps, loads
from tournament.store.keys import (
    LadderPart,
    bot_ladders_key,
    ladder_checks_key,
    ladder_key,
    ladder_notices_key,
    ladders_key,
    playing_key,
)
from tournament.store.work import WorkList, WorkLists

T = TypeVar("T")
HISTORY_POINTS = 20_000  # the newest points of a ladder's history kept
CLAIMED = "claimed"
CHECKS = WorkList(ladder_checks_key(), ladder_checks_key(CLAIMED))


def _state(raw: bytes | str | None) -> dict:
    """A ladder's state as stored (a new ladder's: nothing scheduled yet)."""
    return loads(raw) or {"scheduled": 0, "counted": 0, "running": {}}


def _entries(raw: Mapping[bytes | str, bytes | str]) -> dict[str, dict]:
    """A ladder's entries hash decoded, by bot id in id order."""
    return {decoded(bot): loads(entry) for bot, entry in sorted(raw.items())}


class LadderTransaction:
    """A ladder's entries and state under WATCH (reads before `commit`, writes after)."""

    def __init__(self, pipe: redis.client.Pipeline, ladder_id: str):
        self.pipe = pipe
        self.ladder_id = ladder_id

    def meta(self) -> dict | None:
        return loads(self.pipe.get(ladder_key(self.ladder_id)))

    def state(self) -> dict:
        return _state(self.pipe.get(ladder_key(self.ladder_id, LadderPart.STATE)))

    def entries(self) -> dict[str, dict]:
        """Every entry, by bot id in id order."""
        return _entries(self.pipe.hgetall(ladder_key(self.ladder_id, LadderPart.ENTRIES)))

    def entry(self, bot_id: str) -> dict | None:
        return loads(self.pipe.hget(ladder_key(self.ladder_id, LadderPart.ENTRIES), bot_id))

    def is_counted(self, match_id: str) -> bool:
        return bool(self.pipe.sismember(ladder_key(self.ladder_id, LadderPart.COUNTED),
                                        match_id))

    def commit(self, state: dict | None, entries: dict[str, dict]) -> redis.client.Pipeline:
        """Start the MULTI with the new state (None: unchanged) and the changed entries;
        the pipeline takes the rest (matches scheduled, history, announcements)."""
        self.pipe.multi()
        if state is not None:
            self.pipe.set(ladder_key(self.ladder_id, LadderPart.STATE), dumps(state))
        if entries:
            self.pipe.hset(ladder_key(self.ladder_id, LadderPart.ENTRIES),
                           mapping={bot: dumps(entry) for bot, entry in entries.items()})
        return self.pipe


class Ladders(WorkLists):
    """Ladders: stored, listed, changed in transactions; entry checks and notices queued."""

    def save_ladder(self, meta: dict) -> None:
        with self.redis.pipeline() as pipe:
            pipe.set(ladder_key(meta["id"]), dumps(meta))
            pipe.zadd(ladders_key(), {meta["id"]: time.time()})
            pipe.execute()

    def ladder_meta(self, ladder_id: str) -> dict | None:
        return loads(self.redis.get(ladder_key(ladder_id)))

    def ladder_page(self, offset: int, limit: int) -> tuple[list[dict], int]:
        """Newest first: one page of ladder settings and the total count."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrevrange(ladders_key(), offset, offset + limit - 1)
            pipe.zcard(ladders_key())
            ids, total = pipe.execute()
        metas = self.redis.mget([ladder_key(decoded(i)) for i in ids]) if ids else []
        return [loads(meta) for meta in metas if meta is not None], total

    def ladder_ids(self) -> list[str]:
        ids = cast(list[bytes], self.redis.zrange(ladders_key(), 0, -1))
        return [decoded(i) for i in ids]

    def ladder_entries(self, ladder_id: str) -> dict[str, dict]:
        """Every entry, by bot id in id order."""
        return _entries(self.redis.hgetall(ladder_key(ladder_id, LadderPart.ENTRIES)))

    def ladder_entry(self, ladder_id: str, bot_id: str) -> dict | None:
        return loads(self.redis.hget(ladder_key(ladder_id, LadderPart.ENTRIES), bot_id))

    def ladder_state(self, ladder_id: str) -> dict:
        return _state(self.redis.get(ladder_key(ladder_id, LadderPart.STATE)))

    def ladder_match_page(self, ladder_id: str, offset: int,
                          limit: int) -> tuple[list[str], int]:
        """Newest first: one page of the ladder's match ids and how many it has."""
        key = ladder_key(ladder_id, LadderPart.MATCHES)
        total = int(self.redis.llen(key))
        start, stop = max(total - offset - limit, 0), total - offset - 1
        ids = self.redis.lrange(key, start, stop) if stop >= 0 else []
        return [decoded(i) for i in reversed(ids)], total

    def ladder_history(self, ladder_id: str, since: int, newest: int) -> list[list]:
        """The newest `newest` of the `[n, bot, ordinal]` points kept, oldest first, from
        the n-th counted match on (only those are read)."""
        points = [loads(raw) for raw in self.redis.lrange(
            ladder_key(ladder_id, LadderPart.HISTORY), -newest, -1)]
        return [point for point in points if point[0] >= since]

    def is_ladder_counted(self, ladder_id: str, match_id: str) -> bool:
        return bool(self.redis.sismember(ladder_key(ladder_id, LadderPart.COUNTED), match_id))

    def ladders_of_bot(self, bot_id: str) -> list[str]:
        return sorted(decoded(i) for i in self.redis.smembers(bot_ladders_key(bot_id)))

    def bots_playing(self, bot_ids: list[str]) -> dict[str, int]:
        """How many matches each bot plays now (its concurrent-match slots held)."""
        with self.redis.pipeline(transaction=False) as pipe:
            for bot in bot_ids:
                pipe.scard(playing_key(bot))
            return dict(zip(bot_ids, pipe.execute(), strict=True))

    def update_ladder(self, ladder_id: str, change: Callable[[dict], dict]) -> dict | None:
        """Write `change(meta)` (None: no such ladder), watched against a concurrent one."""
        key = ladder_key(ladder_id)

        def apply(pipe: redis.client.Pipeline) -> dict | None:
            meta = loads(pipe.get(key))
            if meta is None:
                return None
            changed = change(meta)
            pipe.multi()
            pipe.set(key, dumps(changed))
            return changed

        return self.transaction(apply, key)

    def ladder_transaction(self, ladder_id: str,
                           step: Callable[[LadderTransaction], T]) -> T:
        """Run `step` watching the ladder's entries and state, again from the start
        whenever another process changed them before the commit."""
        return self.transaction(lambda pipe: step(LadderTransaction(pipe, ladder_id)),
                                ladder_key(ladder_id, LadderPart.ENTRIES),
                                ladder_key(ladder_id, LadderPart.STATE))

    # ----- on a transaction's pipeline, in MULTI ------------------------------------------
    @staticmethod
    def record_ladder_match(pipe: redis.client.Pipeline, ladder_id: str, match_id: str) -> None:
        pipe.rpush(ladder_key(ladder_id, LadderPart.MATCHES), match_id)

    @staticmethod
    def mark_ladder_counted(pipe: redis.client.Pipeline, ladder_id: str, match_id: str,
                            points: list[list]) -> None:
        pipe.sadd(ladder_key(ladder_id, LadderPart.COUNTED), match_id)
        if points:
            key = ladder_key(ladder_id, LadderPart.HISTORY)
            pipe.rpush(key, *map(dumps, points))
            pipe.ltrim(key, -HISTORY_POINTS, -1)

    @staticmethod
    def join_ladder(pipe: redis.client.Pipeline, ladder_id: str, bot_id: str) -> None:
        pipe.sadd(bot_ladders_key(bot_id), ladder_id)

    @staticmethod
    def queue_check(pipe: redis.client.Pipeline, check: dict) -> None:
        pipe.rpush(ladder_checks_key(), dumps(check))

    @staticmethod
    def queue_notice(pipe: redis.client.Pipeline, notice: dict) -> None:
        pipe.rpush(ladder_notices_key(), dumps(notice))

    @staticmethod
    def announce_ladder(pipe: redis.client.Pipeline, ladder_id: str, message: str) -> None:
        pipe.publish(ladder_key(ladder_id, LadderPart.EVENTS), message)

    # ----- entry checks and notices --------------------------------------------------------
    def take_check(self) -> dict | None:
        """The next entry check, claimed by this caller (kept until `check_done`)."""
        return self.take_work(CHECKS)

    def check_done(self, check: dict) -> None:
        self.work_done(CHECKS, check)

    def return_check(self, check: dict) -> None:
        """Queue a claimed check again, first (its worker stops before running it)."""
        self.return_work(CHECKS, check)

    def requeue_stale_checks(self, older_than_s: float) -> int:
        """Queue again the checks claimed longer ago than `older_than_s` (their worker
        died); how many."""
        return self.requeue_stale_work(CHECKS, older_than_s)

    def take_notices(self, count: int) -> list[dict]:
        raw = cast(list[bytes] | None, self.redis.lpop(ladder_notices_key(), count)) or []
        return [loads(notice) for notice in raw]

    def ladder_events_channel(self, ladder_id: str) -> str:
        return ladder_key(ladder_id, LadderPart.EVENTS)
