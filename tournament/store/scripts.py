"""Every Lua script the referee runs in Redis, each registered once per client (`Scripts`).

The names a script writes (the match hash's fields, its statuses, the channel messages)
come from `tournament.store.keys`: `$STATUS` in a source is `MatchField.STATUS`, `$RUNNING`
is `MatchStatus.RUNNING`, `$END` the match channel's last message. Scripts read the time
from Redis (`TIME`), so deadlines and timers do not depend on the clocks of the machines
that set and fire them. Keys a script builds itself (the metrics counters of a step, the
leases of the matches holding a bot's slots) are not declared: one Redis, not a cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from string import Template
from typing import Generic, TypeVar

from redis.commands.core import AsyncScript, Script

from tournament.store.keys import END, MatchField, MatchStatus

NAMES = {**{field.name: field.value for field in MatchField},
         **{status.name: status.value for status in MatchStatus}, "END": END}


def lua(source: str) -> str:
    """A script's source with the names of `NAMES` filled in."""
    return Template(source).substitute(NAMES)


# ----- pull seats (`tournament.store.pull`) ---------------------------------------------
# KEYS: the step's claim, the seat's inbox; ARGV: seat, claim TTL, the move (a JSON
# object). The move is pushed with `arrived_ms`, the Redis time it was taken: what a pull
# seat's clock is charged up to, however late the driver reads it.
CLAIM_AND_PUSH = lua("""
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then
  local t = redis.call('TIME')
  local arrived = string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000))
  redis.call('RPUSH', KEYS[2], string.sub(ARGV[3], 1, -2) .. ',"arrived_ms":' .. arrived .. '}')
  return 1
end
return 0
""")

# ----- timers (`tournament.store.timers`) ------------------------------------------------
# KEYS: timers; ARGV: member, delay ms. Due at Redis time + delay.
SET_TIMER = lua("""
local t = redis.call('TIME')
redis.call('ZADD', KEYS[1], t[1] * 1000 + math.floor(t[2] / 1000) + tonumber(ARGV[2]), ARGV[1])
""")

# KEYS: timers; ARGV: how many. The members due now, oldest first.
DUE_TIMERS = lua("""
local t = redis.call('TIME')
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', t[1] * 1000 + math.floor(t[2] / 1000),
                  'LIMIT', 0, tonumber(ARGV[1]))
""")

# ----- the archive (`tournament.store.archive`) ------------------------------------------
# KEYS: cursor; ARGV: score. The cursor only moves forward.
ADVANCE_CURSOR = lua("""
local now = redis.call('GET', KEYS[1])
if not now or tonumber(now) < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
""")

# ----- a driver's fenced writes (`tournament.store.progress`) ----------------------------
# KEYS: lease, running; ARGV: holder, ttl ms, match id. Take the lease when free or already
# ours; a match with a lease is in the running index, so that the recovery sweep finds it
# should its driver die at any point.
TAKE_LEASE = lua("""
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], 'NX', 0, ARGV[3])
return 1
""")

# KEYS: lease, running; ARGV: holder, ttl ms, match id. Renew a lease we hold: 1; held by
# another driver: 0; free: taken again (1) only while the match is still in the running
# index (it lapsed during a stall), else 2, for it was given up (released, parked, ended)
# since the renewal was sent: taking it then would hold the match for nobody.
RENEW_LEASE = lua("""
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if holder then return 0 end
if not redis.call('ZSCORE', KEYS[2], ARGV[3]) then return 2 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
""")

# KEYS: lease, running; ARGV: holder, match id. Give the lease up, only when it is ours.
RELEASE_LEASE = lua("""
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('ZREM', KEYS[2], ARGV[2])
return redis.call('DEL', KEYS[1])
""")

# KEYS: match, lease; ARGV: holder, match id, started_at. Under the lease: running,
# out of the parked state; the clock of a first decision starts now.
# Answers the match's started_at and 1 when this is its first start.
START = lua("""
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], '$STATUS', '$RUNNING')
local first = redis.call('HSETNX', KEYS[1], '$STARTED_AT', ARGV[3])
redis.call('HSETNX', KEYS[1], '$ASKED_AT', t[1] * 1000 + math.floor(t[2] / 1000))
redis.call('HDEL', KEYS[1], '$PARKED')
return {redis.call('HGET', KEYS[1], '$STARTED_AT'), first}
""")

