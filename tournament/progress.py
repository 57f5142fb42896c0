"""A match's recorded progress in Redis, as the worker's driver reads and writes it (asyncio).

Every write of a driver is fenced by the match's lease (`match:{id}:lease`, holding the
driver's name): a Lua script checks the holder before it writes, so a driver presumed dead
(its lease expired, another worker took the match over) can never write a step, park or
finish the match. A step is recorded together with the state after it, atomically, which
is what lets any worker continue the match from its last recorded step.

Scripts read the time from Redis (`TIME`), so a pull seat's deadline does not depend on
the clocks of the machines that park and resume it.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
import redis.asyncio as aioredis
from redis.commands.core import AsyncScript

from referee.match import compact
from tournament import metrics
from tournament.store import (
    SIGNAL_TTL_S,
    MatchStatus,
    applied_key,
    claim_key,
    events_channel,
    inbox_key,
    lease_key,
    loads,
    match_fields,
    match_key,
    playing_key,
    running_key,
)

LEASE_TTL_MS = 6000

# KEYS: lease, running; ARGV: holder, ttl ms, match id. Take the lease when free or already
# ours; a match with a lease is in the running index, so that the recovery sweep finds it
# should its driver die at any point.
TAKE_LEASE = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], 'NX', 0, ARGV[3])
return 1
"""

# KEYS: lease, running; ARGV: holder, ttl ms, match id. Renew a lease we hold: 1; held by
# another driver: 0; free: taken again (1) only while the match is still in the running
# index (it lapsed during a stall), else 2, for it was given up (released, parked, ended)
# since the renewal was sent: taking it then would hold the match for nobody.
RENEW_LEASE = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if holder then return 0 end
if not redis.call('ZSCORE', KEYS[2], ARGV[3]) then return 2 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""

# KEYS: lease, running; ARGV: holder, match id. Give the lease up, only when it is ours.
RELEASE_LEASE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('ZREM', KEYS[2], ARGV[2])
return redis.call('DEL', KEYS[1])
"""

# KEYS: match, lease; ARGV: holder, match id, started_at. Under the lease: running,
# out of the parked state; the clock of a first decision starts now.
# Answers the match's started_at and 1 when this is its first start.
START = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'status', 'running')
local first = redis.call('HSETNX', KEYS[1], 'started_at', ARGV[3])
redis.call('HSETNX', KEYS[1], 'asked_at', t[1] * 1000 + math.floor(t[2] / 1000))
redis.call('HDEL', KEYS[1], 'parked')
return {redis.call('HGET', KEYS[1], 'started_at'), first}
"""

# KEYS: match, steps, live, lease, applied signal, events channel; ARGV: holder, step index,
# step JSON, live JSON, to_move JSON, "1" to signal a pull client that its move was played,
# the signal's TTL, and the JSON list of [hash, field, amount] increments counting the
# decision in the cluster's metrics (`tournament.metrics`; their keys are not declared: one
# Redis, not a cluster). Followers of the match (GET /matches/{id}/events) hear the new
# step's number.
RECORD = """
if redis.call('GET', KEYS[4]) ~= ARGV[1] then return 0 end
local index = tonumber(ARGV[2])
local length = redis.call('LLEN', KEYS[2])
if length == index + 1 and redis.call('LINDEX', KEYS[2], -1) == ARGV[3] then return 1 end
if length ~= index then return -1 end
redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('SET', KEYS[3], ARGV[4])
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'step', index + 1, 'to_move', ARGV[5],
           'asked_at', t[1] * 1000 + math.floor(t[2] / 1000))
if ARGV[6] == '1' then
  redis.call('RPUSH', KEYS[5], '1')
  redis.call('EXPIRE', KEYS[5], ARGV[7])
end
for _, count in ipairs(cjson.decode(ARGV[8])) do
  redis.call('HINCRBY', count[1], count[2], count[3])
end
redis.call('PUBLISH', KEYS[6], index)
return 1
"""

# KEYS: match, lease, running, inbox; ARGV: holder, match id, step. Park the match (no
# driver until a move or the deadline) unless a move is already waiting in the inbox.
PARK = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if redis.call('LLEN', KEYS[4]) > 0 then return -1 end
redis.call('HSET', KEYS[1], 'parked', ARGV[3])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('DEL', KEYS[2])
return 1
"""

# KEYS: match, lease, running, replay, events channel, then the keys a running match needed
# (live, steps, inboxes); ARGV: holder, match id, status, the stored replay ("" for none),
# then field/value pairs for the match hash. Followers hear "end".
END = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if ARGV[4] ~= '' then redis.call('SET', KEYS[4], ARGV[4]) end
for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('HSET', KEYS[1], 'status', ARGV[3])
redis.call('HDEL', KEYS[1], 'parked', 'asked_at')
for i = 6, #KEYS do redis.call('DEL', KEYS[i]) end
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('DEL', KEYS[2])
redis.call('PUBLISH', KEYS[5], 'end')
return 1
"""