# KEYS: match, steps, live, lease, applied signal, events channel; ARGV: holder, step index,
# step JSON, live JSON ("" to leave the live state), to_move JSON, "1" to signal a pull
# client that its move was played, the signal's TTL, and the JSON list of [hash, field,
# amount] increments counting the decision in the cluster's metrics
# (`tournament.store.metrics`). Followers of the match (GET /matches/{id}/events) hear the
# new step's number.
RECORD = lua("""
if redis.call('GET', KEYS[4]) ~= ARGV[1] then return 0 end
local index = tonumber(ARGV[2])
local length = redis.call('LLEN', KEYS[2])
if length == index + 1 and redis.call('LINDEX', KEYS[2], -1) == ARGV[3] then return 1 end
if length ~= index then return -1 end
redis.call('RPUSH', KEYS[2], ARGV[3])
if ARGV[4] ~= '' then redis.call('SET', KEYS[3], ARGV[4]) end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], '$STEP', index + 1, '$TO_MOVE', ARGV[5],
           '$ASKED_AT', t[1] * 1000 + math.floor(t[2] / 1000))
if ARGV[6] == '1' then
  redis.call('RPUSH', KEYS[5], '1')
  redis.call('EXPIRE', KEYS[5], ARGV[7])
end
for _, count in ipairs(cjson.decode(ARGV[8])) do
  redis.call('HINCRBY', count[1], count[2], count[3])
end
redis.call('PUBLISH', KEYS[6], index)
return 1
""")

# KEYS: match, lease, running, inbox; ARGV: holder, match id, step. Park the match (no
# driver until a move or the deadline) unless a move is already waiting in the inbox.
PARK = lua("""
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if redis.call('LLEN', KEYS[4]) > 0 then return -1 end
redis.call('HSET', KEYS[1], '$PARKED', ARGV[3])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('DEL', KEYS[2])
return 1
""")

# KEYS: match, lease, running, replay, events channel, the results log's leaves and ids,
# kept decisions, then the keys a running match needed (live, steps, inboxes); ARGV:
# holder, match id, status, the stored replay ("" for none), its leaf hash ("" for none: a
# failed match), the kept decisions ("" for none) and the seconds they stay, then
# field/value pairs for the match hash. The leaf is appended in the same step as the
# result, once (a match already logged keeps its index): no result is ever unlogged, no
# index given twice. Answers 0 (the lease is not ours) or {1, the leaf's index or -1}.
# Followers hear `END`.
END_MATCH = lua("""
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
if ARGV[4] ~= '' then redis.call('SET', KEYS[4], ARGV[4]) end
if ARGV[6] ~= '' then redis.call('SET', KEYS[8], ARGV[6], 'EX', ARGV[7]) end
for i = 8, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('HSET', KEYS[1], '$STATUS', ARGV[3])
redis.call('HDEL', KEYS[1], '$PARKED', '$ASKED_AT')
local index = -1
if ARGV[5] ~= '' then
  index = redis.call('HGET', KEYS[1], '$LOG')
  if not index then
    index = string.format('%d', redis.call('STRLEN', KEYS[6]) / 32)
    redis.call('APPEND', KEYS[6], ARGV[5])
    redis.call('RPUSH', KEYS[7], ARGV[2])
    redis.call('HSET', KEYS[1], '$LOG', index)
  end
end
for i = 9, #KEYS do redis.call('DEL', KEYS[i]) end
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('DEL', KEYS[2])
redis.call('PUBLISH', KEYS[5], '$END')
return {1, tonumber(index)}
""")

# ----- the results log (`tournament.store.log`) -------------------------------------------
# KEYS: match, the log's leaves and ids; ARGV: the leaf hash, match id. Log a finished match
# that has no leaf yet (one recorded before the log existed); answers its index, or -1 when
# it is not finished.
APPEND_LEAF = lua("""
local index = redis.call('HGET', KEYS[1], '$LOG')
if index then return tonumber(index) end
if redis.call('HGET', KEYS[1], '$STATUS') ~= '$FINISHED' then return -1 end
index = string.format('%d', redis.call('STRLEN', KEYS[2]) / 32)
redis.call('APPEND', KEYS[2], ARGV[1])
redis.call('RPUSH', KEYS[3], ARGV[2])
redis.call('HSET', KEYS[1], '$LOG', index)
return tonumber(index)
""")

# ----- signing keys (`tournament.store.signing_keys`) ---------------------------------------
# KEYS: the keys hash, the current key's id; ARGV: key id, its public key, now (ISO 8601),
# '1' when it is the current key of its process. A key seen for the first time is
# published: a current one retires the one before it (not_after = now), any other is
# published already retired. Answers the id of the current key.
REGISTER_KEY = lua("""
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  if ARGV[4] == '1' then
    local before = redis.call('GET', KEYS[2])
    if before then
      local entry = cjson.decode(redis.call('HGET', KEYS[1], before))
      entry['not_after'] = ARGV[3]
      redis.call('HSET', KEYS[1], before, cjson.encode(entry))
    end
    redis.call('HSET', KEYS[1], ARGV[1],
               cjson.encode({public_key = ARGV[2], not_before = ARGV[3]}))
    redis.call('SET', KEYS[2], ARGV[1])
  else
    redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(
      {public_key = ARGV[2], not_before = ARGV[3], not_after = ARGV[3]}))
  end
end
return redis.call('GET', KEYS[2])
""")

# KEYS: the playing sets of the match's bots; ARGV: match id, cap, the lease key prefix and
# suffix. Take one slot of every bot, all or none; a slot whose match has no lease (its
# driver finished, parked or died) is freed on the way.
TAKE_SLOTS = lua("""
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
""")

# ----- work lists (`tournament.store.work`: ladder checks, builds) -------------------------
# KEYS: the items waiting, the items claimed. The first waiting item moves to the claimed
# ones, scored by the Redis time (s): a worker that dies with it leaves it there, to be
# queued again once stale.
TAKE_WORK = lua("""
local item = redis.call('LPOP', KEYS[1])
if not item then return false end
redis.call('ZADD', KEYS[2], redis.call('TIME')[1], item)
return item
""")


# ----- rate limits (`tournament.store.limits`) -------------------------------------------
# KEYS: the limit's sorted set (the Redis times, ms, of the requests it let through);
# ARGV: the limit, the window in ms. A moving window: at most `limit` requests in any
# `window` ms. Returns -1 when this request is let through (and counted), else the ms until
# the oldest counted request leaves the window.
COUNT_IN_WINDOW = lua("""
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local limit, window = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local counted = redis.call('ZCARD', KEYS[1])
if counted >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return tonumber(oldest[2]) + window - now
end
redis.call('ZADD', KEYS[1], now, t[1] .. t[2] .. ':' .. counted)
redis.call('PEXPIRE', KEYS[1], window)
return -1
""")


S = TypeVar("S", Script, AsyncScript)


class Scripts(Generic[S]):
    """Every script registered on one client, sync or asyncio, by its `register_script`
    (`Scripts(client.register_script)`: `Script`s or `AsyncScript`s; registering computes
    its SHA1 once; a call runs EVALSHA, loading the script first where Redis lacks it)."""

    def __init__(self, register: Callable[[str], S]):
        self.claim_and_push: S = register(CLAIM_AND_PUSH)
        self.set_timer: S = register(SET_TIMER)
        self.due_timers: S = register(DUE_TIMERS)
        self.advance_cursor: S = register(ADVANCE_CURSOR)
        self.take_lease: S = register(TAKE_LEASE)
        self.renew_lease: S = register(RENEW_LEASE)
        self.release_lease: S = register(RELEASE_LEASE)
        self.start: S = register(START)
        self.record: S = register(RECORD)
        self.park: S = register(PARK)
        self.end_match: S = register(END_MATCH)
        self.take_slots: S = register(TAKE_SLOTS)
        self.append_leaf: S = register(APPEND_LEAF)
        self.register_key: S = register(REGISTER_KEY)
        self.take_work: S = register(TAKE_WORK)
        self.count_in_window: S = register(COUNT_IN_WINDOW)