# KEYS: the playing sets of the match's bots; ARGV: match id, cap, the lease key prefix and
# suffix. Take one slot of every bot, all or none; a slot whose match has no lease (its
# driver finished, parked or died) is freed on the way. (The lease keys are built here, not
# declared: one Redis, not a cluster.)
TAKE_SLOTS = """
for _, key in ipairs(KEYS) do
  local held = 0
  for _, other in ipairs(redis.call('SMEMBERS', key)) do
    if other ~= ARGV[1] then
      if redis.call('EXISTS', ARGV[3] .. other .. ARGV[4]) == 1 then
        held = held + 1
      else
        redis.call('SREM', key, other)
      end
    end
  end
  if held >= tonumber(ARGV[2]) then return 0 end
end
for _, key in ipairs(KEYS) do redis.call('SADD', key, ARGV[1]) end
return 1
"""


class LeaseLost(Exception):
    """Another driver holds the match now: this one must stop without writing."""


@dataclass
class Loaded:
    """What a driver reads to continue a match, in one round trip."""

    match: dict
    state: dict
    steps: list[dict]


class Progress:
    """The driver's reads and fenced writes of one Redis (asyncio client)."""

    def __init__(self, client: aioredis.Redis):
        self.redis = client
        self._take_lease = client.register_script(TAKE_LEASE)
        self._renew_lease = client.register_script(RENEW_LEASE)
        self._release_lease = client.register_script(RELEASE_LEASE)
        self._start = client.register_script(START)
        self._record = client.register_script(RECORD)
        self._park = client.register_script(PARK)
        self._end = client.register_script(END)
        self._take_slots = client.register_script(TAKE_SLOTS)

    async def load(self, match_id: str) -> Loaded | None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(match_key(match_id))
            pipe.get(match_key(match_id, "live"))
            pipe.lrange(match_key(match_id, "steps"), 0, -1)
            fields, live, steps = await pipe.execute()
        match = match_fields(fields)
        if match is None:
            return None
        state = loads(live)["state"] if live else None
        return Loaded(match, state, [orjson.loads(step) for step in steps])

    async def take_lease(self, match_id: str, holder: str) -> bool:
        return bool(await self._take_lease(keys=[lease_key(match_id), running_key()],
                                           args=[holder, LEASE_TTL_MS, match_id]))

    async def renew_leases(self, leases: dict[str, str]) -> list[str]:
        """Renew every lease held (match id -> holder) in one round trip; the ids of those
        found taken by another driver."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for match_id, holder in leases.items():
                await self._renew_lease(keys=[lease_key(match_id), running_key()],
                                        args=[holder, LEASE_TTL_MS, match_id], client=pipe)
            answers = await pipe.execute()
        return [match_id for match_id, answer in zip(leases, answers, strict=True)
                if answer == 0]

    async def release_lease(self, match_id: str, holder: str) -> None:
        await self._release_lease(keys=[lease_key(match_id), running_key()],
                                  args=[holder, match_id])

    async def start(self, match_id: str, game: str, holder: str,
                    started_at: str) -> str:
        """Mark the match running under this driver; its `started_at` (the first one's).
        Its first start counts in the cluster's metrics."""
        answer = await self._start(keys=[match_key(match_id), lease_key(match_id)],
                                   args=[holder, match_id, started_at])
        if not answer:
            raise LeaseLost(match_id)
        first_started_at, first = answer
        if first:
            async with self.redis.pipeline(transaction=False) as pipe:
                metrics.record_match_status(pipe, game, MatchStatus.RUNNING.value)
                await pipe.execute()
        return first_started_at.decode()

    async def record(self, match_id: str, holder: str, entry: dict, state_json: bytes,
                     to_move: int | None, pull_move_played: bool, game: str, bot: str) -> None:
        """Record a step with the state after it, and count its decision in the cluster's
        metrics, in one round trip (idempotent: a step already recorded by this very write,
        before a lost connection, is not recorded twice). `state_json`: the state's
        canonical JSON, as hashed for the step."""
        step = entry["step"]
        live = b'{"step":%d,"state":%b}' % (step + 1, state_json)
        counts = metrics.decision_increments(game, bot, entry["elapsed_ms"] / 1000,
                                             (entry["fault"] or {}).get("code"))
        answer = await self._record(
            keys=[match_key(match_id), match_key(match_id, "steps"),
                  match_key(match_id, "live"), lease_key(match_id),
                  applied_key(match_id, step), events_channel(match_id)],
            args=[holder, step, orjson.dumps(entry), live, orjson.dumps(to_move),
                  "1" if pull_move_played else "0", SIGNAL_TTL_S, orjson.dumps(counts)])
        if answer == 0:
            raise LeaseLost(match_id)
        if answer == -1:
            raise LeaseLost(f"{match_id}: step {step} does not follow the recorded steps")

    async def park(self, match_id: str, holder: str, seat: int, step: int) -> bool:
        """Park the match at a pull seat's decision; False when a move is already waiting."""
        answer = await self._park(
            keys=[match_key(match_id), lease_key(match_id), running_key(),
                  inbox_key(match_id, seat)], args=[holder, match_id, step])
        if answer == 0:
            raise LeaseLost(match_id)
        return answer == 1

    async def take_move(self, match_id: str, seat: int, step: int) -> dict | None:
        """The move posted for `step` by the seat's client, if any; moves posted for
        other (older) steps are dropped."""
        while (raw := await self.redis.lpop(inbox_key(match_id, seat))) is not None:
            move = orjson.loads(raw)
            if move["step"] == step:
                return move
        return None

    async def claim_step(self, match_id: str, seat: int, step: int) -> bool:
        """Claim `step` for its timeout: False when a move was accepted for it first."""
        return bool(await self.redis.set(claim_key(match_id, step), seat, nx=True,
                                         ex=SIGNAL_TTL_S))

    async def decision_clock(self, match_id: str) -> tuple[int, int]:
        """(when the current decision was put, now), in ms of Redis time."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(match_key(match_id), "asked_at")
            pipe.time()
            asked_at, (seconds, micros) = await pipe.execute()
        return int(asked_at or 0), seconds * 1000 + micros // 1000

    async def finish(self, match_id: str, holder: str, record: dict, seats: int) -> None:
        """Store the sealed replay and the result, drop what only a running match needs
        and release the lease, atomically."""
        await self._fenced(self._end, _end_keys(match_id, seats), [
            holder, match_id, MatchStatus.FINISHED.value, compact.encode(record),
            "result", compact.pack(record["result"]), "forfeit", orjson.dumps(record["forfeit"]),
            "finished_at", record["finished_at"]], (record["game"], MatchStatus.FINISHED))

    async def fail(self, match_id: str, game: str, holder: str, error: str, finished_at: str,
                   seats: int) -> None:
        await self._fenced(self._end, _end_keys(match_id, seats, keep_progress=True), [
            holder, match_id, MatchStatus.FAILED.value, "", "error", error,
            "finished_at", finished_at], (game, MatchStatus.FAILED))

    async def take_bot_slots(self, match_id: str, bot_ids: list[str], cap: int) -> bool:
        """Take one concurrent-match slot of every bot for `match_id`, all or none, in one
        round trip; False when a bot already plays `cap` other matches. A slot whose match
        has no lease (its driver finished, parked or died) is free again."""
        prefix, _, suffix = lease_key("{}").partition("{}")
        return bool(await self._take_slots(
            keys=[playing_key(bot) for bot in sorted(set(bot_ids))],
            args=[match_id, cap, prefix, suffix]))

    async def release_bot_slots(self, match_id: str, bot_ids: list[str]) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            for bot in sorted(set(bot_ids)):
                pipe.srem(playing_key(bot), match_id)
            await pipe.execute()

    async def _fenced(self, script: AsyncScript, keys: list[str], args: list,
                      status: tuple[str, MatchStatus] | None = None) -> None:
        """Run a lease-checking script (and count the status a match enters, in the same
        round trip); LeaseLost when the lease is not ours."""
        async with self.redis.pipeline(transaction=False) as pipe:
            await script(keys=keys, args=args, client=pipe)
            if status:
                metrics.record_match_status(pipe, status[0], status[1].value)
            answer, *_ = await pipe.execute()
        if not answer:
            raise LeaseLost(keys[0])


def _end_keys(match_id: str, seats: int, keep_progress: bool = False) -> list[str]:
    """KEYS of the END script; a failed match keeps its steps and last state (to look into)."""
    progress = [] if keep_progress else [match_key(match_id, "live"),
                                          match_key(match_id, "steps")]
    return [match_key(match_id), lease_key(match_id), running_key(),
            match_key(match_id, "replay"), events_channel(match_id), *progress,
            *(inbox_key(match_id, seat) for seat in range(seats))]
